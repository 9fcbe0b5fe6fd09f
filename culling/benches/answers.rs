//! The Visibility stage on 100k mesh entities answered every frame against answered on
//! request (`ecs::CpuAnswers`), with a still camera, with one turning 10° per frame, and
//! with a still camera over a world where 2% of the objects move every frame.
//!
//! Every frame keeps the lists and the `Culled`/`Occluded` tags of every object (under the
//! default tag policy a turning camera moves thousands of entities between archetypes);
//! on request keeps neither, and one `state_of` per frame stands for a game asking about
//! one entity. Mesh entities carry a `WorldTransform` only, so a frame is the view stage (one
//! camera) plus the Visibility stage; the camera turns from a system, so frames stay tracked.
//!
//! `cargo bench -p culling --bench answers` (add `-- --quick` while developing).

use std::hint::black_box;

#[path = "support/grid.rs"]
mod grid;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use culling::Visibility;
use ecs::{scene, Camera, CpuAnswers, RenderSettings, ShadowCaster, Transform, Visible};
use glam::{Quat, Vec3};
use grid::grid_place;
use runtime::hecs::Entity;
use runtime::{App, Stage, System};

/// Mesh entities of the benchmark.
const OBJECTS: usize = 100_000;

/// Degrees the turning camera turns each frame.
const TURN_DEGREES: f32 = 10.0;

/// Of the moving world: one object in this many moves each frame (2%).
const MOVER_EVERY: usize = 50;

/// Marks the objects the moving world moves (their own archetype, so a system moving them
/// writes nothing else).
struct Mover;

/// How far the camera has turned, in degrees; the turning system adds its step each frame.
struct Heading {
    degrees: f32,
    step: f32,
}

/// An app of `OBJECTS` meshes on a 2 m grid around a camera 3 m up at the centre (a quarter
/// cast shadows) under `answers`, turning `step` degrees a frame, one in [`MOVER_EVERY`]
/// rising and sinking each frame when `moving`; returns a mesh to ask about.
fn answers_app(answers: CpuAnswers, step: f32, moving: bool) -> (App, Entity) {
    let mut app = App::new();
    culling::install(&mut app);
    app.resource_mut::<RenderSettings>().cpu_answers = answers;
    let mesh = scene::unit_cube_mesh();
    let place = |index: usize| grid_place(index, OBJECTS);
    let world = app.world_mut();
    world.spawn_batch((0..OBJECTS).filter(|index| index % 4 != 0).map(|index| (place(index), mesh, Visible(true))));
    world.spawn_batch(
        (0..OBJECTS).filter(|index| index % 4 == 0).map(|index| (place(index), mesh, Visible(true), ShadowCaster)),
    );
    if moving {
        let movers: Vec<Entity> =
            world.query::<(Entity, &ecs::Mesh)>().iter().map(|(entity, _)| entity).step_by(MOVER_EVERY).collect();
        for entity in movers {
            world.insert_one(entity, Mover).expect("a live mesh");
        }
        app.add_system(
            Stage::Input,
            System::with_query::<(&mut ecs::WorldTransform, &Mover)>("move", |ctx, movers| {
                let rise = if ctx.time.frame_index % 2 == 0 { 0.25 } else { -0.25 };
                for (place, _) in movers.borrow().iter() {
                    place.0.w_axis.y += rise;
                }
            }),
        );
    }
    let world = app.world_mut();
    let asked = scene::spawn_mesh(world, mesh, Transform::IDENTITY);
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), heading(0.0));
    app.insert_resource(Heading { degrees: 0.0, step });
    app.add_system(
        Stage::Input,
        System::new("turn camera", move |ctx| {
            let degrees = {
                let mut turn = ctx.resource_mut::<Heading>();
                turn.degrees += turn.step;
                turn.degrees
            };
            *ctx.get_mut::<Transform>(camera).expect("the camera has a Transform") = heading(degrees);
        })
        .writes::<Transform>()
        .writes_resource::<Heading>(),
    );
    // Warm-up: the tag archetypes exist and the columns have their capacity.
    app.run_frames(8);
    (app, asked)
}

fn heading(degrees: f32) -> Transform {
    Transform::from_translation_rotation(Vec3::new(0.0, 3.0, 0.0), Quat::from_rotation_y(degrees.to_radians()))
}

fn bench_answers(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_answers");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    for (camera, step, moving) in [("still", 0.0, false), ("turning", TURN_DEGREES, false), ("moving_2pc", 0.0, true)] {
        for (policy, answers) in [("every_frame", CpuAnswers::EveryFrame), ("on_request", CpuAnswers::OnRequest)] {
            let (mut app, asked) = answers_app(answers, step, moving);
            group.bench_function(format!("{camera}/{policy}"), |b| {
                b.iter(|| {
                    app.run_frame();
                    black_box(app.resource::<Visibility>().state_of(asked))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_answers);
criterion_main!(benches);

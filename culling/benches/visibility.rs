//! The Visibility stage on 100k mesh entities: on the job system and on one thread, with a
//! still camera and with one turning 10° per frame (so `Culled` tags change every frame,
//! their cost reported on its own; under the default tag policy and under the opt-in one with
//! 1% of the meshes marked), and the cost of one tag change by direct world calls
//! against the command buffer.
//!
//! Mesh entities carry a `WorldTransform` and no local `Transform`, so the Transform stage
//! has nothing to do and a frame is the view stage (one camera) plus the Visibility stage.
//! A system turns the camera, as a game's controller would, so the change log names what
//! changed and frames are tracked; one turning row goes through `App::world_mut` instead
//! (anything may have changed: every object is read again).
//!
//! Two more rows: the still camera with 10% of the meshes moving every frame (`moving_10pct`),
//! and a city of 1M objects (10,000 blocks: a building each, registered as an occluder, and 99
//! props; about 2% cars that move every frame) seen from a camera driving along a street,
//! frustum and occlusion on (`visibility_city_1m`). And the still camera over a scene where 500
//! meshes are despawned and 500 spawned every frame (`visibility_churn`), beside the same
//! scene without churn, with and without a tenth of the meshes moving.
//!
//! `cargo bench -p culling --bench visibility` (add `-- --quick` while developing).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use culling::Visibility;
use ecs::{
    scene, Camera, Culled, Lod, LodLevel, Mesh, MeshHandle, RenderSettings, ShadowCaster, Transform, VisibilityTagged,
    VisibilityTags, Visible, WorldTransform,
};
use glam::{Mat4, Quat, Vec3};
use grid::grid_place;
use runtime::hecs::{CommandBuffer, Entity, With, World};
use runtime::{App, Stage, System};

#[path = "support/city.rs"]
mod city;
#[path = "support/grid.rs"]
mod grid;
mod support;
use city::{city_app, Clock, CITY_BLOCKS, CITY_PROPS};

/// Mesh entities of the stage benchmarks.
const OBJECTS: usize = 100_000;

/// Tag changes per sample of the tag benchmark.
const TAG_CHANGES: usize = 5_000;

/// An app of `OBJECTS` meshes on a 2 m grid around a camera 3 m up at the centre; a quarter
/// of the meshes cast shadows and an eighth have two levels of detail.
fn stage_app(threads: Option<usize>) -> (App, Entity) {
    stage_app_with(threads, None)
}

/// [`stage_app`], with `marked_every: Some(n)` under the opt-in tag policy
/// (`VisibilityTags::Marked`), every n-th mesh carrying `VisibilityTagged`.
fn stage_app_with(threads: Option<usize>, marked_every: Option<usize>) -> (App, Entity) {
    let mut app = threads.map_or_else(App::new, App::with_threads);
    culling::install(&mut app);
    if marked_every.is_some() {
        app.resource_mut::<RenderSettings>().visibility_tags = VisibilityTags::Marked;
    }
    let mesh = scene::unit_cube_mesh();
    let place = |index: usize| grid_place(index, OBJECTS);
    let world = app.world_mut();
    world.spawn_batch(
        (0..OBJECTS).filter(|index| index % 4 != 0 && index % 8 != 1).map(|index| (place(index), mesh, Visible(true))),
    );
    world.spawn_batch(
        (0..OBJECTS).filter(|index| index % 4 == 0).map(|index| (place(index), mesh, Visible(true), ShadowCaster)),
    );
    let levels: std::sync::Arc<[LodLevel]> = vec![
        LodLevel { mesh: MeshHandle(1), max_distance: 50.0 },
        LodLevel { mesh: MeshHandle(2), max_distance: 200.0 },
    ]
    .into();
    world.spawn_batch(
        (0..OBJECTS)
            .filter(|index| index % 8 == 1)
            .map(|index| (place(index), mesh, Visible(true), Lod { levels: levels.clone(), bias: 1.0 })),
    );
    if let Some(every) = marked_every {
        let meshes: Vec<Entity> = app.world().query::<Entity>().with::<&Mesh>().iter().collect();
        for entity in meshes.into_iter().step_by(every) {
            app.world_mut().insert_one(entity, VisibilityTagged).expect("alive");
        }
    }
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), heading(0.0));
    app.insert_resource(Heading(0.0));
    app.add_system(
        Stage::Input,
        System::new("turn camera", move |ctx| {
            let degrees = ctx.resource::<Heading>().0;
            *ctx.get_mut::<Transform>(camera).expect("the camera has a Transform") = heading(degrees);
        })
        .writes::<Transform>()
        .reads_resource::<Heading>(),
    );
    // Warm-up: the first frames create the tag archetypes and give the change lists capacity.
    for frame in 0..4 {
        turn(&mut app, frame as f32 * 10.0);
        app.run_frame();
    }
    turn(&mut app, 0.0);
    app.run_frame();
    (app, camera)
}

fn heading(degrees: f32) -> Transform {
    Transform::from_translation_rotation(Vec3::new(0.0, 3.0, 0.0), Quat::from_rotation_y(degrees.to_radians()))
}

/// Where the camera of the stage app looks, in degrees about the vertical: a system turns the
/// camera to it in the Input stage, as a game's camera controller would (so frames stay
/// tracked, unlike a turn through `App::world_mut`).
struct Heading(f32);

fn turn(app: &mut App, degrees: f32) {
    app.resource_mut::<Heading>().0 = degrees;
}

fn bench_stage(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_stage");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    for (name, threads) in [("job_system", None), ("one_thread", Some(1))] {
        let (mut app, _) = stage_app(threads);
        let stats = *app.resource::<Visibility>().stats();
        eprintln!(
            "{name}: {} threads, {} objects, {} visible",
            app.job_system().threads(),
            stats.objects,
            stats.visible
        );
        group.bench_function(name, |b| b.iter(|| app.run_frame()));
        eprintln!("{name}: median wall time per stage: {}", stage_medians(&mut app, 101));
    }
    group.finish();
}

/// Median wall time of each stage over `frames` frames, formatted for the report.
fn stage_medians(app: &mut App, frames: usize) -> String {
    let mut samples: Vec<(&'static str, Vec<f64>)> =
        app.schedule().stage_seconds().map(|(stage, _)| (stage, Vec::with_capacity(frames))).collect();
    for _ in 0..frames {
        if app.resources().contains::<Clock>() {
            app.resource_mut::<Clock>().0 += 1;
        }
        app.run_frame();
        for ((_, times), (_, seconds)) in samples.iter_mut().zip(app.schedule().stage_seconds()) {
            times.push(seconds);
        }
    }
    samples
        .into_iter()
        .map(|(stage, mut times)| {
            times.sort_by(f64::total_cmp);
            format!("{stage} {:.3} ms", times[times.len() / 2] * 1e3)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Moves every tenth mesh of `movers` a little (up on odd frames, down on even ones), as a
/// game's moving objects would between two frames, through `App::world_mut` (so the change
/// log says everything may have changed: a full pass).
fn move_objects(app: &mut App, movers: &[Entity], frame: u64) {
    let step = if frame.is_multiple_of(2) { 0.01 } else { -0.01 };
    let world = app.world_mut();
    for &entity in movers {
        world.get::<&mut WorldTransform>(entity).expect("a mover has a WorldTransform").0.w_axis.y += step;
    }
}

/// Marks the meshes a system moves every frame.
struct Mover;

/// The stage app (on `threads`, else the job system) with a system in the Input stage that
/// moves `movers` (marked [`Mover`]) every frame, from the [`Clock`] resource.
fn moving_app(threads: Option<usize>, movers: &[Entity]) -> App {
    let (mut app, _) = stage_app(threads);
    for &entity in movers {
        app.world_mut().insert_one(entity, Mover).expect("alive");
    }
    app.insert_resource(Clock::default());
    app.add_system(
        Stage::Input,
        System::new("move", |ctx| {
            let step = if ctx.resource::<Clock>().0 % 2 == 0 { 0.01 } else { -0.01 };
            ctx.par_for_each::<With<&mut WorldTransform, &Mover>>(4096, |world| world.0.w_axis.y += step);
        })
        .query::<With<&mut WorldTransform, &Mover>>()
        .reads_resource::<Clock>(),
    );
    app.run_frames(3);
    app
}

fn bench_moving(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_stage");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    // Baseline: the same motion through `App::world_mut`, so every frame is a full pass.
    let (mut app, _) = stage_app(None);
    let movers: Vec<Entity> =
        app.world_mut().query_mut::<(Entity, &Mesh)>().into_iter().map(|(entity, _)| entity).step_by(10).collect();
    eprintln!("moving_10pct: {} of {} meshes move every frame", movers.len(), OBJECTS);
    let mut frame = 0u64;
    group.bench_function("moving_10pct_still_camera_world_mut", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                frame += 1;
                move_objects(&mut app, &movers, frame);
                let started = Instant::now();
                app.run_frame();
                total += started.elapsed();
            }
            total
        })
    });
    // A game's way: a system moves the marked meshes, the change log names their archetype,
    // and the stage refreshes only them. On one thread too: its time hardly depends on what
    // else the machine runs, so it compares builds better on a busy machine.
    for (name, threads) in [("moving_10pct_still_camera", None), ("moving_10pct_still_camera_one_thread", Some(1))] {
        let mut app = moving_app(threads, &movers);
        group.bench_function(name, |b| {
            b.iter(|| {
                app.resource_mut::<Clock>().0 += 1;
                app.run_frame()
            })
        });
        let stats = *app.resource::<Visibility>().stats();
        eprintln!(
            "{name}: tracked {}, {} boxes computed a frame; median wall time per stage: {}",
            stats.tracked,
            stats.bounds_computed,
            stage_medians(&mut app, 101)
        );
    }
    group.finish();
}

/// Objects spawned and despawned every frame by the churn row.
const CHURN: usize = 500;

/// The stage app with a system in the Input stage that, every frame, despawns the `churn`
/// oldest meshes (the scene's own first, in a shuffled order, so the freed slots are spread
/// over the whole scene) and spawns as many new ones on the grid, half of them in view,
/// through the system's commands, as a game spawning and despawning through the schedule
/// would. With `churn` 0 the system runs and does nothing: the baseline. `with_movers`: a
/// tenth of the scene's meshes also move every frame (as in `moving_10pct_still_camera`).
fn churn_app(churn: usize, with_movers: bool) -> App {
    let mut app = if with_movers {
        let (mut app, _) = stage_app(None);
        let movers: Vec<Entity> =
            app.world_mut().query_mut::<(Entity, &Mesh)>().into_iter().map(|(entity, _)| entity).step_by(10).collect();
        drop(app);
        moving_app(None, &movers)
    } else {
        stage_app(None).0
    };
    let mut alive: Vec<Entity> =
        app.world_mut().query_mut::<(Entity, &Mesh)>().into_iter().map(|(entity, _)| entity).collect();
    let mut random = support::Random(0x9e37_79b9_7f4a_7c15);
    for index in (1..alive.len()).rev() {
        let other = (random.unit() * (index + 1) as f32) as usize;
        alive.swap(index, other.min(index));
    }
    let mut alive: std::collections::VecDeque<Entity> = alive.into();
    let mesh = scene::unit_cube_mesh();
    app.add_system(
        Stage::Input,
        System::new("churn", move |ctx| {
            for _ in 0..churn {
                if let Some(oldest) = alive.pop_front() {
                    ctx.commands.despawn(oldest);
                }
                let (x, z) = (random.range(-300.0, 300.0), random.range(-300.0, 300.0));
                let place = WorldTransform(Mat4::from_translation(Vec3::new(x, 0.0, z)));
                alive.push_back(ctx.commands.spawn((place, mesh, Visible(true))));
            }
        })
        .spawns(),
    );
    app.run_frames(3);
    app
}

fn bench_churn(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_churn");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    for (name, churn, with_movers) in [
        ("no_churn", 0, false),
        ("spawn_500_despawn_500", CHURN, false),
        ("moving_10pct_no_churn", 0, true),
        ("moving_10pct_spawn_500_despawn_500", CHURN, true),
    ] {
        // Built on first use, so a filter that leaves a row out does not build its scene.
        let mut scene: Option<App> = None;
        let mut tracked = (0usize, 0usize);
        group.bench_function(name, |b| {
            let app = scene.get_or_insert_with(|| churn_app(churn, with_movers));
            b.iter(|| {
                if app.resources().contains::<Clock>() {
                    app.resource_mut::<Clock>().0 += 1;
                }
                app.run_frame();
                tracked.0 += usize::from(app.resource::<Visibility>().stats().tracked);
                tracked.1 += 1;
            })
        });
        if let Some(app) = &mut scene {
            let objects = app.resource::<Visibility>().stats().objects;
            eprintln!(
                "{name}: {objects} objects, {} of {} frames tracked; median wall time per stage: {}",
                tracked.0,
                tracked.1,
                stage_medians(app, 101)
            );
        }
    }
    group.finish();
}

fn bench_city(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_city_1m");
    group.throughput(Throughput::Elements((CITY_BLOCKS * CITY_BLOCKS * (CITY_PROPS + 1)) as u64));
    // The engine's default tag policy (every mesh tagged), and the opt-in one the city demo
    // uses (no mesh marked: culling moves no entity between archetypes). One city at a time,
    // built on first use, so a filter that leaves a row out does not build its city.
    for (name, tags) in [
        ("street_camera_2pct_moving", VisibilityTags::All),
        ("street_camera_2pct_moving_tags_marked", VisibilityTags::Marked),
    ] {
        let mut city: Option<App> = None;
        group.bench_function(name, |b| {
            let app = city.get_or_insert_with(|| {
                let (app, _, cars) = city_app(tags, None);
                let stats = *app.resource::<Visibility>().stats();
                eprintln!(
                    "{name}: {} objects, {} cars moving, {} visible, {} frustum-rejected, {} occluded",
                    stats.objects, cars, stats.visible, stats.frustum_rejected, stats.occluded
                );
                app
            });
            b.iter(|| {
                app.resource_mut::<Clock>().0 += 1;
                app.run_frame()
            })
        });
        if let Some(app) = &mut city {
            let stats = *app.resource::<Visibility>().stats();
            eprintln!(
                "{name}: tracked {}, {} boxes computed, {} tag changes in the last frame ({} traded in one move)",
                stats.tracked,
                stats.bounds_computed,
                stats.tags_inserted + stats.tags_removed,
                stats.tags_traded
            );
            eprintln!("{name}: median wall time per stage: {}", stage_medians(app, 31));
        }
    }
    group.finish();
}

fn bench_turning(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_turning");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    // The default policy (every mesh tagged) beside the opt-in one with 1% of the meshes
    // marked, in the same process; and once turned through `App::world_mut`, which tells
    // the stage that anything may have changed, so every frame reads every object again.
    for (name, threads, marked_every, through_world_mut) in [
        ("job_system", None, None, false),
        ("one_thread", Some(1), None, false),
        ("job_system_opt_in_1pct_marked", None, Some(100), false),
        ("one_thread_opt_in_1pct_marked", Some(1), Some(100), false),
        ("job_system_opt_in_1pct_marked_world_mut", None, Some(100), true),
    ] {
        // Built on first use, so a filter that leaves a row out does not build its scene.
        let mut scene: Option<(App, Entity)> = None;
        let mut degrees = 0.0;
        let (mut frames, mut changes, mut record, mut apply) = (0u64, 0usize, 0.0f64, 0.0f64);
        group.bench_function(name, |b| {
            let (app, camera) = scene.get_or_insert_with(|| stage_app_with(threads, marked_every));
            let (app, camera) = (app, *camera);
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    degrees += 10.0;
                    turn(app, degrees);
                    if through_world_mut {
                        *app.world_mut().get::<&mut Transform>(camera).expect("a camera") = heading(degrees);
                    }
                    let started = Instant::now();
                    app.run_frame();
                    total += started.elapsed();
                    let stats = *app.resource::<Visibility>().stats();
                    frames += 1;
                    changes += stats.tags_inserted + stats.tags_removed;
                    record += stats.tag_seconds;
                    apply += stats.tag_apply_seconds;
                }
                total
            })
        });
        if scene.is_none() {
            continue;
        }
        let frames = frames.max(1) as f64;
        eprintln!(
            "{name}: per frame {:.0} tag changes, finding/recording {:.1} µs, applying {:.1} µs ({:.0} ns per change)",
            changes as f64 / frames,
            record / frames * 1e6,
            apply / frames * 1e6,
            apply / changes.max(1) as f64 * 1e9
        );
    }
    group.finish();
}

/// `TAG_CHANGES` untagged mesh entities (and as many others) in a fresh world.
fn tag_world() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let mesh: Mesh = scene::unit_cube_mesh();
    let entities: Vec<Entity> =
        world.spawn_batch((0..2 * TAG_CHANGES).map(|_| (WorldTransform::default(), mesh, Visible(true)))).collect();
    (world, entities.into_iter().step_by(2).collect())
}

fn bench_tags(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_tags");
    group.throughput(Throughput::Elements(TAG_CHANGES as u64));
    let (mut world, entities) = tag_world();
    group.bench_function("direct_insert_remove_pair", |b| {
        b.iter(|| {
            for &entity in &entities {
                world.insert_one(entity, Culled).expect("alive");
            }
            for &entity in &entities {
                world.remove_one::<Culled>(entity).expect("tagged");
            }
            black_box(&world);
        })
    });
    let (mut world, entities) = tag_world();
    let mut commands = CommandBuffer::new();
    group.bench_function("command_buffer_insert_remove_pair", |b| {
        b.iter(|| {
            for &entity in &entities {
                commands.insert_one(entity, Culled);
            }
            commands.run_on(&mut world);
            for &entity in &entities {
                commands.remove_one::<Culled>(entity);
            }
            commands.run_on(&mut world);
            black_box(&world);
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = bench_stage, bench_moving, bench_churn, bench_city, bench_turning, bench_tags
}
criterion_main!(benches);

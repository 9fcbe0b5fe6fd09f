//! The Visibility stage on 100k mesh entities: on the job system and on one thread, with a
//! still camera and with one turning 10° per frame (so `Culled` tags change every frame,
//! their cost reported on its own), and the cost of one tag change by direct world calls
//! against the command buffer.
//!
//! Mesh entities carry a `WorldTransform` and no local `Transform`, so the Transform stage
//! has nothing to do and a frame is the view stage (one camera) plus the Visibility stage.
//!
//! `cargo bench -p culling --bench visibility` (add `-- --quick` while developing).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use culling::Visibility;
use ecs::{scene, Camera, Culled, Lod, LodLevel, Mesh, MeshHandle, ShadowCaster, Transform, Visible, WorldTransform};
use glam::{Mat4, Quat, Vec3};
use runtime::hecs::{CommandBuffer, Entity, World};
use runtime::App;

/// Mesh entities of the stage benchmarks.
const OBJECTS: usize = 100_000;

/// Tag changes per sample of the tag benchmark.
const TAG_CHANGES: usize = 5_000;

/// An app of `OBJECTS` meshes on a 2 m grid around a camera 3 m up at the centre; a quarter
/// of the meshes cast shadows and an eighth have two levels of detail.
fn stage_app(threads: Option<usize>) -> (App, Entity) {
    let mut app = threads.map_or_else(App::new, App::with_threads);
    culling::install(&mut app);
    let side = (OBJECTS as f32).sqrt().ceil() as usize;
    let mesh = scene::unit_cube_mesh();
    let place = |index: usize| {
        let (x, z) = ((index % side) as f32, (index / side) as f32);
        WorldTransform(Mat4::from_translation(Vec3::new(
            (x - side as f32 / 2.0) * 2.0,
            0.0,
            (z - side as f32 / 2.0) * 2.0,
        )))
    };
    let world = app.world_mut();
    world.spawn_batch(
        (0..OBJECTS).filter(|index| index % 4 != 0 && index % 8 != 1).map(|index| (place(index), mesh, Visible(true))),
    );
    world.spawn_batch(
        (0..OBJECTS).filter(|index| index % 4 == 0).map(|index| (place(index), mesh, Visible(true), ShadowCaster)),
    );
    let levels = vec![
        LodLevel { mesh: MeshHandle(1), max_distance: 50.0 },
        LodLevel { mesh: MeshHandle(2), max_distance: 200.0 },
    ];
    world.spawn_batch(
        (0..OBJECTS)
            .filter(|index| index % 8 == 1)
            .map(|index| (place(index), mesh, Visible(true), Lod { levels: levels.clone(), bias: 1.0 })),
    );
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), heading(0.0));
    // Warm-up: the first frames create the tag archetypes and give the change lists capacity.
    for frame in 0..4 {
        turn(&mut app, camera, frame as f32 * 10.0);
        app.run_frame();
    }
    turn(&mut app, camera, 0.0);
    app.run_frame();
    (app, camera)
}

fn heading(degrees: f32) -> Transform {
    Transform::from_translation_rotation(Vec3::new(0.0, 3.0, 0.0), Quat::from_rotation_y(degrees.to_radians()))
}

fn turn(app: &mut App, camera: Entity, degrees: f32) {
    *app.world_mut().get::<&mut Transform>(camera).expect("the camera has a Transform") = heading(degrees);
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

fn bench_turning(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_turning");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    for (name, threads) in [("job_system", None), ("one_thread", Some(1))] {
        let (mut app, camera) = stage_app(threads);
        let mut degrees = 0.0;
        let (mut frames, mut changes, mut record, mut apply) = (0u64, 0usize, 0.0f64, 0.0f64);
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    degrees += 10.0;
                    turn(&mut app, camera, degrees);
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
    targets = bench_stage, bench_turning, bench_tags
}
criterion_main!(benches);

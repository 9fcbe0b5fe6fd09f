//! The Visibility stage on 100k mesh entities seen by 1, 2 and 4 cameras (the main view and
//! the others, all culled each frame): with still cameras, and with every camera turning 10°
//! per frame (so the main view's cull redoes its words every frame, as the other views always
//! do). Besides criterion's frame times, each row prints the median wall time of the
//! Visibility stage alone.
//!
//! `cargo bench -p culling --bench views` (add `-- --quick` while developing).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use culling::Visibility;
use ecs::{scene, Camera, Lod, LodLevel, MeshHandle, ResolvedViews, Transform, Visible};
use glam::{Quat, Vec3};
use grid::grid_place;
use runtime::hecs::Entity;
use runtime::{App, Stage, System};

#[path = "support/grid.rs"]
mod grid;

/// Mesh entities of the benchmark.
const OBJECTS: usize = 100_000;

/// Where camera `index` stands: spread over the grid, each looking its own way.
fn camera_pose(index: usize, degrees: f32) -> Transform {
    let position = [
        Vec3::new(0.0, 3.0, 0.0),
        Vec3::new(120.0, 6.0, 80.0),
        Vec3::new(-150.0, 3.0, -60.0),
        Vec3::new(40.0, 40.0, -200.0),
    ][index];
    let heading = degrees + index as f32 * 70.0;
    Transform::from_translation_rotation(position, Quat::from_rotation_y(heading.to_radians()))
}

/// Degrees every camera has turned by; a system turns them in the Input stage.
struct Heading(f32);

/// An app of `OBJECTS` meshes on a 2 m grid (an eighth with two levels of detail) seen by
/// `cameras` cameras.
fn views_app(cameras: usize) -> (App, Vec<Entity>) {
    let mut app = App::new();
    culling::install(&mut app);
    let mesh = scene::unit_cube_mesh();
    let levels: std::sync::Arc<[LodLevel]> = vec![
        LodLevel { mesh: MeshHandle(1), max_distance: 50.0 },
        LodLevel { mesh: MeshHandle(2), max_distance: 200.0 },
    ]
    .into();
    let world = app.world_mut();
    world.spawn_batch(
        (0..OBJECTS).filter(|index| index % 8 != 1).map(|index| (grid_place(index, OBJECTS), mesh, Visible(true))),
    );
    world.spawn_batch(
        (0..OBJECTS)
            .filter(|index| index % 8 == 1)
            .map(|index| (grid_place(index, OBJECTS), mesh, Visible(true), Lod { levels: levels.clone(), bias: 1.0 })),
    );
    let entities: Vec<Entity> = (0..cameras)
        .map(|index| {
            let camera = Camera { order: index as i32, ..Camera::default() };
            scene::spawn_camera(app.world_mut(), camera, camera_pose(index, 0.0))
        })
        .collect();
    app.insert_resource(Heading(0.0));
    let turned = entities.clone();
    app.add_system(
        Stage::Input,
        System::new("turn cameras", move |ctx| {
            let degrees = ctx.resource::<Heading>().0;
            for (index, &camera) in turned.iter().enumerate() {
                *ctx.get_mut::<Transform>(camera).expect("a camera has a Transform") = camera_pose(index, degrees);
            }
        })
        .writes::<Transform>()
        .reads_resource::<Heading>(),
    );
    app.run_frames(4);
    (app, entities)
}

/// The Visibility stage's wall time of the frame `app` just ran, in ms.
fn visibility_ms(app: &App) -> f64 {
    app.schedule().stage_seconds().find(|(stage, _)| *stage == "Visibility").map_or(0.0, |(_, seconds)| seconds * 1e3)
}

/// Median Visibility-stage time of each app over `frames` frames, the apps taking turns frame
/// by frame (so a machine whose load changes meanwhile weighs on every row alike); `turn`
/// turns every camera 10° each frame.
fn interleaved_medians(apps: &mut [App], frames: usize, turn: bool) -> Vec<f64> {
    let mut times = vec![Vec::with_capacity(frames); apps.len()];
    for _ in 0..frames {
        for (app, times) in apps.iter_mut().zip(&mut times) {
            if turn {
                app.resource_mut::<Heading>().0 += 10.0;
            }
            app.run_frame();
            times.push(visibility_ms(app));
        }
    }
    times
        .into_iter()
        .map(|mut times| {
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        })
        .collect()
}

/// The visible count of every view of `app`'s last frame.
fn visible_per_view(app: &App) -> Vec<usize> {
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    views.views().iter().filter_map(|view| visibility.for_view(view.id)).map(|answer| answer.visible().len()).collect()
}

fn bench_views(c: &mut Criterion) {
    let mut group = c.benchmark_group("visibility_views");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    let counts = [1, 2, 4];
    for turn in [false, true] {
        let mut apps: Vec<App> = counts.iter().map(|&cameras| views_app(cameras).0).collect();
        for (&cameras, app) in counts.iter().zip(&mut apps) {
            let name = format!("{cameras}_views_{}", if turn { "turning" } else { "still" });
            group.bench_function(&name, |b| {
                b.iter(|| {
                    if turn {
                        app.resource_mut::<Heading>().0 += 10.0;
                    }
                    app.run_frame()
                })
            });
            eprintln!("{name}: {} threads, visible per view {:?}", app.job_system().threads(), visible_per_view(app));
        }
        let medians = interleaved_medians(&mut apps, 301, turn);
        let rows: Vec<String> = counts
            .iter()
            .zip(&medians)
            .map(|(cameras, ms)| format!("{cameras} views {ms:.3} ms ({:.2}x)", ms / medians[0]))
            .collect();
        eprintln!("Visibility stage median, {}: {}", if turn { "turning" } else { "still" }, rows.join(", "));
    }
    group.finish();
}

criterion_group!(benches, bench_views);
criterion_main!(benches);

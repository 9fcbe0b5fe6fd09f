//! The multi-view shadow caster cull on the host: 100k shadow casters on a grid around the
//! camera, tested against the frame's light views by [`culling::ShadowViews::update`] (the
//! views placed, then every caster against every view in one parallel pass). Rows: the
//! camera's own Visibility stage (the baseline in the same run), the sun's four cascades, the
//! cascades and 16 shadowed spot lights (21 views with the camera), and one thread against the
//! job system for the last.
//!
//! `cargo bench -p culling --bench shadows` (add `-- --quick` while developing).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use culling::{ShadowViews, Visibility};
use ecs::{
    scene, Camera, DirectionalLight, ShadowCaster, ShadowSettings, SpotLight, Transform, Visible, WorldTransform,
};
use glam::{Mat4, Quat, Vec3};
use runtime::App;

/// Shadow casters.
const CASTERS: usize = 100_000;

/// An app of [`CASTERS`] cubes (each a caster) on a 2 m grid, a camera 3 m up at the centre,
/// a sun, and `spots` shadowed spot lights around the camera; one frame run.
fn shadow_app(threads: Option<usize>, spots: usize) -> App {
    let mut app = threads.map_or_else(App::new, App::with_threads);
    culling::install(&mut app);
    let side = (CASTERS as f32).sqrt().ceil() as usize;
    let mesh = scene::unit_cube_mesh();
    let place = |index: usize| {
        let (x, z) = ((index % side) as f32, (index / side) as f32);
        let height = 1.0 + (index % 7) as f32;
        let scale = Vec3::new(1.0, height, 1.0);
        let at = Vec3::new((x - side as f32 / 2.0) * 2.0, height / 2.0, (z - side as f32 / 2.0) * 2.0);
        WorldTransform(Mat4::from_scale_rotation_translation(scale, Quat::IDENTITY, at))
    };
    app.world_mut().spawn_batch((0..CASTERS).map(|index| (place(index), mesh, Visible(true), ShadowCaster)));
    let camera = Transform::from_translation_rotation(Vec3::new(0.0, 3.0, 0.0), Quat::from_rotation_y(0.3));
    scene::spawn_camera(app.world_mut(), Camera::default(), camera);
    let sun = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.8);
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    for index in 0..spots {
        // Around the camera, in front of it, pointing down.
        let angle = index as f32 / spots.max(1) as f32 * std::f32::consts::TAU;
        let position = Vec3::new(angle.sin() * 12.0, 8.0, -20.0 + angle.cos() * 12.0);
        let down = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        let spot = SpotLight { range: 30.0, ..SpotLight::default() };
        app.world_mut().spawn((Transform::from_translation_rotation(position, down), spot));
    }
    app.run_frame();
    app
}

/// Times [`ShadowViews::update`] alone, on the frame the app last ran.
fn bench_update(app: &App, name: &str, group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let settings = *app.resource::<ShadowSettings>();
    let view = app.resource::<Visibility>().view().copied();
    let mut views = ShadowViews::default();
    let jobs = app.job_system();
    let world = app.world();
    let visibility = app.resource::<Visibility>();
    jobs.install(|| views.update(world, view.as_ref(), &visibility, &settings));
    let placed = views.views().len();
    group.bench_function(format!("{name}_{placed}_views"), |b| {
        b.iter(|| jobs.install(|| views.update(world, black_box(view.as_ref()), &visibility, &settings)))
    });
}

fn bench_shadows(c: &mut Criterion) {
    let mut group = c.benchmark_group("shadow_views_100k");
    group.throughput(Throughput::Elements(CASTERS as u64));
    // The baseline: the camera's whole Visibility stage on the same scene.
    let mut camera_only = shadow_app(None, 0);
    camera_only.resource_mut::<ShadowSettings>().enabled = false;
    group.bench_function("camera_visibility_frame", |b| b.iter(|| camera_only.run_frame()));
    bench_update(&shadow_app(None, 0), "sun", &mut group);
    bench_update(&shadow_app(None, 16), "sun_16_spots", &mut group);
    bench_update(&shadow_app(Some(1), 16), "sun_16_spots_one_thread", &mut group);
    group.finish();
}

criterion_group!(benches, bench_shadows);
criterion_main!(benches);

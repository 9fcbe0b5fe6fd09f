//! The shadow views on the host: 100k shadow casters on a grid around the camera and the
//! frame's light views, filled by [`culling::ShadowViews::update`]. Rows: the camera's own
//! Visibility stage (the baseline in the same run); a fresh resource (every caster read and
//! culled against every view: what every frame cost before the views kept their bits) for
//! the sun's four cascades, and for the cascades and 16 shadowed spot lights (20 views), on
//! the job system and on one thread; then what a steady frame costs with the 20 views: lights and casters still (the kept answer), the spot lights moved (every spot
//! view culled again over kept casters), and 1,000 casters moved a frame (the shadow views
//! system's own time in a frame of the app).
//!
//! `cargo bench -p culling --bench shadows` (add `-- --quick` while developing).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use culling::{ShadowViews, Visibility, SHADOW_VIEWS_SYSTEM};
use ecs::{
    scene, Camera, DirectionalLight, ShadowCaster, ShadowSettings, SpotLight, Transform, Visible, WorldTransform,
};
use glam::{Mat4, Quat, Vec3};
use runtime::hecs::Entity;
use runtime::{App, Stage, System};

/// Shadow casters.
const CASTERS: usize = 100_000;

/// Casters the moving row moves each frame (every hundredth).
const MOVED_CASTERS: usize = 1_000;

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Where caster `index` of a grid `side` casters wide stands, `lift` metres up.
fn caster_pose(index: usize, side: usize, lift: f32) -> WorldTransform {
    let (x, z) = ((index % side) as f32, (index / side) as f32);
    let height = 1.0 + (index % 7) as f32;
    let scale = Vec3::new(1.0, height, 1.0);
    let at = Vec3::new((x - side as f32 / 2.0) * 2.0, height / 2.0 + lift, (z - side as f32 / 2.0) * 2.0);
    WorldTransform(Mat4::from_scale_rotation_translation(scale, Quat::IDENTITY, at))
}

/// Where spot light `index` of `spots` shines from, `shift` metres along x: around the
/// camera, in front of it, pointing down.
fn spot_pose(index: usize, spots: usize, shift: f32) -> Transform {
    let angle = index as f32 / spots.max(1) as f32 * std::f32::consts::TAU;
    let position = Vec3::new(angle.sin() * 12.0 + shift, 8.0, -20.0 + angle.cos() * 12.0);
    Transform::from_translation_rotation(position, Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2))
}

/// An app of [`CASTERS`] cubes (each a caster) on a 2 m grid, a camera 3 m up at the centre,
/// a sun, and `spots` shadowed spot lights around the camera; one frame run. Returns the app
/// and the spot lights.
fn shadow_app(threads: Option<usize>, spots: usize) -> (App, Vec<Entity>) {
    let mut app = threads.map_or_else(App::new, App::with_threads);
    culling::install(&mut app);
    let side = (CASTERS as f32).sqrt().ceil() as usize;
    let mesh = scene::unit_cube_mesh();
    app.world_mut()
        .spawn_batch((0..CASTERS).map(|index| (caster_pose(index, side, 0.0), mesh, Visible(true), ShadowCaster)));
    let camera = Transform::from_translation_rotation(Vec3::new(0.0, 3.0, 0.0), Quat::from_rotation_y(0.3));
    scene::spawn_camera(app.world_mut(), Camera::default(), camera);
    let sun = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.8);
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let lights = (0..spots)
        .map(|index| {
            let spot = SpotLight { range: 30.0, ..SpotLight::default() };
            let pose = spot_pose(index, spots, 0.0);
            app.world_mut().spawn((pose, WorldTransform::from(pose), spot))
        })
        .collect();
    app.run_frame();
    (app, lights)
}

/// Times [`ShadowViews::update`] alone from a fresh resource each time, on the frame the app
/// last ran.
fn bench_fresh(app: &App, name: &str, group: &mut Group<'_>) {
    let settings = *app.resource::<ShadowSettings>();
    let view = app.resource::<Visibility>().view().copied();
    let jobs = app.job_system();
    let world = app.world();
    let visibility = app.resource::<Visibility>();
    let mut views = ShadowViews::default();
    jobs.install(|| views.update(world, view.as_ref(), &visibility, &settings));
    let placed = views.views().len();
    group.bench_function(format!("{name}_fresh_{placed}_views"), |b| {
        b.iter_batched_ref(
            ShadowViews::default,
            |views| jobs.install(|| views.update(world, black_box(view.as_ref()), &visibility, &settings)),
            BatchSize::LargeInput,
        )
    });
}

/// Times [`ShadowViews::update`] alone over a kept resource: the same answer again (nothing
/// moved), then with the spot lights `lights` moved back and forth before each update.
fn bench_kept(app: &mut App, lights: &[Entity], group: &mut Group<'_>) {
    let settings = *app.resource::<ShadowSettings>();
    let view = app.resource::<Visibility>().view().copied();
    let mut views = ShadowViews::default();
    let update = |app: &App, views: &mut ShadowViews| {
        let visibility = app.resource::<Visibility>();
        app.job_system().install(|| views.update(app.world(), black_box(view.as_ref()), &visibility, &settings));
    };
    update(app, &mut views);
    let placed = views.views().len();
    group.bench_function(format!("sun_16_spots_still_{placed}_views"), |b| b.iter(|| update(app, &mut views)));
    group.bench_function(format!("sun_16_spots_moved_{placed}_views"), |b| {
        b.iter_custom(|iterations| {
            let mut spent = Duration::ZERO;
            for iteration in 0..iterations {
                let shift = if iteration % 2 == 0 { 1.5 } else { 0.0 };
                for (index, &light) in lights.iter().enumerate() {
                    let pose = spot_pose(index, lights.len(), shift);
                    *app.world_mut().get::<&mut WorldTransform>(light).expect("a light") = WorldTransform::from(pose);
                }
                let started = Instant::now();
                update(app, &mut views);
                spent += started.elapsed();
            }
            spent
        })
    });
}

/// Times the shadow views system in frames of the app where [`MOVED_CASTERS`] casters move
/// up and back down, frame after frame (the Visibility stage names them).
fn bench_moved_casters(mut app: App, group: &mut Group<'_>) {
    let side = (CASTERS as f32).sqrt().ceil() as usize;
    let mut casters: Vec<Entity> =
        app.world().query::<(Entity, &ShadowCaster)>().iter().map(|(entity, _)| entity).collect();
    casters.sort_by_key(|entity| entity.id());
    let moved: Vec<(usize, Entity)> = casters.into_iter().enumerate().step_by(CASTERS / MOVED_CASTERS).collect();
    app.add_system(
        Stage::Input,
        System::new("move casters", move |ctx| {
            let lift = if ctx.time.frame_index % 2 == 0 { 0.5 } else { 0.0 };
            for &(index, entity) in &moved {
                *ctx.get_mut::<WorldTransform>(entity).expect("a caster") = caster_pose(index, side, lift);
            }
        })
        .writes::<WorldTransform>(),
    );
    app.run_frames(2);
    let views = app.resource::<ShadowViews>().views().len();
    group.bench_function(format!("sun_16_spots_1k_casters_moved_{views}_views"), |b| {
        b.iter_custom(|iterations| {
            let mut spent = Duration::ZERO;
            for _ in 0..iterations {
                app.run_frame();
                let seconds = app
                    .schedule()
                    .system_seconds()
                    .find(|(_, system, _)| *system == SHADOW_VIEWS_SYSTEM)
                    .map_or(0.0, |(_, _, seconds)| seconds);
                spent += Duration::from_secs_f64(seconds);
            }
            spent
        })
    });
}

fn bench_shadows(c: &mut Criterion) {
    let mut group = c.benchmark_group("shadow_views_100k");
    group.throughput(Throughput::Elements(CASTERS as u64));
    // The baseline: the camera's whole Visibility stage on the same scene.
    let (mut camera_only, _) = shadow_app(None, 0);
    camera_only.resource_mut::<ShadowSettings>().enabled = false;
    group.bench_function("camera_visibility_frame", |b| b.iter(|| camera_only.run_frame()));
    drop(camera_only);
    bench_fresh(&shadow_app(None, 0).0, "sun", &mut group);
    let (mut spots, lights) = shadow_app(None, 16);
    bench_fresh(&spots, "sun_16_spots", &mut group);
    bench_fresh(&shadow_app(Some(1), 16).0, "sun_16_spots_one_thread", &mut group);
    bench_kept(&mut spots, &lights, &mut group);
    bench_moved_casters(spots, &mut group);
    group.finish();
}

criterion_group!(benches, bench_shadows);
criterion_main!(benches);

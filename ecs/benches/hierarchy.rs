//! Hierarchy propagation for 100k entities (10k roots, three levels: 1 + 3 + 6 nodes per
//! tree) on the job system against the same code on a one-thread pool; and the Transform
//! stage of a 1M-object city (`transform_1m`: 200k roots with 4 children each, like cars and
//! their wheels, where 2% of the roots move between frames): the full pass every frame as the
//! baseline, the app whose change log sends the stage to the incremental pass, and the same
//! app with nothing moving.

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::hierarchy::{HierarchyReport, PassKind, Propagator};
use ecs::{scene, Transform};
use runtime::{App, JobSystem, Stage, System};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

fn propagation(criterion: &mut Criterion) {
    let mut world = hecs::World::new();
    let forest = scene::spawn_forest(&mut world, 10_000, &[3, 2], scene::unit_cube_mesh());
    assert_eq!(forest.entities.len(), 100_000);
    let mut commands = hecs::CommandBuffer::new();
    let mut report = HierarchyReport::default();

    let mut group = criterion.benchmark_group("hierarchy_100k");
    let pools = [("job_system", JobSystem::global()), ("one_thread", &JobSystem::new(1))];
    for (name, pool) in pools {
        let mut propagator = Propagator::default();
        // Warm the buffers so the measurement is the steady state.
        pool.install(|| propagator.run(&world, &mut commands, &mut report));
        commands.run_on(&mut world);
        group.bench_function(name, |bencher| {
            bencher.iter(|| pool.install(|| propagator.run(&world, &mut commands, &mut report)))
        });
    }
    group.finish();
    assert_eq!((report.nodes, report.levels), (100_000, 3));
}

/// Roots of the 1M-node forest (each with 4 children).
const CITY_ROOTS: usize = 200_000;
/// One root in this many moves each frame (2%).
const MOVER_EVERY: usize = 50;

/// Marks the roots the bench moves.
struct Mover;

type MoverQuery<'a> = hecs::With<&'a mut Transform, &'a Mover>;

/// The 1M-node city as an app: `ecs::install`, and a system in `Stage::Input` that moves the
/// `Mover` roots (2%) through a filtered query each frame when `moving`.
fn city_app(moving: bool) -> App {
    let mut app = App::new();
    ecs::install(&mut app);
    let forest = scene::spawn_forest(app.world_mut(), CITY_ROOTS, &[4], scene::unit_cube_mesh());
    assert_eq!(forest.entities.len(), 5 * CITY_ROOTS);
    for &root in forest.roots.iter().step_by(MOVER_EVERY) {
        app.world_mut().insert_one(root, Mover).expect("just spawned");
    }
    if moving {
        app.add_system(
            Stage::Input,
            System::new("drive", |ctx| {
                let step = if ctx.time.frame_index % 2 == 0 { 0.1 } else { -0.1 };
                for transform in ctx.query::<MoverQuery>().iter() {
                    transform.translation.x += step;
                }
            })
            .query::<MoverQuery>(),
        );
    }
    app.run_frames(3);
    app
}

/// The `Transform` stage's wall time in the app's last frame.
fn transform_stage(app: &App) -> Duration {
    let (_, seconds) = (app.schedule().stage_seconds())
        .find(|(stage, _)| *stage == Stage::Transform.name())
        .expect("every app has a Transform stage");
    Duration::from_secs_f64(seconds)
}

fn city_propagation(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("transform_1m");
    // The full pass every frame (what the stage did before it read the change log): the
    // propagator alone, after 2% of the roots moved.
    {
        let mut world = hecs::World::new();
        let forest = scene::spawn_forest(&mut world, CITY_ROOTS, &[4], scene::unit_cube_mesh());
        let movers: Vec<hecs::Entity> = forest.roots.iter().copied().step_by(MOVER_EVERY).collect();
        let mut commands = hecs::CommandBuffer::new();
        let mut report = HierarchyReport::default();
        let mut propagator = Propagator::default();
        let pool = JobSystem::global();
        pool.install(|| propagator.run(&world, &mut commands, &mut report));
        commands.run_on(&mut world);
        let mut frame = 0u32;
        group.bench_function("full_pass_job_system", |bencher| {
            bencher.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    frame += 1;
                    let step = if frame.is_multiple_of(2) { 0.1 } else { -0.1 };
                    for &root in &movers {
                        world.get::<&mut Transform>(root).expect("a root has a Transform").translation.x += step;
                    }
                    let started = Instant::now();
                    pool.install(|| propagator.run(&world, &mut commands, &mut report));
                    total += started.elapsed();
                }
                total
            })
        });
        assert_eq!((report.nodes, report.levels), (5 * CITY_ROOTS, 2));
    }
    // The Transform stage of an app whose system moves 2% of the roots: the change log sends
    // it to the incremental pass.
    for (name, moving, pass) in
        [("moving_2pct_job_system", true, PassKind::Incremental), ("still_job_system", false, PassKind::Skipped)]
    {
        let mut app = city_app(moving);
        group.bench_function(name, |bencher| {
            bencher.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    app.run_frame();
                    total += transform_stage(&app);
                }
                total
            })
        });
        let report = *app.resource::<HierarchyReport>();
        assert_eq!(report.last_pass, pass, "{name}");
        let moved = if moving { 5 * CITY_ROOTS / MOVER_EVERY } else { 0 };
        assert_eq!(report.updated, moved, "{name}: the moving roots and their children");
    }
    group.finish();
}

/// Static props of the game-like world (roots without children).
const GAME_PROPS: usize = 150_000;
/// Moving roots of the game-like world, each with one child.
const GAME_MOVERS: usize = 4_000;
/// Bullets spawned, and despawned, each frame of the spawning row.
const BULLETS_PER_FRAME: usize = 200;
/// Frames a bullet lives: the world holds this many frames' worth of bullets.
const BULLET_LIFE: usize = 10;

/// Marks a bullet.
struct Bullet;

/// The game-like world as an app: 150k props, 4,000 `Mover` roots with a child each moved
/// through a filtered query every frame, and 2,000 bullets; when `spawning`, a system spawns
/// 200 bullets a frame and despawns the 200 oldest through its commands (so the node count
/// holds at 160k).
fn game_app(spawning: bool) -> App {
    let mut app = App::new();
    ecs::install(&mut app);
    let mesh = scene::unit_cube_mesh();
    scene::spawn_forest(app.world_mut(), GAME_PROPS, &[], mesh);
    let movers = scene::spawn_forest(app.world_mut(), GAME_MOVERS, &[1], mesh);
    for &root in &movers.roots {
        app.world_mut().insert_one(root, Mover).expect("just spawned");
    }
    let bullet = move |index: usize| {
        let local = Transform::from_translation(glam::Vec3::new(index as f32 * 0.01, 2.0, 0.0));
        (local, ecs::WorldTransform::from(local), mesh, ecs::Visible(true), Bullet)
    };
    let mut bullets: VecDeque<hecs::Entity> =
        (0..BULLETS_PER_FRAME * BULLET_LIFE).map(|index| app.world_mut().spawn(bullet(index))).collect();
    app.add_system(
        Stage::Input,
        System::new("drive", |ctx| {
            let step = if ctx.time.frame_index % 2 == 0 { 0.1 } else { -0.1 };
            for transform in ctx.query::<MoverQuery>().iter() {
                transform.translation.x += step;
            }
        })
        .query::<MoverQuery>(),
    );
    if spawning {
        let mut fired = 0;
        app.add_system(
            Stage::Input,
            System::new("fire", move |ctx| {
                for _ in 0..BULLETS_PER_FRAME {
                    let oldest = bullets.pop_front().expect("the world holds BULLET_LIFE frames of bullets");
                    ctx.commands.despawn(oldest);
                    bullets.push_back(ctx.commands.spawn(bullet(fired)));
                    fired += 1;
                }
            })
            .spawns(),
        );
    }
    app.run_frames(3);
    assert_eq!(app.resource::<HierarchyReport>().nodes, GAME_PROPS + 2 * GAME_MOVERS + BULLETS_PER_FRAME * BULLET_LIFE);
    app
}

/// The Transform stage of the game-like world, with only the moves and with the bullets as
/// well: both run the incremental pass, the second within 1.3x of the first is the goal.
fn game_propagation(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("transform_game_160k");
    for (name, spawning) in [("moves_8k", false), ("moves_8k_spawns_200", true)] {
        let mut app = game_app(spawning);
        group.bench_function(name, |bencher| {
            bencher.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    app.run_frame();
                    total += transform_stage(&app);
                }
                total
            })
        });
        let report = *app.resource::<HierarchyReport>();
        assert_eq!(report.last_pass, PassKind::Incremental, "{name}");
        assert_eq!(report.updated, 2 * GAME_MOVERS + if spawning { BULLETS_PER_FRAME } else { 0 }, "{name}");
    }
    group.finish();
}

criterion_group!(benches, propagation, city_propagation, game_propagation);
criterion_main!(benches);

//! Hierarchy propagation for 100k entities (10k roots, three levels: 1 + 3 + 6 nodes per
//! tree) on the job system against the same code on a one-thread pool; and the Transform
//! stage of a 1M-object city (`transform_1m`: 200k roots with 4 children each, like cars and
//! their wheels, where 2% of the roots move between frames).

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::hierarchy::{HierarchyReport, Propagator};
use ecs::{scene, Transform};
use runtime::JobSystem;
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

fn city_propagation(criterion: &mut Criterion) {
    let mut world = hecs::World::new();
    let forest = scene::spawn_forest(&mut world, CITY_ROOTS, &[4], scene::unit_cube_mesh());
    assert_eq!(forest.entities.len(), 5 * CITY_ROOTS);
    let movers: Vec<hecs::Entity> = forest.roots.iter().copied().step_by(50).collect();
    let mut commands = hecs::CommandBuffer::new();
    let mut report = HierarchyReport::default();
    let mut propagator = Propagator::default();
    let pool = JobSystem::global();
    pool.install(|| propagator.run(&world, &mut commands, &mut report));
    commands.run_on(&mut world);
    let mut group = criterion.benchmark_group("transform_1m");
    let mut frame = 0u32;
    group.bench_function("moving_2pct_job_system", |bencher| {
        bencher.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                frame += 1;
                let step = if frame % 2 == 0 { 0.1 } else { -0.1 };
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
    group.finish();
    assert_eq!((report.nodes, report.levels), (5 * CITY_ROOTS, 2));
}

criterion_group!(benches, propagation, city_propagation);
criterion_main!(benches);

//! Hierarchy propagation for 100k entities (10k roots, three levels: 1 + 3 + 6 nodes per
//! tree) on the job system against the same code on a one-thread pool.

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::hierarchy::{HierarchyReport, Propagator};
use ecs::scene;
use runtime::JobSystem;

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

criterion_group!(benches, propagation);
criterion_main!(benches);

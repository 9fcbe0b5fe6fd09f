//! Spawning 100k mesh entities: one `spawn_batch` call against one `spawn` per entity.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ecs::{scene, Transform, Visible, WorldTransform};
use glam::Vec3;

const COUNT: usize = 100_000;

fn spawning(criterion: &mut Criterion) {
    let mesh = scene::unit_cube_mesh();
    let mut group = criterion.benchmark_group("spawn_100k_meshes");
    group.bench_function("spawn_batch", |bencher| {
        bencher.iter_batched(
            hecs::World::new,
            |mut world| {
                scene::spawn_mesh_grid(&mut world, COUNT, 2.0, mesh);
                world
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("spawn_each", |bencher| {
        bencher.iter_batched(
            hecs::World::new,
            |mut world| {
                for index in 0..COUNT {
                    let transform = Transform::from_translation(Vec3::new(index as f32, 0.0, 0.0));
                    world.spawn((transform, WorldTransform::from(transform), mesh, Visible(true)));
                }
                world
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, spawning);
criterion_main!(benches);

//! The animation system's frame for 1,000 and 10,000 characters of 40 joints, on one and two
//! threads, against a serial loop posing the same rigs with the same clips (no ECS, no jobs).

mod support {
    pub mod characters;
}

use animation::{pose_rig, AnimationPlayer, PoseScratch, SkinMatrix};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ecs::SkinnedPose;
use support::characters::{Characters, JOINTS};

fn animation(criterion: &mut Criterion) {
    let characters = Characters::new();
    let mut group = criterion.benchmark_group("animation_40_joints");
    group.sample_size(20);
    for count in [1_000, 10_000] {
        for threads in [1, 2] {
            let mut app = characters.app(threads, count);
            group.bench_function(BenchmarkId::new(format!("system_{threads}_threads"), count), |bench| {
                bench.iter(|| app.run_frame())
            });
        }
        let mut players: Vec<AnimationPlayer> = (0..count).map(|character| characters.player(character)).collect();
        let mut palette = vec![SkinMatrix::IDENTITY; count * JOINTS];
        let mut poses = vec![SkinnedPose::from_skin_box(characters.boxes.bind_bounds()); count];
        let mut scratch = PoseScratch::default();
        group.bench_function(BenchmarkId::new("serial_loop", count), |bench| {
            bench.iter(|| {
                for ((player, slice), pose) in players.iter_mut().zip(palette.chunks_exact_mut(JOINTS)).zip(&mut poses)
                {
                    player.advance(1.0 / 60.0);
                    let (bounds, _) =
                        pose_rig(&characters.skeleton, &characters.boxes, Some(player), slice, &mut scratch);
                    *pose = SkinnedPose::from_skin_box(bounds);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, animation);
criterion_main!(benches);

//! The animation system's frame for 1,000 and 10,000 characters of 40 joints, on one and two
//! threads, against a serial loop posing the same rigs with the same clips (no ECS, no jobs),
//! and for 10,000 characters of 30 and of 60 joints (the ends of a game's usual rigs);
//! and the memory floor under it: writing as many palette bytes as the frame does (one
//! 48-byte entry a joint) as a plain streaming fill on one and two threads, and reading the
//! clips' key values once.

mod support {
    pub mod characters;
}

use std::hint::black_box;

use animation::{pose_rig, AnimationPlayer, PoseScratch, SkinMatrix};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ecs::SkinnedPose;
use glam::Vec4;
use runtime::jobs::JobSystem;
use support::characters::{Characters, JOINTS};

fn animation(criterion: &mut Criterion) {
    let characters = Characters::new();
    let mut group = criterion.benchmark_group("animation_40_joints");
    group.sample_size(20);
    for count in [1_000, 10_000] {
        bench_characters(&mut group, &characters, count, &count.to_string());
    }
    group.finish();
    let mut group = criterion.benchmark_group("animation_joints");
    group.sample_size(20);
    for joints in [30, 60] {
        let characters = Characters::with_joints(joints);
        bench_characters(&mut group, &characters, 10_000, &format!("10000x{joints}"));
    }
    group.finish();
}

/// The system on one and two threads and the serial loop, posing `count` of `characters`.
fn bench_characters(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    characters: &Characters,
    count: usize,
    row: &str,
) {
    let joints = characters.joints();
    for threads in [1, 2] {
        let mut app = characters.app(threads, count);
        group.bench_function(BenchmarkId::new(format!("system_{threads}_threads"), row), |bench| {
            bench.iter(|| app.run_frame())
        });
    }
    let mut players: Vec<AnimationPlayer> = (0..count).map(|character| characters.player(character)).collect();
    let mut palette = vec![SkinMatrix::IDENTITY; count * joints];
    let mut poses = vec![SkinnedPose::from_skin_box(characters.boxes.bind_bounds()); count];
    let mut scratch = PoseScratch::default();
    group.bench_function(BenchmarkId::new("serial_loop", row), |bench| {
        bench.iter(|| {
            for ((player, slice), pose) in players.iter_mut().zip(palette.chunks_exact_mut(joints)).zip(&mut poses) {
                player.advance(1.0 / 60.0);
                let (bounds, _) = pose_rig(&characters.skeleton, &characters.boxes, Some(player), slice, &mut scratch);
                *pose = SkinnedPose::from_skin_box(bounds);
            }
        })
    });
}

/// The floor: the palette bytes of a frame written as a plain fill (each thread one
/// contiguous half), and the clips' key values read once (what sampling reads at least).
fn memory_floor(criterion: &mut Criterion) {
    let characters = Characters::new();
    let mut group = criterion.benchmark_group("palette_floor_40_joints");
    group.sample_size(20);
    for count in [1_000, 10_000] {
        let mut palette = vec![SkinMatrix::IDENTITY; count * JOINTS];
        for threads in [1, 2] {
            let jobs = JobSystem::new(threads);
            let mut frame = 0.0_f32;
            group.bench_function(BenchmarkId::new(format!("stream_write_{threads}_threads"), count), |bench| {
                bench.iter(|| {
                    frame += 1.0;
                    let entry = SkinMatrix::from_rows([Vec4::X, Vec4::Y, Vec4::new(0.0, 0.0, 1.0, frame)]);
                    let half = palette.len().div_ceil(threads);
                    jobs.parallel_for_chunks(&mut palette, half, |_, chunk| chunk.fill(black_box(entry)));
                })
            });
        }
        black_box(&palette);
    }
    group.bench_function("read_keys", |bench| bench.iter(|| black_box(characters.key_sum())));
    group.finish();
}

criterion_group!(benches, animation, memory_floor);
criterion_main!(benches);

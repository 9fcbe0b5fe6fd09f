//! Thread CPU time per posed joint of the animation system: runs the bench's characters
//! (`COUNT` of 40 joints, default 10,000) on `THREADS` threads (default 2) for `FRAMES` frames
//! (default 200) and divides the CPU time every thread of the process spent in those frames
//! (`/proc/self/task/*/schedstat`, nanoseconds) by the joints posed. Then the same for the
//! memory floor: the frame's palette bytes (one 48-byte entry a joint) written as a plain
//! fill on as many threads. CPU time, unlike wall time, holds up on a loaded machine, and so
//! do the fastest frames (those no other process interrupted), which it prints too.
//!
//! `cargo run --release -p animation --example cpu_per_joint -- COUNT THREADS FRAMES`

#[path = "../benches/support/characters.rs"]
mod characters;

use animation::SkinMatrix;
use characters::{Characters, JOINTS};
use glam::Vec4;
use runtime::jobs::JobSystem;

/// CPU nanoseconds every thread of this process has run so far (Linux; 0 elsewhere).
fn process_thread_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn main() {
    let mut args = std::env::args().skip(1).map(|arg| arg.parse::<usize>().expect("a number"));
    let count = args.next().unwrap_or(10_000);
    let threads = args.next().unwrap_or(2);
    let frames = args.next().unwrap_or(200).max(1);
    let mut app = Characters::new().app(threads, count);
    app.run_frames(10);
    let mut frame_ms = Vec::with_capacity(frames);
    let (cpu_before, wall) = (process_thread_cpu_ns(), std::time::Instant::now());
    for _ in 0..frames {
        let frame = std::time::Instant::now();
        app.run_frame();
        frame_ms.push(frame.elapsed().as_secs_f64() * 1e3);
    }
    let (cpu, wall) = (process_thread_cpu_ns() - cpu_before, wall.elapsed());
    let joints = (frames * count * JOINTS) as f64;
    frame_ms.sort_by(f64::total_cmp);
    println!(
        "{count} characters x {JOINTS} joints, {threads} threads, {frames} frames: {:.2} ms a frame (wall), \
         {:.2} ns CPU a joint (all threads); frames: fastest {:.2} ms, tenth percentile {:.2} ms, median {:.2} ms",
        wall.as_secs_f64() * 1e3 / frames as f64,
        cpu as f64 / joints,
        frame_ms[0],
        frame_ms[frames / 10],
        frame_ms[frames / 2]
    );
    let mut palette = vec![SkinMatrix::IDENTITY; count * JOINTS];
    let jobs = JobSystem::new(threads);
    let half = palette.len().div_ceil(threads);
    let (cpu_before, wall) = (process_thread_cpu_ns(), std::time::Instant::now());
    for frame in 0..frames {
        let entry = SkinMatrix::from_rows([Vec4::X, Vec4::Y, Vec4::new(0.0, 0.0, 1.0, frame as f32)]);
        jobs.parallel_for_chunks(&mut palette, half, |_, chunk| chunk.fill(std::hint::black_box(entry)));
    }
    let (cpu, wall) = (process_thread_cpu_ns() - cpu_before, wall.elapsed());
    std::hint::black_box(&palette);
    println!(
        "floor: the same palette bytes as a fill: {:.2} ms a frame (wall), {:.2} ns CPU a joint (all threads)",
        wall.as_secs_f64() * 1e3 / frames as f64,
        cpu as f64 / joints
    );
}

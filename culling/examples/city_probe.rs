//! A one-thread timing probe of the bench city (`benches/visibility.rs`,
//! `visibility_city_1m`): the same scene, run for a number of frames on `App::with_threads`,
//! printing the minimum and the median Visibility-stage frame time. Minimums are steadier
//! than criterion's means on a shared machine, so this is how two builds are compared
//! (alternating their runs).
//!
//! `cargo run --release -p culling --example city_probe -- [frames] [threads] [marked]`

use std::time::Instant;

use culling::Visibility;
use ecs::VisibilityTags;

#[path = "../benches/support/city.rs"]
mod city;
#[path = "../benches/support/mod.rs"]
mod support;
use city::{city_app, Clock};

fn main() {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(60);
    let threads: usize = args.next().and_then(|arg| arg.parse().ok()).unwrap_or(1);
    let tags =
        if args.next().is_some_and(|arg| arg == "marked") { VisibilityTags::Marked } else { VisibilityTags::All };
    let (mut app, _, cars) = city_app(tags, Some(threads));
    let mut times = Vec::with_capacity(frames);
    let mut untracked = 0;
    let (mut tag_times, mut apply_times) = (Vec::with_capacity(frames), Vec::with_capacity(frames));
    for _ in 0..frames {
        app.resource_mut::<Clock>().0 += 1;
        let started = Instant::now();
        app.run_frame();
        times.push(started.elapsed().as_secs_f64() * 1e3);
        let stats = *app.resource::<Visibility>().stats();
        untracked += usize::from(!stats.tracked);
        tag_times.push(stats.tag_seconds * 1e3);
        apply_times.push(stats.tag_apply_seconds * 1e3);
    }
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let (tags, apply) = (median(&mut tag_times), median(&mut apply_times));
    times.sort_by(f64::total_cmp);
    let stats = *app.resource::<Visibility>().stats();
    println!(
        "city_probe: {threads} threads, {cars} cars, {} visible, {} occluded, {untracked} untracked frames; frame min {:.3} ms, median {:.3} ms; tags median {tags:.3} ms (archetype moves {apply:.3} ms)",
        stats.visible,
        stats.occluded,
        times[0],
        times[times.len() / 2]
    );
}

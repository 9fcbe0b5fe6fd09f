//! The demo: a procedural city culled frame by frame while the camera flies through it.
//!
//! It builds about 100k mesh entities by default (`--objects N`, 1k to 1M: buildings,
//! props, trees with three levels of detail, cars with parented wheels, skinned pedestrians
//! that raise their arms), runs the engine's stages on the job system, and prints what the
//! Visibility stage decided and how long each stage took. Every frame runs headless.
//!
//! Every object is a real low-poly mesh generated in code and processed by meshopt (LOD
//! chain, meshlets); every mesh entity gets its mesh's LOD chain. When a Vulkan device exists,
//! the frames `--render` asks for (the last by default, or every one) are drawn with the
//! render graph's standard passes (lit meshes at the level each object's LOD chose), and
//! drawn again with culling off: the two images must be identical, pixel for pixel. The
//! last frame goes to `city.png` in `--out DIR` (default: the current folder), with
//! `stats.json`; `--png-every N` adds every N-th frame.
//! Without a device the demo says why once and keeps to the CPU path and its statistics.
//!
//! Run: `cargo run --release -p samples --bin city [-- OPTIONS]`; `--help` explains every
//! option (`samples::city::CityOptions`). For example
//! `city --frames 120 --size 640x360 --render every --out images --png-every 30 --validate`.

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;

fn main() -> ExitCode {
    samples::city::run::main()
}

//! The glTF viewer: loads one or more .gltf or .glb files into one scene in the ECS (meshes
//! processed by meshopt: LOD chains and meshlets), frames it with a camera (or looks through
//! the file's first camera when one file is given), runs the engine's stages with culling
//! on, and draws it through the standard passes into a PNG, checking the image against one
//! drawn with culling off.
//!
//! Run: `cargo run --release -p samples --bin viewer -- SCENE.glb [MORE.gltf ...] [--as-is]
//! [--out IMAGE.png] [--size WxH] [--classify]`
//!
//! Several files: each file's model is added to the mesh library once and spawned once
//! (`GltfScene::add_model`, `spawn_model`). They stand side by side along +x by their
//! bounds, the first at its own origin, each next one shifted along x only to start a tenth
//! of the largest model's size after the previous one ends, so none overlaps another;
//! `--as-is` leaves every model at its own origin instead. The files' own cameras are then
//! left inactive and the framing camera sees them all. A file that cannot be loaded gets one
//! line naming it and the problem on standard error; the others are still drawn, and the
//! viewer exits 1 at the end so scripts notice.
//!
//! The framing camera looks at the centre of the scene's bounds, far enough for the bounding
//! sphere to fit the field of view, its near plane following the scene's size (a 2 cm model
//! and a 2 km one are framed alike; see `samples::viewer::framing`).
//!
//! `--window` shows the scene in a window instead (the engine's Render stage, GPU culling
//! where a device can, textures, masks and blending as in the PNG), starting from the same
//! camera, pipelined; fly with W A S D, Space, Ctrl and the left mouse button, F1 turns culling off,
//! V cycles the depth views, F3 shows the debug overlay (`--hud`: from the start), Esc closes.
//! With `--frames N` it closes after N frames, and `--screenshot PATH` writes the last one.
//!
//! `--stream` loads the files through the engine's asset server on a loader thread while
//! frames run (the Render stage draws from the first frame, in the window or headless): each
//! model appears once it is ready, its meshes drawing stand-ins until their bytes are on the
//! GPU, beside those arrived before it (in arrival order), and the camera frames everything
//! arrived (`samples::viewer::stream`). Headless, frames run until every file has arrived and
//! is on the GPU; the last one is the PNG, checked against the unculled image and the truth
//! (`false_hidden`).
//!
//! `--shadows` lights the scene with a sun casting shadows (four cascades) from every mesh
//! onto every mesh, in the PNG (every caster drawn into every cascade, checked culled against
//! unculled like the rest) and in the window (the Render stage culls the casters per cascade,
//! on the GPU with GPU culling).
//!
//! `--animate [CLIP]` plays the files' animations: each skinned mesh is rigged when spawned
//! and plays the clip named CLIP (a name or an index into the file's clips; the first clip
//! of its skin without one), looping, posed by the animation system and skinned on the GPU.
//! Headless it draws `--frames N` frames (60 without) at 30 frames a second, writes every
//! `--png-every K`-th one (only the last without) beside `--out` as `IMAGE-NNNN.png`, and
//! prints how many frames differ from the first; `--truth` compares each frame's culled
//! image with the unculled one (else only the last frame is compared). In the window it
//! plays until closed. Without `--animate` skinned meshes stand in their bind pose.
//!
//! `--classify` also culls meshlet by meshlet on the GPU (a `cluster cull:` line, checked
//! against the unculled image and the meshlet truth) and writes `IMAGE-meshlets.png`: every
//! meshlet drawn with culling off in its verdict's colour (visible green, frustum red,
//! back-facing purple, occluded blue, kept conservatively amber), and `IMAGE-materials.png`:
//! every object drawn with culling off in its material's alpha mode (opaque grey, masked
//! green, blended blue; textured ones lighter).
//!
//! Prints, per file, objects, triangles per LOD level drawn, and meshlets. A scene with
//! nothing to draw says so and exits 0; a bad file exits 1 with one line naming the problem.
//! Without a Vulkan device the viewer says why, skips the image and exits 0 (1 if a file was
//! bad).

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::process::ExitCode;

use samples::viewer::{Options, USAGE};

fn main() -> ExitCode {
    samples::init_logging();
    match Options::parse(std::env::args().skip(1)) {
        Ok(options) => samples::viewer::run(&options),
        Err(message) => {
            if !message.is_empty() {
                eprintln!("viewer: {message}");
            }
            eprintln!("{USAGE}");
            if message.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

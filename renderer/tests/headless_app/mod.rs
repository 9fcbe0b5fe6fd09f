//! The headless app the renderer's run-time tests draw with: the engine's ECS on two threads,
//! the Render stage on a headless target of `width` x `height`, the GPU's bits waited for, no
//! user passes, no shadows and the tests' sky.

use std::sync::Arc;

use culling::CullingBackend;
use render_graph::{vk, GpuDevice};
use renderer::{install_render_to, BitsReadback, HeadlessTarget, MeshLibrary, RenderSetup, SharedCapture};

/// The clear colour of every run-time test's frames (and of their references).
pub const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

/// An app drawing `meshes` for `capacity` objects at first, culled by `backend` on `device`;
/// `settings` adjusts the render settings before the Render stage is installed (pipelining,
/// budgets). No camera or object is spawned.
pub fn headless_app(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    meshes: MeshLibrary,
    (width, height, capacity): (u32, u32, u32),
    settings: impl FnOnce(&mut ecs::RenderSettings),
) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width, height },
        capacity,
        meshes,
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width, height });
    ecs::install(&mut app);
    settings(&mut app.resource_mut::<ecs::RenderSettings>());
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    (app, capture)
}

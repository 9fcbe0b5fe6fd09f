//! The headless app the renderer's run-time tests draw with: the engine's ECS on two threads,
//! the Render stage on a headless target of `width` x `height`, the GPU's bits waited for, no
//! user passes, no shadows and the tests' sky; [`headless_app_with`] for tests that want
//! other threads, shadows or users' passes.

// Each test uses part of it.
#![allow(dead_code)]

use std::sync::Arc;

use culling::CullingBackend;
use render_graph::{vk, GpuDevice};
use renderer::{install_render_to, AddPasses, BitsReadback, HeadlessTarget, MeshLibrary, RenderSetup, SharedCapture};

/// The clear colour of every run-time test's frames (and of their references).
pub const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

/// What [`headless_app_with`] may change of [`headless_app`]'s app.
pub struct AppOptions {
    /// The job system's threads (2 by default).
    pub threads: usize,
    /// Whether the frames draw shadows (`RenderSetup::shadows`; off by default).
    pub shadows: bool,
    /// The users' passes (`RenderSetup::passes`; none by default).
    pub passes: Vec<AddPasses>,
    /// The clear colour ([`SKY`] by default).
    pub sky: [f32; 4],
}

impl Default for AppOptions {
    fn default() -> Self {
        AppOptions { threads: 2, shadows: false, passes: Vec::new(), sky: SKY }
    }
}

/// An app drawing `meshes` for `capacity` objects at first, culled by `backend` on `device`;
/// `settings` adjusts the render settings before the Render stage is installed (pipelining,
/// budgets). No camera or object is spawned.
pub fn headless_app(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    meshes: MeshLibrary,
    size: (u32, u32, u32),
    settings: impl FnOnce(&mut ecs::RenderSettings),
) -> (runtime::App, SharedCapture) {
    let prepare = |app: &mut runtime::App| settings(&mut app.resource_mut::<ecs::RenderSettings>());
    headless_app_with(device, backend, meshes, size, AppOptions::default(), prepare)
}

/// [`headless_app`] with `options`; `prepare` adjusts the app (its render or shadow settings)
/// before the Render stage is installed.
pub fn headless_app_with(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    meshes: MeshLibrary,
    (width, height, capacity): (u32, u32, u32),
    AppOptions { threads, shadows, passes, sky }: AppOptions,
    prepare: impl FnOnce(&mut runtime::App),
) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width, height },
        capacity,
        meshes,
        clear_color: sky,
        bits: BitsReadback::Wait,
        passes,
        shadows,
    };
    let mut app = runtime::App::with_threads(threads);
    app.insert_resource(ecs::Viewport { width, height });
    ecs::install(&mut app);
    prepare(&mut app);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    (app, capture)
}

/// Turns frustum and occlusion culling on or off (`culled`): the tests' unculled frames.
pub fn culling(app: &mut runtime::App, culled: bool) {
    let mut settings = app.resource_mut::<ecs::RenderSettings>();
    settings.frustum_culling = culled;
    settings.occlusion_culling = culled;
}

//! The split-screen tests' shared set-up and judgement: two cameras, each drawing into one
//! half of the window, and every window view of a drawn frame judged against the truth.

// Each test uses part of it.
#![allow(dead_code)]

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, CameraRect, ResolvedViews, Transform, ViewId, ViewTarget};
use renderer::truth::{check_gpu_view, check_view, FrameCheck, ReferenceRenderer};
use renderer::RenderReport;
use runtime::hecs::{Entity, World};

/// Spawns two cameras at `left` and `right`: the first (order 0) draws into the window's left
/// half, the second (order 1) into its right half. Returns both.
pub fn split_cameras(world: &mut World, [left, right]: [Transform; 2]) -> [Entity; 2] {
    let first = scene::spawn_camera(world, Camera::default(), left);
    let second = scene::spawn_camera(world, Camera { order: 1, ..Camera::default() }, right);
    world.insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    world.insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
    [first, second]
}

/// Judges every window view of the frame `app` drew into `image` (RGBA8, its extent) with
/// `reference` (drawing at the window's size): culled on the GPU (`backend`), each view
/// against its own bits (the main view the GPU's view 0, the others from 1 in render order);
/// else against its CPU answer. Returns each view's id, its index among the GPU's views and
/// its check, in render order.
pub fn check_window_views(
    reference: &mut ReferenceRenderer,
    app: &runtime::App,
    image: (&[u8], (u32, u32)),
    backend: CullingBackend,
) -> Vec<(ViewId, usize, FrameCheck)> {
    let report = app.resource::<RenderReport>();
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    let mut others = 0;
    let mut checks = Vec::new();
    for view in views.views() {
        let ViewTarget::Window(rect) = &view.target else { continue };
        let rect = [rect.x, rect.y, rect.width, rect.height];
        let index = if views.main() == Some(view.id) {
            0
        } else {
            others += 1;
            others
        };
        let checked = if backend == CullingBackend::Gpu {
            check_gpu_view(reference, image, rect, (app.world(), &*visibility), (view.id, index), &report)
        } else {
            check_view(reference, image, rect, app.world(), &visibility, view.id)
        };
        checks.push((view.id, index, checked.expect("the truth answers")));
    }
    checks
}

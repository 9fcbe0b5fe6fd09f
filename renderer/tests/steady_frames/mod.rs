//! The steady-state allocation tests' shared frames (split-screen, image views): an app
//! drawing a grid of 900 unit cubes into a 64x32 window, two cameras swinging between two
//! targets every frame so the views' lists, tags and draws change, and the allocations of
//! whole frames counted after warm-up (the test crate installs the counting allocator).

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Viewport};
use glam::Vec3;
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, MeshLibrary, RenderSetup};
use runtime::alloc_counter::{count_allocations, settle_threads};
use runtime::hecs::Entity;

/// The window's size.
pub const EXTENT: vk::Extent2D = vk::Extent2D { width: 64, height: 32 };

/// An app drawing `meshes` into the window culled by `backend`, room for 1024 objects, the
/// bits not read back, with the grid of cubes and no camera.
pub fn steady_app(device: &Arc<GpuDevice>, backend: CullingBackend, meshes: MeshLibrary) -> runtime::App {
    let mut app = runtime::App::with_threads(2);
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: EXTENT,
        capacity: 1024,
        meshes,
        clear_color: [0.0; 4],
        bits: BitsReadback::None,
        passes: Vec::new(),
    };
    install_render(&mut app, setup).expect("a device is there");
    app.insert_resource(Viewport { width: EXTENT.width, height: EXTENT.height });
    scene::spawn_mesh_grid(app.world_mut(), 900, 2.0, scene::unit_cube_mesh());
    app
}

/// Runs 16 frames of warm-up, then counts the allocations of 10 more; before each frame the
/// `cameras` turn from the same eye to one of two targets, the second always to the other
/// one. Returns the count.
pub fn count_steady_allocations(app: &mut runtime::App, cameras: [Entity; 2]) -> usize {
    let targets = [Vec3::new(30.0, 0.0, 30.0), Vec3::new(-30.0, 0.0, 30.0)];
    let aim = |app: &mut runtime::App, frame: usize| {
        for (camera, turn) in cameras.into_iter().zip([frame, frame + 1]) {
            *app.world_mut().get::<&mut ecs::Transform>(camera).expect("the camera has a Transform") =
                scene::look_at(Vec3::new(0.0, 3.0, 0.0), targets[turn % 2]);
        }
    };
    for frame in 0..16 {
        aim(app, frame);
        app.run_frame();
    }
    settle_threads();
    let ((), allocations) = count_allocations(|| {
        for frame in 0..10 {
            aim(app, frame);
            app.run_frame();
        }
    });
    allocations
}

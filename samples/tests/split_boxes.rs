//! The debug boxes of a split-screen frame culled on the GPU are coloured by each view's own
//! bits, on lavapipe with validation: two cameras far apart, each seeing one cube that the
//! other camera's frustum leaves out, so the two views' bits differ for both cubes. Each half
//! shows its own cube's box lines green and no red line anywhere; lines coloured by the other
//! view's bits (the main view's for view 1, say) would be red where that cube is.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Camera, CameraRect, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, RenderGraph};
use renderer::{install_render_to, BitsReadback, MeshLibrary, RenderReport, RenderSetup};
use samples::frame_passes::{add_frame_passes, BobClock, FramePassChoice};

const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const CAPACITY: u32 = 16;
const GREEN: [u8; 4] = [0, 255, 0, 255];
const RED: [u8; 4] = [255, 0, 0, 255];
/// Each camera's side: the left half's camera looks at the cube at `-SIDE`, the right half's
/// at the one at `+SIDE`.
const SIDE: f32 = 30.0;

/// The last of three frames of the two cameras and their cubes with the debug boxes drawn,
/// and each GPU view's bits of the two cubes' slots (0 and 1).
fn split_frame(device: &Arc<GpuDevice>) -> (Vec<u8>, Vec<[bool; 2]>) {
    let choice = FramePassChoice { boxes: true, ..FramePassChoice::default() };
    let clock = BobClock::default();
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![Box::new(move |graph: &mut RenderGraph| add_frame_passes(graph, &choice, CAPACITY, &clock))],
    };
    let mut app = runtime::App::with_threads(1);
    ecs::install(&mut app);
    install_render_to(&mut app, setup, None).expect("a device is there");
    let world = app.world_mut();
    for (order, side, rect) in
        [(0, -SIDE, CameraRect::new(0.0, 0.0, 0.5, 1.0)), (1, SIDE, CameraRect::new(0.5, 0.0, 0.5, 1.0))]
    {
        let eye = scene::look_at(Vec3::new(side, 2.0, 6.0), Vec3::new(side, 0.0, 0.0));
        let camera = scene::spawn_camera(world, Camera { order, ..Camera::default() }, eye);
        world.insert_one(camera, rect).expect("a camera");
    }
    for side in [-SIDE, SIDE] {
        scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(side, 0.0, 0.0)));
    }
    for _ in 0..3 {
        app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
    }
    let shot = app.resource_mut::<renderer::Screenshots>().take().pop().expect("taken every frame");
    let report = app.resource::<RenderReport>();
    let words = report.bits.len();
    assert_eq!(report.view_bits.len(), 2 * words, "two views culled on the GPU");
    let bit = |view: usize, slot: usize| report.view_bits[view * words + slot / 64] >> (slot % 64) & 1 == 1;
    let bits = (0..2).map(|view| [bit(view, 0), bit(view, 1)]).collect();
    (shot.rgba8, bits)
}

/// Pixels of columns `columns` of `image` (RGBA8, `WIDTH` wide) that are `colour`.
fn count(image: &[u8], columns: std::ops::Range<usize>, colour: [u8; 4]) -> usize {
    let row = WIDTH as usize * 4;
    image
        .chunks_exact(row)
        .map(|row| row[columns.start * 4..columns.end * 4].chunks_exact(4))
        .fold(0, |sum, texels| sum + texels.filter(|texel| *texel == colour).count())
}

#[test]
fn each_half_colours_its_box_lines_by_its_own_views_bits() {
    let Some(device) = gpu_test_context() else { return };
    let (image, bits) = split_frame(&device);
    // The premise: each view sees its own cube only, so the views' bits differ for both.
    let own = bits[0];
    assert!(own[0] != own[1] && bits[1] == [own[1], own[0]], "each view keeps its own cube alone: {bits:?}");
    let half = WIDTH as usize / 2;
    for (name, columns) in [("left", 0..half), ("right", half..WIDTH as usize)] {
        let (green, red) = (count(&image, columns.clone(), GREEN), count(&image, columns, RED));
        assert!(green > 20, "the {name} half draws its cube's box in green ({green} pixels)");
        assert_eq!(red, 0, "the {name} half has red box lines: coloured by another view's bits");
    }
    assert_no_validation_messages(&device);
}

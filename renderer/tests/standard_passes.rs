//! GPU tests of the standard passes (object upload, draw list, depth prepass, geometry,
//! readback) on a validated device; each ends with zero validation messages.

use std::sync::Arc;

use render_graph::device::GpuDevice;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GraphError, ReadbackBuffer, RenderGraph};
use renderer::{
    add_scene_passes, lock_scene, pack_rgba8, DepthPrepass, DrawMode, FrameView, GeometryPass, GpuScene, MeshLibrary,
    ObjectDesc, ScenePassOptions, SharedScene, OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES,
};

const SIZE: u32 = 64;
const EXTENT: vk::Extent2D = vk::Extent2D { width: SIZE, height: SIZE };
const CLEAR: [u8; 4] = [0, 0, 0, 255];
const RED: u32 = pack_rgba8(255, 0, 0, 255);
const GREEN: u32 = pack_rgba8(0, 255, 0, 255);

type Matrix = [[f32; 4]; 4];

/// Column-major product `a * b`.
fn multiply(a: &Matrix, b: &Matrix) -> Matrix {
    let mut out = [[0.0; 4]; 4];
    for (column, out_column) in out.iter_mut().enumerate() {
        for (row, value) in out_column.iter_mut().enumerate() {
            *value = (0..4).map(|k| a[k][row] * b[column][k]).sum();
        }
    }
    out
}

/// `glam::Mat4::perspective_infinite_reverse_rh` written out: near maps to depth 1.
fn perspective_infinite_reverse(fov_y: f32, aspect: f32, near: f32) -> Matrix {
    let focal = 1.0 / (0.5 * fov_y).tan();
    [[focal / aspect, 0.0, 0.0, 0.0], [0.0, focal, 0.0, 0.0], [0.0, 0.0, 0.0, -1.0], [0.0, 0.0, near, 0.0]]
}

/// Scale by `scale`, then translate by `offset`.
fn scale_translate(scale: f32, offset: [f32; 3]) -> Matrix {
    [[scale, 0.0, 0.0, 0.0], [0.0, scale, 0.0, 0.0], [0.0, 0.0, scale, 0.0], [offset[0], offset[1], offset[2], 1.0]]
}

/// A camera at `position` looking down -z, 90° vertical field of view, square image.
fn camera_looking_down_negative_z(position: [f32; 3]) -> Matrix {
    let view = scale_translate(1.0, [-position[0], -position[1], -position[2]]);
    multiply(&perspective_infinite_reverse(std::f32::consts::FRAC_PI_2, 1.0, 0.1), &view)
}

fn cube(world: Matrix, color: u32) -> ObjectDesc {
    ObjectDesc { world, color, mesh: 0, material: 0 }
}

/// A scene of `objects`, with the camera it is drawn with (the graph's [`FrameView`]).
fn new_scene(device: &Arc<GpuDevice>, objects: &[ObjectDesc], camera: Matrix) -> (GpuScene, Matrix) {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), 64).expect("scene");
    for object in objects {
        scene.push_object(*object).expect("room for the object");
    }
    scene.draw_all_objects();
    (scene, camera)
}

/// The graph parameter of a camera matrix.
fn frame_view(camera: &Matrix) -> FrameView {
    FrameView::from_view_projection(glam::Mat4::from_cols_array_2d(camera))
}

fn pixel(image: &[u8], x: u32, y: u32) -> [u8; 4] {
    let start = ((y * SIZE + x) * 4) as usize;
    image[start..start + 4].try_into().expect("four bytes")
}

struct Renderer {
    graph: RenderGraph,
    scene: SharedScene,
    readback: ReadbackBuffer,
}

impl Renderer {
    fn new(device: &Arc<GpuDevice>, (scene, camera): (GpuScene, Matrix), mode: Option<DrawMode>) -> Renderer {
        let scene = scene.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(device), EXTENT).expect("graph");
        let options = ScenePassOptions { draw_mode: mode, ..ScenePassOptions::default() };
        let readback = add_scene_passes(&mut graph, &scene, &options).expect("passes").expect("a readback");
        graph.set_param(frame_view(&camera));
        Renderer { graph, scene, readback }
    }

    fn frame(&mut self) -> Vec<u8> {
        self.graph.execute_frame().expect("frame");
        self.graph.wait_idle().expect("wait");
        self.readback.read().expect("readback").to_vec()
    }
}

#[test]
fn a_cube_covers_the_pixels_its_front_face_projects_to() {
    let Some(device) = gpu_test_context() else { return };
    // The front face (z = 0.5) is 2.5 in front of the camera: it spans ±0.5 / 2.5 = ±0.2 in
    // NDC, pixels 25.6..38.4 of 64, so the pixel centres of columns and rows 26..=37.
    let scene = new_scene(&device, &[cube(renderer::IDENTITY, RED)], camera_looking_down_negative_z([0.0, 0.0, 3.0]));
    let mut renderer = Renderer::new(&device, scene, None);
    let image = renderer.frame();
    for y in 0..SIZE {
        for x in 0..SIZE {
            let inside = (26..=37).contains(&x) && (26..=37).contains(&y);
            let expected = if inside { RED.to_le_bytes() } else { CLEAR };
            assert_eq!(pixel(&image, x, y), expected, "pixel ({x}, {y}), inside the cube: {inside}");
        }
    }
    drop(renderer);
    assert_no_validation_messages(&device);
}

#[test]
fn up_is_up_depth_hides_far_objects_and_back_faces_are_culled() {
    let Some(device) = gpu_test_context() else { return };
    let camera = camera_looking_down_negative_z([0.0, 0.0, 3.0]);
    let objects = [
        // Near red cube first, then a far green one behind it: depth must keep red in front.
        cube(renderer::IDENTITY, RED),
        cube(scale_translate(4.0, [0.0, 0.0, -6.0]), GREEN),
        // A small blue cube above the centre.
        cube(scale_translate(0.25, [0.0, 1.0, 0.0]), pack_rgba8(0, 0, 255, 255)),
    ];
    let mut renderer = Renderer::new(&device, new_scene(&device, &objects, camera), None);
    let image = renderer.frame();
    assert_eq!(pixel(&image, 32, 32), RED.to_le_bytes(), "the near cube hides the far one");
    assert_eq!(pixel(&image, 32, 24), GREEN.to_le_bytes(), "the far cube shows around the near one");
    let blue_rows: Vec<u32> = (0..SIZE)
        .filter(|&y| (0..SIZE).any(|x| pixel(&image, x, y) == pack_rgba8(0, 0, 255, 255).to_le_bytes()))
        .collect();
    assert!(!blue_rows.is_empty(), "the blue cube is visible");
    assert!(blue_rows.iter().all(|&row| row < 26), "+y is at the top of the image, blue rows {blue_rows:?}");

    // From inside a big box every face is a back face: nothing is drawn.
    let inside = [cube(scale_translate(10.0, [0.0, 0.0, 0.0]), RED)];
    let mut renderer =
        Renderer::new(&device, new_scene(&device, &inside, camera_looking_down_negative_z([0.0; 3])), None);
    let image = renderer.frame();
    assert!(image.chunks_exact(4).all(|texel| texel == CLEAR), "faces seen from inside are culled");
    drop(renderer);
    assert_no_validation_messages(&device);
}

#[test]
fn only_changed_parts_are_uploaded() {
    let Some(device) = gpu_test_context() else { return };
    let objects: Vec<ObjectDesc> =
        (0..10).map(|index| cube(scale_translate(0.3, [index as f32 * 0.4 - 1.8, 0.0, 0.0]), RED)).collect();
    let mut renderer =
        Renderer::new(&device, new_scene(&device, &objects, camera_looking_down_negative_z([0.0, 0.0, 3.0])), None);
    let first = renderer.frame();
    let report = lock_scene(&renderer.scene).last_upload();
    assert_eq!((report.transforms, report.records), (10, 10), "the first frame uploads all: {report:?}");
    assert_eq!(report.bytes, 10 * (OBJECT_TRANSFORM_BYTES + OBJECT_RECORD_BYTES + 8), "both parts and their slots");
    assert_eq!(
        report.draw_bytes,
        20 + 10 * 4 + 8,
        "batched: one instanced command (ten cubes of one mesh and material), their ten slots and the two counts"
    );
    {
        let (mut unbatched, camera) = new_scene(&device, &objects, camera_looking_down_negative_z([0.0, 0.0, 3.0]));
        unbatched.set_batch_draws(false);
        unbatched.draw_all_objects();
        let mut unbatched = Renderer::new(&device, (unbatched, camera), None);
        assert_eq!(unbatched.frame(), first, "batched and unbatched lists draw the same image");
        let report = lock_scene(&unbatched.scene).last_upload();
        assert_eq!(report.draw_bytes, 10 * 20 + 8, "unbatched: ten draw commands and the two counts");
    }

    let second = renderer.frame();
    let report = lock_scene(&renderer.scene).last_upload();
    assert_eq!((report.bytes, report.transforms, report.records), (0, 0, 0), "a still scene uploads nothing");
    assert_eq!(first, second, "a still scene renders the same image");

    {
        let mut scene = lock_scene(&renderer.scene);
        scene.set_object(3, objects[3]).expect("object 3 exists");
        assert_eq!(scene.dirty_count(), 0, "an unchanged object is not marked");
        scene.set_object(3, ObjectDesc { color: GREEN, ..objects[3] }).expect("object 3 exists");
        scene.set_object(7, ObjectDesc { color: GREEN, ..objects[7] }).expect("object 7 exists");
    }
    let third = renderer.frame();
    let report = lock_scene(&renderer.scene).last_upload();
    assert_eq!((report.transforms, report.records), (0, 2), "a new colour changes the record only: {report:?}");
    let greens = third.chunks_exact(4).filter(|texel| *texel == GREEN.to_le_bytes()).count();
    let reds_before = first.chunks_exact(4).filter(|texel| *texel == RED.to_le_bytes()).count();
    let reds_after = third.chunks_exact(4).filter(|texel| *texel == RED.to_le_bytes()).count();
    assert!(greens > 0, "the changed objects are drawn in their new colour");
    assert_eq!(reds_after + greens, reds_before, "only the changed objects changed colour");

    let moved = ObjectDesc { world: scale_translate(0.3, [0.0, 1.2, 0.0]), ..objects[5] };
    lock_scene(&renderer.scene).set_object(5, moved).expect("object 5 exists");
    let fourth = renderer.frame();
    let report = lock_scene(&renderer.scene).last_upload();
    assert_eq!((report.transforms, report.records), (1, 0), "a move uploads the transform only: {report:?}");
    assert_eq!(report.bytes, OBJECT_TRANSFORM_BYTES + 4);
    assert_ne!(fourth, third, "the moved object is drawn where it went");
    drop(renderer);
    assert_no_validation_messages(&device);
}

#[test]
fn thousands_of_changes_reach_the_gpu_in_the_frame_they_are_made() {
    let Some(device) = gpu_test_context() else { return };
    // More than any fixed per-frame budget would take, and past the staging memory a frame
    // starts with: every object moves and changes colour at once.
    const OBJECTS: u32 = 60_000;
    let place = |index: u32, offset: f32| {
        let (column, row) = ((index % 250) as f32, (index / 250) as f32);
        scale_translate(0.004, [column * 0.008 - 1.0 + offset, row * 0.008 - 0.96, 0.0])
    };
    let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), OBJECTS).expect("scene");
    for index in 0..OBJECTS {
        scene.push_object(cube(place(index, 0.0), RED)).expect("room");
    }
    scene.draw_all_objects();
    let mut renderer = Renderer::new(&device, (scene, camera_looking_down_negative_z([0.0, 0.0, 1.0])), None);
    let first = renderer.frame();
    let reds = first.chunks_exact(4).filter(|texel| *texel == RED.to_le_bytes()).count();
    assert!(reds > 1000, "the grid covers the image: {reds} red pixels");
    {
        let mut scene = lock_scene(&renderer.scene);
        for index in 0..OBJECTS {
            scene.set_object(index, cube(place(index, 0.002), GREEN)).expect("exists");
        }
    }
    let second = renderer.frame();
    let report = lock_scene(&renderer.scene).last_upload();
    assert_eq!((report.transforms, report.records), (OBJECTS, OBJECTS), "every change in one frame: {report:?}");
    assert!(second.chunks_exact(4).all(|texel| texel != RED.to_le_bytes()), "no object is drawn as it was");
    assert!(second.chunks_exact(4).filter(|texel| *texel == GREEN.to_le_bytes()).count() > 1000);
    drop(renderer);
    assert_no_validation_messages(&device);
}

#[test]
fn a_cleared_or_dropped_slot_draws_nothing_in_the_same_frame() {
    let Some(device) = gpu_test_context() else { return };
    let camera = camera_looking_down_negative_z([0.0, 0.0, 3.0]);
    let objects = [
        cube(scale_translate(0.5, [-0.8, 0.0, 0.0]), RED),
        cube(scale_translate(0.5, [0.0, 0.0, 0.0]), GREEN),
        cube(scale_translate(0.5, [0.8, 0.0, 0.0]), pack_rgba8(0, 0, 255, 255)),
    ];
    let mut renderer = Renderer::new(&device, new_scene(&device, &objects, camera), None);
    let count = |image: &[u8], color: u32| image.chunks_exact(4).filter(|texel| *texel == color.to_le_bytes()).count();
    let first = renderer.frame();
    assert!(count(&first, RED) > 0 && count(&first, GREEN) > 0 && count(&first, pack_rgba8(0, 0, 255, 255)) > 0);
    {
        // The middle slot is cleared, the last (highest) slot dropped from the count.
        let mut scene = lock_scene(&renderer.scene);
        scene.clear_object(1).expect("slot 1 exists");
        scene.set_object_count(2).expect("a smaller count");
        scene.draw_all_objects();
        assert_eq!(scene.record(1).map(|record| record.is_empty()), Some(true));
        assert!(scene.record(2).is_none(), "the dropped slot is past the count");
    }
    let second = renderer.frame();
    assert_eq!(count(&second, GREEN), 0, "the cleared middle slot is gone");
    assert_eq!(count(&second, pack_rgba8(0, 0, 255, 255)), 0, "the dropped highest slot is gone");
    assert_eq!(count(&second, RED), count(&first, RED), "the rest stays");
    {
        // Growing the count again brings an empty slot, not what the GPU held there before.
        let mut scene = lock_scene(&renderer.scene);
        scene.set_object_count(3).expect("room");
        scene.draw_all_objects();
    }
    let third = renderer.frame();
    assert_eq!(third, second, "a slot brought back by the count holds the empty record");
    drop(renderer);
    assert_no_validation_messages(&device);
}

#[test]
fn every_draw_mode_renders_the_same_image() {
    let Some(device) = gpu_test_context() else { return };
    let objects: Vec<ObjectDesc> = (0..24)
        .map(|index| {
            let angle = index as f32 * 0.7;
            let offset = [angle.cos() * 1.5, angle.sin() * 1.5, -(index as f32) * 0.3];
            cube(scale_translate(0.6, offset), pack_rgba8(index as u8 * 10, 255 - index as u8 * 10, 128, 255))
        })
        .collect();
    let camera = camera_looking_down_negative_z([0.0, 0.0, 3.0]);
    let mut images = Vec::new();
    for mode in [DrawMode::IndirectCount, DrawMode::Indirect, DrawMode::Direct] {
        if !mode.is_supported(device.capabilities()) {
            println!("skipping {mode:?}: not supported by {}", device.capabilities().name);
            continue;
        }
        let (mut scene, camera) = new_scene(&device, &objects, camera);
        // Every other object: the draw list, not the scene, decides what is drawn.
        let list: Vec<u32> = (0..24).step_by(2).collect();
        scene.set_draw_list(&list).expect("valid list");
        let mut renderer = Renderer::new(&device, (scene, camera), Some(mode));
        images.push((mode, renderer.frame()));
    }
    let (first_mode, first) = &images[0];
    assert!(first.chunks_exact(4).any(|texel| texel != CLEAR), "something is drawn");
    for (mode, image) in &images[1..] {
        assert!(image == first, "{mode:?} differs from {first_mode:?}");
    }
    assert_no_validation_messages(&device);
}

#[test]
fn an_empty_draw_list_clears_and_bad_lists_are_errors() {
    let Some(device) = gpu_test_context() else { return };
    let (mut scene, camera) =
        new_scene(&device, &[cube(renderer::IDENTITY, RED)], camera_looking_down_negative_z([0.0, 0.0, 3.0]));
    assert!(scene.set_draw_list(&[1]).is_err(), "object 1 does not exist");
    scene.set_draw_list(&[]).expect("an empty list is valid");
    let mut renderer = Renderer::new(&device, (scene, camera), None);
    let image = renderer.frame();
    assert!(image.chunks_exact(4).all(|texel| texel == CLEAR), "nothing drawn");
    drop(renderer);
    assert_no_validation_messages(&device);
}

#[test]
fn zero_size_output_is_an_error() {
    let Some(device) = gpu_test_context() else { return };
    let zero = vk::Extent2D { width: 0, height: 0 };
    let scene = new_scene(&device, &[cube(renderer::IDENTITY, RED)], renderer::IDENTITY).0.into_shared();

    let mut graph = RenderGraph::new(Arc::clone(&device), zero).expect("graph");
    let error = add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).err();
    assert!(matches!(error, Some(GraphError::InvalidDescription { .. })), "got {error:?}");
    assert!(render_graph::readback::image_readback_buffer(&device, "readback", zero).is_err());

    // Passes added by hand report the zero extent when the frame runs.
    let mut graph = RenderGraph::new(Arc::clone(&device), EXTENT).expect("graph");
    lock_scene(&scene).import_into(&mut graph);
    graph.set_param(frame_view(&renderer::IDENTITY));
    graph.add_typed_pass(renderer::ObjectUploadPass::new(&device, Arc::clone(&scene)).expect("upload pass"));
    graph.add_typed_pass(renderer::DrawListPass::new(Arc::clone(&scene)));
    graph.add_typed_pass(DepthPrepass::new(&device, Arc::clone(&scene)).expect("prepass"));
    graph.add_typed_pass(GeometryPass::new(&device, Arc::clone(&scene), [0.0; 4]).expect("geometry"));
    let readback =
        render_graph::readback::image_readback_buffer(&device, renderer::COLOR_READBACK, EXTENT).expect("readback");
    graph.import_buffer(renderer::COLOR_READBACK, readback.shared());
    graph.add_typed_pass(renderer::color_readback_pass());
    graph.execute_frame().expect("a non-zero extent renders");
    graph.set_output_extent(zero);
    let error = graph.execute_frame().err();
    assert!(
        matches!(&error, Some(GraphError::ZeroOutputExtent { pass, resource })
            if [renderer::DEPTH_PREPASS, renderer::COLOR].contains(&resource.as_str()) && !pass.is_empty()),
        "got {error:?}"
    );
    graph.wait_idle().expect("wait");
    drop(graph);
    assert_no_validation_messages(&device);
}

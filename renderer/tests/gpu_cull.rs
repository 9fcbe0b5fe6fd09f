//! GPU culling on lavapipe with validation (synchronization included): the frustum bits
//! equal the CPU kernel's bit for bit.

use std::sync::{Arc, Mutex};

use culling::{AabbSoa, Frustum, Kernel};
use glam::{Mat4, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, RenderGraph};
use renderer::{add_gpu_culled_scene_passes, read_visibility_words, GpuCullSettings, GpuCullStats};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

/// xorshift, so the scene is the same on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.next()
    }
}

fn random_scene(device: &Arc<GpuDevice>, count: u32) -> SharedScene {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), count).expect("scene");
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for _ in 0..count {
        let position = Vec3::new(random.range(-120.0, 120.0), random.range(-40.0, 40.0), random.range(-120.0, 120.0));
        let scale = Vec3::new(random.range(0.05, 3.0), random.range(0.05, 3.0), random.range(0.05, 3.0));
        let rotation = glam::Quat::from_rotation_y(random.range(0.0, 6.3));
        let world = Mat4::from_scale_rotation_translation(scale, rotation, position);
        let object = ObjectDesc { world: world.to_cols_array_2d(), color: 0xffff_ffff, mesh: 0, material: 0 };
        scene.push_object(object).expect("room for every object");
    }
    scene.draw_all_objects();
    scene.into_shared()
}

fn views() -> Vec<Mat4> {
    let look = |eye: Vec3, target: Vec3| Mat4::look_at_rh(eye, target, Vec3::Y);
    let infinite = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 1.5, 0.1);
    let finite = Mat4::perspective_rh(50f32.to_radians(), 1.5, 90.0, 0.5);
    let wide = Mat4::perspective_infinite_reverse_rh(120f32.to_radians(), 2.0, 0.01);
    let orthographic = Mat4::orthographic_rh(-60.0, 60.0, -30.0, 30.0, 200.0, 0.5);
    vec![
        infinite * look(Vec3::ZERO, Vec3::NEG_Z),
        infinite * look(Vec3::new(10.0, 5.0, 30.0), Vec3::ZERO),
        finite * look(Vec3::new(-50.0, 10.0, 0.0), Vec3::new(0.0, 0.0, 10.0)),
        finite * look(Vec3::new(0.0, 80.0, 0.0), Vec3::new(1.0, 0.0, 0.0)),
        wide * look(Vec3::new(100.0, 0.0, 100.0), Vec3::ZERO),
        orthographic * look(Vec3::new(0.0, 0.0, 100.0), Vec3::ZERO),
        orthographic * look(Vec3::new(30.0, 60.0, -40.0), Vec3::new(-10.0, 0.0, 5.0)),
        infinite * look(Vec3::new(0.0, 0.0, 200.0), Vec3::ZERO),
    ]
}

#[test]
fn frustum_bits_equal_the_cpu_kernel_for_eight_views() {
    let Some(device) = gpu_test_context() else { return };
    // Not a multiple of 64 (nor of the kernels' lane widths).
    let count = 100_003;
    let scene = random_scene(&device, count);
    let settings =
        Arc::new(Mutex::new(GpuCullSettings { frustum: true, occlusion: false, ..GpuCullSettings::default() }));
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 32, height: 32 }).expect("graph");
    let options = ScenePassOptions { readback: false, ..ScenePassOptions::default() };
    let culled = add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, true).expect("passes");
    let bits = culled.bits.expect("asked for the bits");
    // The CPU kernel on the world boxes the GPU computes from the records (centre and half
    // extents, as the Visibility stage hands them to its kernel).
    let mut boxes = AabbSoa::default();
    {
        let scene = lock_scene(&scene);
        for object in 0..count {
            let (record, transform) = (scene.record(object).expect("exists"), scene.transform(object).expect("exists"));
            let (center, half) = renderer::world_box(transform, record);
            for (column, value) in
                [&mut boxes.center_x, &mut boxes.center_y, &mut boxes.center_z].into_iter().zip(center)
            {
                column.push(value);
            }
            for (column, value) in [&mut boxes.half_x, &mut boxes.half_y, &mut boxes.half_z].into_iter().zip(half) {
                column.push(value);
            }
        }
    }
    let mut gpu_words = Vec::new();
    let mut cpu_words = vec![0u64; count.div_ceil(64) as usize];
    for (view_index, view_projection) in views().into_iter().enumerate() {
        graph.set_param(FrameView::from_view_projection(view_projection));
        graph.execute_frame().expect("frame");
        graph.wait_idle().expect("idle");
        read_visibility_words(&bits, &mut gpu_words).expect("bits");
        Kernel::Scalar.cull_aabbs(&Frustum::from_view_projection(view_projection), boxes.slices(), &mut cpu_words);
        let visible = cpu_words.iter().map(|word| word.count_ones()).sum::<u32>();
        assert!(visible > 0 && visible < count, "view {view_index} must see part of the scene, sees {visible}");
        let differing = (0..count as usize).find(|&object| {
            (gpu_words[object / 64] >> (object % 64) & 1) != (cpu_words[object / 64] >> (object % 64) & 1)
        });
        if let Some(object) = differing {
            let scene = lock_scene(&scene);
            let box_of = renderer::world_box(
                scene.transform(object as u32).expect("exists"),
                scene.record(object as u32).expect("exists"),
            );
            panic!(
                "view {view_index}: object {object} (centre, half {box_of:?}) is {} on the GPU, {} on the CPU",
                gpu_words[object / 64] >> (object % 64) & 1,
                cpu_words[object / 64] >> (object % 64) & 1
            );
        }
        let tail = gpu_words[count as usize / 64] >> (count % 64);
        assert_eq!(tail, 0, "view {view_index}: bits past the last object stay clear");
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

/// A box from `min` to `max` as a scaled unit cube (the unit cube spans -0.5..0.5).
fn box_object(min: Vec3, max: Vec3, color: u32) -> ObjectDesc {
    let world = Mat4::from_translation((min + max) * 0.5) * Mat4::from_scale(max - min);
    ObjectDesc { world: world.to_cols_array_2d(), color, mesh: 0, material: 0 }
}

/// Objects of the occlusion scene, in slot order.
const WALL: u32 = 0;
const HIDDEN: u32 = 1;
const PEEKING: u32 = 2;
const BACK_WALL: u32 = 3;
const BACK_HIDDEN: u32 = 4;

/// An orthographic 64x64 view, one world unit per pixel, looking down -z (or +z).
fn wall_view(backwards: bool) -> Mat4 {
    let projection = Mat4::orthographic_rh(-32.0, 32.0, -32.0, 32.0, 100.0, 0.5);
    let target = if backwards { Vec3::Z } else { Vec3::NEG_Z };
    projection * Mat4::look_at_rh(Vec3::ZERO, target, Vec3::Y)
}

fn wall_scene(device: &Arc<GpuDevice>) -> SharedScene {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), 8).expect("scene");
    // The wall covers pixel columns 2..42 (x from -30 to 10) over the full height.
    let objects = [
        box_object(Vec3::new(-30.0, -40.0, -11.0), Vec3::new(10.0, 40.0, -10.0), 0xff80_8080),
        // Wholly behind the wall: columns 12..22.
        box_object(Vec3::new(-20.0, -5.0, -30.0), Vec3::new(-10.0, 5.0, -20.0), 0xff00_00ff),
        // Behind the wall but reaching one pixel past its right edge (column 42).
        box_object(Vec3::new(0.0, -5.0, -30.0), Vec3::new(11.0, 5.0, -20.0), 0xff00_ff00),
        // The same arrangement behind the camera (seen after turning around).
        box_object(Vec3::new(-10.0, -40.0, 10.0), Vec3::new(30.0, 40.0, 11.0), 0xff80_8000),
        box_object(Vec3::new(5.0, -5.0, 20.0), Vec3::new(15.0, 5.0, 30.0), 0xffff_0000),
    ];
    for object in objects {
        scene.push_object(object).expect("room");
    }
    scene.draw_all_objects();
    scene.into_shared()
}

struct Frame {
    image: Vec<u8>,
    bits: Vec<u64>,
    stats: GpuCullStats,
}

struct Renderer {
    graph: RenderGraph,
    color: render_graph::ReadbackBuffer,
    bits: render_graph::ReadbackBuffer,
    stats: render_graph::ReadbackBuffer,
}

impl Renderer {
    fn new(device: &Arc<GpuDevice>, settings: GpuCullSettings) -> Renderer {
        let scene = wall_scene(device);
        let mut graph = RenderGraph::new(Arc::clone(device), vk::Extent2D { width: 64, height: 64 }).expect("graph");
        let settings = Arc::new(Mutex::new(settings));
        let culled = add_gpu_culled_scene_passes(&mut graph, &scene, &ScenePassOptions::default(), &settings, true)
            .expect("passes");
        Renderer {
            graph,
            color: culled.color.expect("asked for colour"),
            bits: culled.bits.expect("asked for bits"),
            stats: culled.stats,
        }
    }

    fn frame(&mut self, view_projection: Mat4) -> Frame {
        self.graph.set_param(FrameView::from_view_projection(view_projection));
        self.graph.execute_frame().expect("frame");
        self.graph.wait_idle().expect("idle");
        let mut bits = Vec::new();
        read_visibility_words(&self.bits, &mut bits).expect("bits");
        let stats = GpuCullStats::from_counters(self.stats.read().expect("stats"), self.graph.stats());
        Frame { image: self.color.read().expect("colour").to_vec(), bits, stats }
    }
}

fn bit(frame: &Frame, object: u32) -> bool {
    frame.bits[object as usize / 64] >> (object % 64) & 1 == 1
}

#[test]
fn occlusion_hides_what_is_behind_the_wall_and_never_pops() {
    let Some(device) = gpu_test_context() else { return };
    let mut culled = Renderer::new(&device, GpuCullSettings::default());
    let mut reference =
        Renderer::new(&device, GpuCullSettings { frustum: false, occlusion: false, ..GpuCullSettings::default() });
    let forward = wall_view(false);
    // The very first frame: no history, nothing may be missing.
    let first = culled.frame(forward);
    assert_eq!((first.stats.early_drawn, first.stats.late_drawn), (0, 3), "no history: all drawn late");
    assert_eq!(first.image, reference.frame(forward).image, "the first frame must equal the unculled image");
    for frame_index in 1..4 {
        let frame = culled.frame(forward);
        let expected = reference.frame(forward);
        assert_eq!(frame.image, expected.image, "frame {frame_index}: culled and unculled images differ");
        assert!(bit(&frame, WALL), "frame {frame_index}: the wall is visible");
        assert!(!bit(&frame, HIDDEN), "frame {frame_index}: the box wholly behind the wall is occluded");
        assert!(bit(&frame, PEEKING), "frame {frame_index}: one pixel past the wall's edge keeps the box");
        assert!(!bit(&frame, BACK_WALL) && !bit(&frame, BACK_HIDDEN), "frame {frame_index}: behind the camera");
        let stats = frame.stats;
        assert_eq!((stats.objects, stats.frustum_rejected, stats.occlusion_rejected), (5, 2, 1), "{stats:?}");
        // The second frame still draws the hidden box early (it was visible on the first).
        let drawn = if frame_index == 1 { 3 } else { 2 };
        assert_eq!((stats.early_drawn, stats.late_drawn), (drawn, 0), "the history holds the drawn set: {stats:?}");
        assert_eq!(stats.triangles, drawn * 12, "cubes of 12 triangles: {stats:?}");
        let peeking_pixel = &frame.image[(32 * 64 + 42) * 4..(32 * 64 + 43) * 4];
        assert_eq!(peeking_pixel, &0xff00_ff00_u32.to_le_bytes(), "column 42 shows the peeking box");
    }
    // A 180° cut: the first frame after it must already be complete.
    let backward = wall_view(true);
    for frame_index in 0..3 {
        let frame = culled.frame(backward);
        assert_eq!(frame.image, reference.frame(backward).image, "frame {frame_index} after the cut differs");
        assert!(bit(&frame, BACK_WALL), "after the cut the back wall is visible");
        if frame_index > 0 {
            assert!(!bit(&frame, BACK_HIDDEN), "after the cut the box behind the back wall is occluded");
        }
    }
    drop(culled);
    drop(reference);
    assert_no_validation_messages(&device);
}

/// Colour of object `object` in the id image: its index plus one (0 is the clear colour).
fn id_color(object: u32) -> u32 {
    (object + 1) | 0xff00_0000
}

/// A generated city block grid: tall buildings (the occluders) with small boxes between and
/// behind them; colours are object ids.
fn occluder_scene(device: &Arc<GpuDevice>) -> SharedScene {
    let mut scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), 4096).expect("scene");
    let mut random = Random(0x51_7cc1_b727_220a_u64);
    let mut objects = Vec::new();
    for x in -4..4 {
        for z in -4..4 {
            let center = Vec3::new(x as f32 * 12.0, 0.0, z as f32 * 12.0);
            let height = random.range(6.0, 30.0);
            objects.push((center + Vec3::new(-4.0, 0.0, -4.0), center + Vec3::new(4.0, height, 4.0)));
            for _ in 0..6 {
                let spot = center + Vec3::new(random.range(-6.0, 6.0), 0.0, random.range(-6.0, 6.0));
                let size = Vec3::new(random.range(0.2, 1.5), random.range(0.2, 3.0), random.range(0.2, 1.5));
                objects.push((spot, spot + size));
            }
        }
    }
    objects.push((Vec3::new(-80.0, -1.0, -80.0), Vec3::new(80.0, 0.0, 80.0)));
    for (index, (min, max)) in objects.into_iter().enumerate() {
        let mut object = box_object(min, max, id_color(index as u32));
        object.color = id_color(index as u32);
        scene.push_object(object).expect("room");
    }
    scene.draw_all_objects();
    scene.into_shared()
}

#[test]
fn twenty_cameras_in_an_occluder_heavy_scene_hide_no_visible_object() {
    let Some(device) = gpu_test_context() else { return };
    let extent = vk::Extent2D { width: 64, height: 40 };
    let options = ScenePassOptions { clear_color: [0.0, 0.0, 0.0, 0.0], ..ScenePassOptions::default() };
    let scene = occluder_scene(&device);
    let mut graph = RenderGraph::new(Arc::clone(&device), extent).expect("graph");
    let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
    let culled = add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, true).expect("passes");
    // The reference: the standard passes drawing every object, no culling at all.
    let reference_scene = occluder_scene(&device);
    let mut reference_graph = RenderGraph::new(Arc::clone(&device), extent).expect("graph");
    let reference_color = renderer::add_scene_passes(&mut reference_graph, &reference_scene, &options)
        .expect("passes")
        .expect("asked for a readback");
    let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 64.0 / 40.0, 0.1);
    let mut occlusion_rejects = 0;
    for camera in 0..20 {
        // A street-level walk with a turn every few cameras (cuts included).
        let angle = camera as f32 * 0.7;
        let eye = Vec3::new(angle.cos() * 20.0 + 6.0, 2.0 + (camera % 3) as f32, angle.sin() * 20.0 + 6.0);
        let target = eye + Vec3::new((angle * 2.3).sin(), -0.05, (angle * 2.3).cos());
        let view_projection = projection * Mat4::look_at_rh(eye, target, Vec3::Y);
        for graph in [&mut graph, &mut reference_graph] {
            graph.set_param(FrameView::from_view_projection(view_projection));
            graph.execute_frame().expect("frame");
            graph.wait_idle().expect("idle");
        }
        let image = culled.color.as_ref().expect("colour").read().expect("image").to_vec();
        let expected = reference_color.read().expect("image").to_vec();
        let mut bits = Vec::new();
        read_visibility_words(culled.bits.as_ref().expect("bits"), &mut bits).expect("bits");
        let stats = GpuCullStats::from_counters(culled.stats.read().expect("stats"), graph.stats());
        occlusion_rejects += stats.occlusion_rejected;
        let mut false_hidden = 0;
        for pixel in expected.chunks_exact(4) {
            let id = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], 0]);
            if id == 0 {
                continue;
            }
            let object = (id - 1) as usize;
            false_hidden += usize::from(bits[object / 64] >> (object % 64) & 1 == 0);
        }
        assert_eq!(false_hidden, 0, "camera {camera}: pixels of objects the GPU called hidden");
        let differing = image.chunks_exact(4).zip(expected.chunks_exact(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "camera {camera}: culled and unculled images differ in {differing} pixels");
    }
    assert!(occlusion_rejects > 0, "the buildings must occlude something over 20 cameras");
    drop(graph);
    drop(reference_graph);
    assert_no_validation_messages(&device);
}

//! The camera's GPU cull chooses each object's level of detail (`gpu_cull.h` with
//! `lod_table.h`), on lavapipe with validation: over random scenes and a sequence of views,
//! every slot's state the GPU keeps (`object_lod_levels`, read back) equals the CPU rule's
//! (`culling::select_lod_by_error` on the same boxes, scales and eye, each slot's state
//! updated where the frustum keeps it, as on the CPU's tracked frames), the triangles and
//! the histogram the cull counts follow those levels, and the images drawn with the GPU's
//! levels equal the images of records holding the CPU's levels.

use std::sync::{Arc, Mutex};

use culling::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, AabbSoa, Frustum, Kernel, LodErrorView};
use glam::{Mat4, Vec3};
use meshes::{MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::{add_gpu_culled_scene_passes, GpuCullSettings, GpuCullStats, OBJECT_LOD_LEVELS};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

/// The chain's errors, finest first (mesh units).
const ERRORS: [f32; 3] = [0.0, 0.05, 0.4];
/// Triangles of each level: the whole cube, four faces, two faces.
const TRIANGLES: [u32; 3] = [12, 8, 4];
/// The image's height, which the rule's pixels are measured in.
const SIZE: u32 = 96;

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

/// The unit cube (mesh 0) and a chain of three levels of it (meshes 1-3) with [`ERRORS`].
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    let chain = library.add_mesh_levels(vertices, &levels).expect("a chain");
    library.set_level_errors(chain, &ERRORS).expect("errors of the whole chain");
    library
}

/// Mesh id of level `level` of the chain.
fn level_mesh(level: u32) -> u32 {
    1 + level
}

/// One test object: its world matrix and colour.
#[derive(Clone, Copy)]
struct Object {
    world: Mat4,
    color: u32,
}

fn random_objects(count: u32, seed: u64) -> Vec<Object> {
    let mut random = Random(seed);
    (0..count)
        .map(|index| {
            let position = Vec3::new(random.range(-60.0, 60.0), random.range(-8.0, 8.0), random.range(-60.0, 60.0));
            let scale = Vec3::new(random.range(0.2, 2.0), random.range(0.2, 2.0), random.range(0.2, 2.0));
            let rotation = glam::Quat::from_rotation_y(random.range(0.0, 6.3));
            let world = Mat4::from_scale_rotation_translation(scale, rotation, position);
            Object { world, color: 0xff00_0000 | index.wrapping_mul(2_654_435_761) & 0x00ff_ffff }
        })
        .collect()
}

/// One view of the sequence: view and projection.
#[derive(Clone, Copy)]
struct View {
    view: Mat4,
    projection: Mat4,
}

impl View {
    fn eye(&self) -> Vec3 {
        self.view.inverse().w_axis.truncate()
    }

    fn lod(&self) -> LodErrorView {
        LodErrorView::new(&self.projection, SIZE as f32, 1.0, 0.2)
    }

    fn frame_view(&self) -> FrameView {
        FrameView::from_view_projection(self.projection * self.view)
    }
}

/// A walk through the scene with a wobble around each step (crossing the hand-overs back and
/// forth), then a few cuts, one of them orthographic.
fn views() -> Vec<View> {
    let perspective = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 1.0, 0.1);
    let mut views = Vec::new();
    for step in 0..10 {
        let along = step as f32 * 6.0 + 2.0 * (step as f32 * 1.7).sin();
        let eye = Vec3::new(-50.0 + along, 2.0, 40.0 - along * 0.5);
        let target = eye + Vec3::new((step as f32 * 0.4).cos(), -0.05, -1.0);
        views.push(View { view: Mat4::look_at_rh(eye, target, Vec3::Y), projection: perspective });
    }
    let orthographic = Mat4::orthographic_rh(-40.0, 40.0, -40.0, 40.0, 300.0, 0.5);
    views.push(View {
        view: Mat4::look_at_rh(Vec3::new(0.0, 100.0, 0.1), Vec3::ZERO, Vec3::Y),
        projection: orthographic,
    });
    views.push(View {
        view: Mat4::look_at_rh(Vec3::new(70.0, 5.0, 70.0), Vec3::ZERO, Vec3::Y),
        projection: perspective,
    });
    views
}

/// A GPU-culled frame of a scene of `objects`, each drawing the chain (`gpu_lod`: the GPU
/// chooses) or the level `levels` names (the records hold the CPU's choice).
struct Frames {
    scene: SharedScene,
    graph: RenderGraph,
    color: ReadbackBuffer,
    stats: ReadbackBuffer,
    lod_levels: ReadbackBuffer,
    gpu_lod: bool,
}

/// What one frame gave back.
struct Frame {
    image: Vec<u8>,
    stats: GpuCullStats,
    states: Vec<u32>,
}

impl Frames {
    fn new(device: &Arc<GpuDevice>, objects: &[Object], gpu_lod: bool, batched: bool) -> Frames {
        let count = objects.len() as u32;
        let mut scene = GpuScene::new(device, library(), count).expect("scene");
        scene.set_batch_draws(batched);
        for object in objects {
            let desc = ObjectDesc {
                world: object.world.to_cols_array_2d(),
                color: object.color,
                mesh: level_mesh(0),
                material: 0,
            };
            let slot = scene.push_object(desc).expect("room");
            if gpu_lod {
                let meshes = [level_mesh(0), level_mesh(1), level_mesh(2)];
                let columns = scene.lod_chain_columns(&meshes, &ERRORS, 0).expect("a chain the GPU chooses from");
                let record = renderer::ObjectRecord { reserved: columns, ..*scene.record(slot).expect("slot") };
                let transform = *scene.transform(slot).expect("slot");
                scene.set_parts(slot, transform, record).expect("slot");
            }
        }
        let scene = scene.into_shared();
        let extent = vk::Extent2D { width: SIZE, height: SIZE };
        let mut graph = RenderGraph::new(Arc::clone(device), extent).expect("graph");
        let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
        let culled = add_gpu_culled_scene_passes(&mut graph, &scene, &ScenePassOptions::default(), &settings, false)
            .expect("passes");
        let lod_levels = ReadbackBuffer::new(device, "lod levels readback", u64::from(count) * 4).expect("readback");
        graph.import_buffer("lod levels readback", lod_levels.shared());
        graph.add_typed_pass(BufferReadbackPass::new(OBJECT_LOD_LEVELS, "lod levels readback"));
        Frames { scene, graph, color: culled.color.expect("colour"), stats: culled.stats, lod_levels, gpu_lod }
    }

    /// Draws `view`; without GPU LOD the records first take `levels` (the CPU's choice).
    fn frame(&mut self, view: &View, levels: &[u32]) -> Frame {
        {
            let mut scene = lock_scene(&self.scene);
            if self.gpu_lod {
                scene.set_lod_view(Some((view.lod(), view.eye())), false);
            } else {
                scene.set_lod_view(None, false);
                for (slot, &level) in levels.iter().enumerate() {
                    let slot = slot as u32;
                    let (transform, record) = (*scene.transform(slot).unwrap(), *scene.record(slot).unwrap());
                    // The box of the chain's finest level, as the Visibility stage culls with.
                    let range = scene.mesh_range(level_mesh(0)).expect("mesh");
                    let (min, max) = (range.bounds_min, range.bounds_max);
                    let fresh = scene.record_for(level_mesh(level), min, max, record.color, 0).expect("record");
                    scene.set_parts(slot, transform, fresh).expect("slot");
                }
            }
        }
        self.graph.set_param(view.frame_view());
        self.graph.execute_frame().expect("frame");
        self.graph.wait_idle().expect("idle");
        let states = self.lod_levels.read().expect("levels");
        let states = states.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().unwrap())).collect();
        let stats = GpuCullStats::from_counters(self.stats.read().expect("stats"), self.graph.stats());
        Frame { image: self.color.read().expect("colour").to_vec(), stats, states }
    }
}

/// The CPU side: every object's world box and scale, the frustum's bits and the rule's level,
/// each slot's state (`None`: never in view) updated where the frustum keeps the object.
struct CpuLevels {
    boxes: Vec<(Vec3, Vec3)>,
    scales: Vec<f32>,
    states: Vec<Option<u32>>,
    soa: AabbSoa,
    /// Kept objects whose level the state held (a new object's would differ).
    held_by_state: u32,
}

impl CpuLevels {
    fn new(scene: &SharedScene) -> CpuLevels {
        let scene = lock_scene(scene);
        let mut soa = AabbSoa::default();
        let (mut boxes, mut scales) = (Vec::new(), Vec::new());
        for slot in 0..scene.object_count() {
            let (transform, record) = (scene.transform(slot).unwrap(), scene.record(slot).unwrap());
            let (center, half) = renderer::world_box(transform, record);
            for (column, value) in [&mut soa.center_x, &mut soa.center_y, &mut soa.center_z].into_iter().zip(center) {
                column.push(value);
            }
            for (column, value) in [&mut soa.half_x, &mut soa.half_y, &mut soa.half_z].into_iter().zip(half) {
                column.push(value);
            }
            boxes.push((Vec3::from_array(center), Vec3::from_array(half)));
            let world = Mat4::from_cols_array_2d(&transform.to_cols());
            scales.push(lod_scale_sq([world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate()]));
        }
        let states = vec![None; boxes.len()];
        CpuLevels { boxes, scales, states, soa, held_by_state: 0 }
    }

    /// The view's frustum bits and each object's level this frame (kept or not); updates the
    /// states of the kept ones.
    fn pick(&mut self, view: &View) -> (Vec<bool>, Vec<u32>) {
        let mut words = vec![0u64; self.boxes.len().div_ceil(64)];
        Kernel::Scalar.cull_aabbs(
            &Frustum::from_view_projection(view.projection * view.view),
            self.soa.slices(),
            &mut words,
        );
        let (eye, lod) = (view.eye(), view.lod());
        let mut kept = Vec::with_capacity(self.boxes.len());
        let mut levels = Vec::with_capacity(self.boxes.len());
        for (slot, &(center, half)) in self.boxes.iter().enumerate() {
            let in_view = words[slot / 64] >> (slot % 64) & 1 == 1;
            let last = self.states[slot].unwrap_or(0);
            let distance_sq = lod_box_distance_sq(eye, center, half);
            let level = select_lod_by_error(&ERRORS, self.scales[slot], distance_sq, &lod, last);
            if in_view {
                self.states[slot] = Some(level);
                let fresh = select_lod_by_error(&ERRORS, self.scales[slot], distance_sq, &lod, 0);
                self.held_by_state += u32::from(fresh != level);
            }
            kept.push(in_view);
            levels.push(level);
        }
        (kept, levels)
    }
}

/// The state word of `lod_table.h` for chain entry 0 and `level`.
fn state_word(level: u32) -> u32 {
    (1 << 3) | level
}

fn check_levels(device: &Arc<GpuDevice>, count: u32, seed: u64, batched: bool) {
    let objects = random_objects(count, seed);
    let mut frames = Frames::new(device, &objects, true, batched);
    let mut cpu = CpuLevels::new(&frames.scene);
    let mut seen_levels = [0u32; 3];
    for (index, view) in views().iter().enumerate() {
        let (kept, levels) = cpu.pick(view);
        let frame = frames.frame(view, &[]);
        for (slot, (&gpu_state, cpu_state)) in frame.states.iter().zip(&cpu.states).enumerate() {
            let expected = cpu_state.map_or(0, state_word);
            assert_eq!(
                gpu_state, expected,
                "view {index}, slot {slot}: the GPU's state {gpu_state:#x}, the CPU's {cpu_state:?} (kept {})",
                kept[slot]
            );
        }
        let mut histogram = [0u32; renderer::LOD_STAT_LEVELS];
        let mut triangles = 0;
        for slot in (0..count as usize).filter(|&slot| kept[slot]) {
            histogram[levels[slot] as usize] += 1;
            triangles += TRIANGLES[levels[slot] as usize];
            seen_levels[levels[slot] as usize] += 1;
        }
        // Occlusion may hide some: what is drawn is at most what the frustum keeps, and the
        // first frame (no history) draws every kept object.
        let drawn = frame.stats.early_drawn + frame.stats.late_drawn;
        assert_eq!(frame.stats.lod_levels.iter().sum::<u32>(), drawn, "view {index}: the histogram counts the drawn");
        if index == 0 {
            assert_eq!(frame.stats.lod_levels, histogram, "view {index}: the histogram of the kept objects");
            assert_eq!(frame.stats.triangles, triangles, "view {index}: the triangles of the chosen levels");
        }
    }
    assert!(seen_levels.iter().all(|&seen| seen > 0), "every level is chosen somewhere: {seen_levels:?}");
    assert!(cpu.held_by_state > 0, "the walk must cross hand-overs inside the band (the state decides)");
}

#[test]
fn gpu_lod_levels_and_states_equal_the_cpu_rule_over_random_scenes_and_views() {
    let Some(device) = gpu_test_context() else { return };
    check_levels(&device, 4_099, 0x9e37_79b9_7f4a_7c15, true);
    check_levels(&device, 1_000, 0x51_7cc1_b727_220a, false);
    assert_no_validation_messages(&device);
}

#[test]
fn gpu_lod_images_equal_the_images_of_the_cpu_levels() {
    let Some(device) = gpu_test_context() else { return };
    let objects = random_objects(2_000, 0x2545_f491_4f6c_dd1d);
    let mut gpu = Frames::new(&device, &objects, true, true);
    let mut host = Frames::new(&device, &objects, false, true);
    let mut unbatched = Frames::new(&device, &objects, true, false);
    let mut cpu = CpuLevels::new(&gpu.scene);
    for (index, view) in views().iter().enumerate() {
        let (_, levels) = cpu.pick(view);
        // The host's records hold the CPU's level of every object; only kept ones are drawn.
        let expected = host.frame(view, &levels);
        let frame = gpu.frame(view, &[]);
        assert!(expected.stats.early_drawn + expected.stats.late_drawn > 0, "view {index} draws something");
        assert!(frame.image == expected.image, "view {index}: the GPU's levels draw another image than the CPU's");
        assert_eq!(frame.stats.triangles, expected.stats.triangles, "view {index}: the same triangles");
        let plain = unbatched.frame(view, &[]);
        assert!(plain.image == expected.image, "view {index}: unbatched, the GPU's levels draw another image");
    }
    drop((gpu, host, unbatched));
    assert_no_validation_messages(&device);
}

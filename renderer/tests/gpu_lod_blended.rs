//! The blended pass draws the level the camera's GPU cull chose (`blended_levels.comp`), on
//! lavapipe with validation: translucent cubes of a three-level chain among opaque ones, at
//! several distances, over a walk of views. Every slot's state the GPU keeps equals the CPU
//! rule's (`culling::select_lod_by_error`, each slot's state updated where the frustum keeps
//! it), and every frame equals the frame of records holding the CPU's levels, translucent
//! objects included, batched or not, and in the cluster-culled frame.

use std::sync::{Arc, Mutex};

use culling::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, Frustum, Kernel, LodErrorView};
use glam::{Mat4, Quat, Vec3};
use meshes::{Material, MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context, gpu_test_context_without};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::OBJECT_LOD_LEVELS;
use renderer::{add_cluster_culled_scene_passes, add_gpu_culled_scene_passes, ClusterReadbacks, GpuCullSettings};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

/// The chain's errors, finest first (mesh units).
const ERRORS: [f32; 3] = [0.0, 0.05, 0.4];
/// The image's size, which the rule's pixels are measured in.
const SIZE: u32 = 96;
/// The translucent material (the library's second).
const GLASS: u32 = 1;

/// The unit cube (mesh 0), a chain of three levels of it (meshes 1-3: the whole cube, four
/// faces, two faces) with [`ERRORS`], an opaque material and a blended one.
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    let chain = library.add_mesh_levels(vertices, &levels).expect("a chain");
    library.set_level_errors(chain, &ERRORS).expect("errors of the whole chain");
    assert_eq!(library.add_material(Material::default()).expect("an opaque material"), 0);
    let glass = library.add_material(Material { blend: true, double_sided: true, ..Material::default() });
    assert_eq!(glass.expect("a blended material"), GLASS);
    library
}

/// Object `index`: its world matrix, colour (half transparent when translucent) and
/// material, every third one opaque. A grid going away from the first eye, so objects stand
/// at many distances and in front of one another.
fn object(index: u32) -> (Mat4, u32, u32) {
    let (column, row) = ((index % 8) as f32, (index / 8) as f32);
    let position = Vec3::new((column - 3.5) * (1.5 + 0.4 * row), 0.5 * (index % 3) as f32, 6.0 - 3.5 * row);
    let rotation = Quat::from_rotation_y(index as f32 * 0.7) * Quat::from_rotation_x(index as f32 * 0.3);
    let world = Mat4::from_scale_rotation_translation(Vec3::splat(0.8 + 0.1 * (index % 4) as f32), rotation, position);
    let opaque = index.is_multiple_of(3);
    let alpha = if opaque { 0xff00_0000 } else { 0x8000_0000 };
    let color = alpha | index.wrapping_mul(2_654_435_761) & 0x00ff_ffff;
    (world, color, if opaque { 0 } else { GLASS })
}

const OBJECTS: u32 = 96;

/// One view of the walk.
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
}

/// A walk down the grid with a sway, so levels hand over back and forth.
fn views() -> Vec<View> {
    let projection = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 1.0, 0.1);
    (0..8)
        .map(|step| {
            let eye = Vec3::new(1.5 * (step as f32 * 1.1).sin(), 2.0, 12.0 - 4.0 * step as f32);
            let target = eye + Vec3::new(0.2 * (step as f32 * 0.7).cos(), -0.15, -1.0);
            View { view: Mat4::look_at_rh(eye, target, Vec3::Y), projection }
        })
        .collect()
}

/// How the frames are culled.
#[derive(Clone, Copy, PartialEq)]
enum Culling {
    Objects { batched: bool },
    Clusters,
}

/// GPU-culled frames of the objects: the GPU chooses the levels (`gpu_lod`), or the records
/// hold the levels given (the CPU's).
struct Frames {
    scene: SharedScene,
    graph: RenderGraph,
    color: ReadbackBuffer,
    lod_levels: ReadbackBuffer,
    gpu_lod: bool,
    /// The scene's generation the graph follows (the cluster tables follow the records).
    generation: u64,
}

impl Frames {
    fn new(device: &Arc<GpuDevice>, gpu_lod: bool, culling: Culling) -> Frames {
        let batched = culling == Culling::Objects { batched: true };
        let mut scene = GpuScene::new(device, library(), OBJECTS).expect("scene");
        scene.set_batch_draws(batched);
        for index in 0..OBJECTS {
            let (world, color, material) = object(index);
            let desc = ObjectDesc { world: world.to_cols_array_2d(), color, mesh: 1, material };
            let slot = scene.push_object(desc).expect("room");
            if gpu_lod {
                let columns = scene.lod_chain_columns(&[1, 2, 3], &ERRORS, material).expect("a chain");
                let record = renderer::ObjectRecord { reserved: columns, ..*scene.record(slot).expect("slot") };
                let transform = *scene.transform(slot).expect("slot");
                scene.set_parts(slot, transform, record).expect("slot");
            }
        }
        let scene = scene.into_shared();
        let extent = vk::Extent2D { width: SIZE, height: SIZE };
        let mut graph = RenderGraph::new(Arc::clone(device), extent).expect("graph");
        let options = ScenePassOptions::default();
        let color = if culling == Culling::Clusters {
            let readbacks = ClusterReadbacks { color: true, ..ClusterReadbacks::default() };
            let settings = culling::cluster::ClusterSettings::default();
            let culled = add_cluster_culled_scene_passes(&mut graph, &scene, &options, settings, readbacks);
            lock_scene(&scene).set_cluster_refresh_frames(1);
            culled.expect("passes").color
        } else {
            let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
            add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, false).expect("passes").color
        };
        let lod_levels = ReadbackBuffer::new(device, "lod levels readback", u64::from(OBJECTS) * 4).expect("readback");
        graph.import_buffer("lod levels readback", lod_levels.shared());
        graph.add_typed_pass(BufferReadbackPass::new(OBJECT_LOD_LEVELS, "lod levels readback"));
        Frames { scene, graph, color: color.expect("colour"), lod_levels, gpu_lod, generation: 0 }
    }

    /// Draws `view`: the image and every slot's state word.
    fn frame(&mut self, view: &View, levels: &[u32]) -> (Vec<u8>, Vec<u32>) {
        {
            let mut scene = lock_scene(&self.scene);
            if self.gpu_lod {
                scene.set_lod_view(Some((view.lod(), view.eye())), false);
            } else {
                for (slot, &level) in levels.iter().enumerate() {
                    let slot = slot as u32;
                    let (transform, record) = (*scene.transform(slot).unwrap(), *scene.record(slot).unwrap());
                    let range = scene.mesh_range(1).expect("mesh");
                    let (min, max) = (range.bounds_min, range.bounds_max);
                    let fresh = scene.record_for(1 + level, min, max, record.color, record.material).expect("record");
                    scene.set_parts(slot, transform, fresh).expect("slot");
                }
            }
            scene.follow_growth(&mut self.graph, &mut self.generation);
        }
        self.graph.set_param(FrameView::from_view_projection(view.projection * view.view));
        self.graph.execute_frame().expect("frame");
        self.graph.wait_idle().expect("idle");
        let states = self.lod_levels.read().expect("levels");
        let states = states.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().unwrap())).collect();
        (self.color.read().expect("colour").to_vec(), states)
    }
}

/// The CPU's levels of every object for each view of the walk, each slot's state kept where
/// the frustum keeps it (`None`: never in view yet), and the states after each view.
fn cpu_levels(scene: &SharedScene) -> Vec<(Vec<u32>, Vec<Option<u32>>)> {
    let scene = lock_scene(scene);
    let objects: Vec<(Vec3, Vec3, f32)> = (0..scene.object_count())
        .map(|slot| {
            let (transform, record) = (scene.transform(slot).unwrap(), scene.record(slot).unwrap());
            let (center, half) = renderer::world_box(transform, record);
            let world = Mat4::from_cols_array_2d(&transform.to_cols());
            let scale = lod_scale_sq([world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate()]);
            (Vec3::from_array(center), Vec3::from_array(half), scale)
        })
        .collect();
    let mut soa = culling::AabbSoa::default();
    for (center, half, _) in &objects {
        soa.center_x.push(center.x);
        soa.center_y.push(center.y);
        soa.center_z.push(center.z);
        soa.half_x.push(half.x);
        soa.half_y.push(half.y);
        soa.half_z.push(half.z);
    }
    let mut states = vec![None; objects.len()];
    views()
        .iter()
        .map(|view| {
            let mut words = vec![0u64; objects.len().div_ceil(64)];
            let frustum = Frustum::from_view_projection(view.projection * view.view);
            Kernel::Scalar.cull_aabbs(&frustum, soa.slices(), &mut words);
            let levels = objects
                .iter()
                .enumerate()
                .map(|(slot, &(center, half, scale))| {
                    let distance_sq = lod_box_distance_sq(view.eye(), center, half);
                    let level =
                        select_lod_by_error(&ERRORS, scale, distance_sq, &view.lod(), states[slot].unwrap_or(0));
                    if words[slot / 64] >> (slot % 64) & 1 == 1 {
                        states[slot] = Some(level);
                    }
                    level
                })
                .collect();
            (levels, states.clone())
        })
        .collect()
}

#[test]
fn gpu_lod_blended_objects_draw_the_levels_of_the_cpu_rule() {
    let Some(device) = gpu_test_context() else { return };
    check_against_host(&device, &[Culling::Objects { batched: false }, Culling::Objects { batched: true }]);
}

/// The cluster-culled frame's blended objects draw the GPU's levels too.
#[test]
fn gpu_lod_blended_objects_of_the_cluster_frame_draw_the_levels_of_the_cpu_rule() {
    let Some(device) = gpu_test_context() else { return };
    check_against_host(&device, &[Culling::Clusters]);
}

/// Without `drawIndirectCount` the blended pass draws its commands as plain indirect draws
/// (as every list of such a frame is drawn): the same frames.
#[test]
fn gpu_lod_blended_objects_draw_the_levels_of_the_cpu_rule_without_count_draws() {
    let Some(device) = gpu_test_context_without(&["drawIndirectCount"]) else { return };
    assert!(!device.capabilities().draw_indirect_count, "withheld");
    check_against_host(&device, &[Culling::Objects { batched: false }, Culling::Objects { batched: true }]);
}

/// The walk drawn by the GPU choosing the levels, culled each way of `cullings`, against the
/// walk drawn with the records holding the CPU's levels (culled the first way): the states
/// and the frames.
fn check_against_host(device: &Arc<GpuDevice>, cullings: &[Culling]) {
    let device = Arc::clone(device);
    let mut host = Frames::new(&device, false, cullings[0]);
    let expected = cpu_levels(&host.scene);
    let mut seen = [0u32; 3];
    for &culling in cullings {
        let batched = culling == Culling::Objects { batched: true };
        let mut gpu = Frames::new(&device, true, culling);
        for (index, (view, (levels, states))) in views().iter().zip(&expected).enumerate() {
            let (image, gpu_states) = gpu.frame(view, &[]);
            for (slot, (&gpu_state, cpu_state)) in gpu_states.iter().zip(states).enumerate() {
                // The opaque objects' chain is the table's first, the translucent ones' (another
                // material) its second, from entry 8 (`lod_table.h`'s state word).
                let first = if object(slot as u32).2 == GLASS { 8 } else { 0 };
                let word = cpu_state.map_or(0, |level| ((first + 1) << 3) | level);
                assert_eq!(gpu_state, word, "view {index}, slot {slot}: the GPU's state, the CPU's {cpu_state:?}");
            }
            let (reference, _) = host.frame(view, levels);
            let differing = image.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
            assert_eq!(differing, 0, "view {index} (batched {batched}): the GPU's levels changed {differing} pixels");
            for (slot, state) in states.iter().enumerate() {
                if let (Some(level), true) = (state, object(slot as u32).2 == GLASS) {
                    seen[*level as usize] += 1;
                }
            }
        }
    }
    assert!(seen.iter().all(|&count| count > 0), "translucent objects at every level: {seen:?}");
    drop(host);
    assert_no_validation_messages(&device);
}

/// In a running app culled on the GPU (the Visibility stage's rule handed to the camera's
/// cull), translucent and opaque objects of the chain along a walk: every frame equals the
/// truth's unculled reference drawing the CPU's levels, and nothing visible is hidden.
#[test]
fn gpu_lod_blended_app_frames_equal_the_truth() {
    use culling::{CullingBackend, Visibility};
    use ecs::{scene, Aabb, BaseColor, Camera, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, Transform};
    use renderer::truth::{check_frame, ReferenceRenderer};
    use renderer::{install_render_to, lock_capture, BitsReadback, HeadlessTarget, RenderReport, RenderSetup};

    let Some(device) = gpu_test_context() else { return };
    let sky = [0.1, 0.2, 0.3, 1.0];
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: SIZE, height: SIZE },
        capacity: 128,
        meshes: library(),
        clear_color: sky,
        // The truth needs each frame's own GPU answer.
        bits: BitsReadback::Wait,
        passes: Vec::new(),
    };
    let mut app = runtime::App::with_threads(1);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let levels: Arc<[LodLevel]> =
        (1..4).map(|mesh| LodLevel { mesh: MeshHandle(mesh), max_distance: f32::INFINITY }).collect();
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    for index in 0..OBJECTS {
        let (world, color, material) = object(index);
        let mesh = Mesh::new(MeshHandle(1), MaterialHandle(material), bounds);
        let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_matrix(world));
        let [r, g, b, a] = color.to_le_bytes().map(|byte| f32::from(byte) / 255.0);
        let lod = Lod { levels: Arc::clone(&levels), bias: 1.0 };
        app.world_mut().insert(entity, (BaseColor([r, g, b, a]), lod)).expect("spawned");
    }
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(&device), SIZE, SIZE, 128, library(), sky).expect("a reference");
    let mut coarser = 0;
    for (frame, view) in views().iter().enumerate() {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") =
            Transform::from_matrix(view.view.inverse());
        app.run_frame();
        let capture = lock_capture(&capture);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let report = app.resource::<RenderReport>();
        coarser += report.gpu.as_ref().expect("GPU culling").lod_levels[1..].iter().sum::<u32>();
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.differing_pixels, 0, "frame {frame}: the GPU's levels changed the picture");
        assert_eq!(checked.truth.false_hidden, 0, "frame {frame}: {:?}", checked.truth);
    }
    assert!(coarser > 0, "the GPU chose coarser levels");
    drop(app);
    assert_no_validation_messages(&device);
}

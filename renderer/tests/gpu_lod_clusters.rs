//! The cluster-culled frame draws the meshlets of the level the GPU chooses
//! (`cluster_cull.h` with `lod_table.h`), on lavapipe with validation: the cluster table holds
//! the pairs of every level of each chained object (its direct dispatches in rows of 65,535
//! groups or, the same frames, of 3), and over a walk of views every slot's
//! state the object cull keeps (`object_lod_levels`) equals the CPU rule's, no object is
//! drawn whole (every chosen level's meshlets are in the table), the cull tests the meshlets
//! of the CPU's level alone (the other levels' pairs are never drawn, a kept object's never
//! tested; the drawn level's keep everything the CPU reference, `culling::cluster`, keeps from
//! the same early depth, rejected for the same reasons), and the images equal those of a cluster-culled scene whose records hold the CPU's
//! levels.

use std::sync::Arc;

use culling::cluster::{classify_cluster, classify_object, ClusterMargins, ClusterView, HiZLevels, ObjectVerdict};
use culling::cluster::{ClusterSettings, ClusterStats, ClusterVerdict};
use culling::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, AabbSoa, Frustum, Kernel, LodErrorView};
use glam::{Mat4, Vec3};
use meshes::MeshVertices;
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::{add_cluster_culled_scene_passes, ClusterCulledScene, ClusterReadbacks, OBJECT_LOD_LEVELS};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

/// The chain's errors, finest first (mesh units).
const ERRORS: [f32; 3] = [0.0, 0.05, 0.4];
/// The image's height, which the rule's pixels are measured in.
const SIZE: u32 = 96;
/// The meshlet cones' weight the levels are built with.
const CONE_WEIGHT: f32 = 0.25;

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

/// A chain of three levels of one sphere's vertices (meshes 0-2): the whole sphere, then the
/// first half and the first quarter of its triangles (each level looks different), each
/// with its meshlets; and how many meshlets each level has.
fn library() -> (MeshLibrary, [u32; 3]) {
    let sphere = ecs::scene::uv_sphere(16);
    let triangles = sphere.indices.len() / 3;
    let mut levels = Vec::new();
    for share in [1, 2, 4] {
        let indices = &sphere.indices[..triangles / share * 3];
        levels.push(assets::meshlets_in_order(&sphere.positions, indices, CONE_WEIGHT));
    }
    let counts = [0, 1, 2].map(|level| levels[level].1.len() as u32);
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|(order, m)| (&order[..], &m[..])).collect();
    let vertices = MeshVertices { positions: &sphere.positions, normals: &sphere.normals, uvs: &[] };
    let mut library = MeshLibrary::new();
    let chain = library.add_mesh_levels(vertices, &levels).expect("a chain");
    library.set_level_errors(chain, &ERRORS).expect("errors of the whole chain");
    (library, counts)
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
            let scale = Vec3::new(random.range(0.4, 4.0), random.range(0.4, 4.0), random.range(0.4, 4.0));
            let rotation = glam::Quat::from_rotation_y(random.range(0.0, 6.3));
            let world = Mat4::from_scale_rotation_translation(scale, rotation, position);
            Object { world, color: 0xff00_0000 | index.wrapping_mul(2_654_435_761) & 0x00ff_ffff }
        })
        .collect()
}

/// One view of the walk: view and projection.
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
}

/// A walk through the scene with a wobble around each step (crossing the hand-overs back and
/// forth), then a cut from afar.
fn views() -> Vec<View> {
    let perspective = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 1.0, 0.1);
    let mut views = Vec::new();
    for step in 0..10 {
        let along = step as f32 * 6.0 + 2.0 * (step as f32 * 1.7).sin();
        let eye = Vec3::new(-50.0 + along, 2.0, 40.0 - along * 0.5);
        let target = eye + Vec3::new((step as f32 * 0.4).cos(), -0.05, -1.0);
        views.push(View { view: Mat4::look_at_rh(eye, target, Vec3::Y), projection: perspective });
    }
    views.push(View {
        view: Mat4::look_at_rh(Vec3::new(70.0, 5.0, 70.0), Vec3::ZERO, Vec3::Y),
        projection: perspective,
    });
    views
}

/// A cluster-culled frame of a scene of `objects`, each drawing the chain (`gpu_lod`: the GPU
/// chooses) or the level the frame names (the records hold the CPU's choice).
struct Frames {
    scene: SharedScene,
    graph: RenderGraph,
    culled: ClusterCulledScene,
    lod_levels: ReadbackBuffer,
    generation: u64,
    gpu_lod: bool,
}

/// What one frame gave back.
struct Frame {
    image: Vec<u8>,
    stats: ClusterStats,
    states: Vec<u32>,
    /// Each pair's verdict and the mesh it draws.
    verdicts: Vec<(ClusterVerdict, Option<u32>)>,
    /// The depth after the early phase (f32 texels, rows top first).
    depth: Vec<f32>,
}

impl Frames {
    fn new(device: &Arc<GpuDevice>, objects: &[Object], gpu_lod: bool) -> Frames {
        let count = objects.len() as u32;
        let mut scene = GpuScene::new(device, library().0, count).expect("scene");
        for object in objects {
            let desc = ObjectDesc { world: object.world.to_cols_array_2d(), color: object.color, mesh: 0, material: 0 };
            let slot = scene.push_object(desc).expect("room");
            if gpu_lod {
                let columns = scene.lod_chain_columns(&[0, 1, 2], &ERRORS, 0).expect("a chain the GPU chooses from");
                let record = renderer::ObjectRecord { reserved: columns, ..*scene.record(slot).expect("slot") };
                let transform = *scene.transform(slot).expect("slot");
                scene.set_parts(slot, transform, record).expect("slot");
            }
        }
        let scene = scene.into_shared();
        let extent = vk::Extent2D { width: SIZE, height: SIZE };
        let mut graph = RenderGraph::new(Arc::clone(device), extent).expect("graph");
        let readbacks = ClusterReadbacks { color: true, verdicts: true, early_depth: true };
        let options = ScenePassOptions::default();
        let culled =
            add_cluster_culled_scene_passes(&mut graph, &scene, &options, ClusterSettings::default(), readbacks)
                .expect("passes");
        lock_scene(&scene).set_cluster_refresh_frames(1);
        let lod_levels = ReadbackBuffer::new(device, "lod levels readback", u64::from(count) * 4).expect("readback");
        graph.import_buffer("lod levels readback", lod_levels.shared());
        graph.add_typed_pass(BufferReadbackPass::new(OBJECT_LOD_LEVELS, "lod levels readback"));
        Frames { scene, graph, culled, lod_levels, generation: 0, gpu_lod }
    }

    /// Draws `view`; without GPU LOD the records first take `levels` (the CPU's choice) and
    /// the cluster table follows them.
    fn frame(&mut self, view: &View, levels: &[u32]) -> Frame {
        {
            let mut scene = lock_scene(&self.scene);
            if self.gpu_lod {
                scene.set_lod_view(Some((view.lod(), view.eye())), false);
            } else {
                for (slot, &level) in levels.iter().enumerate() {
                    let slot = slot as u32;
                    let (transform, record) = (*scene.transform(slot).unwrap(), *scene.record(slot).unwrap());
                    // The box of the chain's finest level, as the Visibility stage culls with.
                    let range = scene.mesh_range(0).expect("mesh");
                    let (min, max) = (range.bounds_min, range.bounds_max);
                    let fresh = scene.record_for(level, min, max, record.color, 0).expect("record");
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
        let image = self.culled.color.as_ref().expect("colour").read().expect("colour").to_vec();
        let mut verdicts = Vec::new();
        self.culled.read_verdicts(&mut verdicts).expect("verdicts");
        let table = &self.culled.table;
        let verdicts = verdicts.into_iter().enumerate().map(|(pair, v)| (v, table.pair_mesh_id(pair as u32))).collect();
        let depth = self.culled.early_depth.as_ref().expect("asked for").read().expect("depth");
        let depth = depth.chunks_exact(4).map(|texel| f32::from_le_bytes(texel.try_into().unwrap())).collect();
        Frame { image, stats: self.culled.read_stats().expect("stats"), states, verdicts, depth }
    }
}

/// The CPU side: every object's world box and scale, and each slot's state (`None`: never in
/// view) updated where the frustum keeps the object.
struct CpuLevels {
    boxes: Vec<(Vec3, Vec3)>,
    scales: Vec<f32>,
    states: Vec<Option<u32>>,
    soa: AabbSoa,
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
        CpuLevels { boxes, scales, states, soa }
    }

    /// Each object's level this frame (kept or not); updates the states of the kept ones.
    fn pick(&mut self, view: &View) -> Vec<u32> {
        let mut words = vec![0u64; self.boxes.len().div_ceil(64)];
        let frustum = Frustum::from_view_projection(view.projection * view.view);
        Kernel::Scalar.cull_aabbs(&frustum, self.soa.slices(), &mut words);
        let (eye, lod) = (view.eye(), view.lod());
        let mut levels = Vec::with_capacity(self.boxes.len());
        for (slot, &(center, half)) in self.boxes.iter().enumerate() {
            let last = self.states[slot].unwrap_or(0);
            let distance_sq = lod_box_distance_sq(eye, center, half);
            let level = select_lod_by_error(&ERRORS, self.scales[slot], distance_sq, &lod, last);
            if words[slot / 64] >> (slot % 64) & 1 == 1 {
                self.states[slot] = Some(level);
            }
            levels.push(level);
        }
        levels
    }
}

/// The CPU reference's verdict on every pair of `table` (a pair of a mesh drawn whole: the
/// object's), from this frame's early depth.
fn cpu_verdicts(
    scene: &SharedScene,
    table: &renderer::ClusterTable,
    view: &View,
    depth: &[f32],
) -> Vec<ClusterVerdict> {
    let mips = renderer::reduce_depth_pyramid(depth, SIZE as usize, SIZE as usize);
    let hiz = HiZLevels { width: SIZE, height: SIZE, mips: &mips };
    let cluster_view = ClusterView::new(view.projection * view.view);
    let (settings, margins) = (ClusterSettings::default(), ClusterMargins::NONE);
    let scene = lock_scene(scene);
    (0..table.pair_count())
        .map(|pair| {
            let (object, meshlet) = table.pair(pair).expect("pair in range");
            let (record, transform) = (scene.record(object).unwrap(), scene.transform(object).unwrap());
            let (center, half) = renderer::world_box(transform, record);
            let (min, max) = (Vec3::from(center) - Vec3::from(half), Vec3::from(center) + Vec3::from(half));
            match (classify_object(&cluster_view, min, max, Some(&hiz), settings, margins), meshlet) {
                (ObjectVerdict::Frustum, _) => ClusterVerdict::Frustum,
                (ObjectVerdict::Occluded, _) => ClusterVerdict::Occluded,
                (ObjectVerdict::Visible, None) => ClusterVerdict::Visible,
                (ObjectVerdict::Visible, Some(meshlet)) => {
                    let world = Mat4::from_cols_array_2d(&transform.to_cols());
                    classify_cluster(&cluster_view, &world, &meshlet.bounds(), Some(&hiz), settings, margins)
                }
            }
        })
        .collect()
}

#[test]
fn gpu_lod_cluster_frames_draw_the_meshlets_of_the_cpu_rules_levels() {
    let Some(device) = gpu_test_context() else { return };
    let objects = random_objects(600, 0x2545_f491_4f6c_dd1d);
    let mut gpu = Frames::new(&device, &objects, true);
    let mut host = Frames::new(&device, &objects, false);
    // The same GPU frames with the direct dispatches in rows of 3 groups (a million chained
    // objects' pairs take rows of 65,535).
    let mut rows = Frames::new(&device, &objects, true);
    rows.culled.set_dispatch_row(3);
    let mut cpu = CpuLevels::new(&gpu.scene);
    let counts = library().1;
    {
        let scene = lock_scene(&gpu.scene);
        let table = scene.cluster_table().expect("kept");
        let all: u32 = counts.iter().sum();
        assert_eq!(table.meshlet_pair_count(), all * objects.len() as u32, "the pairs of every level");
        assert_eq!(table.record_level_pair_count(), counts[0] * objects.len() as u32, "the records' level");
        // Both direct dispatches of the narrow frames take several rows.
        for items in [table.pair_count(), objects.len() as u32] {
            let shape = renderer::cluster_dispatch_shape(items.div_ceil(renderer::CLUSTER_GROUP), 3);
            assert!(shape.0 == 3 && shape.1 > 3, "{items} items in rows of 3: {shape:?}");
        }
    }
    let mut seen_levels = [0u32; 3];
    // Pairs of other levels than the drawn one of objects the cull kept.
    let mut untested = 0;
    // The drawn levels' pairs whose verdict the CPU reference's equals, of those compared.
    let (mut agree, mut compared) = (0u32, 0u32);
    for (index, view) in views().iter().enumerate() {
        let levels = cpu.pick(view);
        let expected = host.frame(view, &levels);
        let frame = gpu.frame(view, &[]);
        let narrow = rows.frame(view, &[]);
        assert!(narrow.image == frame.image, "view {index}: rows of 3 groups draw another image");
        assert_eq!(narrow.states, frame.states, "view {index}: rows of 3 groups keep other states");
        assert!(narrow.verdicts == frame.verdicts, "view {index}: rows of 3 groups judge otherwise");
        assert_eq!(narrow.stats, frame.stats, "view {index}: rows of 3 groups count otherwise");
        for (slot, (&gpu_state, cpu_state)) in frame.states.iter().zip(&cpu.states).enumerate() {
            // The state word of `lod_table.h` for chain entry 0.
            let expected = cpu_state.map_or(0, |level| (1 << 3) | level);
            assert_eq!(gpu_state, expected, "view {index}, slot {slot}: the GPU's state {gpu_state:#x}");
        }
        for slot in (0..objects.len()).filter(|&slot| cpu.states[slot].is_some()) {
            seen_levels[levels[slot] as usize] += 1;
        }
        assert!(expected.stats.early_drawn + expected.stats.late_drawn > 0, "view {index} draws something");
        assert_eq!(frame.stats.whole_objects, 0, "view {index}: every chosen level in meshlets: {:?}", frame.stats);
        assert_eq!(expected.stats.whole_objects, 0, "view {index}: the host's table follows its records");
        assert!(frame.image == expected.image, "view {index}: the GPU's levels draw another image than the CPU's");
        // Chain meshes are their levels; a culled object's pairs all take its verdict.
        let table = &gpu.culled.table;
        let reference = cpu_verdicts(&gpu.scene, table, view, &frame.depth);
        for (pair, &(verdict, mesh)) in frame.verdicts.iter().enumerate() {
            let (object, _) = table.pair(pair as u32).expect("a pair");
            let drawn = mesh == Some(levels[object as usize]);
            let label = format!("view {index}, pair {pair} (object {object}, mesh {mesh:?})");
            if drawn {
                assert!(verdict != ClusterVerdict::Untested, "{label}: the drawn level's pair is judged");
                let cpu = reference[pair];
                if cpu.is_drawn() || !verdict.is_drawn() {
                    assert!(verdict.is_drawn() || verdict == cpu, "{label}: GPU {verdict:?}, CPU {cpu:?}");
                }
                agree += u32::from(verdict == cpu);
                compared += 1;
            } else {
                assert!(!verdict.is_drawn() && verdict != ClusterVerdict::BackFacing, "{label}: {verdict:?}");
                untested += u32::from(verdict == ClusterVerdict::Untested);
            }
        }
    }
    assert!(seen_levels.iter().all(|&seen| seen > 0), "every level is chosen somewhere: {seen_levels:?}");
    assert!(untested > 0, "kept objects leave their other levels' pairs untested");
    assert!(agree * 100 >= compared * 95, "GPU and CPU verdicts agree on {agree} of {compared} pairs");
    drop((gpu, host, rows));
    assert_no_validation_messages(&device);
}

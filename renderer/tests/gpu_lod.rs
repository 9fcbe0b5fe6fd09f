//! The level-of-detail rule chosen from each level's simplification error is one definition
//! with two twins: `culling::select_lod_by_error` (with `lod_box_distance_sq` and
//! `lod_scale_sq`) and `lod_select.h`, which the GPU culls include. These tests run the GLSL
//! twin on the device (`shaders/lod_select.comp.glsl`: one object per invocation, a sequence
//! of views, each view's level the next one's hysteresis state) and hold every level it
//! chooses to the Rust twin's, on random scenes and views, on a camera path wobbling around
//! the hand-overs, and on exact ties.

use std::sync::Arc;

use culling::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, LodErrorView};
use glam::{Mat4, Vec3};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use render_graph::{
    Binding, BindingKind, BufferDesc, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice, PrepareContext,
    ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};

const LOD_SELECT: &[u8] = include_bytes!("shaders/lod_select.comp.spv");

/// One test object: its world box, the chain of errors it draws from and its matrix's axes.
#[derive(Clone, Debug)]
struct Object {
    center: Vec3,
    half: Vec3,
    chain: usize,
    axes: [Vec3; 3],
}

/// A scene: chains of errors (finest first), objects and a sequence of views.
struct Scene {
    chains: Vec<Vec<f32>>,
    objects: Vec<Object>,
    views: Vec<(Vec3, LodErrorView)>,
}

impl Scene {
    /// Every level the Rust twin chooses: `[view][object]`, each view's level the next
    /// view's `last`, as a cull keeps it per slot.
    fn cpu_levels(&self) -> Vec<Vec<u32>> {
        let mut last = vec![0u32; self.objects.len()];
        let mut levels = Vec::new();
        for (eye, view) in &self.views {
            for (object, state) in self.objects.iter().zip(&mut last) {
                let distance_sq = lod_box_distance_sq(*eye, object.center, object.half);
                let scale_sq = lod_scale_sq(object.axes);
                *state = select_lod_by_error(&self.chains[object.chain], scale_sq, distance_sq, view, *state);
            }
            levels.push(last.clone());
        }
        levels
    }

    fn error_bytes(&self) -> Vec<u8> {
        self.chains.iter().flatten().flat_map(|error| error.to_le_bytes()).collect()
    }

    /// `LodObject`s of the shader, 80 bytes each.
    fn object_bytes(&self) -> Vec<u8> {
        let mut firsts = Vec::new();
        let mut first = 0u32;
        for chain in &self.chains {
            firsts.push(first);
            first += chain.len() as u32;
        }
        let mut bytes = Vec::new();
        for object in &self.objects {
            let mut words = Vec::new();
            words.extend(object.center.to_array().map(f32::to_bits));
            words.push(firsts[object.chain]);
            words.extend(object.half.to_array().map(f32::to_bits));
            words.push(self.chains[object.chain].len() as u32);
            for axis in object.axes {
                words.extend(axis.to_array().map(f32::to_bits));
                words.push(0);
            }
            bytes.extend(words.iter().flat_map(|word| word.to_le_bytes()));
        }
        bytes
    }

    /// `LodTestView`s of the shader, 32 bytes each.
    fn view_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (eye, view) in &self.views {
            let words = [
                eye.x.to_bits(),
                eye.y.to_bits(),
                eye.z.to_bits(),
                0,
                view.pixels_per_unit.to_bits(),
                view.coarsen_sq.to_bits(),
                view.keep_sq.to_bits(),
                view.orthographic,
            ];
            bytes.extend(words.iter().flat_map(|word| word.to_le_bytes()));
        }
        bytes
    }
}

/// The test's one pass: the shader over the staged scene, its levels into `lod levels`.
struct LodProbe {
    pipeline: ComputePipeline,
    inputs: [Vec<u8>; 3],
    counts: [u32; 2],
    staged: Vec<Binding>,
}

impl TypedPass for LodProbe {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        "lod probe"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let size = u64::from(self.counts[0] * self.counts[1]).max(1) * 4;
        let levels = registry.create_buffer("lod levels", BufferDesc { size });
        registry.write_storage_buffer(levels, ShaderStage::Compute)
    }

    fn prepare(&mut self, _: &Self::Handles, context: &mut PrepareContext<'_>) {
        self.staged.clear();
        for input in &self.inputs {
            match context.stage_data(input) {
                Ok(binding) => self.staged.push(binding),
                Err(error) => return context.fail(error),
            }
        }
    }

    fn execute(&mut self, levels: &Self::Handles, context: &mut ExecuteContext<'_>) {
        let mut bindings = std::mem::take(&mut self.staged);
        bindings.push(Binding::buffer(levels));
        context.bind_compute(&self.pipeline, &bindings);
        context.push_constants(&self.counts);
        context.dispatch(self.counts[0].div_ceil(64), 1, 1);
    }
}

/// Every level the GLSL twin chooses, `[view][object]`.
fn gpu_levels(device: &Arc<GpuDevice>, scene: &Scene) -> Vec<Vec<u32>> {
    use BindingKind::StorageBuffer;
    let spirv = shaders::Shader::from_bytes("lod_select.comp", shaders::Stage::Compute, LOD_SELECT).expect("SPIR-V");
    let kinds = [StorageBuffer; 4];
    let pipeline = ComputePipeline::new(device, "lod probe", spirv.words(), &kinds, 8).expect("the pipeline builds");
    let counts = [scene.objects.len() as u32, scene.views.len() as u32];
    let inputs = [scene.error_bytes(), scene.object_bytes(), scene.view_bytes()];
    let probe = LodProbe { pipeline, inputs, counts, staged: Vec::new() };
    let size = u64::from(counts[0] * counts[1]).max(1) * 4;
    let readback = ReadbackBuffer::new(device, "lod levels readback", size).expect("allocates");
    let mut graph =
        RenderGraph::new(Arc::clone(device), vk::Extent2D { width: 8, height: 8 }).expect("the graph creates");
    graph.add_typed_pass(probe);
    graph.import_buffer("lod levels readback", readback.shared());
    graph.add_typed_pass(BufferReadbackPass::new("lod levels", "lod levels readback"));
    graph.execute_frame().expect("the frame runs");
    graph.wait_idle().expect("the frame finishes");
    let words = readback.read_u32().expect("maps");
    drop(graph);
    words.chunks(scene.objects.len()).map(<[u32]>::to_vec).collect()
}

/// A small deterministic generator (xorshift), so a failure repeats.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `low..high`.
    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }

    fn vector(&mut self, reach: f32) -> Vec3 {
        Vec3::new(self.range(-reach, reach), self.range(-reach, reach), self.range(-reach, reach))
    }
}

/// Chains of one to eight levels with growing errors, as the importer makes them.
fn random_chains(random: &mut Random, count: usize) -> Vec<Vec<f32>> {
    (0..count)
        .map(|_| {
            let levels = 1 + (random.next() % 8) as usize;
            let mut error = 0.0;
            (0..levels)
                .map(|level| {
                    if level > 0 {
                        error += random.range(0.0, 0.2);
                    }
                    error
                })
                .collect()
        })
        .collect()
}

/// Objects in a box of side 400 m, rotated and scaled, a few with non-finite boxes.
fn random_objects(random: &mut Random, chains: usize, count: usize) -> Vec<Object> {
    (0..count)
        .map(|index| {
            let rotation = Mat4::from_axis_angle(random.vector(1.0).normalize_or(Vec3::Y), random.range(0.0, 6.3));
            let scale = Vec3::new(random.range(0.2, 4.0), random.range(0.2, 4.0), random.range(0.2, 4.0));
            let matrix = rotation * Mat4::from_scale(scale);
            let mut center = random.vector(200.0);
            if index % 97 == 5 {
                center.y = f32::NAN;
            }
            if index % 89 == 7 {
                center.x = f32::INFINITY;
            }
            Object {
                center,
                half: Vec3::new(random.range(0.05, 6.0), random.range(0.05, 6.0), random.range(0.05, 6.0)),
                chain: (random.next() % chains as u64) as usize,
                axes: [matrix.x_axis.truncate(), matrix.y_axis.truncate(), matrix.z_axis.truncate()],
            }
        })
        .collect()
}

/// A view from `eye` with a random field of view, height, threshold and band, a fifth of
/// them orthographic.
fn random_view(random: &mut Random, eye: Vec3) -> (Vec3, LodErrorView) {
    let projection = if random.next().is_multiple_of(5) {
        let side = random.range(5.0, 100.0);
        Mat4::orthographic_rh(-side, side, -side, side, 1000.0, 0.1)
    } else {
        Mat4::perspective_infinite_reverse_rh(random.range(0.2, 2.0), random.range(0.5, 2.5), 0.1)
    };
    let view =
        LodErrorView::new(&projection, random.range(64.0, 2160.0), random.range(0.25, 4.0), random.range(0.0, 0.3));
    (eye, view)
}

fn assert_same_levels(scene: &Scene, gpu: &[Vec<u32>], what: &str) {
    let cpu = scene.cpu_levels();
    assert_eq!(gpu.len(), cpu.len(), "{what}: one row of levels per view");
    for (view, (gpu_row, cpu_row)) in gpu.iter().zip(&cpu).enumerate() {
        for (object, (gpu_level, cpu_level)) in gpu_row.iter().zip(cpu_row).enumerate() {
            assert_eq!(
                gpu_level, cpu_level,
                "{what}: view {view}, object {object} ({:?}, chain {:?}): the GPU's level against the CPU's",
                scene.objects[object], scene.chains[scene.objects[object].chain]
            );
        }
    }
}

#[test]
fn gpu_lod_levels_equal_the_cpu_levels_on_random_scenes_and_views() {
    let Some(device) = gpu_test_context() else { return };
    for seed in 1..=4u64 {
        let mut random = Random(0x9e37_79b9_7f4a_7c15 ^ seed);
        let chains = random_chains(&mut random, 24);
        let objects = random_objects(&mut random, chains.len(), 3000);
        let views = (0..16)
            .map(|_| {
                let eye = random.vector(250.0);
                random_view(&mut random, eye)
            })
            .collect();
        let scene = Scene { chains, objects, views };
        let gpu = gpu_levels(&device, &scene);
        assert_same_levels(&scene, &gpu, &format!("seed {seed}"));
        let coarser = gpu.iter().flatten().filter(|&&level| level > 0).count();
        assert!(coarser > 0 && coarser < gpu.len() * scene.objects.len(), "the scenes use several levels");
    }
    assert_no_validation_messages(&device);
}

#[test]
fn gpu_lod_hysteresis_state_after_a_camera_path_equals_the_cpu_state() {
    let Some(device) = gpu_test_context() else { return };
    let mut random = Random(0x5151_2727_8383_1919);
    let chains = random_chains(&mut random, 16);
    let objects = random_objects(&mut random, chains.len(), 2000);
    // One lens, the eye walking out and back with a wobble: objects cross their hand-overs
    // both ways and rest near them.
    let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.6, 0.1);
    let banded = LodErrorView::new(&projection, 720.0, 1.0, 0.2);
    let path: Vec<Vec3> = (0..48)
        .map(|step| {
            let out = if step < 24 { step as f32 } else { 48.0 - step as f32 };
            Vec3::new(out * 6.0 + 2.0 * (step as f32 * 1.3).sin(), 0.0, 0.0)
        })
        .collect();
    let scene = Scene { chains, objects, views: path.iter().map(|&eye| (eye, banded)).collect() };
    let gpu = gpu_levels(&device, &scene);
    assert_same_levels(&scene, &gpu, "the banded path");
    // The band matters on this path: without it the levels switch more often.
    let unbanded = LodErrorView::new(&projection, 720.0, 1.0, 0.0);
    let plain = Scene { views: path.iter().map(|&eye| (eye, unbanded)).collect(), ..scene };
    let switches = |levels: &[Vec<u32>]| {
        levels.windows(2).map(|pair| pair[0].iter().zip(&pair[1]).filter(|(a, b)| a != b).count()).sum::<usize>()
    };
    let plain_levels = plain.cpu_levels();
    assert!(switches(&gpu) < switches(&plain_levels), "the band cuts switches at the hand-overs");
    assert_same_levels(&plain, &gpu_levels(&device, &plain), "the plain path");
    assert_no_validation_messages(&device);
}

#[test]
fn gpu_lod_ties_pass_on_both_sides() {
    let Some(device) = gpu_test_context() else { return };
    // One pixel per unit at distance 1 and a one-pixel threshold: a level ties where its
    // error equals the distance. Boxes of half extent 1 at x = d + 1 are d from the eye.
    let view = LodErrorView { pixels_per_unit: 1.0, coarsen_sq: 1.0, keep_sq: 1.0, orthographic: 0 };
    let chains = vec![vec![0.0, 2.0, 4.0, 8.0]];
    let objects = [1.0f32, 2.0, 3.0, 4.0, 7.99, 8.0, 16.0]
        .iter()
        .map(|&distance| Object {
            center: Vec3::new(distance + 1.0, 0.0, 0.0),
            half: Vec3::ONE,
            chain: 0,
            axes: [Vec3::X, Vec3::Y, Vec3::Z],
        })
        .collect();
    let scene = Scene { chains, objects, views: vec![(Vec3::ZERO, view)] };
    let gpu = gpu_levels(&device, &scene);
    assert_same_levels(&scene, &gpu, "ties");
    assert_eq!(gpu[0], [0, 1, 1, 2, 2, 3, 3], "a level exactly at its limit passes: the coarser wins");
    assert_no_validation_messages(&device);
}

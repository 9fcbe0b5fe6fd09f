//! The distance rule of levels of detail has two twins: the CPU's (`ecs::Lod::select` fed
//! with the world centre's distance from the view's eye, culling's `LevelRule::pick`) and
//! `lod_distance.h`, which the camera's GPU cull runs for the other window views of a
//! split-screen frame. This test runs the GLSL twin on the device
//! (`shaders/lod_distance.comp.glsl`) over random objects, chains and views, and on eyes placed
//! right at the levels' hand-overs, and holds every level to the CPU's.

use std::sync::Arc;

use ecs::{Lod, LodLevel, MeshHandle};
use glam::{Mat4, Quat, Vec3};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Binding, BindingKind, BufferDesc, BufferWrite, ComputePipeline, ExecuteContext, PrepareContext, ReadbackBuffer,
    Registry, RenderGraph, ShaderStage, TypedPass,
};

const LOD_DISTANCE: &[u8] = include_bytes!("shaders/lod_distance.comp.spv");

/// One test object: its world matrix, local centre and chain.
struct Object {
    model: Mat4,
    local_center: Vec3,
    chain: usize,
}

/// One view: the eye, the field-of-view scale and the global bias.
struct View {
    eye: Vec3,
    scale: f32,
    bias: f32,
}

struct Scene {
    chains: Vec<Lod>,
    objects: Vec<Object>,
    views: Vec<View>,
}

impl Scene {
    /// The CPU's levels, `[view][object]`, as the Visibility stage picks them.
    fn cpu_levels(&self) -> Vec<Vec<u32>> {
        self.views
            .iter()
            .map(|view| {
                self.objects
                    .iter()
                    .map(|object| {
                        let lods = &self.chains[object.chain];
                        let center = object.model.transform_point3(object.local_center);
                        let distance = center.distance_squared(view.eye).sqrt();
                        let mesh = lods.select(distance, view.scale, view.bias).expect("levels");
                        mesh.0
                    })
                    .collect()
            })
            .collect()
    }

    fn inputs(&self) -> [Vec<u8>; 3] {
        let mut limits = Vec::new();
        let mut firsts = Vec::new();
        for chain in &self.chains {
            firsts.push(limits.len() as u32);
            limits.extend(chain.levels.iter().map(|level| level.max_distance.to_bits()));
        }
        let mut objects = Vec::new();
        for object in &self.objects {
            // The rows of the affine part, as `ObjectTransform` holds them.
            let rows = object.model.transpose().to_cols_array_2d();
            objects.extend(rows[..3].iter().flatten().map(|value| value.to_bits()));
            objects.extend(object.local_center.to_array().map(f32::to_bits));
            let chain = &self.chains[object.chain];
            objects.extend([firsts[object.chain], chain.levels.len() as u32, chain.bias.to_bits(), 0, 0]);
        }
        let mut views = Vec::new();
        for view in &self.views {
            views.extend(view.eye.to_array().map(f32::to_bits));
            views.extend([view.scale.to_bits(), view.bias.to_bits(), 0, 0, 0]);
        }
        [limits, objects, views].map(|words| words.iter().flat_map(|word| word.to_le_bytes()).collect())
    }
}

/// The test's one pass: the shader over the staged scene, its levels into `lod levels`.
struct Probe {
    pipeline: ComputePipeline,
    inputs: [Vec<u8>; 3],
    counts: [u32; 2],
    staged: Vec<Binding>,
}

impl TypedPass for Probe {
    type Handles = BufferWrite;

    fn name(&self) -> &str {
        "lod distance probe"
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

/// The GLSL twin's levels, `[view][object]`.
fn gpu_levels(device: &Arc<render_graph::GpuDevice>, scene: &Scene) -> Vec<Vec<u32>> {
    let spirv =
        shaders::Shader::from_bytes("lod_distance.comp", shaders::Stage::Compute, LOD_DISTANCE).expect("SPIR-V");
    let kinds = [BindingKind::StorageBuffer; 4];
    let pipeline = ComputePipeline::new(device, "lod distance", spirv.words(), &kinds, 8).expect("the pipeline builds");
    let counts = [scene.objects.len() as u32, scene.views.len() as u32];
    let probe = Probe { pipeline, inputs: scene.inputs(), counts, staged: Vec::new() };
    let size = u64::from(counts[0] * counts[1]).max(1) * 4;
    let readback = ReadbackBuffer::new(device, "lod levels readback", size).expect("allocates");
    let mut graph = RenderGraph::new(Arc::clone(device), vk::Extent2D { width: 8, height: 8 }).expect("a graph");
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

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }

    fn vector(&mut self, reach: f32) -> Vec3 {
        Vec3::new(self.range(-reach, reach), self.range(-reach, reach), self.range(-reach, reach))
    }
}

/// Chains of two to eight levels of growing greatest distances, each with its bias.
fn random_chains(random: &mut Random, count: usize) -> Vec<Lod> {
    (0..count)
        .map(|_| {
            let levels = 2 + (random.next() % 7) as u32;
            let mut reach = 0.0;
            let levels: Vec<LodLevel> = (0..levels)
                .map(|level| {
                    reach += random.range(1.0, 80.0);
                    LodLevel { mesh: MeshHandle(level), max_distance: reach }
                })
                .collect();
            Lod { levels: levels.into(), bias: random.range(0.5, 2.0) }
        })
        .collect()
}

/// Objects in a box of side 400 m, rotated, scaled and moved, a few with a NaN place.
fn random_objects(random: &mut Random, chains: usize, count: usize) -> Vec<Object> {
    (0..count)
        .map(|index| {
            let rotation = Quat::from_axis_angle(random.vector(1.0).normalize_or(Vec3::Y), random.range(0.0, 6.3));
            let scale = Vec3::new(random.range(0.2, 4.0), random.range(0.2, 4.0), random.range(0.2, 4.0));
            let mut translation = random.vector(200.0);
            if index % 97 == 5 {
                translation.y = f32::NAN;
            }
            let model = Mat4::from_scale_rotation_translation(scale, rotation, translation);
            let chain = (random.next() % chains as u64) as usize;
            Object { model, local_center: random.vector(2.0), chain }
        })
        .collect()
}

#[test]
fn gpu_distance_levels_equal_the_cpu_levels() {
    let Some(device) = gpu_test_context() else { return };
    let mut random = Random(0x5eed_d157);
    let chains = random_chains(&mut random, 24);
    let objects = random_objects(&mut random, chains.len(), 2000);
    let mut views: Vec<View> = (0..12)
        .map(|_| View { eye: random.vector(220.0), scale: random.range(0.3, 2.0), bias: random.range(0.5, 2.0) })
        .collect();
    // Eyes right at a hand-over: an object's centre a level's greatest distance away (times
    // the biases over the scale), so the comparison decides on its last bit.
    for (index, object) in objects.iter().enumerate().filter(|(index, _)| index % 401 == 3) {
        let lods = &chains[object.chain];
        let center = object.model.transform_point3(object.local_center);
        let (scale, bias) = (1.0, 1.0);
        let reach = lods.levels[index % lods.levels.len()].max_distance * lods.bias * bias / scale;
        views.push(View { eye: center + Vec3::X * reach, scale, bias });
    }
    let scene = Scene { chains, objects, views };
    let (gpu, cpu) = (gpu_levels(&device, &scene), scene.cpu_levels());
    assert_eq!(gpu.len(), cpu.len());
    let mut coarser = 0;
    for (view, (gpu_row, cpu_row)) in gpu.iter().zip(&cpu).enumerate() {
        for (object, (gpu_level, cpu_level)) in gpu_row.iter().zip(cpu_row).enumerate() {
            assert_eq!(gpu_level, cpu_level, "view {view}, object {object}: the GPU's level against the CPU's");
            coarser += usize::from(*cpu_level > 0);
        }
    }
    assert!(coarser > scene.objects.len(), "the views see coarser levels too ({coarser})");
    assert_no_validation_messages(&device);
}

//! [`ClusterCullPass`]: cluster (meshlet) culling on the GPU, one thread per pair of
//! [`ClusterTable`](super::ClusterTable) (a meshlet of an object), two-phase like the object
//! pass; and [`ClusterResetPass`], which creates and zeroes the frame's draw buffers.
//!
//! - [`CullPhase::Early`] (`cluster_cull_early.comp`): pairs visible last frame (the history
//!   of [`CLUSTER_BITS`]) that pass this frame's sphere-frustum and cone tests are appended
//!   to `draw_commands`; the depth prepass draws them and the Hi-Z build reduces that depth.
//! - [`CullPhase::Late`] (`cluster_cull_late.comp`), after the object pass has written
//!   `visibility_bits`: every meshlet of every surviving object is tested (sphere against
//!   the frustum, normal cone, box against `hiz_depth`); its verdict goes to
//!   [`CLUSTER_VERDICTS`], its bit to [`CLUSTER_BITS`], and the newly visible are appended.
//!
//! Each command is a meshlet's own index range with `firstInstance` = the object, so the
//! standard depth and geometry passes draw it unchanged (`vkCmdDrawIndexedIndirectCount`).
//! The tests are the CPU reference's ([`crate::cluster`]), step for step.

use std::mem::{offset_of, size_of};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::names::{DRAW_COMMANDS, DRAW_COUNT, OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{lock_scene, SharedScene, DRAW_COMMAND_BYTES};
use glam::Mat4;
use render_graph::{
    vk, Access, Binding, BindingKind, BufferDesc, BufferHandle, ComputePipeline, ExecuteContext, GpuDevice,
    ImageHandle, Pass, PrepareContext, Registry, ShaderStage,
};

use super::cull::{CullPhase, CULL_STATS, CULL_STAT_WORDS, VISIBILITY_BITS};
use super::hiz::HIZ_DEPTH;
use crate::scene::{ClusterTable, CLUSTER_MESHLETS, CLUSTER_OBJECTS, CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS};
use culling::cluster::{view_eye, ClusterMargins, ClusterSettings, CLUSTER_STAT_WORDS};
use culling::{Frustum, MAX_PLANES};

/// Name of the per-pair visibility bits the late phase writes (bit `i` of little-endian u32
/// word `i / 32` = pair `i`); last frame's version is the early phase's history.
pub const CLUSTER_BITS: &str = "cluster_visibility_bits";
/// Name of the per-pair verdicts the late phase writes (one u32
/// [`ClusterVerdict`](culling::cluster::ClusterVerdict) code per pair).
pub const CLUSTER_VERDICTS: &str = "cluster_verdicts";
/// Name of the survivor list [`ClusterSurvivorPass`](super::ClusterSurvivorPass) writes for the late phase: word 0 the
/// count, then the covered objects the object pass kept.
pub const CLUSTER_SURVIVORS: &str = "cluster_survivors";
/// Name of the late phase's `VkDispatchIndirectCommand` (one workgroup per survivor, at most
/// 65,535), written by [`ClusterSurvivorPass`](super::ClusterSurvivorPass).
pub const CLUSTER_DISPATCH: &str = "cluster_dispatch";
/// Name of the frame's cluster counters ([`CLUSTER_STAT_WORDS`] u32s,
/// [`ClusterStats`](culling::cluster::ClusterStats)).
pub const CLUSTER_STATS: &str = "cluster_stats";

/// Threads per workgroup of the cluster shaders: one 64-bit word of [`CLUSTER_BITS`].
pub const CLUSTER_GROUP: u32 = 64;

/// `flags` bit of [`ClusterUniforms`]: sphere-frustum test (`CLUSTER_FRUSTUM`).
pub const CLUSTER_FRUSTUM: u32 = 1;
/// `flags` bit: Hi-Z occlusion test (`CLUSTER_OCCLUSION`).
pub const CLUSTER_OCCLUSION: u32 = 2;
/// `flags` bit: normal-cone test (`CLUSTER_CONE`), set only for perspective views.
pub const CLUSTER_CONE: u32 = 4;

/// Bytes of the std140 block of [`ClusterUniforms`].
pub const CLUSTER_UNIFORM_BYTES: usize = 224;

/// Most workgroups of one dimension a dispatch is guaranteed (Vulkan's minimum limit).
pub const CLUSTER_MAX_GROUPS: u32 = 65_535;

/// Bytes of [`CLUSTER_BITS`] for `pairs` pairs (whole 64-bit words).
pub fn cluster_bits_bytes(pairs: u32) -> u64 {
    u64::from(pairs.max(1).div_ceil(64)) * 8
}

/// The cluster cull parameters of one frame.
///
/// GLSL twin: `uniform ClusterUniforms` in `shaders/glsl/engine/cluster_cull.h` (std140, 224 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterUniforms {
    /// World to clip, column-major.
    pub view_projection: [[f32; 4]; 4],
    /// Inward unit planes; the first `plane_count` are used.
    pub planes: [[f32; 4]; MAX_PLANES],
    /// The eye of a perspective view (`w` 1), zero otherwise.
    pub eye: [f32; 4],
    /// Planes in use.
    pub plane_count: u32,
    /// Pairs to cull.
    pub pair_count: u32,
    /// [`CLUSTER_FRUSTUM`] | [`CLUSTER_OCCLUSION`] | [`CLUSTER_CONE`].
    pub flags: u32,
    /// Mips of `hiz_depth`.
    pub hiz_mips: u32,
    /// Size of mip 0 of `hiz_depth`.
    pub hiz_size: [f32; 2],
    /// [`ClusterMargins::depth`].
    pub depth_margin: f32,
    /// [`ClusterMargins::footprint`].
    pub footprint_margin: f32,
    /// [`ClusterMargins::bounds`].
    pub bounds_margin: f32,
    /// [`ClusterMargins::cone`].
    pub cone_margin: f32,
    /// Pairs that are meshlets (not objects drawn whole): the late phase adds it to the
    /// `meshlets` counter once.
    pub meshlet_pairs: u32,
    /// Objects the cluster tables cover (threads of [`ClusterSurvivorPass`](super::ClusterSurvivorPass)).
    pub object_count: u32,
}

const _: () = {
    assert!(size_of::<ClusterUniforms>() == 224, "ClusterUniforms must match the std140 fields in cluster_cull.h");
    assert!(offset_of!(ClusterUniforms, meshlet_pairs) == 216);
    assert!(offset_of!(ClusterUniforms, object_count) == 220);
    assert!(offset_of!(ClusterUniforms, eye) == 160);
    assert!(offset_of!(ClusterUniforms, plane_count) == 176);
    assert!(offset_of!(ClusterUniforms, hiz_size) == 192, "a vec2 is 8-aligned in std140");
    assert!(offset_of!(ClusterUniforms, cone_margin) == 212);
};

impl ClusterUniforms {
    /// The parameters for `view_projection` over `pair_count` pairs (`meshlet_pairs` of them
    /// meshlets) of `object_count` objects and a pyramid of `hiz_size`. A view whose frustum
    /// is not finite culls nothing; an orthographic view has no cone test.
    pub fn new(
        view_projection: Mat4,
        [pair_count, meshlet_pairs, object_count]: [u32; 3],
        settings: ClusterSettings,
        hiz_size: vk::Extent2D,
    ) -> Self {
        let frustum = Frustum::from_view_projection(view_projection);
        let planes = frustum.plane_array();
        let eye = view_eye(&view_projection);
        let mut flags = 0;
        if frustum.is_finite() {
            flags |= u32::from(settings.frustum) * CLUSTER_FRUSTUM;
            flags |= u32::from(settings.occlusion) * CLUSTER_OCCLUSION;
            flags |= u32::from(settings.cone && eye.is_some()) * CLUSTER_CONE;
        }
        let margins = ClusterMargins::GPU;
        ClusterUniforms {
            view_projection: view_projection.to_cols_array_2d(),
            planes,
            eye: eye.map_or([0.0; 4], |eye| [eye.x, eye.y, eye.z, 1.0]),
            plane_count: frustum.planes().len() as u32,
            pair_count,
            flags,
            hiz_mips: render_graph::full_mip_chain(hiz_size),
            hiz_size: [hiz_size.width as f32, hiz_size.height as f32],
            depth_margin: margins.depth,
            footprint_margin: margins.footprint,
            bounds_margin: margins.bounds,
            cone_margin: margins.cone,
            meshlet_pairs,
            object_count,
        }
    }

    /// The std140 block as bytes (every field is 4-byte data; zero padding at the end).
    pub fn to_bytes(&self) -> [u8; CLUSTER_UNIFORM_BYTES] {
        let mut words = [0u32; CLUSTER_UNIFORM_BYTES / 4];
        let floats = self.view_projection.as_flattened().iter().chain(self.planes.as_flattened()).chain(&self.eye);
        for (word, value) in words.iter_mut().zip(floats) {
            *word = value.to_bits();
        }
        words[44..48].copy_from_slice(&[self.plane_count, self.pair_count, self.flags, self.hiz_mips]);
        let tail = [
            self.hiz_size[0],
            self.hiz_size[1],
            self.depth_margin,
            self.footprint_margin,
            self.bounds_margin,
            self.cone_margin,
        ];
        for (word, value) in words[48..54].iter_mut().zip(tail) {
            *word = value.to_bits();
        }
        words[54] = self.meshlet_pairs;
        words[55] = self.object_count;
        let mut bytes = [0u8; CLUSTER_UNIFORM_BYTES];
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }
}

/// [`ClusterSettings`] shared between the host and the cluster passes.
pub type SharedClusterSettings = Arc<Mutex<ClusterSettings>>;

pub(crate) fn lock_cluster_settings(settings: &SharedClusterSettings) -> MutexGuard<'_, ClusterSettings> {
    settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Creates `draw_commands` (room for `capacity` commands), `draw_count`, `cull_stats`,
/// [`CLUSTER_STATS`], [`CLUSTER_BITS`] (for `pairs` pairs), [`CLUSTER_SURVIVORS`] (for
/// `objects` objects) and [`CLUSTER_DISPATCH`], and zeroes them each frame (the commands
/// only with `zero_commands`, for draw modes that draw every command without the count).
pub struct ClusterResetPass {
    capacity: u32,
    pairs: u32,
    objects: u32,
    zero_commands: bool,
    buffers: Vec<BufferHandle>,
}

impl ClusterResetPass {
    /// Name of the pass in the graph.
    pub const NAME: &'static str = "cluster cull reset";

    /// A reset pass for `capacity` draw commands and `pairs` pairs of `objects` objects.
    pub fn new(capacity: u32, pairs: u32, objects: u32, zero_commands: bool) -> ClusterResetPass {
        ClusterResetPass { capacity, pairs, objects, zero_commands, buffers: Vec::with_capacity(7) }
    }
}

impl Pass for ClusterResetPass {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        self.buffers.clear();
        let sizes = [
            (DRAW_COUNT, 4),
            (CULL_STATS, CULL_STAT_WORDS as u64 * 4),
            (CLUSTER_STATS, CLUSTER_STAT_WORDS as u64 * 4),
            (CLUSTER_BITS, cluster_bits_bytes(self.pairs)),
            (CLUSTER_SURVIVORS, (u64::from(self.objects) + 1) * 4),
            (CLUSTER_DISPATCH, 12),
            (DRAW_COMMANDS, u64::from(self.capacity.max(1)) * DRAW_COMMAND_BYTES),
        ];
        for (name, size) in sizes {
            let buffer = registry.create_buffer(name, BufferDesc { size });
            self.buffers.push(registry.access_buffer(buffer, Access::TransferWrite));
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let fills = if self.zero_commands { 7 } else { 6 };
        for &handle in &self.buffers[..fills] {
            let buffer = context.buffer(handle);
            // SAFETY: recording outside rendering; the buffers were declared transfer
            // destinations, so the graph made them writable by transfers; whole-buffer fills.
            unsafe { context.device().cmd_fill_buffer(context.command_buffer(), buffer.buffer, 0, vk::WHOLE_SIZE, 0) };
        }
    }
}

/// The cluster cull pass of one phase (see the module docs).
pub struct ClusterCullPass {
    phase: CullPhase,
    pipeline: ComputePipeline,
    scene: SharedScene,
    settings: SharedClusterSettings,
    counts: [u32; 3],
    uniforms: Option<Binding>,
    inputs: Vec<BufferHandle>,
    pyramid: Option<ImageHandle>,
    outputs: Vec<BufferHandle>,
    /// The late phase's survivor list and pair ranges (bound after the outputs) and its
    /// indirect dispatch.
    survivors: Vec<BufferHandle>,
    dispatch: Option<BufferHandle>,
}

impl ClusterCullPass {
    /// Name of the early pass in the graph.
    pub const EARLY_NAME: &'static str = "cluster cull early";
    /// Name of the late pass in the graph.
    pub const LATE_NAME: &'static str = "cluster cull late";

    /// A cluster pass of `phase` over the pairs of `table` (imported as the cluster tables).
    pub fn new(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        settings: SharedClusterSettings,
        table: &ClusterTable,
        phase: CullPhase,
    ) -> render_graph::Result<ClusterCullPass> {
        use BindingKind::{SampledImage, StorageBuffer, UniformBuffer};
        let mut kinds = vec![UniformBuffer];
        kinds.extend([StorageBuffer; 6]);
        let (name, words) = match phase {
            CullPhase::Early => {
                kinds.extend([StorageBuffer; 3]);
                (Self::EARLY_NAME, shaders::CLUSTER_CULL_EARLY_COMP.words())
            }
            CullPhase::Late => {
                kinds.extend([StorageBuffer, SampledImage]);
                kinds.extend([StorageBuffer; 7]);
                (Self::LATE_NAME, shaders::CLUSTER_CULL_LATE_COMP.words())
            }
        };
        let pipeline = ComputePipeline::new(device, name, words, &kinds, 0)?;
        Ok(ClusterCullPass {
            phase,
            pipeline,
            scene,
            settings,
            counts: [table.pair_count(), table.meshlet_pair_count(), table.object_count()],
            uniforms: None,
            inputs: Vec::with_capacity(7),
            pyramid: None,
            outputs: Vec::with_capacity(5),
            survivors: Vec::with_capacity(2),
            dispatch: None,
        })
    }
}

impl Pass for ClusterCullPass {
    fn name(&self) -> &str {
        match self.phase {
            CullPhase::Early => Self::EARLY_NAME,
            CullPhase::Late => Self::LATE_NAME,
        }
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        self.inputs.clear();
        self.outputs.clear();
        self.survivors.clear();
        self.dispatch = None;
        for name in [OBJECT_RECORDS, OBJECT_TRANSFORMS, CLUSTER_MESHLETS, CLUSTER_PAIRS, CLUSTER_OBJECTS] {
            let buffer = registry.buffer(name);
            self.inputs.push(registry.read_storage_buffer(buffer, COMPUTE));
        }
        let history = registry.history_buffer(CLUSTER_BITS);
        self.inputs.push(registry.read_storage_buffer(history, COMPUTE));
        if self.phase == CullPhase::Late {
            let object_bits = registry.buffer(VISIBILITY_BITS);
            self.inputs.push(registry.read_storage_buffer(object_bits, COMPUTE));
            let pyramid = registry.image(HIZ_DEPTH);
            self.pyramid = Some(registry.sample(pyramid, COMPUTE));
            let bits = registry.buffer(CLUSTER_BITS);
            self.outputs.push(registry.read_write_storage_buffer(bits, COMPUTE));
            // The survivor pass wrote the verdicts of the culled objects' pairs.
            let verdicts = registry.buffer(CLUSTER_VERDICTS);
            self.outputs.push(registry.read_write_storage_buffer(verdicts, COMPUTE));
        }
        for name in [DRAW_COMMANDS, DRAW_COUNT, CLUSTER_STATS] {
            let buffer = registry.buffer(name);
            self.outputs.push(registry.read_write_storage_buffer(buffer, COMPUTE));
        }
        if self.phase == CullPhase::Late {
            for name in [CLUSTER_SURVIVORS, CLUSTER_OBJECT_PAIRS] {
                let buffer = registry.buffer(name);
                self.survivors.push(registry.read_storage_buffer(buffer, COMPUTE));
            }
            let dispatch = registry.buffer(CLUSTER_DISPATCH);
            self.dispatch = Some(registry.indirect_buffer(dispatch));
        }
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        self.uniforms = stage_uniforms(context, &self.scene, &self.settings, self.counts);
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let Some(uniforms) = self.uniforms else { return };
        // Uniforms, inputs, the late phase's pyramid, outputs, survivors: at most 16, on the
        // stack.
        let mut bindings = [uniforms; 16];
        let inputs = self.inputs.iter().map(|&handle| Binding::Buffer(handle));
        let outputs = self.outputs.iter().chain(&self.survivors).map(|&handle| Binding::Buffer(handle));
        let all = inputs.chain(self.pyramid.map(Binding::Image)).chain(outputs);
        let mut count = 1;
        for (slot, binding) in bindings[1..].iter_mut().zip(all) {
            *slot = binding;
            count += 1;
        }
        context.bind_compute(&self.pipeline, &bindings[..count]);
        if let Some(dispatch) = self.dispatch {
            // One workgroup per object the object pass kept (the survivor pass's count).
            context.dispatch_indirect(dispatch, 0);
            return;
        }
        let groups = self.counts[0].div_ceil(CLUSTER_GROUP);
        if groups > CLUSTER_MAX_GROUPS {
            context.fail(render_graph::GraphError::InvalidDescription {
                resource: String::from(CLUSTER_PAIRS),
                reason: "more cluster pairs than one dispatch covers (65,535 groups of 64)",
            });
            return;
        }
        if groups > 0 {
            context.dispatch(groups, 1, 1);
        }
    }
}

/// Stages the frame's [`ClusterUniforms`] for the camera of `scene` and `settings`, over
/// `counts` (pairs, meshlet pairs, objects); a failure fails the frame and gives `None`.
pub(crate) fn stage_uniforms(
    context: &mut PrepareContext<'_>,
    scene: &SharedScene,
    settings: &SharedClusterSettings,
    counts: [u32; 3],
) -> Option<Binding> {
    let view_projection = Mat4::from_cols_array_2d(&lock_scene(scene).camera().view_projection);
    let settings = *lock_cluster_settings(settings);
    let uniforms = ClusterUniforms::new(view_projection, counts, settings, context.output_extent());
    match context.stage_data(&uniforms.to_bytes()) {
        Ok(binding) => Some(binding),
        Err(error) => {
            context.fail(error);
            None
        }
    }
}

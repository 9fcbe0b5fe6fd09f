//! [`GpuCullPass`]: frustum and occlusion culling of the shared `object_records` and
//! `object_transforms` on the GPU, one thread per object, compacted into `draw_commands` + `draw_count`; and
//! [`CullResetPass`], which creates and zeroes the draw buffers each frame.
//!
//! Two phases share one [`GpuCullSettings`] handle (see the module docs of
//! [`crate::gpu`] for the frame):
//!
//! - [`CullPhase::Early`] (`gpu_cull_early.comp`): objects visible last frame (the history
//!   of `visibility_bits`) that pass this frame's frustum are appended to the draw list; the
//!   depth prepass draws them and the Hi-Z build reduces that depth.
//! - [`CullPhase::Late`] (`gpu_cull_late.comp`): every object is tested against the frustum,
//!   then against `hiz_depth`; the answer is written to `visibility_bits` (next frame's
//!   history) and the objects visible now that the early phase did not draw are appended.
//!
//! Each thread computes its object's world box from the record's local box and the transform
//! as the CPU's `Aabb::transformed_center_half` does, and the frustum test repeats the CPU
//! reference step for step, both with `precise` arithmetic, so its bits equal the CPU
//! kernels' on the Visibility stage's boxes. Every test keeps what it is unsure of: non-finite boxes, boxes reaching
//! the near or camera plane, boxes partly off-screen for occlusion.

use std::mem::{offset_of, size_of};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::names::{DRAW_COMMANDS, DRAW_COUNT, OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{lock_scene, SharedScene, DRAW_COMMAND_BYTES};
use glam::Mat4;
use render_graph::{
    vk, Access, Binding, BindingKind, BufferDesc, BufferHandle, ComputePipeline, ExecuteContext, GpuDevice,
    ImageHandle, Pass, PrepareContext, Registry, ShaderStage,
};

use super::hiz::HIZ_DEPTH;
use culling::{Frustum, MAX_PLANES};

/// Name of the per-object visibility bits the late phase writes (**contract**): bit `i` of
/// little-endian word `i / 64` set when object `i` may be visible (u64 words, as
/// [`VisibilityBits`](culling::VisibilityBits)); last frame's version is the early phase's
/// history.
pub const VISIBILITY_BITS: &str = "visibility_bits";

/// Name of the frame's cull counters (`CullStats` in `gpu_cull.h`): [`CULL_STAT_WORDS`] u32s,
/// zeroed by [`CullResetPass`], added to by both phases; see [`GpuCullStats`].
pub const CULL_STATS: &str = "cull_stats";

/// u32 counters in [`CULL_STATS`] (`STAT_COUNT` in `gpu_cull.h`).
pub const CULL_STAT_WORDS: usize = 8;

/// What GPU culling counted in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuCullStats {
    /// Objects the late phase tested (`STAT_OBJECTS`).
    pub objects: u32,
    /// Objects outside the frustum (or without a mesh) (`STAT_FRUSTUM_REJECTED`).
    pub frustum_rejected: u32,
    /// Objects the early phase drew (visible last frame, in the frustum now).
    pub early_drawn: u32,
    /// Objects in the frustum the late phase found occluded.
    pub occlusion_rejected: u32,
    /// Objects the late phase drew (visible now, not drawn early).
    pub late_drawn: u32,
    /// Triangles of every drawn command (both phases; each is drawn by a depth prepass and
    /// the geometry pass).
    pub triangles: u32,
    /// GPU milliseconds of the early cull, Hi-Z build and late cull passes (`None` where the
    /// device has no timestamps or the frame is not known finished).
    pub gpu_ms: [Option<f64>; 3],
    /// Whether the GPU did the culling (false on the CPU fallback).
    pub culled_on_device: bool,
}

impl GpuCullStats {
    /// Decodes the counters read back from [`CULL_STATS`] (little-endian u32s) and takes the
    /// pass times from `graph`'s last finished frame.
    pub fn from_counters(bytes: &[u8], graph: &render_graph::GraphStats) -> GpuCullStats {
        let word = |index: usize| {
            bytes.get(index * 4..index * 4 + 4).map_or(0, |word| u32::from_le_bytes(word.try_into().expect("4 bytes")))
        };
        let gpu_ms = |name: &str| graph.pass_gpu_ms(name);
        GpuCullStats {
            objects: word(0),
            frustum_rejected: word(1),
            early_drawn: word(2),
            occlusion_rejected: word(3),
            late_drawn: word(4),
            triangles: word(5),
            gpu_ms: [
                gpu_ms(GpuCullPass::EARLY_NAME),
                gpu_ms(super::hiz::HiZBuildPass::NAME),
                gpu_ms(GpuCullPass::LATE_NAME),
            ],
            culled_on_device: true,
        }
    }
}

/// Threads per workgroup of the cull shaders (`CULL_GROUP` in `gpu_cull.h`): one 64-bit word
/// of [`VISIBILITY_BITS`] per workgroup.
pub const CULL_GROUP: u32 = 64;

/// `flags` bit of [`CullUniforms`]: run the frustum test (`CULL_FRUSTUM` in `gpu_cull.h`).
pub const CULL_FRUSTUM: u32 = 1;
/// `flags` bit of [`CullUniforms`]: run the occlusion test (`CULL_OCCLUSION` in `gpu_cull.h`).
pub const CULL_OCCLUSION: u32 = 2;

/// Relative raise of a box's nearest depth before the occlusion comparison, for the `f32`
/// rounding of the projection (the CPU occlusion test's margin).
pub const DEPTH_MARGIN: f32 = 4.0e-6;
/// Footprint widening in texels, for the same rounding.
pub const FOOTPRINT_MARGIN: f32 = 1.0e-2;

/// The cull parameters of one frame.
///
/// GLSL twin: `uniform CullUniforms` in `shaders/glsl/engine/gpu_cull.h` (std140, 208 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CullUniforms {
    /// World to clip, column-major (glam conventions).
    pub view_projection: [[f32; 4]; 4],
    /// Inward unit planes `(n, d)`; the first `plane_count` are used.
    pub planes: [[f32; 4]; MAX_PLANES],
    /// Planes in use (5 for an infinite far plane, 6 otherwise).
    pub plane_count: u32,
    /// Objects to cull (`object_records[..object_count]`).
    pub object_count: u32,
    /// [`CULL_FRUSTUM`] | [`CULL_OCCLUSION`].
    pub flags: u32,
    /// Mips of `hiz_depth`.
    pub hiz_mips: u32,
    /// Size of mip 0 of `hiz_depth` in texels.
    pub hiz_size: [f32; 2],
    /// [`DEPTH_MARGIN`].
    pub depth_margin: f32,
    /// [`FOOTPRINT_MARGIN`].
    pub footprint_margin: f32,
    /// Both phases append only objects from this index on (0 unless cluster culling draws
    /// the objects below it meshlet by meshlet; see [`CullUniforms::drawing_from`]).
    pub draw_from: u32,
}

const _: () = {
    assert!(size_of::<CullUniforms>() == 196, "CullUniforms must match the std140 fields in gpu_cull.h");
    assert!(offset_of!(CullUniforms, planes) == 64);
    assert!(offset_of!(CullUniforms, plane_count) == 160);
    assert!(offset_of!(CullUniforms, object_count) == 164);
    assert!(offset_of!(CullUniforms, flags) == 168);
    assert!(offset_of!(CullUniforms, hiz_mips) == 172);
    assert!(offset_of!(CullUniforms, hiz_size) == 176, "a vec2 is 8-aligned in std140");
    assert!(offset_of!(CullUniforms, depth_margin) == 184);
    assert!(offset_of!(CullUniforms, footprint_margin) == 188);
    assert!(offset_of!(CullUniforms, draw_from) == 192);
};

/// Bytes of the std140 block of [`CullUniforms`] (its fields, padded to 16).
pub const CULL_UNIFORM_BYTES: usize = 208;

impl CullUniforms {
    /// The parameters for `view_projection` over `object_count` objects and a pyramid of
    /// `hiz_size` with `hiz_mips` mips. A view whose frustum is not finite culls nothing.
    pub fn new(view_projection: Mat4, object_count: u32, settings: GpuCullSettings, hiz_size: vk::Extent2D) -> Self {
        let frustum = Frustum::from_view_projection(view_projection);
        let planes = frustum.plane_array();
        let trusted = frustum.is_finite();
        let flags = if trusted {
            (u32::from(settings.frustum) * CULL_FRUSTUM) | (u32::from(settings.occlusion) * CULL_OCCLUSION)
        } else {
            0
        };
        CullUniforms {
            view_projection: view_projection.to_cols_array_2d(),
            planes,
            plane_count: frustum.planes().len() as u32,
            object_count,
            flags,
            hiz_mips: render_graph::full_mip_chain(hiz_size),
            hiz_size: [hiz_size.width as f32, hiz_size.height as f32],
            depth_margin: DEPTH_MARGIN,
            footprint_margin: FOOTPRINT_MARGIN,
            draw_from: 0,
        }
    }

    /// The same parameters with both phases appending only objects from `first` on.
    pub fn drawing_from(self, first: u32) -> Self {
        CullUniforms { draw_from: first, ..self }
    }

    /// The std140 block as bytes, in field order (every field is 4-byte data; zero padding
    /// at the end).
    pub fn to_bytes(&self) -> [u8; CULL_UNIFORM_BYTES] {
        let mut words = [0u32; CULL_UNIFORM_BYTES / 4];
        let floats = self.view_projection.as_flattened().iter().chain(self.planes.as_flattened());
        for (word, value) in words.iter_mut().zip(floats) {
            *word = value.to_bits();
        }
        words[40..44].copy_from_slice(&[self.plane_count, self.object_count, self.flags, self.hiz_mips]);
        let tail = [self.hiz_size[0], self.hiz_size[1], self.depth_margin, self.footprint_margin];
        for (word, value) in words[44..48].iter_mut().zip(tail) {
            *word = value.to_bits();
        }
        words[48] = self.draw_from;
        let mut bytes = [0u8; CULL_UNIFORM_BYTES];
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }
}

/// Which tests the GPU culling runs; shared by both phases through [`SharedCullSettings`],
/// so the host may change it between frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuCullSettings {
    /// Frustum test on.
    pub frustum: bool,
    /// Occlusion test (late phase) on.
    pub occlusion: bool,
}

impl Default for GpuCullSettings {
    fn default() -> Self {
        GpuCullSettings { frustum: true, occlusion: true }
    }
}

/// [`GpuCullSettings`] shared between the host and the cull passes.
pub type SharedCullSettings = Arc<Mutex<GpuCullSettings>>;

fn lock_settings(settings: &SharedCullSettings) -> MutexGuard<'_, GpuCullSettings> {
    settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Bytes of [`VISIBILITY_BITS`] for `capacity` objects (whole 64-bit words).
pub fn visibility_bits_bytes(capacity: u32) -> u64 {
    u64::from(capacity.div_ceil(64)) * 8
}

/// Creates `draw_commands` (room for `capacity` commands), `draw_count` and [`CULL_STATS`],
/// and zeroes the count and the counters each frame (and, with `zero_commands`, every command, for draw modes that draw up to
/// the maximum without the count: unused commands then draw nothing).
pub struct CullResetPass {
    capacity: u32,
    zero_commands: bool,
    commands: Option<BufferHandle>,
    count: Option<BufferHandle>,
    stats: Option<BufferHandle>,
}

impl CullResetPass {
    /// Name of the pass in the graph.
    pub const NAME: &'static str = "gpu cull reset";

    /// A reset pass for a scene of `capacity` objects.
    pub fn new(capacity: u32, zero_commands: bool) -> CullResetPass {
        CullResetPass { capacity, zero_commands, commands: None, count: None, stats: None }
    }
}

impl Pass for CullResetPass {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let size = u64::from(self.capacity.max(1)) * DRAW_COMMAND_BYTES;
        let commands = registry.create_buffer(DRAW_COMMANDS, BufferDesc { size });
        let count = registry.create_buffer(DRAW_COUNT, BufferDesc { size: 4 });
        self.commands = Some(registry.access_buffer(commands, Access::TransferWrite));
        self.count = Some(registry.access_buffer(count, Access::TransferWrite));
        let stats = registry.create_buffer(CULL_STATS, BufferDesc { size: CULL_STAT_WORDS as u64 * 4 });
        self.stats = Some(registry.access_buffer(stats, Access::TransferWrite));
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let count = context.buffer(self.count.expect("register ran"));
        let commands = context.buffer(self.commands.expect("register ran"));
        let stats = context.buffer(self.stats.expect("register ran"));
        // SAFETY: recording outside rendering; the buffers were declared transfer
        // destinations, so the graph made them writable by transfers; whole-buffer fills.
        unsafe {
            context.device().cmd_fill_buffer(context.command_buffer(), count.buffer, 0, vk::WHOLE_SIZE, 0);
            context.device().cmd_fill_buffer(context.command_buffer(), stats.buffer, 0, vk::WHOLE_SIZE, 0);
        }
        if self.zero_commands {
            // SAFETY: as above.
            unsafe {
                context.device().cmd_fill_buffer(context.command_buffer(), commands.buffer, 0, vk::WHOLE_SIZE, 0)
            };
        }
    }
}

/// Which half of two-phase culling a [`GpuCullPass`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CullPhase {
    /// Last frame's visible objects in this frame's frustum, drawn first.
    Early,
    /// Everything else against the new pyramid; writes [`VISIBILITY_BITS`].
    Late,
}

/// The cull pass of one phase (see the module docs).
pub struct GpuCullPass {
    phase: CullPhase,
    pipeline: ComputePipeline,
    scene: SharedScene,
    settings: SharedCullSettings,
    capacity: u32,
    draw_from: u32,
    uniforms: Option<Binding>,
    object_count: u32,
    transforms: Option<BufferHandle>,
    records: Option<BufferHandle>,
    history: Option<BufferHandle>,
    pyramid: Option<ImageHandle>,
    bits: Option<BufferHandle>,
    commands: Option<BufferHandle>,
    count: Option<BufferHandle>,
    stats: Option<BufferHandle>,
}

impl GpuCullPass {
    /// Name of the early pass in the graph.
    pub const EARLY_NAME: &'static str = "gpu cull early";
    /// Name of the late pass in the graph.
    pub const LATE_NAME: &'static str = "gpu cull late";

    /// A cull pass of `phase` over the objects of `scene`, with the tests `settings` asks
    /// for.
    pub fn new(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        settings: SharedCullSettings,
        phase: CullPhase,
    ) -> render_graph::Result<GpuCullPass> {
        use BindingKind::{SampledImage, StorageBuffer, UniformBuffer};
        let pipeline = match phase {
            CullPhase::Early => ComputePipeline::new(
                device,
                Self::EARLY_NAME,
                shaders::GPU_CULL_EARLY_COMP.words(),
                &[
                    UniformBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                ],
                0,
            )?,
            CullPhase::Late => ComputePipeline::new(
                device,
                Self::LATE_NAME,
                shaders::GPU_CULL_LATE_COMP.words(),
                &[
                    UniformBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    SampledImage,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                ],
                0,
            )?,
        };
        let capacity = lock_scene(&scene).capacity();
        Ok(GpuCullPass {
            phase,
            pipeline,
            scene,
            settings,
            capacity,
            draw_from: 0,
            uniforms: None,
            object_count: 0,
            transforms: None,
            records: None,
            history: None,
            pyramid: None,
            bits: None,
            commands: None,
            count: None,
            stats: None,
        })
    }

    /// The same pass appending only objects from `first` on: cluster culling draws the
    /// objects its table covers (those below `first`) meshlet by meshlet, and this pass
    /// still writes every object's bit.
    pub fn drawing_from(mut self, first: u32) -> GpuCullPass {
        self.draw_from = first;
        self
    }
}

impl Pass for GpuCullPass {
    fn name(&self) -> &str {
        match self.phase {
            CullPhase::Early => Self::EARLY_NAME,
            CullPhase::Late => Self::LATE_NAME,
        }
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        self.transforms = Some(registry.read_storage_buffer(transforms, COMPUTE));
        let records = registry.buffer(OBJECT_RECORDS);
        self.records = Some(registry.read_storage_buffer(records, COMPUTE));
        let history = registry.history_buffer(VISIBILITY_BITS);
        self.history = Some(registry.read_storage_buffer(history, COMPUTE));
        if self.phase == CullPhase::Late {
            let pyramid = registry.image(HIZ_DEPTH);
            self.pyramid = Some(registry.sample(pyramid, COMPUTE));
            let bits =
                registry.create_buffer(VISIBILITY_BITS, BufferDesc { size: visibility_bits_bytes(self.capacity) });
            self.bits = Some(registry.write_storage_buffer(bits, COMPUTE));
        }
        let commands = registry.buffer(DRAW_COMMANDS);
        self.commands = Some(registry.read_write_storage_buffer(commands, COMPUTE));
        let count = registry.buffer(DRAW_COUNT);
        self.count = Some(registry.read_write_storage_buffer(count, COMPUTE));
        let stats = registry.buffer(CULL_STATS);
        self.stats = Some(registry.read_write_storage_buffer(stats, COMPUTE));
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        let (view_projection, object_count) = {
            let scene = lock_scene(&self.scene);
            (Mat4::from_cols_array_2d(&scene.camera().view_projection), scene.object_count())
        };
        let settings = *lock_settings(&self.settings);
        let uniforms = CullUniforms::new(view_projection, object_count, settings, context.output_extent())
            .drawing_from(self.draw_from);
        self.object_count = object_count;
        match context.stage_data(&uniforms.to_bytes()) {
            Ok(binding) => self.uniforms = Some(binding),
            Err(error) => {
                self.uniforms = None;
                context.fail(error);
            }
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let Some(uniforms) = self.uniforms else { return };
        let transforms = Binding::Buffer(self.transforms.expect("register ran"));
        let records = Binding::Buffer(self.records.expect("register ran"));
        let history = Binding::Buffer(self.history.expect("register ran"));
        let commands = Binding::Buffer(self.commands.expect("register ran"));
        let count = Binding::Buffer(self.count.expect("register ran"));
        let stats = Binding::Buffer(self.stats.expect("register ran"));
        match self.phase {
            CullPhase::Early => {
                context.bind_compute(&self.pipeline, &[uniforms, transforms, records, history, commands, count, stats])
            }
            CullPhase::Late => {
                let pyramid = Binding::Image(self.pyramid.expect("register ran"));
                let bits = Binding::Buffer(self.bits.expect("register ran"));
                let bindings = [uniforms, transforms, records, history, pyramid, bits, commands, count, stats];
                context.bind_compute(&self.pipeline, &bindings);
            }
        }
        let groups = self.object_count.min(self.capacity).div_ceil(CULL_GROUP);
        if groups > 0 {
            context.dispatch(groups, 1, 1);
        }
    }
}

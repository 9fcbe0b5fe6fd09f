//! The shadow caster cull on the GPU: [`ShadowCullResetPass`] zeroes each view's count and
//! bits, [`ShadowCullPass`] tests every caster against every light view of the frame in one
//! dispatch (`shadow_cull.comp`) and compacts each view's casters into its own list of
//! indirect draws, which [`ShadowAtlasPass`](super::ShadowAtlasPass) draws with one
//! indirect-count draw per view.
//!
//! The test is the frustum test of the camera's cull on the same world boxes, with each view's
//! planes as the host placed them ([`culling::ShadowViews`]), so view `v`'s bits
//! ([`SHADOW_CASTER_BITS`]) equal the host's multi-view cull of that view bit for bit. A
//! caster outside the camera's view is tested like any other: the light view decides.

use std::sync::Arc;

use render_graph::{
    vk, Access, Binding, BindingKind, BufferDesc, BufferHandle, ComputePipeline, ExecuteContext, GpuDevice, Pass,
    PrepareContext, Registry, ShaderStage,
};

use super::cull::CULL_GROUP;
use crate::names::{OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{as_bytes, lock_scene, SharedScene, DRAW_COMMAND_BYTES, MAX_SHADOW_VIEWS};

/// Each light view's caster draws (**contract** name): view `v`'s list starts at command
/// `v * region` (`region` = the scene's capacity), one `VkDrawIndexedIndirectCommand` per
/// caster with `firstInstance` = its slot, in no particular order.
pub const SHADOW_DRAWS: &str = "shadow_draws";

/// Each light view's draw count (**contract** name): u32 `v` is view `v`'s count (the count
/// buffer of its indirect-count draw), u32 `MAX_SHADOW_VIEWS + v` the triangles of its draws.
pub const SHADOW_DRAW_COUNTS: &str = "shadow_draw_counts";

/// Each light view's caster bits by slot (**contract** name): view `v`'s bits are
/// [`shadow_bits_words`]`(capacity)` u32 words from word `v * shadow_bits_words(capacity)`,
/// bit `s % 32` of word `s / 32` set when the view keeps slot `s` (read as u64 words, the
/// layout of [`culling::VisibilityBits`]).
pub const SHADOW_CASTER_BITS: &str = "shadow_caster_bits";

/// Bytes of [`SHADOW_DRAW_COUNTS`]: a count and a triangle total per view.
pub const SHADOW_DRAW_COUNT_BYTES: u64 = 2 * MAX_SHADOW_VIEWS as u64 * 4;

/// Most bytes the GPU's caster lists may take (`capacity * views` commands); a frame that
/// would need more culls its casters on the host.
pub const SHADOW_DRAWS_MAX_BYTES: u64 = 512 << 20;

/// u32 words of one view's bits in [`SHADOW_CASTER_BITS`] for `capacity` slots (whole 64-bit
/// words, one per workgroup of the cull).
pub fn shadow_bits_words(capacity: u32) -> u32 {
    capacity.div_ceil(64) * 2
}

/// Bytes of [`SHADOW_DRAWS`] for lists of `capacity` commands for `views` views.
pub fn shadow_draws_bytes(capacity: u32, views: u32) -> u64 {
    u64::from(capacity.max(1)) * u64::from(views.max(1)) * DRAW_COMMAND_BYTES
}

/// Creates [`SHADOW_DRAW_COUNTS`] and [`SHADOW_CASTER_BITS`] for `views` views of `capacity`
/// slots and zeroes them each frame.
pub struct ShadowCullResetPass {
    capacity: u32,
    views: u32,
    counts: Option<BufferHandle>,
    bits: Option<BufferHandle>,
}

impl ShadowCullResetPass {
    /// Name of the pass.
    pub const NAME: &'static str = "shadow cull reset";

    /// The reset of lists for up to `views` views (clamped to `MAX_SHADOW_VIEWS`) of a scene
    /// of `capacity` slots.
    pub fn new(capacity: u32, views: u32) -> ShadowCullResetPass {
        ShadowCullResetPass { capacity, views: views.clamp(1, MAX_SHADOW_VIEWS as u32), counts: None, bits: None }
    }
}

impl Pass for ShadowCullResetPass {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let counts = registry.create_buffer(SHADOW_DRAW_COUNTS, BufferDesc { size: SHADOW_DRAW_COUNT_BYTES });
        self.counts = Some(registry.access_buffer(counts, Access::TransferWrite));
        let size = u64::from(shadow_bits_words(self.capacity)) * 4 * u64::from(self.views);
        let bits = registry.create_buffer(SHADOW_CASTER_BITS, BufferDesc { size });
        self.bits = Some(registry.access_buffer(bits, Access::TransferWrite));
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let counts = context.buffer(self.counts.expect("register ran"));
        let bits = context.buffer(self.bits.expect("register ran"));
        // SAFETY: recording outside rendering; both buffers were declared transfer
        // destinations, so the graph made them writable by transfers; whole-buffer fills.
        unsafe {
            context.device().cmd_fill_buffer(context.command_buffer(), counts.buffer, 0, vk::WHOLE_SIZE, 0);
            context.device().cmd_fill_buffer(context.command_buffer(), bits.buffer, 0, vk::WHOLE_SIZE, 0);
        }
    }
}

/// The push constants of `shadow_cull.comp` (`ShadowCullConstants`): object count, view
/// count, commands per view, u32 words of bits per view.
type CullConstants = [u32; 4];

/// Culls every caster of the scene against every light view of the frame in one dispatch
/// (see the module docs): reads `object_transforms` and `object_records`, the casters' slot
/// bits and the views' planes ([`crate::ShadowFrame`], staged each frame); writes
/// [`SHADOW_DRAWS`], adds to [`SHADOW_DRAW_COUNTS`] and writes [`SHADOW_CASTER_BITS`].
pub struct ShadowCullPass {
    pipeline: ComputePipeline,
    scene: SharedScene,
    capacity: u32,
    views: u32,
    constants: CullConstants,
    staged: Option<[Binding; 2]>,
    transforms: Option<BufferHandle>,
    records: Option<BufferHandle>,
    draws: Option<BufferHandle>,
    counts: Option<BufferHandle>,
    bits: Option<BufferHandle>,
}

impl ShadowCullPass {
    /// Name of the pass.
    pub const NAME: &'static str = "shadow cull";

    /// The cull of `scene`'s casters into lists for up to `views` views (clamped to
    /// `MAX_SHADOW_VIEWS`), each with room for every slot of the scene.
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene, views: u32) -> render_graph::Result<ShadowCullPass> {
        let pipeline = ComputePipeline::new(
            device,
            Self::NAME,
            shaders::SHADOW_CULL_COMP.words(),
            &[BindingKind::StorageBuffer; 7],
            std::mem::size_of::<CullConstants>() as u32,
        )?;
        let capacity = lock_scene(&scene).capacity();
        Ok(ShadowCullPass {
            pipeline,
            scene,
            capacity,
            views: views.clamp(1, MAX_SHADOW_VIEWS as u32),
            constants: [0; 4],
            staged: None,
            transforms: None,
            records: None,
            draws: None,
            counts: None,
            bits: None,
        })
    }
}

impl Pass for ShadowCullPass {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        self.transforms = Some(registry.read_storage_buffer(transforms, COMPUTE));
        let records = registry.buffer(OBJECT_RECORDS);
        self.records = Some(registry.read_storage_buffer(records, COMPUTE));
        let draws =
            registry.create_buffer(SHADOW_DRAWS, BufferDesc { size: shadow_draws_bytes(self.capacity, self.views) });
        self.draws = Some(registry.write_storage_buffer(draws, COMPUTE));
        let counts = registry.buffer(SHADOW_DRAW_COUNTS);
        self.counts = Some(registry.read_write_storage_buffer(counts, COMPUTE));
        let bits = registry.buffer(SHADOW_CASTER_BITS);
        self.bits = Some(registry.write_storage_buffer(bits, COMPUTE));
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        self.staged = None;
        let scene = lock_scene(&self.scene);
        let shadows = scene.shadows();
        let objects = scene.object_count().min(self.capacity);
        let views = shadows.cull_views();
        let view_count = views.len().min(self.views as usize);
        self.constants = [objects, view_count as u32, self.capacity, shadow_bits_words(self.capacity)];
        if objects == 0 || view_count == 0 {
            return;
        }
        // Every slot the dispatch covers has its bit, clear past the host's words.
        let words = shadows.caster_slot_words();
        let caster_bytes = u64::from(objects.div_ceil(64)) * 8;
        let casters = context.stage_with(caster_bytes, |bytes| {
            let known = as_bytes(words);
            let known = &known[..known.len().min(bytes.len())];
            bytes[..known.len()].copy_from_slice(known);
            bytes[known.len()..].fill(0);
        });
        let staged = casters.and_then(|casters| Ok([casters, context.stage_data(as_bytes(&views[..view_count]))?]));
        match staged {
            Ok(staged) => self.staged = Some(staged),
            Err(error) => context.fail(error),
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let Some([casters, views]) = self.staged else { return };
        let bindings = [
            Binding::Buffer(self.transforms.expect("register ran")),
            Binding::Buffer(self.records.expect("register ran")),
            casters,
            views,
            Binding::Buffer(self.draws.expect("register ran")),
            Binding::Buffer(self.counts.expect("register ran")),
            Binding::Buffer(self.bits.expect("register ran")),
        ];
        context.bind_compute(&self.pipeline, &bindings);
        context.push_constants(&self.constants);
        context.dispatch(self.constants[0].div_ceil(CULL_GROUP), 1, 1);
    }
}

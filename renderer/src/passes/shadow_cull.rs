//! The shadow caster cull on the GPU, two-phase like the camera's (`shadow_cull.h`):
//! [`ShadowCullResetPass`] zeroes each view's counts and bits; [`ShadowCullPass`] early tests
//! every caster against every light view of the frame in one dispatch and compacts each
//! view's casters into its own list of indirect draws, which
//! [`ShadowAtlasPass`](super::ShadowAtlasPass) draws with one indirect-count draw per view;
//! for the sun's cascades (views flagged for occlusion) the early lists hold only what each
//! kept last frame, a [`HiZBuildPass`](super::HiZBuildPass) reduces the cascades' square of
//! the atlas into [`SHADOW_HIZ`], and [`ShadowCullPass`] late tests every caster in a cascade's frustum
//! against its tile of that pyramid, drawing the newly visible with a second atlas pass.
//!
//! The frustum test is the camera's on the same world boxes, with each view's planes as the
//! host placed them ([`culling::ShadowViews`]), so a frustum-only view's bits
//! ([`SHADOW_CASTER_BITS`]) equal the host's multi-view cull of that view bit for bit. A
//! caster outside the camera's view is tested like any other: the light view decides.

use std::sync::Arc;

use render_graph::{
    vk, Access, Binding, BindingKind, BufferDesc, BufferHandle, ComputePipeline, ExecuteContext, GpuDevice,
    ImageHandle, Pass, PrepareContext, Registry, ShaderStage,
};

use super::cull::{CullPhase, CULL_GROUP, DEPTH_MARGIN, FOOTPRINT_MARGIN};
use crate::names::{OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{as_bytes, lock_scene, SharedScene, DRAW_COMMAND_BYTES, MAX_SHADOW_VIEWS};

/// Each light view's caster draws of the early phase (**contract** name): view `v`'s list
/// starts at command `v * region` (`region` = the scene's capacity), one
/// `VkDrawIndexedIndirectCommand` per caster with `firstInstance` = its slot, in no
/// particular order.
pub const SHADOW_DRAWS: &str = "shadow_draws";

/// The late phase's caster draws of the occlusion views (the sun's cascades, views below
/// `MAX_CASCADES`), laid out as [`SHADOW_DRAWS`].
pub const SHADOW_DRAWS_LATE: &str = "shadow_draws_late";

/// Each light view's draw counts (**contract** name), `MAX_SHADOW_VIEWS` u32 per part: the
/// early counts (u32 `v` is view `v`'s, the count buffer of its early indirect-count draw),
/// the early triangles, the late counts (from u32 `2 * MAX_SHADOW_VIEWS`), the late
/// triangles.
pub const SHADOW_DRAW_COUNTS: &str = "shadow_draw_counts";

/// The depth pyramid the late phase tests the cascades' casters against: R32_SFLOAT, full mip
/// chain, built like `hiz_depth` from the square at `shadow_atlas`'s top-left corner that
/// holds the cascades ([`shadow_pyramid_side`](crate::shadow_pyramid_side)).
pub const SHADOW_HIZ: &str = "shadow_hiz";

/// Each light view's caster bits by slot (**contract** name): view `v`'s bits are
/// [`shadow_bits_words`]`(capacity)` u32 words from word `v * shadow_bits_words(capacity)`,
/// bit `s % 32` of word `s / 32` set when the view keeps slot `s` (read as u64 words, the
/// layout of [`culling::VisibilityBits`]).
pub const SHADOW_CASTER_BITS: &str = "shadow_caster_bits";

/// Bytes of [`SHADOW_DRAW_COUNTS`]: a count and a triangle total per view and phase.
pub const SHADOW_DRAW_COUNT_BYTES: u64 = 4 * MAX_SHADOW_VIEWS as u64 * 4;

/// u32 of [`SHADOW_DRAW_COUNTS`] where the late counts start.
pub const SHADOW_LATE_COUNTS: u64 = 2 * MAX_SHADOW_VIEWS as u64;

/// Most bytes the GPU's caster lists may take (`capacity * (views + MAX_CASCADES)` commands);
/// a frame that would need more culls its casters on the host.
pub const SHADOW_DRAWS_MAX_BYTES: u64 = 512 << 20;

/// u32 words of one view's bits in [`SHADOW_CASTER_BITS`] for `capacity` slots (whole 64-bit
/// words, one per workgroup of the cull).
pub fn shadow_bits_words(capacity: u32) -> u32 {
    capacity.div_ceil(64) * 2
}

/// Bytes of [`SHADOW_DRAWS`] for lists of `capacity` commands for `views` views (of
/// [`SHADOW_DRAWS_LATE`] with `views` = `MAX_CASCADES`).
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

/// The push constants of `shadow_cull.h` (`ShadowCullConstants`): object count, view count,
/// commands per view, u32 words of bits per view, the pyramid's side and mips, the
/// occlusion test's two margins (as bits).
type CullConstants = [u32; 8];

/// One phase of the shadow caster cull (see the module docs): reads `object_transforms` and
/// `object_records`, the casters' slot bits and the views ([`crate::ShadowFrame`], staged
/// each frame) and last frame's [`SHADOW_CASTER_BITS`]; the early phase writes
/// [`SHADOW_DRAWS`], the late one reads [`SHADOW_HIZ`] and writes [`SHADOW_DRAWS_LATE`];
/// both add to [`SHADOW_DRAW_COUNTS`] and write their views' [`SHADOW_CASTER_BITS`].
pub struct ShadowCullPass {
    phase: CullPhase,
    pipeline: ComputePipeline,
    scene: SharedScene,
    capacity: u32,
    views: u32,
    constants: CullConstants,
    staged: Option<[Binding; 2]>,
    transforms: Option<BufferHandle>,
    records: Option<BufferHandle>,
    history: Option<BufferHandle>,
    pyramid: Option<ImageHandle>,
    draws: Option<BufferHandle>,
    counts: Option<BufferHandle>,
    bits: Option<BufferHandle>,
}

impl ShadowCullPass {
    /// Name of the early pass.
    pub const NAME: &'static str = "shadow cull";
    /// Name of the late pass.
    pub const LATE_NAME: &'static str = "shadow cull late";

    /// The early phase's cull of `scene`'s casters into lists for up to `views` views
    /// (clamped to `MAX_SHADOW_VIEWS`), each with room for every slot of the scene.
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene, views: u32) -> render_graph::Result<ShadowCullPass> {
        ShadowCullPass::phase(device, scene, views, CullPhase::Early)
    }

    /// The late phase's cull (the cascades' occlusion) of the same casters.
    pub fn late(device: &Arc<GpuDevice>, scene: SharedScene, views: u32) -> render_graph::Result<ShadowCullPass> {
        ShadowCullPass::phase(device, scene, views, CullPhase::Late)
    }

    fn phase(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        views: u32,
        phase: CullPhase,
    ) -> render_graph::Result<ShadowCullPass> {
        use BindingKind::{SampledImage, StorageBuffer};
        let (name, words, bindings): (_, _, &[BindingKind]) = match phase {
            CullPhase::Early => (Self::NAME, shaders::SHADOW_CULL_EARLY_COMP.words(), &[StorageBuffer; 8]),
            CullPhase::Late => (
                Self::LATE_NAME,
                shaders::SHADOW_CULL_LATE_COMP.words(),
                &[
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                    SampledImage,
                    StorageBuffer,
                    StorageBuffer,
                    StorageBuffer,
                ],
            ),
        };
        let constant_bytes = std::mem::size_of::<CullConstants>() as u32;
        let pipeline = ComputePipeline::new(device, name, words, bindings, constant_bytes)?;
        let capacity = lock_scene(&scene).capacity();
        Ok(ShadowCullPass {
            phase,
            pipeline,
            scene,
            capacity,
            views: views.clamp(1, MAX_SHADOW_VIEWS as u32),
            constants: [0; 8],
            staged: None,
            transforms: None,
            records: None,
            history: None,
            pyramid: None,
            draws: None,
            counts: None,
            bits: None,
        })
    }
}

impl Pass for ShadowCullPass {
    fn name(&self) -> &str {
        match self.phase {
            CullPhase::Early => Self::NAME,
            CullPhase::Late => Self::LATE_NAME,
        }
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        self.transforms = Some(registry.read_storage_buffer(transforms, COMPUTE));
        let records = registry.buffer(OBJECT_RECORDS);
        self.records = Some(registry.read_storage_buffer(records, COMPUTE));
        let history = registry.history_buffer(SHADOW_CASTER_BITS);
        self.history = Some(registry.read_storage_buffer(history, COMPUTE));
        let (name, views) = match self.phase {
            CullPhase::Early => (SHADOW_DRAWS, self.views),
            CullPhase::Late => {
                let pyramid = registry.image(SHADOW_HIZ);
                self.pyramid = Some(registry.sample(pyramid, COMPUTE));
                (SHADOW_DRAWS_LATE, ecs::MAX_CASCADES as u32)
            }
        };
        let draws = registry.create_buffer(name, BufferDesc { size: shadow_draws_bytes(self.capacity, views) });
        self.draws = Some(registry.write_storage_buffer(draws, COMPUTE));
        let counts = registry.buffer(SHADOW_DRAW_COUNTS);
        self.counts = Some(registry.read_write_storage_buffer(counts, COMPUTE));
        let bits = registry.buffer(SHADOW_CASTER_BITS);
        self.bits = Some(registry.read_write_storage_buffer(bits, COMPUTE));
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        self.staged = None;
        let scene = lock_scene(&self.scene);
        let shadows = scene.shadows();
        let objects = scene.object_count().min(self.capacity);
        let views = shadows.cull_views();
        let view_count = views.len().min(self.views as usize);
        let pyramid = match shadows.culling() {
            crate::ShadowCulling::Device { pyramid, .. } => pyramid,
            crate::ShadowCulling::Host => 1,
        };
        let occluding = views[..view_count].iter().any(|view| view.flags & super::cull::CULL_OCCLUSION != 0);
        self.constants = [
            objects,
            view_count as u32,
            self.capacity,
            shadow_bits_words(self.capacity),
            pyramid,
            32 - pyramid.max(1).leading_zeros(),
            DEPTH_MARGIN.to_bits(),
            FOOTPRINT_MARGIN.to_bits(),
        ];
        if objects == 0 || view_count == 0 || (self.phase == CullPhase::Late && !occluding) {
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
        let transforms = Binding::Buffer(self.transforms.expect("register ran"));
        let records = Binding::Buffer(self.records.expect("register ran"));
        let history = Binding::Buffer(self.history.expect("register ran"));
        let draws = Binding::Buffer(self.draws.expect("register ran"));
        let counts = Binding::Buffer(self.counts.expect("register ran"));
        let bits = Binding::Buffer(self.bits.expect("register ran"));
        match self.pyramid {
            Some(pyramid) => {
                let pyramid = Binding::Image(pyramid);
                let bindings = [transforms, records, casters, views, history, pyramid, draws, counts, bits];
                context.bind_compute(&self.pipeline, &bindings);
            }
            None => {
                let bindings = [transforms, records, casters, views, history, draws, counts, bits];
                context.bind_compute(&self.pipeline, &bindings);
            }
        }
        context.push_constants(&self.constants);
        context.dispatch(self.constants[0].div_ceil(CULL_GROUP), 1, 1);
    }
}

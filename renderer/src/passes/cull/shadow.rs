//! The shadow caster cull on the GPU, [`ShadowCullPass`]: the two-phase skeleton
//! ([`TwoPhaseCull`]) specialised to the shadow casters and every light view of the frame
//! (`shadow_cull.h`). [`CullResetPass::shadows`] zeroes each view's counts and bits; the
//! early phase tests every caster against every light view of the frame in one dispatch and
//! compacts each view's casters into its own list of indirect draws, which
//! [`ShadowAtlasPass`](crate::passes::ShadowAtlasPass) draws with one indirect-count draw per view;
//! for the sun's cascades (views flagged for occlusion) the early lists hold only what each
//! kept last frame, a [`HiZBuildPass`](crate::passes::HiZBuildPass) reduces the cascades' square of
//! the atlas into [`SHADOW_HIZ`], and [`ShadowCullPass`] late tests every caster in a cascade's frustum
//! against its tile of that pyramid, drawing the newly visible with a second atlas pass. The
//! other light views are decided in the early phase alone.
//!
//! The frustum test is the camera's on the same world boxes, with each view's planes as the
//! host placed them ([`culling::ShadowViews`]), so a frustum-only view's bits
//! ([`SHADOW_CASTER_BITS`]) equal the host's multi-view cull of that view bit for bit. A
//! caster outside the camera's view is tested like any other: the light view decides.
//!
//! Levels of detail: with the scene's level-of-detail view set
//! ([`GpuScene::set_lod_view`](crate::GpuScene::set_lod_view)), a caster whose record names a
//! chain is drawn at the level the camera's cull chooses for it this frame: every light view
//! carries the camera's rule and eye ([`CullView::with_lod`]) and the cull chooses once per
//! caster from the camera's state of last frame (`object_lod_levels`), so a shadow is cast by
//! the mesh the camera draws, whichever light looks at it. Without that view the records'
//! levels (the CPU's) are drawn.

use std::sync::Arc;

use render_graph::{
    Binding, BindingKind, BufferDesc, BufferWrite, ExecuteContext, GpuDevice, PrepareContext, Registry, ShaderStage,
};

use super::camera::CULL_GROUP;
use super::skeleton::{CullKind, CullPhase, CullResetPass, TwoPhaseCull};
use super::view::{CullConstants, CullView};
use crate::names::{LOD_ENTRIES, OBJECT_LOD_LEVELS};
use crate::scene::{as_bytes, lock_scene, ShadowFrame, SharedScene, DRAW_COMMAND_BYTES, MAX_SHADOW_VIEWS};

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

impl CullResetPass {
    /// The reset of the shadow cull: creates [`SHADOW_DRAW_COUNTS`] and [`SHADOW_CASTER_BITS`]
    /// for `views` views (clamped to `MAX_SHADOW_VIEWS`) of `capacity` slots and zeroes them
    /// each frame.
    pub fn shadows(capacity: u32, views: u32) -> CullResetPass {
        let views = views.clamp(1, MAX_SHADOW_VIEWS as u32);
        let bits = u64::from(shadow_bits_words(capacity)) * 4 * u64::from(views);
        let buffers = vec![(SHADOW_DRAW_COUNTS, SHADOW_DRAW_COUNT_BYTES, true), (SHADOW_CASTER_BITS, bits, true)];
        CullResetPass::new(CullResetPass::SHADOWS, buffers)
    }
}

/// The shadow casters' cull: the [`CullKind`] of [`ShadowCullPass`].
pub struct ShadowCull {
    scene: SharedScene,
    capacity: u32,
    views: u32,
    /// This frame's casters' slot bits, staged in `prepare` (the kind's first binding).
    casters: Option<Binding>,
}

/// The shadow cull's own resources: the casters' slot bits (staged each frame), the phase's
/// lists, the counts, the views' bits, the chains' levels and the camera's level states of
/// last frame.
pub struct ShadowCullHandles {
    draws: BufferWrite,
    counts: BufferWrite,
    bits: BufferWrite,
    lod_entries: render_graph::BufferRead,
    lod_history: render_graph::BufferRead,
}

/// One phase of the shadow caster cull (see the module docs): reads `object_transforms` and
/// `object_records`, the casters' slot bits and the views (the light views of the frame's
/// [`ShadowFrame`] parameter, staged each frame), last frame's [`SHADOW_CASTER_BITS`], the
/// chains' levels (`lod_entries`) and last frame's `object_lod_levels`; the early phase
/// writes [`SHADOW_DRAWS`], the late one reads [`SHADOW_HIZ`] and writes
/// [`SHADOW_DRAWS_LATE`]; both add to [`SHADOW_DRAW_COUNTS`] and write the bits of the views
/// they decide.
pub type ShadowCullPass = TwoPhaseCull<ShadowCull>;

impl TwoPhaseCull<ShadowCull> {
    /// Name of the early pass.
    pub const NAME: &'static str = "shadow cull";
    /// Name of the late pass.
    pub const LATE_NAME: &'static str = "shadow cull late";

    /// The early phase's cull of `scene`'s casters into lists for up to `views` views
    /// (clamped to `MAX_SHADOW_VIEWS`), each with room for every slot of the scene.
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene, views: u32) -> render_graph::Result<ShadowCullPass> {
        ShadowCullPass::of_phase(device, scene, views, CullPhase::Early)
    }

    /// The late phase's cull (the cascades' occlusion) of the same casters.
    pub fn late(device: &Arc<GpuDevice>, scene: SharedScene, views: u32) -> render_graph::Result<ShadowCullPass> {
        ShadowCullPass::of_phase(device, scene, views, CullPhase::Late)
    }

    fn of_phase(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        views: u32,
        phase: CullPhase,
    ) -> render_graph::Result<ShadowCullPass> {
        let capacity = lock_scene(&scene).capacity();
        let kind = ShadowCull { scene, capacity, views: views.clamp(1, MAX_SHADOW_VIEWS as u32), casters: None };
        TwoPhaseCull::with_kind(device, kind, phase)
    }
}

impl CullKind for ShadowCull {
    type Handles = ShadowCullHandles;

    const HISTORY: &'static str = SHADOW_CASTER_BITS;
    const PYRAMID: &'static str = SHADOW_HIZ;

    fn name(&self, phase: CullPhase) -> &'static str {
        match phase {
            CullPhase::Early => ShadowCullPass::NAME,
            CullPhase::Late => ShadowCullPass::LATE_NAME,
        }
    }

    fn shader(&self, phase: CullPhase) -> (&'static [u32], &'static [BindingKind]) {
        // The casters, the lists, the counts, the bits, the chains' levels, the camera's states.
        const OWN: [BindingKind; 6] = [BindingKind::StorageBuffer; 6];
        match phase {
            CullPhase::Early => (shaders::SHADOW_CULL_EARLY_COMP.words(), &OWN),
            CullPhase::Late => (shaders::SHADOW_CULL_LATE_COMP.words(), &OWN),
        }
    }

    fn register(&mut self, phase: CullPhase, registry: &mut Registry<'_>) -> ShadowCullHandles {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        // The scene may have grown since the last compile.
        self.capacity = lock_scene(&self.scene).capacity();
        let (name, views) = match phase {
            CullPhase::Early => (SHADOW_DRAWS, self.views),
            CullPhase::Late => (SHADOW_DRAWS_LATE, ecs::MAX_CASCADES as u32),
        };
        let draws = registry.create_buffer(name, BufferDesc { size: shadow_draws_bytes(self.capacity, views) });
        let counts = registry.buffer(SHADOW_DRAW_COUNTS);
        let bits = registry.buffer(SHADOW_CASTER_BITS);
        let lod_entries = registry.buffer(LOD_ENTRIES);
        let lod_history = registry.history_buffer(OBJECT_LOD_LEVELS);
        ShadowCullHandles {
            draws: registry.write_storage_buffer(draws, COMPUTE),
            counts: registry.read_write_storage_buffer(counts, COMPUTE),
            bits: registry.read_write_storage_buffer(bits, COMPUTE),
            lod_entries: registry.read_storage_buffer(lod_entries, COMPUTE),
            lod_history: registry.read_storage_buffer(lod_history, COMPUTE),
        }
    }

    fn prepare(
        &mut self,
        phase: CullPhase,
        context: &mut PrepareContext<'_>,
        views: &mut Vec<CullView>,
    ) -> Option<CullConstants> {
        self.casters = None;
        let shadows = match context.require_param::<ShadowFrame>() {
            Ok(shadows) => shadows,
            Err(error) => {
                context.fail(error);
                return None;
            }
        };
        let (objects, lod) = {
            let scene = lock_scene(&self.scene);
            (scene.object_count().min(self.capacity), scene.lod_view())
        };
        let frame_views = shadows.cull_views();
        let view_count = frame_views.len().min(self.views as usize);
        let two_phase = frame_views[..view_count].iter().any(|view| view.flags & super::view::CULL_TWO_PHASE != 0);
        if objects == 0 || view_count == 0 || (phase == CullPhase::Late && !two_phase) {
            return None;
        }
        // Every slot the dispatch covers has its bit, clear past the host's words.
        let words = shadows.caster_slot_words();
        let caster_bytes = u64::from(objects.div_ceil(64)) * 8;
        let staged = context.stage_with(caster_bytes, |bytes| {
            let known = as_bytes(words);
            let known = &known[..known.len().min(bytes.len())];
            bytes[..known.len()].copy_from_slice(known);
            bytes[known.len()..].fill(0);
        });
        match staged {
            Ok(casters) => self.casters = Some(casters),
            Err(error) => {
                context.fail(error);
                return None;
            }
        }
        // Every light view carries the camera's level rule and eye: the casters are drawn at the
        // camera's levels (the shader chooses from view 0's copy).
        views.extend(frame_views[..view_count].iter().map(|view| view.with_lod(lod, false)));
        Some(CullConstants {
            item_count: objects,
            words_per_view: shadow_bits_words(self.capacity),
            region: self.capacity,
            ..CullConstants::default()
        })
    }

    fn bind(&self, handles: &ShadowCullHandles, bind: &mut dyn FnMut(Binding)) {
        if let Some(casters) = self.casters {
            bind(casters);
        }
        bind(Binding::buffer(&handles.draws));
        bind(Binding::buffer(&handles.counts));
        bind(Binding::buffer(&handles.bits));
        bind(Binding::buffer(handles.lod_entries));
        bind(Binding::buffer(handles.lod_history));
    }

    fn dispatch(&self, _handles: &ShadowCullHandles, constants: &CullConstants, context: &mut ExecuteContext<'_>) {
        let groups = constants.item_count.div_ceil(CULL_GROUP);
        if groups > 0 {
            context.dispatch(groups, 1, 1);
        }
    }
}

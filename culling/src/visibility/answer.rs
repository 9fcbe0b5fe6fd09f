//! The [`Visibility`] resource: the answer the Visibility stage gives for the frame, and all
//! a game reads of it (the stage's working memory is `state.rs`). Kept across frames so that
//! steady-state frames allocate nothing.

use ecs::{CpuAnswers, ResolvedView};
use glam::Mat4;
use runtime::hecs::Entity;

use super::asked::AskedState;
use super::changes::{AnswerRun, SlotChanges};
use super::objects::ObjectColumns;
use super::slots::SlotIndex;
use super::views::OtherViews;
use crate::bits::VisibilityBits;
use crate::kernels::CullStats;
use crate::shadow::ShadowCull;
use crate::soa::AabbSoa;
use crate::view::ViewCullContext;

/// What the Visibility stage counted this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VisibilityStats {
    /// Mesh entities (objects).
    pub objects: usize,
    /// Objects that can be drawn at all (the length of `scene`).
    pub drawable: usize,
    /// Objects that may be visible (the length of `visible`).
    pub visible: usize,
    /// Drawable objects entirely outside a frustum plane.
    pub frustum_rejected: usize,
    /// Drawable objects inside the frustum but further than the maximum distance.
    pub distance_rejected: usize,
    /// Drawable objects that passed the distance cull but look too small.
    pub size_rejected: usize,
    /// Objects the occlusion cull hid (zero until an occlusion pass runs in the stage).
    pub occluded: usize,
    /// Drawable objects kept only because a matrix, their bounds or the view were not finite.
    pub non_finite: usize,
    /// Drawable objects whose matrix, world box and draw were written this frame because
    /// their inputs changed (new, moved or re-shaped); the others were static, and under an
    /// unchanged view also kept last frame's verdict.
    pub bounds_computed: usize,
    /// A tracked frame: the change log (`runtime::changes`) named every change since the last
    /// frame, so only those objects were read and the rest were culled by words of 64 from
    /// what the stage kept. Otherwise a full pass read every object (the first frame, after
    /// `App::world_mut`, a spawn or despawn of a mesh entity, or a frame without a view).
    pub tracked: bool,
    /// The frame's culls ran over every object, or every word of 64 (a full pass, or the
    /// word pass of a tracked frame). False on a tracked frame answered on request that left
    /// the word pass out: only the changed objects were read, and [`Visibility::bits`] are
    /// not this frame's verdict (see [`Visibility::answers`]).
    pub objects_culled: bool,
    /// `Culled` and `Occluded` tags inserted this frame (applied right after the cull).
    pub tags_inserted: usize,
    /// `Culled` and `Occluded` tags removed this frame.
    pub tags_removed: usize,
    /// Of those, entities that traded one tag for the other (counted once in each of the two
    /// above) in a single archetype move: an occluded object leaving the view, or a culled one
    /// coming back into view behind an occluder.
    pub tags_traded: usize,
    /// Seconds the system spent finding and recording this frame's tag changes.
    pub tag_seconds: f64,
    /// Seconds [`visibility_tags_system`](crate::visibility_tags_system) spent applying them
    /// (the archetype moves).
    pub tag_apply_seconds: f64,
}

/// What the last cull decided about one object (see [`Visibility::state_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectState {
    /// Kept: it may be visible (in [`Visibility::visible`]).
    Visible,
    /// Rejected by the frustum, distance or screen-size cull (what the `Culled` tag says).
    Culled,
    /// In view but hidden behind occluders (what the `Occluded` tag says).
    Occluded,
    /// A mesh entity that cannot be drawn (`Visible(false)`, no mesh or material, empty
    /// bounds, no transform): never in any list, and never tagged.
    NotDrawable,
    /// Nothing was answered: the view's [`CpuAnswers`] is [`CpuAnswers::None`].
    NotAnswered,
}

/// The Visibility stage's answer for the frame's main view, and for each other view: a
/// resource, reused across frames.
///
/// Written by [`visibility_system`](crate::visibility_system) in the `Visibility` stage;
/// read by everything after it (the render path, the shadow plan, picking). It holds:
///
/// - [`bits`](Visibility::bits): bit `i` set when object `i` may be visible;
/// - [`objects`](Visibility::objects): the per-object columns (world matrix, world box,
///   draw, entity), written for every drawable mesh, not only the visible ones;
/// - [`visible`](Visibility::visible): the visible objects' indices in storage order;
/// - [`scene`](Visibility::scene): every drawable object, shadow casters first, and
///   [`caster_count`](Visibility::caster_count), so `scene[..caster_count]` are the casters
///   a shadow pass culls against its light views (see [`Visibility::cull_shadow_casters`]);
/// - [`view`](Visibility::view): the view the frame was culled for, `None` on a frame with
///   no camera (and then everything above is empty);
/// - [`for_view`](Visibility::for_view): the answer of each view of the frame (the main
///   view's is all of the above; the other views' are their own bits, lists and levels);
/// - [`stats`](Visibility::stats).
///
/// An object index is the entity's persistent *slot*: a mesh entity keeps its slot from the
/// frame it is first seen until it is despawned or loses its `Mesh` (tag changes and other
/// archetype moves keep it); a freed slot is reused by a later entity, lowest first. Free
/// slots below the highest slot in use are holes: not drawable, never visible, owned by
/// [`Entity::DANGLING`] in [`ObjectColumns::entities`]. So [`Visibility::len`] counts
/// slots, and [`VisibilityStats::objects`] counts mesh entities.
#[derive(Clone, Debug, Default)]
pub struct Visibility {
    pub(crate) bits: VisibilityBits,
    pub(crate) objects: ObjectColumns,
    pub(crate) visible: Vec<u32>,
    pub(crate) scene: Vec<u32>,
    pub(crate) caster_count: usize,
    pub(crate) view: Option<ResolvedView>,
    pub(crate) stats: VisibilityStats,
    /// Bit `i` set when object `i` is drawable.
    pub(crate) drawable: Vec<u64>,
    /// Bit `i` set when object `i` is a shadow caster (drawable or not).
    pub(crate) casters: Vec<u64>,
    /// The slot each mesh entity owns (see [`Visibility::slot_of`]).
    pub(crate) index: SlotIndex,
    /// Bit `i` set when object `i` survived the other culls but is occluded (its visible bit
    /// is clear); written by `crate::occlusion::stage`.
    pub(crate) occluded: Vec<u64>,
    /// The slots this frame's cull wrote.
    pub(crate) changes: SlotChanges,
    /// Which run of the stage wrote this answer, and which the one before (what `changes`
    /// lead from).
    pub(crate) run: AnswerRun,
    /// The policy this answer was made under (see [`Visibility::answers`]).
    pub(crate) answers: CpuAnswers,
    /// The frame's cull context and whether the frustum test was on: what an answer on
    /// request is computed from.
    pub(crate) context: Option<(ViewCullContext, bool)>,
    /// The answers of the frame's other views (see [`Visibility::for_view`]).
    pub(crate) others: OtherViews,
    /// The frame's side of the error rule of levels of detail and the eye it measured from,
    /// when meshes publish errors (see [`Visibility::lod_error_view`]).
    pub(crate) lod_view: Option<(crate::LodErrorView, glam::Vec3)>,
    /// The CPU occlusion's raster of this frame, when one ran: what
    /// [`Visibility::explain`] reads an occluded object's mip and depths from (shared, not
    /// copied: the stage takes it back before its next raster).
    pub(crate) occlusion_culler: Option<std::sync::Arc<crate::OcclusionCuller>>,
    /// What an answer on request reads besides the columns (see `asked.rs`).
    pub(crate) asked: AskedState,
}

impl Visibility {
    /// Number of object slots of the frame (one past the highest slot in use; see the type's
    /// docs); 0 on a frame without a view.
    #[inline]
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the frame had no objects (or no view).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// One bit per object: set when it may be visible. Under
    /// [`CpuAnswers::OnRequest`] or `None`, what the GPU drew in the fed-back frame and what
    /// appeared since instead (see [`Visibility::answers`]).
    #[inline]
    pub fn bits(&self) -> &VisibilityBits {
        &self.bits
    }

    /// The per-object columns.
    #[inline]
    pub fn objects(&self) -> &ObjectColumns {
        &self.objects
    }

    /// Slots of the objects that may be visible, ascending.
    #[inline]
    pub fn visible(&self) -> &[u32] {
        &self.visible
    }

    /// Indices of every drawable object, shadow casters first (each part ascending).
    #[inline]
    pub fn scene(&self) -> &[u32] {
        &self.scene
    }

    /// How many of [`Visibility::scene`]'s first entries are shadow casters.
    #[inline]
    pub fn caster_count(&self) -> usize {
        self.caster_count
    }

    /// The shadow casters: `scene()[..caster_count()]`.
    #[inline]
    pub fn casters(&self) -> &[u32] {
        &self.scene[..self.caster_count]
    }

    /// The view this frame was culled for; `None` when there was no camera.
    #[inline]
    pub fn view(&self) -> Option<&ResolvedView> {
        self.view.as_ref()
    }

    /// What the stage counted this frame.
    #[inline]
    pub fn stats(&self) -> &VisibilityStats {
        &self.stats
    }

    /// The slots whose columns this frame's cull changed (see [`SlotChanges`]): what a
    /// renderer mirroring [`Visibility::objects`] must look at, and nothing else.
    #[inline]
    pub fn changes(&self) -> &SlotChanges {
        &self.changes
    }

    /// The slot `entity` owns (its object index), if it is a mesh entity the stage has seen.
    pub fn slot_of(&self, entity: Entity) -> Option<u32> {
        self.index.slot_of(entity)
    }

    /// Whether object `index` is drawable (listed in [`Visibility::scene`]).
    ///
    /// # Panics
    /// When `index >= len()`.
    pub fn is_drawable(&self, index: usize) -> bool {
        assert!(index < self.len(), "object {index} is out of range of {} objects", self.len());
        self.drawable[index / 64] >> (index % 64) & 1 == 1
    }

    /// Writes the shadow casters as slot bits into `out` (cleared first): bit `s % 64` of word
    /// `s / 64` set when slot `s` is in [`Visibility::casters`] (a drawable caster). One pass
    /// over the words, whatever the number of casters.
    pub fn caster_slot_words_into(&self, out: &mut Vec<u64>) {
        out.clear();
        out.extend(self.drawable.iter().zip(&self.casters).map(|(drawable, caster)| drawable & caster));
    }

    /// Writes the world boxes of the shadow casters, in [`Visibility::casters`] order, into
    /// `out` (cleared first; no allocation within its capacity).
    pub fn caster_bounds_into(&self, out: &mut AabbSoa) {
        out.clear();
        for &index in self.casters() {
            out.push(&self.objects.bounds[index as usize]);
        }
    }

    /// Culls the shadow casters against each light view (world to light clip space, sun
    /// cascades or a spot light's perspective): bit `k` of `shadows.bits(view)` is set when
    /// caster `casters()[k]` may cast into that view. `scratch` holds the casters' boxes
    /// and is reused across frames. Returns the statistics summed over the views.
    ///
    /// ```
    /// use culling::{AabbSoa, ShadowCull, Visibility};
    /// use glam::Mat4;
    /// let visibility = Visibility::default();
    /// let (mut shadows, mut scratch) = (ShadowCull::default(), AabbSoa::default());
    /// let stats = visibility.cull_shadow_casters(&mut shadows, &[Mat4::IDENTITY], &mut scratch);
    /// assert_eq!((stats.tested, shadows.view_count()), (0, 1));
    /// ```
    pub fn cull_shadow_casters(
        &self,
        shadows: &mut ShadowCull,
        light_view_projections: &[Mat4],
        scratch: &mut AabbSoa,
    ) -> CullStats {
        self.caster_bounds_into(scratch);
        shadows.set_views(light_view_projections);
        shadows.cull(scratch.slices())
    }

    /// Empties the result, keeping every capacity (a frame without a view).
    pub(crate) fn clear(&mut self, objects: usize) {
        self.bits.reset(0);
        self.objects.resize(0);
        self.visible.clear();
        self.scene.clear();
        self.caster_count = 0;
        self.view = None;
        self.stats = VisibilityStats { objects, ..VisibilityStats::default() };
        self.drawable.clear();
        self.casters.clear();
        self.occluded.clear();
        self.context = None;
        self.others.clear();
        self.lod_view = None;
    }

    /// The view of the error rule of levels of detail this frame's picks used and the eye
    /// they measured from (the exact bits), when the frame had a view and meshes publish
    /// errors ([`ecs::LodErrors`]): what a GPU cull choosing levels by the same rule
    /// (`lod_select.h`) needs to pick the same levels.
    #[inline]
    pub fn lod_error_view(&self) -> Option<(crate::LodErrorView, glam::Vec3)> {
        self.lod_view
    }

    /// What the last cull decided about `entity` in the main view (the one
    /// [`Visibility::view`] names; [`Visibility::for_view`] answers for every view), read
    /// from the dense per-slot answer in O(1) (an id lookup and three bits): truthful for every mesh entity whatever
    /// [`RenderSettings::visibility_tags`](ecs::RenderSettings::visibility_tags) says, so it
    /// is the way to ask about an entity the opt-in tag policy leaves untagged.
    ///
    /// Same timing as the tags: systems after the Visibility stage see this frame's answer,
    /// systems before it last frame's. `None` when there is no answer for it: not a mesh
    /// entity, spawned after the last cull, or the last frame had no view (then nothing is
    /// known to be hidden). An entity despawned since the last cull still reads its last
    /// answer.
    ///
    /// What each backend gives:
    ///
    /// | answer | CPU culling | GPU culling |
    /// |---|---|---|
    /// | `Culled` | this frame's frustum, distance and screen-size culls | the same, on the CPU (the frustum bits equal the GPU's) |
    /// | `Occluded` | this frame's CPU occlusion (when it runs) | the GPU's bits of an earlier frame, when read back (`renderer::BitsReadback`): one frame late when the GPU keeps up, at most the frames in flight plus one; never for an object the GPU did not test then (out of that frame's view, or appeared since) |
    /// | `Visible` | everything else drawable | everything else drawable; without the bits read back, every drawable object in view |
    ///
    /// Under [`CpuAnswers::OnRequest`] the answer is computed when asked, for that entity
    /// alone, from its world box, the frame's view and the fed-back bits (see
    /// [`Visibility::answers`]: the same answers, but for an object moved since the bits'
    /// frame, and no CPU occlusion); under
    /// [`CpuAnswers::None`] it is [`ObjectState::NotAnswered`].
    pub fn state_of(&self, entity: Entity) -> Option<ObjectState> {
        let slot = self.index.slot_of(entity)? as usize;
        if slot >= self.len() || self.view.is_none() {
            return None;
        }
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        Some(if self.answers == CpuAnswers::None {
            ObjectState::NotAnswered
        } else if self.drawable[word] & bit == 0 {
            ObjectState::NotDrawable
        } else if !self.is_kept(slot) {
            ObjectState::Culled
        } else if self.is_hidden(slot) {
            ObjectState::Occluded
        } else {
            ObjectState::Visible
        })
    }

    /// The occluded objects as words (bit `i % 64` of word `i / 64` = object `i`; possibly
    /// shorter than [`Visibility::bits`] where no occlusion ran: missing words are clear).
    pub fn occluded_words(&self) -> &[u64] {
        &self.occluded
    }

    /// Whether object `index` was found occluded this frame; such an object is
    /// not in [`visible`](Visibility::visible) and carries the `Occluded` tag, not `Culled`.
    pub fn is_occluded(&self, index: usize) -> bool {
        self.occluded.get(index / 64).is_some_and(|word| word >> (index % 64) & 1 == 1)
    }
}

//! What an answer on request needs beyond the frame's columns: the views of the last few
//! frames, the frame each slot's object appeared in, and (on the GPU backend) a copy of the
//! GPU's fed-back bits. With these [`Visibility::state_of`](super::Visibility::state_of)
//! finds one entity's occlusion when asked, so the stage needs no per-object pass over the
//! GPU's bits on frames where nothing asks.

use ecs::Aabb;

use super::changes::SlotChanges;
use crate::backend::GpuFeedback;
use crate::size::is_near_enough;
use crate::view::ViewCullContext;

/// Views kept: more than the frames a fed-back answer can lag (the frames in flight plus
/// one).
const PAST_VIEWS: usize = 8;

/// One frame's view as the stage culled it: the frame index, the cull context and whether
/// the frustum test was on.
type PastView = (u64, ViewCullContext, bool);

/// The state an answer on request reads (see the module docs). Kept every frame whatever
/// the policy (a few words per appeared slot and one view), so a switch to answering on
/// request has the history the fed-back bits refer to.
#[derive(Clone, Debug, Default)]
pub(crate) struct AskedState {
    /// The frame being answered (`FrameTime::frame_index`).
    pub(crate) frame: u64,
    /// The views of the last [`PAST_VIEWS`] frames with a view, oldest overwritten first.
    views: Vec<PastView>,
    /// Per slot: the frame its object appeared in (a new owner, or newly drawable).
    appeared_at: Vec<u64>,
    /// The fed-back bits copied on a frame answered on request: the frame they were made
    /// in, the GPU's visible bits and the CPU's in-view bits of that frame.
    feedback: Option<(u64, Vec<u64>, Vec<u64>)>,
    /// The first frame of the latest run of frames answered every frame: fed-back bits of
    /// earlier frames carry no in-view bits of the CPU's (the Render stage leaves them out
    /// while answers are on request), so an answer every frame ignores them.
    pub(crate) every_frame_since: u64,
}

impl AskedState {
    /// Records frame `frame`'s view and the slots whose objects appeared in it (`slots`
    /// slots in all).
    pub(crate) fn record_frame(
        &mut self,
        frame: u64,
        view: (ViewCullContext, bool),
        changes: &SlotChanges,
        slots: usize,
    ) {
        self.frame = frame;
        let past = (frame, view.0, view.1);
        if self.views.len() < PAST_VIEWS {
            self.views.push(past);
        } else if let Some(oldest) = self.views.iter_mut().min_by_key(|(past, ..)| *past) {
            *oldest = past;
        }
        self.appeared_at.resize(slots, 0);
        for slot in changes.appeared_slots() {
            self.appeared_at[slot as usize] = frame;
        }
    }

    /// Keeps a copy of the fed-back bits (no allocation once their length was reached);
    /// `None` forgets them.
    pub(crate) fn keep_feedback(&mut self, feedback: Option<&GpuFeedback>) {
        let Some((Some(frame), feedback)) = feedback.map(|feedback| (feedback.frame, feedback)) else {
            self.feedback = None;
            return;
        };
        let (kept_frame, visible, in_view) = self.feedback.get_or_insert_with(Default::default);
        *kept_frame = frame;
        visible.clone_from(&feedback.visible);
        in_view.clone_from(&feedback.in_view);
    }

    /// The GPU's visible bits kept by [`AskedState::keep_feedback`], if any.
    pub(crate) fn gpu_visible(&self) -> Option<&[u64]> {
        self.feedback.as_ref().map(|(_, visible, _)| &visible[..])
    }

    /// Whether drawable object `slot`, kept by this frame's culls with world box `world`
    /// (`finite` when its matrix and box are), is occluded by the fed-back bits: its GPU
    /// bit is clear in their frame, where it was in view (the CPU's in-view bit when the
    /// bits carry one, and its box, as it is now, inside that frame's view), and its object
    /// had appeared by then and not in this frame. The rule of the answer every frame
    /// (`apply_gpu_occlusion`), for one slot; without fed-back bits, or when their frame's
    /// view is no longer kept, nothing is occluded.
    pub(crate) fn occluded(&self, slot: usize, world: &Aabb, finite: bool) -> bool {
        let Some((frame, visible, in_view)) = &self.feedback else { return false };
        let appeared = self.appeared_at.get(slot).copied().unwrap_or(u64::MAX);
        if appeared > *frame || appeared == self.frame {
            return false;
        }
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        let gpu = visible.get(word).copied().unwrap_or(u64::MAX);
        let was_in_view = in_view.get(word).copied().unwrap_or(u64::MAX);
        if gpu & bit != 0 || was_in_view & bit == 0 {
            return false;
        }
        let then = self.views.iter().find(|(past, ..)| past == frame);
        then.is_some_and(|(_, context, frustum_culling)| !finite || keeps(context, *frustum_culling, world))
    }
}

/// The cull of one world box, in the order and with the tests of the stage's pass (frustum
/// when on, then distance, then screen size); a non-finite view keeps everything.
pub(super) fn keeps(context: &ViewCullContext, frustum_culling: bool, world: &ecs::Aabb) -> bool {
    if !context.is_finite() {
        return true;
    }
    if frustum_culling {
        return context.classify(world).is_kept();
    }
    let center = world.center();
    is_near_enough(context.distance_sq(center), context.max_distance_sq())
        && context.screen_size().keeps(world.half_extent().length_squared(), context.depth(center))
}

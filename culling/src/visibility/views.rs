//! The frame's other views (every view of [`ResolvedViews`] but the main one): one pass over
//! the object columns culls them all, after the main view's cull has written this frame's
//! world boxes.
//!
//! Each block of 64 slots loads its drawable objects' world boxes once into lanes (centre and
//! half extent), and every view runs the frustum kernel on those lanes, then the distance and
//! screen-size culls on its survivors, with its own thresholds (its own eye, its own viewport
//! height). The words of all views lie side by side per block (word `w` of view `v` at
//! `w * views + v`), so a job writes one contiguous run and a second view costs a kernel run on
//! loaded data, not a second walk over the objects. The level of detail of each view's visible
//! objects is picked for that view (`views_levels.rs`).
//!
//! What the other views do not get: occlusion. The CPU occlusion step rasterises the chosen
//! occluders for one eye into one depth buffer and tests every survivor against it; a second
//! view would need its own occluder choice, raster and pyramid, as much work as the main
//! view's (it is far from cheap). So another view's answer is frustum, distance and screen
//! size only: conservative, never hiding what that view sees. Tags (`Culled`, `Occluded`)
//! stay the main view's.

use ecs::{CpuAnswers, MeshHandle, RenderSettings, ResolvedView, ResolvedViews, ViewId};

use super::objects::ObjectColumns;
use crate::bits::BITS_PER_WORD;
use crate::kernels::Kernel;
use crate::soa::AabbSlices;
use crate::view::{CullParams, ViewCullContext};

/// Blocks of 64 slots a job of the pass takes at once.
const GRAIN_WORDS: usize = 16;

/// One other view's cull: what it was culled with, and its answer.
#[derive(Clone, Debug)]
pub(crate) struct OtherView {
    /// Its id in the frame's [`ResolvedViews`].
    pub(crate) id: ViewId,
    /// The view.
    pub(crate) view: ResolvedView,
    /// Its cull context (a non-finite view keeps everything).
    pub(crate) context: ViewCullContext,
    /// Slots that may be visible in it, ascending.
    pub(crate) visible: Vec<u32>,
    /// The mesh each of `visible` draws in it (its level of detail for this view).
    pub(crate) draws: Vec<MeshHandle>,
}

/// The answers of the frame's other views, kept across frames (a steady set of views
/// allocates nothing).
#[derive(Clone, Debug, Default)]
pub(crate) struct OtherViews {
    /// The first `count` entries are this frame's views, in render order.
    pub(crate) views: Vec<OtherView>,
    /// How many views the frame has besides the main one.
    pub(crate) count: usize,
    /// The main view's id in the frame's [`ResolvedViews`].
    pub(crate) main: Option<ViewId>,
    /// Every view's visible bits, side by side per block of 64 slots.
    pub(crate) words: Vec<u64>,
    /// The policy the answers were made under.
    pub(crate) answers: CpuAnswers,
    /// Scratch: the views' contexts, apart from the views so the pass can write the words.
    contexts: Vec<(ViewCullContext, bool)>,
    /// What the answers were made from: the settings, the levels' error generation and the
    /// slot count (see [`OtherViews::still_answered`]).
    made_under: Option<(RenderSettings, u32, usize)>,
}

impl OtherViews {
    /// Forgets every view (a frame without a main view).
    pub(crate) fn clear(&mut self) {
        self.count = 0;
        self.main = None;
        self.words.clear();
        self.made_under = None;
    }

    /// Whether the answers kept from last frame are this frame's: the same views (ids, eyes,
    /// projections, viewports), settings, level errors and slots, and no object changed
    /// (`objects_unchanged`: the change log named nothing the stage watches, and the main
    /// view's cull was a tracked one). Then the pass and the lists are skipped.
    pub(crate) fn still_answered(
        &self,
        views: &ResolvedViews,
        main: Option<ViewId>,
        made_under: (RenderSettings, u32, usize),
        objects_unchanged: bool,
    ) -> bool {
        if !objects_unchanged || self.made_under != Some(made_under) || self.main != main {
            return false;
        }
        let mut listed = views.views().iter().filter(|view| Some(view.id) != main && has_area(&view.view));
        let same = self
            .current()
            .iter()
            .all(|kept| listed.next().is_some_and(|view| view.id == kept.id && view.view == kept.view));
        same && listed.next().is_none()
    }

    /// This frame's other views.
    #[inline]
    pub(crate) fn current(&self) -> &[OtherView] {
        &self.views[..self.count]
    }

    /// The view of id `id`, if it is one of this frame's other views.
    pub(crate) fn find(&self, id: ViewId) -> Option<(usize, &OtherView)> {
        self.current().iter().enumerate().find(|(_, view)| view.id == id)
    }

    /// Whether slot `slot` may be visible in other view number `index`.
    #[inline]
    pub(crate) fn is_visible(&self, index: usize, slot: usize) -> bool {
        let word = slot / BITS_PER_WORD;
        self.words.get(word * self.count + index).is_some_and(|word| word >> (slot % BITS_PER_WORD) & 1 == 1)
    }

    /// Takes this frame's views from `views` (all but `main` and those of no area), with the
    /// thresholds of the settings in `made_under`.
    /// `made_under` is what [`OtherViews::still_answered`] compares next frame.
    pub(crate) fn set_views(
        &mut self,
        views: &ResolvedViews,
        main: Option<ViewId>,
        made_under: (RenderSettings, u32, usize),
    ) {
        let settings = &made_under.0;
        self.main = main;
        self.answers = settings.cpu_answers;
        self.made_under = Some(made_under);
        self.count = 0;
        self.contexts.clear();
        let others = views.views().iter().filter(|view| Some(view.id) != main);
        for frame_view in others.filter(|view| has_area(&view.view)) {
            let (context, frustum_culling) = cull_context(&frame_view.view, settings);
            let entry =
                OtherView { id: frame_view.id, view: frame_view.view, context, visible: Vec::new(), draws: Vec::new() };
            if let Some(slot) = self.views.get_mut(self.count) {
                // Keep the lists' capacity.
                let (visible, draws) = (std::mem::take(&mut slot.visible), std::mem::take(&mut slot.draws));
                *slot = OtherView { visible, draws, ..entry };
            } else {
                self.views.push(entry);
            }
            self.contexts.push((context, frustum_culling));
            self.count += 1;
        }
    }

    /// Culls every view's drawable objects (`drawable` bits, world boxes in `objects`) in one
    /// pass on the job system; the answer does not depend on the number of threads.
    pub(crate) fn cull(&mut self, objects: &ObjectColumns, drawable: &[u64], kernel: Kernel) {
        let count = self.count;
        let words = drawable.len();
        self.words.clear();
        self.words.resize(words * count, 0);
        if count == 0 {
            return;
        }
        let contexts = &self.contexts[..];
        let bounds = &objects.bounds[..];
        runtime::profile_zone!("other views cull");
        runtime::jobs::parallel_for_chunks(&mut self.words, GRAIN_WORDS * count, |first, chunk| {
            let first_word = first / count;
            for (offset, out) in chunk.chunks_exact_mut(count).enumerate() {
                let word = first_word + offset;
                cull_block(word, drawable[word], bounds, contexts, kernel, out);
            }
        });
    }
}

/// Whether a view's viewport has an area (a view without one is not answered).
fn has_area(view: &ResolvedView) -> bool {
    view.viewport.width > 0 && view.viewport.height > 0
}

/// The cull context of `view` under `settings`, and whether its frustum test runs: a
/// non-finite view culls nothing (as the main view).
fn cull_context(view: &ResolvedView, settings: &RenderSettings) -> (ViewCullContext, bool) {
    let params = CullParams {
        max_distance: settings.cull_max_distance,
        min_pixels: settings.cull_min_pixels,
        lod_bias: settings.effective_lod_bias(),
    };
    let height = view.viewport.height as f32;
    let context = ViewCullContext::new(view.view, view.projection, height, &params);
    if context.is_finite() {
        return (context, settings.frustum_culling);
    }
    let kept = CullParams { max_distance: 0.0, min_pixels: 0.0, ..params };
    (ViewCullContext::new(view.view, view.projection, height, &kept), false)
}

/// Culls block `word` (64 slots) for every view into `out` (one word per view).
fn cull_block(
    word: usize,
    drawable: u64,
    bounds: &[ecs::Aabb],
    contexts: &[(ViewCullContext, bool)],
    kernel: Kernel,
    out: &mut [u64],
) {
    if drawable == 0 {
        out.fill(0);
        return;
    }
    let start = word * BITS_PER_WORD;
    let len = (bounds.len() - start).min(BITS_PER_WORD);
    let mut lanes = [[0.0f32; BITS_PER_WORD]; 6];
    for (lane, aabb) in bounds[start..start + len].iter().enumerate() {
        let (center, half) = (aabb.center(), aabb.half_extent());
        for (axis, value) in [center.x, center.y, center.z, half.x, half.y, half.z].into_iter().enumerate() {
            lanes[axis][lane] = value;
        }
    }
    let [cx, cy, cz, hx, hy, hz] = &lanes;
    let boxes = AabbSlices::new([&cx[..len], &cy[..len], &cz[..len]], [&hx[..len], &hy[..len], &hz[..len]]);
    for ((context, frustum_culling), out) in contexts.iter().zip(out.iter_mut()) {
        let mut kept = if *frustum_culling {
            let mut words = [0u64];
            kernel.cull_aabbs(context.frustum(), boxes, &mut words);
            words[0]
        } else {
            u64::MAX
        };
        kept &= drawable;
        if context.has_secondary_culls() {
            let mut survivors = kept;
            while survivors != 0 {
                let lane = survivors.trailing_zeros() as usize;
                survivors &= survivors - 1;
                let center = glam::Vec3::new(cx[lane], cy[lane], cz[lane]);
                let half = glam::Vec3::new(hx[lane], hy[lane], hz[lane]);
                if !context.classify_in_frustum(center, half).is_kept() {
                    kept &= !(1u64 << lane);
                }
            }
        }
        *out = kept;
    }
}

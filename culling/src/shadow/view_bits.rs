//! [`ViewBits`]: each light view's casters as slot bits, kept from frame to frame.
//!
//! A view whose volume is bit for bit the one it had last frame (same light, same kind, the
//! same planes) keeps its bits and redoes only the words whose casters changed; a new or moved
//! view is culled afresh. Either way a group of 64 words, then a word of 64 slots, is tested
//! by its union of caster boxes first (see `sides.rs`): clearly outside, its casters are
//! dropped at once, clearly inside they are all kept, and only the words across the view's
//! planes go through the kernel, box by box. So a still light costs the casters that changed
//! near it, and a moving one what its volume covers, not every caster of the world.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use runtime::hecs::Entity;

use super::casters::{CasterStore, Refresh, GROUP_WORDS};
use super::sides::{Side, ViewPlanes};
use super::views::{LightView, LightViewKind};
use crate::bits::BITS_PER_WORD;
use crate::frustum::Frustum;
use crate::kernels::Kernel;
use crate::parallel::SharedMut;

/// Most views a frame has: every cascade and six faces for each shadowed light.
pub(super) const MAX_VIEWS: usize = ecs::MAX_CASCADES + 6 * ecs::MAX_SHADOWED_LIGHTS;

/// How the casters go into the views this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fill {
    /// Culled against each view on the host.
    Cull,
    /// Every caster in every view (caster culling off).
    Every,
    /// None: a device culls them.
    None,
}

/// What a view's bits were culled for.
#[derive(Clone, Copy, Debug)]
struct ViewKey {
    light: Entity,
    kind: LightViewKind,
    frustum: Frustum,
}

impl ViewKey {
    fn of(view: &LightView) -> ViewKey {
        ViewKey { light: view.light, kind: view.kind, frustum: view.frustum }
    }

    /// Whether `view` is this key's view with the same volume, plane for plane, bit for bit.
    fn holds(&self, view: &LightView) -> bool {
        let bits = |plane: &glam::Vec4| plane.to_array().map(f32::to_bits);
        self.light == view.light
            && self.kind == view.kind
            && self.frustum.is_finite() == view.frustum.is_finite()
            && self.frustum.planes().len() == view.frustum.planes().len()
            && self.frustum.planes().iter().map(bits).eq(view.frustum.planes().iter().map(bits))
    }
}

/// Each light view's casters as slot bits (see the module docs).
#[derive(Debug, Default)]
pub(super) struct ViewBits {
    /// Every view's words, view after view, `stride` each.
    words: Vec<u64>,
    /// Words per view: the caster store's word count.
    stride: usize,
    /// Casters each view keeps.
    kept: Vec<usize>,
    /// What each view's words were culled for.
    keys: Vec<ViewKey>,
    /// The words and keys describe the caster store as last refreshed.
    valid: bool,
    // Working memory, reused from frame to frame.
    spare: Vec<u64>,
    /// Per view: the view whose bits it keeps from last frame, if any.
    sources: Vec<Option<usize>>,
    planes: Vec<ViewPlanes>,
    /// Per view: the change of its kept count this pass.
    added: Vec<AtomicI64>,
    /// Per group: its dirty words, as bits.
    dirty_groups: Vec<u64>,
    /// What the last update did.
    work: BitsWork,
    /// Words the kernel tested this pass (summed over the views).
    kernel_words: AtomicUsize,
}

/// What one [`ViewBits::update`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct BitsWork {
    /// Views that kept last frame's bits, redone only in the words whose casters changed.
    pub(super) kept_views: usize,
    /// Views culled afresh (new, moved, or nothing kept).
    pub(super) culled_views: usize,
    /// Words of 64 casters the kernel tested box by box, summed over the views (the rest were
    /// decided by their group's or word's union of boxes, or kept).
    pub(super) kernel_words: usize,
}

impl Clone for ViewBits {
    fn clone(&self) -> Self {
        ViewBits {
            words: self.words.clone(),
            stride: self.stride,
            kept: self.kept.clone(),
            keys: self.keys.clone(),
            valid: self.valid,
            work: self.work,
            ..ViewBits::default()
        }
    }
}

/// The output of one job: the change of each view's kept count and the words it tested
/// box by box, added at its end.
struct Added {
    kept: [i64; MAX_VIEWS],
    kernel_words: usize,
}

impl Added {
    const NONE: Added = Added { kept: [0; MAX_VIEWS], kernel_words: 0 };

    /// Adds the job's counts to the pass's (relaxed: they are read after the pass joins).
    fn flush(&self, into: &[AtomicI64], kernel_words: &AtomicUsize) {
        for (total, &added) in into.iter().zip(&self.kept) {
            if added != 0 {
                total.fetch_add(added, Ordering::Relaxed);
            }
        }
        kernel_words.fetch_add(self.kernel_words, Ordering::Relaxed);
    }
}

/// What the cull of one word reads.
struct WordCull<'a> {
    casters: &'a CasterStore,
    planes: &'a [ViewPlanes],
    views: &'a [LightView],
    kernel: Kernel,
}

impl WordCull<'_> {
    /// The casters of word `word` that view `view` may draw; counts a word the kernel tests
    /// in `kernel_words`.
    #[inline]
    fn word(&self, view: usize, word: usize, kernel_words: &mut usize) -> u64 {
        let members = self.casters.words()[word];
        if members == 0 {
            return 0;
        }
        match self.planes[view].side(self.casters.union(word)) {
            Side::Outside => 0,
            Side::Inside => members,
            Side::Across => {
                *kernel_words += 1;
                let boxes = self.casters.boxes();
                let first = word * BITS_PER_WORD;
                let mut out = [0u64];
                self.kernel.cull_aabbs(
                    &self.views[view].frustum,
                    boxes.sub(first..(first + BITS_PER_WORD).min(boxes.len())),
                    &mut out,
                );
                out[0] & members
            }
        }
    }
}

impl ViewBits {
    /// View `view`'s words.
    #[inline]
    pub(super) fn words(&self, view: usize) -> &[u64] {
        &self.words[view * self.stride..(view + 1) * self.stride]
    }

    /// Casters view `view` keeps.
    #[inline]
    pub(super) fn kept(&self, view: usize) -> usize {
        self.kept[view]
    }

    /// What the last update did.
    pub(super) fn work(&self) -> BitsWork {
        self.work
    }

    /// Fills every view's bits from `casters` (just refreshed, as `refresh` says) as `fill`
    /// says, keeping what last frame's views may give.
    pub(super) fn update(&mut self, views: &[LightView], casters: &CasterStore, refresh: Refresh, fill: Fill) {
        let stride = casters.words().len();
        let count = views.len();
        if fill != Fill::Cull || count == 0 {
            self.words.clear();
            self.words.resize(count * stride, 0);
            self.stride = stride;
            self.kept.clear();
            self.kept.resize(count, 0);
            if fill == Fill::Every {
                for view in 0..count {
                    self.words[view * stride..(view + 1) * stride].copy_from_slice(casters.words());
                    self.kept[view] = casters.list().len();
                }
            }
            self.keys.clear();
            self.valid = false;
            self.work = BitsWork::default();
            return;
        }
        self.sources.clear();
        let trusted = self.valid && refresh == Refresh::Changed;
        let keys = &self.keys;
        self.sources
            .extend(views.iter().map(|view| trusted.then(|| keys.iter().position(|key| key.holds(view))).flatten()));
        let base = self.place(views, stride);
        self.planes.clear();
        self.planes.extend(views.iter().map(|view| ViewPlanes::of(&view.frustum)));
        if self.added.len() < count {
            self.added.resize_with(count, AtomicI64::default);
        }
        self.added.iter_mut().for_each(|added| *added.get_mut() = 0);
        *self.kernel_words.get_mut() = 0;
        self.mark_dirty_groups(casters);
        self.cull(views, casters);
        let kept_views = self.sources.iter().filter(|source| source.is_some()).count();
        self.work =
            BitsWork { kept_views, culled_views: count - kept_views, kernel_words: *self.kernel_words.get_mut() };
        self.kept.clear();
        self.kept
            .extend(base.iter().zip(&self.added).map(|(&base, added)| (base + added.load(Ordering::Relaxed)) as usize));
        self.keys.clear();
        self.keys.extend(views.iter().map(ViewKey::of));
        self.valid = true;
    }

    /// Tests every caster against every view afresh (what [`ViewBits::update`] gives with
    /// nothing kept), whatever was kept before.
    pub(super) fn recull(&mut self, views: &[LightView], casters: &CasterStore) {
        self.valid = false;
        self.update(views, casters, Refresh::Rebuilt, Fill::Cull);
    }

    /// Lays this frame's views out at `stride` words each: a view that keeps last frame's
    /// bits gets them (in place when every such view keeps its own place and the stride
    /// stands). Returns each view's kept count before the pass adds this frame's changes.
    fn place(&mut self, views: &[LightView], stride: usize) -> [i64; MAX_VIEWS] {
        let count = views.len();
        assert!(count <= MAX_VIEWS, "{count} light views, more than the {MAX_VIEWS} a frame may have");
        let mut base = [0i64; MAX_VIEWS];
        let in_place = stride == self.stride
            && self.sources.iter().enumerate().all(|(view, source)| source.is_none_or(|from| from == view));
        if in_place {
            self.words.resize(count * stride, 0);
        } else {
            self.spare.clear();
            self.spare.resize(count * stride, 0);
            let shared = stride.min(self.stride);
            for (view, source) in self.sources.iter().enumerate() {
                if let Some(from) = *source {
                    let old = &self.words[from * self.stride..(from + 1) * self.stride];
                    self.spare[view * stride..view * stride + shared].copy_from_slice(&old[..shared]);
                    // Casters in words past the new stride left with their slots.
                    base[view] -= old[shared..].iter().map(|word| i64::from(word.count_ones())).sum::<i64>();
                }
            }
            std::mem::swap(&mut self.words, &mut self.spare);
        }
        for (view, source) in self.sources.iter().enumerate() {
            if let Some(from) = *source {
                base[view] += self.kept[from] as i64;
            }
        }
        self.stride = stride;
        base
    }

    /// The dirty words of each group, as bits.
    fn mark_dirty_groups(&mut self, casters: &CasterStore) {
        self.dirty_groups.clear();
        self.dirty_groups.resize(self.stride.div_ceil(GROUP_WORDS), 0);
        for &word in casters.dirty() {
            let word = word as usize;
            self.dirty_groups[word / GROUP_WORDS] |= 1 << (word % GROUP_WORDS);
        }
    }

    /// The pass: jobs take groups of words; in each, a view culled afresh tests the group's
    /// union and then its words, a view that keeps its bits redoes only the dirty words.
    fn cull(&mut self, views: &[LightView], casters: &CasterStore) {
        let stride = self.stride;
        let count = views.len();
        let groups = self.dirty_groups.len();
        let fresh = self.sources.iter().any(Option::is_none);
        if stride == 0 || count == 0 || (!fresh && casters.dirty().is_empty()) {
            return;
        }
        runtime::profile_zone!("shadow caster cull");
        let cull = WordCull { casters, planes: &self.planes, views, kernel: Kernel::detect() };
        let (sources, dirty_groups, added) = (&self.sources[..], &self.dirty_groups[..], &self.added[..count]);
        let kernel_words = &self.kernel_words;
        let target = SharedMut(self.words.as_mut_ptr());
        let group_pass = |group: usize, total: &mut Added| {
            let first = group * GROUP_WORDS;
            let words = first..(first + GROUP_WORDS).min(stride);
            let dirty = dirty_groups[group];
            for (view, source) in sources.iter().enumerate() {
                let kept = source.is_some();
                if kept && dirty == 0 {
                    continue;
                }
                // SAFETY: this job owns group `group`'s words of every view (one group per
                // call, each group once), and `words` holds `count * stride` words.
                let out = unsafe { std::slice::from_raw_parts_mut(target.at(view * stride + first), words.len()) };
                let side = if kept { Side::Across } else { cull.planes[view].side(casters.group(group)) };
                let mut change = 0i64;
                for (offset, slot_word) in out.iter_mut().enumerate() {
                    if kept && dirty >> offset & 1 == 0 {
                        continue;
                    }
                    let word = first + offset;
                    let new = match side {
                        Side::Outside => 0,
                        Side::Inside => casters.words()[word],
                        Side::Across => cull.word(view, word, &mut total.kernel_words),
                    };
                    change += i64::from(new.count_ones()) - if kept { i64::from(slot_word.count_ones()) } else { 0 };
                    *slot_word = new;
                }
                total.kept[view] += change;
            }
        };
        if fresh || casters.dirty().len() >= GROUP_WORDS {
            let _job_label = runtime::profiling::job_label("shadow caster cull job");
            runtime::jobs::parallel_for_ranges(0..groups, 1, |range| {
                let mut total = Added::NONE;
                range.for_each(|group| group_pass(group, &mut total));
                total.flush(added, kernel_words);
            });
        } else {
            let mut total = Added::NONE;
            (0..groups).filter(|&group| dirty_groups[group] != 0).for_each(|group| group_pass(group, &mut total));
            total.flush(added, kernel_words);
        }
    }
}

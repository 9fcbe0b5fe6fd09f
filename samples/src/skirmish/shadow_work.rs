//! What the skirmish's shadow views cost, summed over a run: what the views redid (see
//! [`culling::shadow::ShadowWork`]) and how the shadow budget shared them among the torches (see
//! [`culling::shadow::ShadowBudget`]).

use culling::ShadowViews;

/// The shadow views' work and budget, summed over the frames.
#[derive(Clone, Debug, Default)]
pub struct ShadowWorkTotals {
    frames: usize,
    views: usize,
    kept_views: usize,
    changed_words: usize,
    kernel_words: usize,
    /// Shadow-casting lights that might light the frame.
    candidates: usize,
    /// Of them, lights that cast.
    shadowed: usize,
    /// Their views.
    light_views: usize,
    /// The budget of the last frame.
    max_views: usize,
    /// Shadows that came on (lights casting that did not the frame before).
    new_casters: usize,
}

impl ShadowWorkTotals {
    /// Adds a frame's views.
    pub fn add(&mut self, shadows: &ShadowViews) {
        let work = shadows.work();
        let budget = shadows.budget();
        self.frames += 1;
        self.views += shadows.views().len();
        self.kept_views += work.kept_views;
        self.changed_words += work.changed_words;
        self.kernel_words += work.kernel_words;
        self.candidates += budget.candidates;
        self.shadowed += budget.shadowed;
        self.light_views += budget.views;
        self.max_views = budget.max_views;
        self.new_casters += budget.new_casters;
    }

    fn mean(&self, total: usize) -> f64 {
        total as f64 / self.frames.max(1) as f64
    }

    /// What the views redid, per-frame means, or `None` without a shadow view.
    pub fn line(&self) -> Option<String> {
        (self.views > 0).then(|| {
            format!(
                "shadow work per frame: {:.1} views, {:.1} kept from the last frame, {:.1} caster words changed, {:.0} words of 64 casters tested box by box",
                self.mean(self.views),
                self.mean(self.kept_views),
                self.mean(self.changed_words),
                self.mean(self.kernel_words)
            )
        })
    }

    /// How the budget shared the views, per-frame means, or `None` without a light that
    /// might cast.
    pub fn budget_line(&self) -> Option<String> {
        (self.candidates > 0).then(|| {
            format!(
                "shadow budget per frame: shadowed lights {:.1} of {:.1} in view, light views {:.1} (budget {}) and {:.1} cascades; {} shadows came on in {} frames",
                self.mean(self.shadowed),
                self.mean(self.candidates),
                self.mean(self.light_views),
                self.max_views,
                self.mean(self.views - self.light_views),
                self.new_casters,
                self.frames
            )
        })
    }
}

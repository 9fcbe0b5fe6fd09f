//! The shadow budget: which spot and point lights cast a shadow this frame.
//!
//! Each light that may light the frame gets a *screen contribution*, an estimate of how much
//! of the camera's image it lights:
//!
//! ```text
//! score = luminance(color * intensity) * min(1, (range / distance)^2)
//! ```
//!
//! with `distance` from the camera's eye to the light. `range / distance` is the projected
//! radius of the light's lit sphere (the tangent of its angular radius, near enough), its
//! square the share of the image the sphere's disc covers up to a factor of the field of view
//! that every light shares; with the eye inside the sphere the light may touch every pixel,
//! and the share is 1. Luminance weighs linear sRGB (Rec. 709).
//!
//! The lights are ranked best first, ties by entity id, and walked in that order: a light
//! casts when it fits the light cap ([`ecs::ShadowSettings::max_shadowed_lights`]), the
//! views left of the budget ([`ecs::ShadowSettings::max_light_views`]: one for a spot, six
//! for a point light) and the atlas; one that does not is passed over (a spot light after it
//! may still fit) and lights without a shadow.
//!
//! Hysteresis: a light that cast last frame ranks as if its score were [`KEEP_MARGIN`] times
//! higher (and wins a tie), so a light that did not cast takes its place only when its own
//! score exceeds the caster's by more than the margin; two lights of about equal score at
//! the boundary do not swap from frame to frame. The lights that cast are remembered by
//! entity (a despawned light is forgotten with its frame), in vectors that keep their
//! capacity.

use std::cmp::Ordering;

use glam::Vec3;

use super::frame_lights::Candidate;

/// How much a light that cast a shadow last frame is favoured in this frame's ranking: a
/// challenger must score more than this many times its score to take its place.
pub const KEEP_MARGIN: f32 = 1.25;

/// Luminance of linear sRGB (Rec. 709 weights).
const LUMINANCE: Vec3 = Vec3::new(0.2126, 0.7152, 0.0722);

/// A light's screen contribution, as the shadow budget ranks it (see the module docs):
/// `luminance(radiance) * min(1, (range / distance)^2)`, `distance` from `eye` to
/// `position`; never negative.
///
/// ```
/// use culling::shadow::screen_contribution;
/// use glam::Vec3;
/// let white = Vec3::splat(10.0);
/// // Twice the range away: a quarter of what it gives with the eye inside its sphere.
/// let far = screen_contribution(Vec3::new(0.0, 0.0, -20.0), 10.0, white, Vec3::ZERO);
/// let inside = screen_contribution(Vec3::new(0.0, 0.0, -5.0), 10.0, white, Vec3::ZERO);
/// assert!((far - 2.5).abs() < 1e-5 && (inside - 10.0).abs() < 1e-5);
/// ```
pub fn screen_contribution(position: Vec3, range: f32, radiance: Vec3, eye: Vec3) -> f32 {
    let distance_squared = position.distance_squared(eye);
    let reach = range * range;
    let coverage = if distance_squared <= reach { 1.0 } else { reach / distance_squared };
    (radiance.dot(LUMINANCE) * coverage).max(0.0)
}

/// The score a candidate is ranked by: its screen contribution, times [`KEEP_MARGIN`] when
/// it cast last frame.
#[inline]
fn ranked_score(candidate: &Candidate) -> f32 {
    if candidate.incumbent {
        candidate.score * KEEP_MARGIN
    } else {
        candidate.score
    }
}

/// The ranking's order, best first: higher ranked score, then last frame's casters, then the
/// lower entity id (a total order: ids are unique).
pub(super) fn rank_order(a: &Candidate, b: &Candidate) -> Ordering {
    ranked_score(b).total_cmp(&ranked_score(a)).then(b.incumbent.cmp(&a.incumbent)).then(a.id.cmp(&b.id))
}

/// The lights that cast last frame, for the hysteresis, and this frame's as they are placed.
#[derive(Clone, Debug, Default)]
pub(super) struct CastingLights {
    /// Entity bits of last frame's casting lights, ascending.
    last: Vec<u64>,
    /// Entity bits of this frame's, in placing order.
    now: Vec<u64>,
}

impl CastingLights {
    /// Marks the candidates that cast last frame and sorts them best first.
    pub(super) fn rank(&self, candidates: &mut [Candidate]) {
        for candidate in candidates.iter_mut() {
            candidate.incumbent = self.last.binary_search(&candidate.id).is_ok();
        }
        // Unstable and total: no allocation, and the same order every time.
        candidates.sort_unstable_by(rank_order);
    }

    /// Records that the light of entity bits `id` casts this frame.
    pub(super) fn cast(&mut self, id: u64) {
        self.now.push(id);
    }

    /// Ends the frame: this frame's casters become the ones the next frame favours (lights
    /// that did not cast, despawned ones among them, are forgotten). Returns how many of them
    /// did not cast last frame.
    pub(super) fn end_frame(&mut self) -> usize {
        let last = &self.last;
        let new = self.now.iter().filter(|id| last.binary_search(id).is_err()).count();
        std::mem::swap(&mut self.last, &mut self.now);
        self.last.sort_unstable();
        self.now.clear();
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shadow::LocalLightKind;
    use ecs::ShadowBias;
    use runtime::hecs::Entity;

    fn candidate(id: u64, score: f32) -> Candidate {
        let entity = Entity::from_bits(id).expect("a valid id");
        Candidate {
            distance: 0.0,
            id,
            score,
            incumbent: false,
            light: crate::shadow::LocalLight {
                entity,
                kind: LocalLightKind::Point,
                position: Vec3::ZERO,
                radiance: Vec3::ONE,
                range: 1.0,
                score,
                first_view: None,
            },
            resolution: 256,
            bias: ShadowBias::default(),
        }
    }

    #[test]
    fn the_score_falls_with_the_square_of_the_distance_past_the_range() {
        let red = Vec3::new(10.0, 0.0, 0.0);
        let at = |distance: f32| screen_contribution(Vec3::new(distance, 0.0, 0.0), 5.0, red, Vec3::ZERO);
        assert_eq!(at(0.0), at(5.0), "inside its sphere a light may touch every pixel");
        assert!((at(10.0) - at(5.0) / 4.0).abs() < 1e-6, "twice the range: a quarter");
        assert!((at(5.0) - 2.126).abs() < 1e-5, "red weighs its luminance");
        assert_eq!(screen_contribution(Vec3::X, 1.0, Vec3::splat(-1.0), Vec3::ZERO), 0.0, "never negative");
    }

    #[test]
    fn ties_go_to_the_lower_id_and_last_frames_casters_win_within_the_margin() {
        let mut lights = [candidate(1 << 32 | 9, 1.0), candidate(1 << 32 | 3, 1.0), candidate(1 << 32 | 5, 2.0)];
        let mut casting = CastingLights::default();
        casting.rank(&mut lights);
        assert_eq!(lights.map(|light| light.id as u32), [5, 3, 9]);
        // Light 9 cast: it stays ahead of 3 and of 5 (2 < 1.25 * 1.0 is false, so 5 wins).
        casting.cast(1 << 32 | 9);
        assert_eq!(casting.end_frame(), 1, "a new caster");
        casting.rank(&mut lights);
        assert_eq!(lights.map(|light| light.id as u32), [5, 9, 3]);
        // At exactly the margin the caster keeps its place.
        let mut lights = [candidate(1 << 32 | 3, 1.25), candidate(1 << 32 | 9, 1.0)];
        casting.rank(&mut lights);
        assert_eq!(lights.map(|light| light.id as u32), [9, 3]);
        lights[0].score = 1.0;
        lights[1].score = 1.26;
        casting.rank(&mut lights);
        assert_eq!(lights.map(|light| light.id as u32), [3, 9], "past the margin the challenger wins");
        // A frame without it forgets it.
        assert_eq!(casting.end_frame(), 0);
        casting.rank(&mut lights);
        assert!(lights.iter().all(|light| !light.incumbent));
    }
}

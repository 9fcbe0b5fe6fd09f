//! Level of detail from each level's simplification error: the rule the CPU and the GPU share.
//!
//! A mesh's LOD chain carries, per level, the error meshopt reported when it made the level
//! (mesh units, 0 for the finest; `meshes::MeshLibrary::level_error`). Seen from a view, an
//! error `e` of an object scaled by `s` (the longest axis of its world matrix) covers about
//! `e * s * k / d` pixels, where `d` is the distance from the eye to the object's world box
//! and `k` the view's [`LodErrorView::pixels_per_unit`] (`(height / 2) * projection[1][1]`). A level may draw when its error covers at most the
//! threshold `t` pixels, and the chosen level is the coarsest of the run of such levels that
//! starts at the finest: level `i` is chosen when levels `1..=i` all pass and `i + 1` does
//! not (or is past the chain). Level 0 always passes, so a chain of one level, a non-finite
//! number (a comparison with NaN fails) or an eye inside the box draws the finest level: the
//! conservative answer.
//!
//! **One definition, two twins.** [`select_lod_by_error`], [`lod_box_distance_sq`] and
//! [`lod_scale_sq`] are written step for step as `lod_select`, `lod_box_distance_sq` and
//! `lod_scale_sq` of
//! `shaders/glsl/engine/lod_select.h` (which the GPU culls include), every step a single
//! correctly rounded IEEE operation (`precise` on the GPU: no fused multiply-add, no
//! reordering), so both give the same level for the same inputs. To stay exact the rule is
//! compared squared and without a division or a square root:
//! `((e * k) * (e * k)) * scale_sq <= limit_sq * distance_sq`, `scale_sq` being `s²`
//! ([`lod_scale_sq`]) and `limit_sq` the squared threshold the host computes once per view
//! ([`LodErrorView::new`]). **Ties** (a level whose product
//! equals the limit exactly) pass: on a tie the coarser level wins.
//!
//! **Hysteresis.** A level must not flicker when an object rests near a hand-over. The
//! threshold is a band keyed by last frame's level `last` (kept per object slot on both
//! sides): a level finer than or equal to `last` passes up to `t * (1 + band)`
//! ([`LodErrorView::keep_sq`]), a coarser one only under `t * (1 - band)`
//! ([`LodErrorView::coarsen_sq`]). So an object moves coarser only once it is well past the
//! hand-over and back finer only once it is well before it, and a still view keeps every
//! level (a chosen level's run still passes with the looser limit, and the level after it
//! still fails with the tighter one). A new object's `last` is 0.
//!
//! An orthographic view does not shrink with distance: the rule takes `distance_sq` 1, so
//! the projected error is `e * k` with `k = (height / 2) * projection[1][1]`.
//!
//! **Which rule wins.** A mesh whose levels carry an error (levels made by the importer) is
//! chosen by this rule; a mesh whose levels carry no error (hand-made levels with authored
//! `ecs::LodLevel::max_distance`s) keeps the distance rule, [`crate::select_lod`].

use glam::{Mat4, Vec3};

/// A view's side of the error rule (GLSL twin: `LodView` of `lod_select.h`, 16 bytes). The
/// default (all zero) is no view: every chain draws its finest level.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LodErrorView {
    /// Pixels an error of one mesh unit covers at distance 1: `(height / 2) *
    /// projection[1][1]` (for an orthographic view, at any distance).
    pub pixels_per_unit: f32,
    /// Squared limit, in pixels, for a level coarser than last frame's:
    /// `(threshold * (1 - band))²`.
    pub coarsen_sq: f32,
    /// Squared limit, in pixels, for last frame's level and finer ones:
    /// `(threshold * (1 + band))²`.
    pub keep_sq: f32,
    /// 1 for an orthographic view (the distance is ignored), else 0.
    pub orthographic: u32,
}

const _: () = assert!(std::mem::size_of::<LodErrorView>() == 16);
const _: () = assert!(std::mem::offset_of!(LodErrorView, orthographic) == 12);

impl LodErrorView {
    /// The view of `projection` onto an image `height` pixels tall, with a threshold of
    /// `threshold` pixels and a hysteresis band of `band` (a fraction of the threshold, 0 for
    /// none; clamped to `0..=1`).
    ///
    /// ```
    /// use culling::LodErrorView;
    /// use glam::Mat4;
    /// let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.5, 0.1);
    /// let view = LodErrorView::new(&projection, 1080.0, 1.0, 0.1);
    /// assert!((view.pixels_per_unit - 540.0 * 3f32.sqrt()).abs() < 1e-2);
    /// assert!(view.coarsen_sq < 1.0 && view.keep_sq > 1.0, "a band around one pixel");
    /// ```
    pub fn new(projection: &Mat4, height: f32, threshold: f32, band: f32) -> LodErrorView {
        let band = band.clamp(0.0, 1.0);
        let coarsen = threshold * (1.0 - band);
        let keep = threshold * (1.0 + band);
        LodErrorView {
            pixels_per_unit: height * 0.5 * projection.y_axis.y,
            coarsen_sq: coarsen * coarsen,
            keep_sq: keep * keep,
            orthographic: u32::from(crate::is_orthographic(projection)),
        }
    }
}

/// Squared distance from `eye` to the nearest point of the box (`center`, `half` extents): per
/// axis the gap `|center - eye| - half` where positive, else 0, summed as `(x² + y²) + z²`.
/// A NaN gap counts as 0 (the eye taken as inside: the finest level).
#[inline]
pub fn lod_box_distance_sq(eye: Vec3, center: Vec3, half: Vec3) -> f32 {
    let reach = (center - eye).abs() - half;
    let gap = |value: f32| if value > 0.0 { value } else { 0.0 };
    let (x, y, z) = (gap(reach.x), gap(reach.y), gap(reach.z));
    (x * x + y * y) + z * z
}

/// The squared scale of an object for the rule: the largest squared length of the three axes
/// of its world matrix (`(x² + y²) + z²` each), a NaN one ignored unless all are.
#[inline]
pub fn lod_scale_sq(axes: [Vec3; 3]) -> f32 {
    let length_sq = |axis: Vec3| (axis.x * axis.x + axis.y * axis.y) + axis.z * axis.z;
    let larger = |first: f32, second: f32| if second > first { second } else { first };
    larger(larger(length_sq(axes[0]), length_sq(axes[1])), length_sq(axes[2]))
}

/// The level to draw of a chain whose levels have simplification errors `errors` (finest
/// first, mesh units), for an object of squared scale `scale_sq` ([`lod_scale_sq`]) at
/// squared box distance `distance_sq` ([`lod_box_distance_sq`]) in `view`, given last
/// frame's level `last` (0 for a new object). See the module docs for the rule, its ties and
/// its hysteresis. An empty chain gives 0.
///
/// ```
/// use culling::{select_lod_by_error, LodErrorView};
/// let view = LodErrorView { pixels_per_unit: 100.0, coarsen_sq: 1.0, keep_sq: 1.0, orthographic: 0 };
/// let errors = [0.0, 0.01, 0.04];
/// assert_eq!(select_lod_by_error(&errors, 1.0, 0.5 * 0.5, &view, 0), 0, "1 cm covers 2 px at 0.5");
/// assert_eq!(select_lod_by_error(&errors, 1.0, 1.0, &view, 0), 1, "a tie: 1 px passes");
/// assert_eq!(select_lod_by_error(&errors, 1.0, 10.0 * 10.0, &view, 0), 2);
/// assert_eq!(select_lod_by_error(&errors, 4.0, 1.0, &view, 0), 0, "twice the size: 2 px");
/// ```
#[inline]
pub fn select_lod_by_error(errors: &[f32], scale_sq: f32, distance_sq: f32, view: &LodErrorView, last: u32) -> u32 {
    select_lod_by_error_of(errors.len() as u32, |level| errors[level as usize], scale_sq, distance_sq, view, last)
}

/// [`select_lod_by_error`] for a chain of `count` levels whose errors `error_of(level)` gives
/// (asked for levels `1..count` in order, until one fails): for chains kept in another layout
/// than a slice, as the Visibility stage's (each level's error looked up by its mesh).
#[inline]
pub fn select_lod_by_error_of(
    count: u32,
    error_of: impl Fn(u32) -> f32,
    scale_sq: f32,
    distance_sq: f32,
    view: &LodErrorView,
    last: u32,
) -> u32 {
    let distance_sq = if view.orthographic != 0 { 1.0 } else { distance_sq };
    let mut level = 0u32;
    for index in 1..count {
        let limit_sq = if index > last { view.coarsen_sq } else { view.keep_sq };
        let pixels = error_of(index) * view.pixels_per_unit;
        // "Not at most", so a NaN ends the run (the finer level stays).
        let passes = (pixels * pixels) * scale_sq <= limit_sq * distance_sq;
        if !passes {
            break;
        }
        level = index;
    }
    level
}

/// How far the eye may move before the level `level` of a chain of `count` levels (errors
/// `error_of(level)`) could stop being [`select_lod_by_error_of`]'s pick for an object of
/// squared scale `scale_sq` at squared box distance `distance_sq`, given `level` itself as
/// last frame's level (the state the pick leaves): the box distance's room below and above
/// it, in world units, before a level of the run fails with the looser limit or the next
/// level passes with the tighter one. The distance from a moving eye to a box changes by at
/// most the eye's move, so the level stays the pick while the eye stays within the room
/// (less the caller's rounding allowance). Positive infinity where no distance changes it
/// (an orthographic view, a chain of one level, a zero error); negative infinity where it
/// holds nowhere or cannot be bounded (a NaN, a zero limit, an eye already past a
/// boundary).
///
/// ```
/// use culling::{error_level_slack, select_lod_by_error, LodErrorView};
/// let view = LodErrorView { pixels_per_unit: 100.0, coarsen_sq: 1.0, keep_sq: 1.0, orthographic: 0 };
/// let errors = [0.0, 0.01, 0.04];
/// // At 2 units level 1 is picked; level 2 passes from 4, level 1 holds down to 1.
/// assert_eq!(select_lod_by_error(&errors, 1.0, 4.0, &view, 1), 1);
/// let room = error_level_slack(3, |level| errors[level as usize], 1.0, 4.0, &view, 1);
/// assert!((room - 1.0).abs() < 1e-5, "{room}");
/// ```
pub fn error_level_slack(
    count: u32,
    error_of: impl Fn(u32) -> f32,
    scale_sq: f32,
    distance_sq: f32,
    view: &LodErrorView,
    level: u32,
) -> f32 {
    if view.orthographic != 0 {
        return f32::INFINITY;
    }
    // Squared projected error of level `index`, in f64: the rule's f32 products differ from
    // it by a few roundings, which the caller's allowance covers.
    let projected = |index: u32| {
        let pixels = f64::from(error_of(index)) * f64::from(view.pixels_per_unit);
        pixels * pixels * f64::from(scale_sq)
    };
    let distance = f64::from(distance_sq).sqrt();
    // Levels 1..=level pass while the distance stays at or above each one's limit.
    let mut below = 0.0f64;
    for index in 1..=level.min(count.saturating_sub(1)) {
        let projected = projected(index);
        let needed_sq = projected / f64::from(view.keep_sq);
        if needed_sq.is_nan() && projected != 0.0 {
            return f32::NEG_INFINITY;
        }
        // A zero error passes at any distance (0 / 0 under a zero limit too).
        if projected != 0.0 {
            below = below.max(needed_sq.sqrt());
        }
    }
    // The next level passes once the distance reaches its limit.
    let above =
        if level + 1 < count { (projected(level + 1) / f64::from(view.coarsen_sq)).sqrt() } else { f64::INFINITY };
    // No level of the run needs a distance: none is too near (a distance is never negative).
    let lower = if below > 0.0 { distance - below } else { f64::INFINITY };
    let room = lower.min(above - distance);
    // NaN (a NaN input, 0 / 0) holds nothing, as does a distance already past a boundary.
    if room.is_nan() || room <= 0.0 {
        return f32::NEG_INFINITY;
    }
    room as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule read from its definition, level by level: the largest `i` such that every
    /// level from 1 to `i` passes its limit.
    fn brute_force(errors: &[f32], scale_sq: f32, distance_sq: f32, view: &LodErrorView, last: u32) -> u32 {
        let distance = if view.orthographic == 1 { 1.0 } else { distance_sq };
        let passes = |level: usize| {
            let limit = if level as u32 <= last { view.keep_sq } else { view.coarsen_sq };
            let pixels = errors[level] * view.pixels_per_unit;
            pixels * pixels * scale_sq <= limit * distance
        };
        (0..errors.len().max(1)).rev().find(|&level| (1..=level).all(passes)).unwrap_or(0) as u32
    }

    fn chain() -> impl Strategy<Value = Vec<f32>> {
        prop::collection::vec(0.0f32..0.5, 0..8).prop_map(|mut steps| {
            // A chain's errors are sums along it, so they grow; level 0's is 0.
            let mut total = 0.0;
            for step in &mut steps {
                total += *step;
                *step = total;
            }
            steps.insert(0, 0.0);
            steps
        })
    }

    fn view() -> impl Strategy<Value = LodErrorView> {
        (1.0f32..2000.0, 0.1f32..4.0, 0.0f32..0.5, prop::bool::weighted(0.2)).prop_map(
            |(pixels_per_unit, threshold, band, orthographic)| {
                let (coarsen, keep) = (threshold * (1.0 - band), threshold * (1.0 + band));
                LodErrorView {
                    pixels_per_unit,
                    coarsen_sq: coarsen * coarsen,
                    keep_sq: keep * keep,
                    orthographic: u32::from(orthographic),
                }
            },
        )
    }

    proptest! {
        #[test]
        fn the_rule_is_its_brute_force_reading(
            errors in chain(), distance in 0.0f32..300.0, view in view(), last in 0u32..9, scale in 0.1f32..10.0,
        ) {
            let distance_sq = distance * distance;
            prop_assert_eq!(
                select_lod_by_error(&errors, scale * scale, distance_sq, &view, last),
                brute_force(&errors, scale * scale, distance_sq, &view, last)
            );
        }

        #[test]
        fn unsorted_errors_follow_the_reference_too(
            errors in prop::collection::vec(0.0f32..1.0, 0..8), distance in 0.0f32..100.0,
            view in view(), last in 0u32..9, scale in 0.1f32..10.0,
        ) {
            let distance_sq = distance * distance;
            prop_assert_eq!(
                select_lod_by_error(&errors, scale * scale, distance_sq, &view, last),
                brute_force(&errors, scale * scale, distance_sq, &view, last)
            );
        }

        #[test]
        fn a_level_holds_within_its_room_and_no_farther(
            errors in chain(), distance in 0.0f32..300.0, view in view(), last in 0u32..9, scale in 0.1f32..10.0,
        ) {
            let (scale_sq, error_of) = (scale * scale, |level: u32| errors[level as usize]);
            let count = errors.len() as u32;
            let level = select_lod_by_error(&errors, scale_sq, distance * distance, &view, last);
            let room = error_level_slack(count, error_of, scale_sq, distance * distance, &view, level);
            if room.is_infinite() && room > 0.0 {
                for moved in [0.0f32, distance * 0.5, distance * 10.0 + 1000.0] {
                    let again = select_lod_by_error(&errors, scale_sq, moved * moved, &view, level);
                    prop_assert_eq!(again, level, "at {}: an infinite room from {}", moved, distance);
                }
            } else if room > 0.0 {
                // Within the room, less the rounding allowance the word pass takes: the same level.
                let inside = room - 1.0e-5 * (2.0 * distance + room);
                for fraction in [-1.0f32, -0.5, 0.5, 1.0] {
                    let moved = (distance + fraction * inside).max(0.0);
                    let again = select_lod_by_error(&errors, scale_sq, moved * moved, &view, level);
                    prop_assert_eq!(again, level, "at {} (room {} from {})", moved, room, distance);
                }
                // A little past it on one side or the other, the level changes: the room is tight.
                // Nearer than the eye can be, the box itself (distance 0) is past a near side's
                // hand-over that lies closer to it than the overshoot.
                let past = room * 1.01 + 1.0e-4 * distance;
                let changes = [(distance - past).max(0.0), distance + past].into_iter().any(|moved| {
                    select_lod_by_error(&errors, scale_sq, moved * moved, &view, level) != level
                });
                prop_assert!(changes || room > 1.0e6, "the room {} from {} is not tight", room, distance);
            }
        }

        #[test]
        fn a_still_view_keeps_its_level(errors in chain(), distance in 0.0f32..300.0, view in view(), last in 0u32..9) {
            let first = select_lod_by_error(&errors, 1.0, distance * distance, &view, last);
            let again = select_lod_by_error(&errors, 1.0, distance * distance, &view, first);
            prop_assert_eq!(first, again, "the level chosen is kept while nothing moves");
        }
    }

    #[test]
    fn a_band_stops_flicker_at_a_hand_over() {
        let errors = [0.0, 0.01];
        let view = LodErrorView::new(&Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1), 1000.0, 1.0, 0.1);
        // The hand-over without a band: 0.01 * k = d.
        let hand_over = 0.01 * view.pixels_per_unit;
        let mut last = 0;
        let mut switches = 0;
        for step in 0..200 {
            // Wobble by 5% around the hand-over: inside the 10% band.
            let distance = hand_over * (1.0 + 0.05 * (step as f32 * 0.7).sin());
            let level = select_lod_by_error(&errors, 1.0, distance * distance, &view, last);
            switches += u32::from(level != last);
            last = level;
        }
        assert_eq!(switches, 0, "a wobble inside the band never switches");
        let far = hand_over * 1.2;
        assert_eq!(select_lod_by_error(&errors, 1.0, far * far, &view, 0), 1, "past the band: coarser");
        let near = hand_over * 0.95;
        assert_eq!(select_lod_by_error(&errors, 1.0, near * near, &view, 1), 1, "inside the band: kept");
        let nearer = hand_over * 0.85;
        assert_eq!(select_lod_by_error(&errors, 1.0, nearer * nearer, &view, 1), 0, "before the band: finer");
    }

    #[test]
    fn bad_numbers_and_short_chains_draw_the_finest_level() {
        let view = LodErrorView { pixels_per_unit: 100.0, coarsen_sq: 1.0, keep_sq: 1.0, orthographic: 0 };
        assert_eq!(select_lod_by_error(&[], 1.0, 100.0, &view, 0), 0);
        assert_eq!(select_lod_by_error(&[0.0], 1.0, 100.0, &view, 0), 0);
        assert_eq!(select_lod_by_error(&[0.0, f32::NAN], 1.0, 100.0, &view, 0), 0);
        assert_eq!(select_lod_by_error(&[0.0, 0.01], 1.0, f32::NAN, &view, 0), 0);
        assert_eq!(lod_box_distance_sq(Vec3::ZERO, Vec3::splat(f32::NAN), Vec3::ONE), 0.0);
        assert_eq!(lod_box_distance_sq(Vec3::ZERO, Vec3::ZERO, Vec3::ONE), 0.0, "an eye inside the box");
        assert_eq!(lod_box_distance_sq(Vec3::ZERO, Vec3::new(3.0, 0.0, 4.0), Vec3::ONE), 4.0 + 9.0);
        let axes = [Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, f32::NAN, 0.0), Vec3::new(0.0, 0.0, 3.0)];
        assert_eq!(lod_scale_sq(axes), 9.0, "the longest axis, a NaN one ignored");
        assert!(lod_scale_sq([Vec3::NAN; 3]).is_nan(), "all NaN: NaN, which keeps the finest level");
    }

    #[test]
    fn orthographic_views_ignore_the_distance() {
        let projection = Mat4::orthographic_rh(-4.0, 4.0, -2.0, 2.0, 100.0, 0.1);
        let view = LodErrorView::new(&projection, 400.0, 1.0, 0.0);
        assert_eq!(view.orthographic, 1);
        // k = 200 * 0.5 = 100 pixels per unit at any distance.
        for distance_sq in [0.0, 1.0, 1.0e6] {
            assert_eq!(select_lod_by_error(&[0.0, 0.005, 0.02], 1.0, distance_sq, &view, 0), 1);
        }
    }
}

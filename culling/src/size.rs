//! Distance and screen-size culls: small pure tests on squared quantities, no square root.
//!
//! Both take the object's bounding sphere around its world box centre (`radius² = |half
//! extent|²`). Each answers "keep" for NaN input, so bad data is never culled here.

/// The squared threshold of the distance cull: `max_distance²`, or infinity (off) when
/// `max_distance <= 0` or is NaN.
///
/// ```
/// use culling::{is_near_enough, max_distance_sq};
/// assert!(is_near_enough(99.0 * 99.0, max_distance_sq(100.0)));
/// assert!(!is_near_enough(101.0 * 101.0, max_distance_sq(100.0)));
/// assert!(is_near_enough(1.0e30, max_distance_sq(0.0)), "0 turns the cull off");
/// ```
#[inline]
pub fn max_distance_sq(max_distance: f32) -> f32 {
    if max_distance > 0.0 {
        max_distance * max_distance
    } else {
        f32::INFINITY
    }
}

/// Whether an object at squared distance `distance_sq` from the camera is near enough to
/// draw; NaN is kept.
#[inline]
pub fn is_near_enough(distance_sq: f32, max_distance_sq: f32) -> bool {
    at_least(max_distance_sq, distance_sq)
}

/// `value >= limit`, and true when either is NaN: the comparison that keeps bad data.
#[inline]
fn at_least(value: f32, limit: f32) -> bool {
    value >= limit || value.is_nan() || limit.is_nan()
}

/// The screen-size cull of one view, precomputed: how big an object must look to be drawn.
///
/// The projected size of a sphere of radius `r` whose centre lies at view depth `z` is taken
/// as `r * p11 * H / sqrt(z² - r²)` pixels for a perspective view, where `p11` is
/// `projection[1][1]` and `H` the viewport height in pixels. That is the seed formula
/// `r * p11 / z * H` with the depth replaced by the length of the tangent from the eye, which
/// is the exact projected diameter of a sphere on the view axis and a lower bound of its
/// smaller screen axis anywhere else, so the test only errs towards keeping. An
/// orthographic view has no division: NDC y is `p11 * y`, and the viewport maps 2 NDC units
/// to `H` pixels, so the diameter is `2 r * p11 * H / 2 = r * p11 * H` pixels at any depth.
///
/// Squared, with `k = (p11 * H / min_pixels)²`: keep when `r² * k >= z² - r²`
/// (perspective) or `r² * k >= 1` (orthographic). A sphere that reaches the eye plane
/// (`z <= r`, which covers everything at or behind the camera and what crosses the near
/// plane) is never size-culled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScreenSizeCull {
    factor_sq: f32,
    orthographic: bool,
    enabled: bool,
}

impl ScreenSizeCull {
    /// The cull that keeps everything.
    pub const OFF: ScreenSizeCull = ScreenSizeCull { factor_sq: f32::INFINITY, orthographic: false, enabled: false };

    /// The cull for a projection with `projection[1][1] == p11`, a viewport `viewport_height`
    /// pixels tall and a minimum size of `min_pixels`. Off when `min_pixels <= 0`, or when
    /// any input is not a positive finite number (a conservative answer for bad input).
    pub fn new(p11: f32, viewport_height: f32, min_pixels: f32, orthographic: bool) -> Self {
        let usable = |value: f32| value.is_finite() && value > 0.0;
        if !(usable(p11) && usable(viewport_height) && usable(min_pixels)) {
            return Self::OFF;
        }
        let factor = p11.abs() * viewport_height / min_pixels;
        Self { factor_sq: factor * factor, orthographic, enabled: true }
    }

    /// Whether the cull can reject anything.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Whether a sphere of squared radius `radius_sq` with its centre at view depth `depth`
    /// (distance in front of the eye along the view direction) is large enough to draw.
    ///
    /// ```
    /// use culling::ScreenSizeCull;
    /// // 60° vertical field of view (p11 = √3), 1080 lines, 4 pixels minimum.
    /// let cull = ScreenSizeCull::new(3f32.sqrt(), 1080.0, 4.0, false);
    /// assert!(cull.keeps(0.5 * 0.5, 100.0), "1 m across at 100 m is about 19 px");
    /// assert!(!cull.keeps(0.01 * 0.01, 100.0), "2 cm across at 100 m is under a pixel");
    /// assert!(cull.keeps(0.01 * 0.01, -5.0), "behind the eye is never size-culled");
    /// ```
    #[inline]
    pub fn keeps(&self, radius_sq: f32, depth: f32) -> bool {
        if !self.enabled {
            return true;
        }
        if self.orthographic {
            return at_least(radius_sq * self.factor_sq, 1.0);
        }
        let depth_sq = depth * depth;
        // Reaches the eye plane (or NaN): the projection formula does not apply; keep.
        let in_front = depth > 0.0 && depth_sq > radius_sq;
        if !in_front {
            return true;
        }
        at_least(radius_sq * self.factor_sq, depth_sq - radius_sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P11_60: f32 = 1.732_050_8;

    /// Projected diameter in pixels, the formula the squared test stands for.
    fn projected_pixels(radius: f32, depth: f32) -> f32 {
        radius * P11_60 * 1080.0 / (depth * depth - radius * radius).sqrt()
    }

    #[test]
    fn perspective_threshold_matches_the_unsquared_formula() {
        let cull = ScreenSizeCull::new(P11_60, 1080.0, 3.0, false);
        for depth in [1.0f32, 10.0, 55.5, 300.0, 5000.0] {
            for radius in [0.001f32, 0.01, 0.05, 0.2, 1.0] {
                if depth <= radius * 1.01 {
                    continue;
                }
                let pixels = projected_pixels(radius, depth);
                if (pixels - 3.0).abs() < 1e-3 {
                    continue;
                }
                assert_eq!(
                    cull.keeps(radius * radius, depth),
                    pixels >= 3.0,
                    "radius {radius} at depth {depth} is {pixels} px"
                );
            }
        }
    }

    #[test]
    fn orthographic_size_ignores_depth() {
        // A 20 m tall orthographic view: p11 = 2 / 20.
        let cull = ScreenSizeCull::new(0.1, 1000.0, 2.0, true);
        // Diameter in pixels = r * p11 * H = r * 100: 2 px at r = 0.02.
        assert!(cull.keeps(0.03 * 0.03, 1.0e6));
        assert!(!cull.keeps(0.01 * 0.01, 1.0));
    }

    #[test]
    fn near_objects_and_bad_input_are_kept() {
        let cull = ScreenSizeCull::new(P11_60, 1080.0, 1000.0, false);
        assert!(cull.keeps(1.0e-6, 0.0), "on the eye plane");
        assert!(cull.keeps(4.0, 1.5), "sphere crossing the eye plane");
        assert!(cull.keeps(f32::NAN, 10.0));
        assert!(cull.keeps(1.0e-6, f32::NAN));
        assert!(!ScreenSizeCull::new(P11_60, 1080.0, 0.0, false).is_enabled());
        assert!(!ScreenSizeCull::new(f32::NAN, 1080.0, 2.0, false).is_enabled());
    }

    #[test]
    fn distance_cull_is_squared_and_can_be_off() {
        let limit = max_distance_sq(50.0);
        assert!(is_near_enough(50.0 * 50.0, limit), "the limit itself is kept");
        assert!(!is_near_enough(50.01 * 50.01, limit));
        assert!(is_near_enough(f32::NAN, limit));
        assert!(is_near_enough(f32::MAX, max_distance_sq(-1.0)));
        assert!(is_near_enough(f32::INFINITY, max_distance_sq(f32::NAN)));
    }
}

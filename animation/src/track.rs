//! One animated property of one joint: key times and values with glTF's samplers (LINEAR,
//! STEP, CUBICSPLINE), and its sampling.

use glam::{Quat, Vec3, Vec4};

use crate::AnimationError;

/// How a track fills the time between two keys (glTF's `sampler.interpolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Straight between the keys (rotations: spherical, along the shorter arc, by
    /// [`fast_slerp`]).
    Linear,
    /// The earlier key's value until the next key.
    Step,
    /// Cubic Hermite spline; each key stores an in-tangent, the value and an out-tangent.
    CubicSpline,
}

/// A value a track can hold: what the samplers need of it.
pub trait TrackValue: Copy + Send + Sync + 'static {
    /// The value `weight` of the way from `self` to `other` (rotations: [`fast_slerp`], within
    /// [`SLERP_ERROR_BOUND`] of slerp).
    fn interpolate(self, other: Self, weight: f32) -> Self;
    /// The Hermite spline between `(start, out_tangent)` and `(end, in_tangent)` at `weight`,
    /// the tangents already scaled by the key interval (rotations: normalized afterwards).
    fn hermite(start: Self, out_tangent: Self, end: Self, in_tangent: Self, weight: f32) -> Self;
    /// Every component times `factor` (a tangent scaled by its key interval).
    fn scale(self, factor: f32) -> Self;
}

/// The Hermite basis at `s`: weights of start, out-tangent, end and in-tangent.
#[inline]
fn hermite_basis(s: f32) -> [f32; 4] {
    let (s2, s3) = (s * s, s * s * s);
    [2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2]
}

impl TrackValue for Vec3 {
    #[inline]
    fn interpolate(self, other: Self, weight: f32) -> Self {
        self.lerp(other, weight)
    }

    #[inline]
    fn hermite(start: Self, out_tangent: Self, end: Self, in_tangent: Self, weight: f32) -> Self {
        let [a, b, c, d] = hermite_basis(weight);
        start * a + out_tangent * b + end * c + in_tangent * d
    }

    #[inline]
    fn scale(self, factor: f32) -> Self {
        self * factor
    }
}

impl TrackValue for Quat {
    #[inline]
    fn interpolate(self, other: Self, weight: f32) -> Self {
        fast_slerp(self, other, weight)
    }

    #[inline]
    fn hermite(start: Self, out_tangent: Self, end: Self, in_tangent: Self, weight: f32) -> Self {
        let [a, b, c, d] = hermite_basis(weight);
        let value =
            Vec4::from(start) * a + Vec4::from(out_tangent) * b + Vec4::from(end) * c + Vec4::from(in_tangent) * d;
        Quat::from_vec4(value).normalize()
    }

    #[inline]
    fn scale(self, factor: f32) -> Self {
        Quat::from_vec4(Vec4::from(self) * factor)
    }
}

/// Largest angle, in radians, between [`fast_slerp`] and `Quat::slerp` over every pair of
/// unit quaternions and every weight in `0..=1` (measured by the test beside this file on a
/// grid of key angles and weights: 7.7e-4 at worst, for keys a half turn apart; under 5e-5
/// for keys up to 30 degrees apart, the most a 30 Hz clip turns a joint between keys). A joint
/// 1 m long moves its tip by at most this many metres: well under a pixel at any distance a
/// character is drawn, and the posed bounds do not depend on it (they bound the palette
/// that was computed, whatever rotation it holds).
pub const SLERP_ERROR_BOUND: f32 = 1e-3;

/// Spherical interpolation along the shorter arc, approximated: a linear blend of the two
/// quaternions, normalized, with the weight corrected by a polynomial in the cosine of the
/// half angle so that the angle moves at the uniform rate slerp moves it (the correction is
/// Arseny Kapoulkine's, "Approximating slerp", 2015). Costs a few multiplies where slerp
/// costs an `acos` and two `sin`s; within [`SLERP_ERROR_BOUND`] of slerp for every pair of
/// keys, exact at weights 0, 1/2 and 1 (up to rounding). glTF's LINEAR rotation is slerp;
/// this is how real-time engines sample it.
#[inline]
pub fn fast_slerp(start: Quat, end: Quat, weight: f32) -> Quat {
    let (start, end) = (Vec4::from(start), Vec4::from(end));
    let dot = start.dot(end);
    // The shorter arc: q and -q are the same rotation.
    let (end, cosine) = if dot < 0.0 { (-end, -dot) } else { (end, dot) };
    let centred = weight - 0.5;
    let curve_a = 1.0904 + cosine * (-3.2452 + cosine * (3.55645 - cosine * 1.43519));
    let curve_b = 0.848013 + cosine * (-1.06021 + cosine * 0.215638);
    let curve = curve_a * centred * centred + curve_b;
    let corrected = weight + weight * centred * (weight - 1.0) * curve;
    Quat::from_vec4(start.lerp(end, corrected).normalize())
}

/// Key times and values of one property, with its sampler. For [`Interpolation::CubicSpline`]
/// `values` holds three entries per key (in-tangent, value, out-tangent), as glTF stores them.
#[derive(Clone, Debug, PartialEq)]
pub struct Track<T> {
    interpolation: Interpolation,
    times: Vec<f32>,
    values: Vec<T>,
}

impl<T: TrackValue> Track<T> {
    /// A track; refused ([`AnimationError::BadTrack`]) without keys, with times that are not
    /// finite and non-decreasing, or with a value count that does not fit the sampler. Values
    /// are not checked: non-finite ones reach the animation system, which falls back to the
    /// bind pose for that rig.
    pub fn new(interpolation: Interpolation, times: Vec<f32>, values: Vec<T>) -> Result<Track<T>, AnimationError> {
        let bad = |reason| Err(AnimationError::BadTrack(reason));
        if times.is_empty() {
            return bad("a track needs at least one key");
        }
        if times.iter().any(|time| !time.is_finite()) || times.windows(2).any(|pair| pair[1] < pair[0]) {
            return bad("key times must be finite and non-decreasing");
        }
        let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
        if values.len() != times.len() * per_key {
            return bad("a track needs one value per key (three for CUBICSPLINE)");
        }
        Ok(Track { interpolation, times, values })
    }

    /// Its sampler.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// The key times.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// The stored values: one a key, or three for [`Interpolation::CubicSpline`] (in-tangent,
    /// value, out-tangent, as glTF stores them).
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The time of the last key.
    pub fn end(&self) -> f32 {
        *self.times.last().expect("a track has at least one key (checked by Track::new)")
    }

    /// The value of key `key` (the value itself for a cubic track, not a tangent).
    #[inline]
    pub(crate) fn key(&self, key: usize) -> T {
        match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * key + 1],
            _ => self.values[key],
        }
    }

    /// The value at `time`, clamped to the first and last keys.
    ///
    /// ```
    /// use animation::{Interpolation, Track};
    /// use glam::Vec3;
    /// let track = Track::new(Interpolation::Step, vec![0.0, 1.0], vec![Vec3::ZERO, Vec3::ONE]).unwrap();
    /// assert_eq!(track.sample(0.99), Vec3::ZERO);
    /// assert_eq!(track.sample(1.0), Vec3::ONE);
    /// ```
    #[inline]
    pub fn sample(&self, time: f32) -> T {
        let times = &self.times;
        let last = times.len() - 1;
        // A NaN time lands on the first key.
        if time.is_nan() || time <= times[0] {
            return self.key(0);
        }
        if time >= times[last] {
            return self.key(last);
        }
        // The key at or before `time`: times[next - 1] <= time < times[next].
        let next = times.partition_point(|&key| key <= time);
        self.sample_in(KeySpan::between(times, next - 1, time))
    }

    /// The value inside `span` (found in this track's times, or in equal ones).
    #[inline]
    pub(crate) fn sample_in(&self, span: KeySpan) -> T {
        let KeySpan { start, weight, interval } = span;
        let next = start + 1;
        // On a key (or past the last): that key's value exactly, whatever the sampler.
        if next >= self.times.len() || weight == 0.0 {
            return self.key(start.min(self.times.len() - 1));
        }
        match self.interpolation {
            Interpolation::Step => self.values[start],
            Interpolation::Linear => self.values[start].interpolate(self.values[next], weight),
            Interpolation::CubicSpline => {
                let out_tangent = scaled(self.values[3 * start + 2], interval);
                let in_tangent = scaled(self.values[3 * next], interval);
                T::hermite(self.values[3 * start + 1], out_tangent, self.values[3 * next + 1], in_tangent, weight)
            }
        }
    }
}

/// A tangent times the key interval (glTF stores tangents per second).
#[inline]
fn scaled<T: TrackValue>(tangent: T, interval: f32) -> T {
    T::scale(tangent, interval)
}

/// Where a time falls among key times: after key `start`, `weight` of the way to the next
/// key, which lies `interval` seconds later (a time at or past the last key is that key,
/// weight 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct KeySpan {
    pub start: usize,
    pub weight: f32,
    pub interval: f32,
}

impl KeySpan {
    /// The span of `time` after key `start` of `times` (`times[start] <= time`).
    #[inline]
    pub(crate) fn between(times: &[f32], start: usize, time: f32) -> KeySpan {
        let interval = times[start + 1] - times[start];
        KeySpan { start, weight: (time - times[start]) / interval, interval }
    }

    /// The span of `time` among `times` (non-decreasing, at least one): clamped to the first
    /// and last keys. `step`, when the keys are evenly spaced, finds the key in constant time
    /// (a guess from the step, corrected against the times, so the answer is the search's).
    #[inline]
    pub(crate) fn find(times: &[f32], time: f32, step: Option<f32>) -> KeySpan {
        let last = times.len() - 1;
        if time.is_nan() || time <= times[0] {
            return KeySpan { start: 0, weight: 0.0, interval: 0.0 };
        }
        if time >= times[last] {
            return KeySpan { start: last, weight: 0.0, interval: 0.0 };
        }
        let start = match step {
            Some(step) => {
                let mut start = (((time - times[0]) / step) as usize).min(last - 1);
                while start > 0 && times[start] > time {
                    start -= 1;
                }
                while times[start + 1] <= time {
                    start += 1;
                }
                start
            }
            None => times.partition_point(|&key| key <= time) - 1,
        };
        KeySpan::between(times, start, time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The angle of the rotation from `first` to `second`, precise near 0 (where the `acos`
    /// of `Quat::angle_between` loses half the digits).
    fn rotation_between(first: Quat, second: Quat) -> f32 {
        let relative = first * second.conjugate();
        2.0 * relative.xyz().length().atan2(relative.w.abs())
    }

    #[test]
    fn fast_slerp_stays_within_its_bound_of_slerp() {
        let (mut worst, mut worst_near) = (0.0_f32, 0.0_f32);
        let axis = Vec3::new(0.3, -0.8, 0.52).normalize();
        for step in 0..=360 {
            // Key angles from 0 to 360 degrees apart, both arcs (the shorter one is taken).
            let angle = step as f32 / 360.0 * std::f32::consts::TAU;
            let start = Quat::from_rotation_x(0.4) * Quat::from_rotation_z(-1.1);
            let end = Quat::from_axis_angle(axis, angle) * start;
            for sample in 0..=64 {
                let weight = sample as f32 / 64.0;
                let error = rotation_between(fast_slerp(start, end, weight), start.slerp(end, weight));
                worst = worst.max(error);
                if step <= 30 {
                    worst_near = worst_near.max(error);
                }
            }
        }
        assert!(worst <= SLERP_ERROR_BOUND, "fast_slerp is {worst} rad from slerp, bound {SLERP_ERROR_BOUND}");
        assert!(worst > 0.0, "the test must exercise the approximation");
        assert!(worst_near <= 5e-5, "keys up to 30 degrees apart: {worst_near} rad from slerp");
        eprintln!("fast_slerp worst error {worst} rad, {worst_near} rad for keys up to 30 degrees apart");
    }
}

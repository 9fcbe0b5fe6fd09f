//! Projecting an occludee's box: a screen rectangle that contains its eight corners and a
//! depth no farther than its nearest point, eight boxes at a time with AVX2 or one at a time
//! with the scalar reference.
//!
//! The box is projected in centre/extent form (the bounds of an affine image of a box, as in
//! J. Arvo, "Transforming Axis-Aligned Bounding Boxes", Graphics Gems, 1990): each clip
//! component ranges over `middle ± reach`, with `middle` the centre's clip value and `reach`
//! the half extents projected on the row's absolute values. Dividing the `x`, `y` and `z`
//! ranges by the `w` range gives bounds that contain every corner's `x/w`, `y/w` and `z/w`:
//! a few operations per clip component instead of a division per corner. The depth bound is
//! the exact nearest corner under a perspective projection (`z` does not vary over the box);
//! the rectangle is at most a little larger than the corners' own.
//!
//! [`project_scalar`] is the reference. `project_avx2` repeats its steps with the same
//! operations in the same order (separate multiplies and adds, never fused; the same two
//! divisions) and selects with masks that match the scalar comparisons, so both give the
//! same bits for every box they can judge.

use glam::Mat4;

/// Smallest `w` of a corner that still counts as in front of the camera plane.
pub(crate) const MIN_W: f32 = 1.0e-6;

/// Bound on the relative rounding error of a clip component's range, as a fraction of the
/// magnitudes that enter it (`(Σ|r_i||c_i| + |r_3|) + reach`): each of its at most twelve
/// roundings errs by at most `f32::EPSILON / 2` of a partial sum no larger than that, so
/// `16 * f32::EPSILON` bounds them all with room to spare. Widening each range by this much
/// makes it contain the exact one even when a camera far from the origin makes the centre's
/// clip value a small difference of large terms.
const ROUNDING: f32 = 16.0 * f32::EPSILON;

/// The projected bounds of one box.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Projected {
    /// At most the smallest NDC `x`, `y` of the corners.
    pub low: [f32; 2],
    /// At least the largest NDC `x`, `y` of the corners.
    pub high: [f32; 2],
    /// At least the largest reversed-Z depth of the corners.
    pub nearest: f32,
    /// False when an input is not finite, the smallest `w` of the box is at most `MIN_W`,
    /// or its largest `z` is not below its smallest `w` (some corner may be at or before the
    /// near plane); the other fields then mean nothing.
    pub judgeable: bool,
}

/// The view-projection matrix by rows: `rows[r] = (m[0][r], m[1][r], m[2][r], m[3][r])`,
/// so clip component `r` of a point `p` is `((rows[r][0] px + rows[r][1] py) + rows[r][2]
/// pz) + rows[r][3]`; and their absolute values, which project a box's half extents and bound
/// the rounding error.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows {
    /// The rows.
    pub rows: [[f32; 4]; 4],
    /// `|rows[r]|`.
    pub abs: [[f32; 4]; 4],
}

impl Rows {
    pub fn new(matrix: &Mat4) -> Rows {
        let rows = [0, 1, 2, 3].map(|row| matrix.row(row).to_array());
        Rows { rows, abs: rows.map(|row| row.map(f32::abs)) }
    }
}

/// Projects the box of centre `center` and half extents `half` (signs ignored).
#[inline]
pub(crate) fn project_scalar(rows: &Rows, center: [f32; 3], half: [f32; 3]) -> Projected {
    // Step 1: every input finite (a NaN fails the comparison).
    let finite = center.iter().chain(half.iter()).all(|value| value.abs() <= f32::MAX);
    let half = half.map(f32::abs);
    let size = center.map(f32::abs);
    // Step 2: per clip component, the centre's value and the reach of the half extents:
    // every corner lies within [middle - reach, middle + reach], widened by the rounding
    // bound of the terms' magnitudes.
    let mut low = [0.0f32; 4];
    let mut high = [0.0f32; 4];
    for row in 0..4 {
        let (values, abs) = (&rows.rows[row], &rows.abs[row]);
        let middle = ((values[0] * center[0] + values[1] * center[1]) + values[2] * center[2]) + values[3];
        let reach = (abs[0] * half[0] + abs[1] * half[1]) + abs[2] * half[2];
        let magnitude = ((abs[0] * size[0] + abs[1] * size[1]) + abs[2] * size[2]) + abs[3];
        let slack = (magnitude + reach) * ROUNDING;
        low[row] = (middle - reach) - slack;
        high[row] = (middle + reach) + slack;
    }
    // Step 3: every corner beyond the camera plane (w > MIN_W) and the near plane (z < w,
    // asked of the largest z and the smallest w).
    let ok = low[3] > MIN_W && high[2] < low[3];
    // Step 4: the inverses of the smallest and largest w.
    let (inverse_near, inverse_far) = (1.0 / low[3], 1.0 / high[3]);
    // Step 5: a lower bound of v/w over the box divides a non-negative lower bound of v by
    // the largest w and a negative one by the smallest; an upper bound the other way round.
    let lower = |value: f32| value * if value >= 0.0 { inverse_far } else { inverse_near };
    let upper = |value: f32| value * if value >= 0.0 { inverse_near } else { inverse_far };
    Projected {
        low: [lower(low[0]), lower(low[1])],
        high: [upper(high[0]), upper(high[1])],
        nearest: upper(high[2]),
        judgeable: finite && ok,
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) use avx2::{project_lanes as project_lanes_avx2, ProjectedLanes};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2 {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    use super::{Projected, Rows, MIN_W, ROUNDING};

    /// Eight projected boxes, lane by lane: the fields of [`Projected`] as registers.
    #[derive(Clone, Copy)]
    pub(crate) struct ProjectedLanes {
        /// `Projected::low` by axis.
        pub low: [__m256; 2],
        /// `Projected::high` by axis.
        pub high: [__m256; 2],
        /// `Projected::nearest`.
        pub nearest: __m256,
        /// `Projected::judgeable`, all ones in a judgeable lane.
        pub judgeable: __m256,
    }

    impl ProjectedLanes {
        /// Writes the eight lanes out as [`Projected`] values.
        ///
        /// # Safety
        /// The CPU must support AVX2.
        #[target_feature(enable = "avx2")]
        pub(crate) unsafe fn store(&self, out: &mut [Projected; 8]) {
            let mut lanes = [[0.0f32; 8]; 5];
            let values = [self.low[0], self.low[1], self.high[0], self.high[1], self.nearest];
            for (slot, value) in lanes.iter_mut().zip(values) {
                // SAFETY: eight writable floats; storeu needs no alignment.
                unsafe { _mm256_storeu_ps(slot.as_mut_ptr(), value) };
            }
            let judgeable = _mm256_movemask_ps(self.judgeable);
            for (lane, projected) in out.iter_mut().enumerate() {
                *projected = Projected {
                    low: [lanes[0][lane], lanes[1][lane]],
                    high: [lanes[2][lane], lanes[3][lane]],
                    nearest: lanes[4][lane],
                    judgeable: judgeable >> lane & 1 == 1,
                };
            }
        }
    }

    /// Projects eight boxes (centres and half extents by axis, eight lanes each); same steps
    /// as [`super::project_scalar`].
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn project_lanes(rows: &Rows, center: [&[f32; 8]; 3], half: [&[f32; 8]; 3]) -> ProjectedLanes {
        // SAFETY: eight readable floats each; loadu needs no alignment.
        let center = unsafe {
            [
                _mm256_loadu_ps(center[0].as_ptr()),
                _mm256_loadu_ps(center[1].as_ptr()),
                _mm256_loadu_ps(center[2].as_ptr()),
            ]
        };
        // SAFETY: as above.
        let half = unsafe {
            [_mm256_loadu_ps(half[0].as_ptr()), _mm256_loadu_ps(half[1].as_ptr()), _mm256_loadu_ps(half[2].as_ptr())]
        };
        let sign = _mm256_set1_ps(-0.0);
        let largest = _mm256_set1_ps(f32::MAX);
        // Step 1: every input finite (a NaN fails the comparison).
        let mut finite = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
        for axis in 0..3 {
            finite = _mm256_and_ps(finite, _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_andnot_ps(sign, center[axis]), largest));
            finite = _mm256_and_ps(finite, _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_andnot_ps(sign, half[axis]), largest));
        }
        let half = [_mm256_andnot_ps(sign, half[0]), _mm256_andnot_ps(sign, half[1]), _mm256_andnot_ps(sign, half[2])];
        let size =
            [_mm256_andnot_ps(sign, center[0]), _mm256_andnot_ps(sign, center[1]), _mm256_andnot_ps(sign, center[2])];
        let rounding = _mm256_set1_ps(ROUNDING);
        // Step 2: per clip component, the centre's value and the reach of the half extents,
        // widened by the rounding bound of the terms' magnitudes.
        let mut low = [_mm256_setzero_ps(); 4];
        let mut high = [_mm256_setzero_ps(); 4];
        for row in 0..4 {
            let (values, abs) = (&rows.rows[row], &rows.abs[row]);
            let products = _mm256_add_ps(
                _mm256_mul_ps(_mm256_set1_ps(values[0]), center[0]),
                _mm256_mul_ps(_mm256_set1_ps(values[1]), center[1]),
            );
            let middle = _mm256_add_ps(
                _mm256_add_ps(products, _mm256_mul_ps(_mm256_set1_ps(values[2]), center[2])),
                _mm256_set1_ps(values[3]),
            );
            let reach = _mm256_add_ps(
                _mm256_add_ps(
                    _mm256_mul_ps(_mm256_set1_ps(abs[0]), half[0]),
                    _mm256_mul_ps(_mm256_set1_ps(abs[1]), half[1]),
                ),
                _mm256_mul_ps(_mm256_set1_ps(abs[2]), half[2]),
            );
            let magnitude = _mm256_add_ps(
                _mm256_add_ps(
                    _mm256_add_ps(
                        _mm256_mul_ps(_mm256_set1_ps(abs[0]), size[0]),
                        _mm256_mul_ps(_mm256_set1_ps(abs[1]), size[1]),
                    ),
                    _mm256_mul_ps(_mm256_set1_ps(abs[2]), size[2]),
                ),
                _mm256_set1_ps(abs[3]),
            );
            let slack = _mm256_mul_ps(_mm256_add_ps(magnitude, reach), rounding);
            low[row] = _mm256_sub_ps(_mm256_sub_ps(middle, reach), slack);
            high[row] = _mm256_add_ps(_mm256_add_ps(middle, reach), slack);
        }
        // Step 3: every corner beyond the camera plane and the near plane.
        let in_front = _mm256_cmp_ps::<_CMP_GT_OQ>(low[3], _mm256_set1_ps(MIN_W));
        let before_near = _mm256_cmp_ps::<_CMP_LT_OQ>(high[2], low[3]);
        let ok = _mm256_and_ps(finite, _mm256_and_ps(in_front, before_near));
        // Step 4: the inverses of the smallest and largest w.
        let one = _mm256_set1_ps(1.0);
        let (inverse_near, inverse_far) = (_mm256_div_ps(one, low[3]), _mm256_div_ps(one, high[3]));
        // Step 5: blendv takes its second operand where the mask (value >= 0) is set.
        let zero = _mm256_setzero_ps();
        let lower = |value: __m256| {
            let non_negative = _mm256_cmp_ps::<_CMP_GE_OQ>(value, zero);
            _mm256_mul_ps(value, _mm256_blendv_ps(inverse_near, inverse_far, non_negative))
        };
        let upper = |value: __m256| {
            let non_negative = _mm256_cmp_ps::<_CMP_GE_OQ>(value, zero);
            _mm256_mul_ps(value, _mm256_blendv_ps(inverse_far, inverse_near, non_negative))
        };
        ProjectedLanes {
            low: [lower(low[0]), lower(low[1])],
            high: [upper(high[0]), upper(high[1])],
            nearest: upper(high[2]),
            judgeable: ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn the_avx2_projection_matches_the_scalar_reference() {
        crate::kernels::coverage::report_occlusion("the_avx2_projection_matches_the_scalar_reference");
        if !crate::Kernel::Avx2.is_supported() {
            return;
        }
        let view = Mat4::look_at_rh(Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.0, 0.0, -10.0), Vec3::Y);
        let rows = Rows::new(&(Mat4::perspective_infinite_reverse_rh(1.1, 1.7, 0.1) * view));
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 60.0 - 30.0
        };
        for round in 0..2000 {
            let mut center = [[0.0f32; 8]; 3];
            let mut half = [[0.0f32; 8]; 3];
            for lane in 0..8 {
                for axis in 0..3 {
                    center[axis][lane] = next();
                    half[axis][lane] = next() * 0.2;
                }
            }
            // Bad inputs in some rounds: NaN, infinity, a box around the camera.
            match round % 7 {
                0 => center[1][3] = f32::NAN,
                1 => half[2][5] = f32::INFINITY,
                2 => center[0][6] = 1.0,
                _ => {}
            }
            let mut simd = [Projected::default(); 8];
            // SAFETY: AVX2 support was checked at the top of the test.
            unsafe {
                project_lanes_avx2(&rows, [&center[0], &center[1], &center[2]], [&half[0], &half[1], &half[2]])
                    .store(&mut simd)
            };
            for lane in 0..8 {
                let scalar = project_scalar(
                    &rows,
                    [center[0][lane], center[1][lane], center[2][lane]],
                    [half[0][lane], half[1][lane], half[2][lane]],
                );
                assert_eq!(scalar.judgeable, simd[lane].judgeable, "round {round} lane {lane}: judgeable");
                if scalar.judgeable {
                    let bits = |projected: &Projected| {
                        [projected.low[0], projected.low[1], projected.high[0], projected.high[1], projected.nearest]
                            .map(f32::to_bits)
                    };
                    assert_eq!(bits(&scalar), bits(&simd[lane]), "round {round} lane {lane}: bounds");
                }
            }
        }
    }

    /// The bounds contain every corner's exact (f64) projection, up to the rounding of the
    /// final divisions that the occlusion test's margins absorb, and a judgeable box has every
    /// corner in front; also for a camera far from the origin.
    #[test]
    fn the_bounds_contain_every_corner() {
        for origin in [Vec3::ZERO, Vec3::new(3000.0, 0.0, -2500.0)] {
            let view =
                Mat4::look_at_rh(origin + Vec3::new(-3.0, 4.0, 2.0), origin + Vec3::new(5.0, 0.0, -20.0), Vec3::Y);
            let matrix = Mat4::perspective_infinite_reverse_rh(1.2, 1.5, 0.1) * view;
            let rows = Rows::new(&matrix);
            let exact = matrix.as_dmat4();
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32
            };
            let mut judged = 0;
            for _ in 0..20_000 {
                let center = [next() * 80.0 - 40.0 + origin.x, next() * 20.0 - 5.0, next() * -120.0 + 10.0 + origin.z];
                let half = [next() * 6.0, next() * 6.0, next() * 6.0];
                let projected = project_scalar(&rows, center, half);
                let (mut low, mut high, mut nearest, mut in_front) = ([f64::MAX; 2], [f64::MIN; 2], f64::MIN, true);
                for corner in 0..8 {
                    let point = glam::DVec3::from_array([0, 1, 2].map(|axis| {
                        f64::from(center[axis])
                            + f64::from(half[axis]) * if corner >> axis & 1 == 1 { 1.0 } else { -1.0 }
                    }));
                    let clip = exact * point.extend(1.0);
                    in_front &= clip.w > 0.0 && clip.z < clip.w;
                    for axis in 0..2 {
                        low[axis] = low[axis].min(clip[axis] / clip.w);
                        high[axis] = high[axis].max(clip[axis] / clip.w);
                    }
                    nearest = nearest.max(clip.z / clip.w);
                }
                if !projected.judgeable {
                    continue;
                }
                judged += 1;
                assert!(in_front, "a judgeable box {center:?} {half:?} has every corner in front");
                let slack = |value: f64| 1.0e-6 * (1.0 + value.abs());
                for axis in 0..2 {
                    assert!(
                        f64::from(projected.low[axis]) <= low[axis] + slack(low[axis]),
                        "low {axis} of {center:?} {half:?}"
                    );
                    assert!(
                        f64::from(projected.high[axis]) >= high[axis] - slack(high[axis]),
                        "high {axis} of {center:?} {half:?}"
                    );
                }
                let nearest_bound = f64::from(projected.nearest);
                assert!(
                    nearest_bound * (1.0 + 1.0e-6) >= nearest,
                    "nearest of {center:?} {half:?}: {nearest_bound} < {nearest}"
                );
            }
            assert!(judged > 10_000, "most boxes are in front of the camera ({judged} judged from {origin})");
        }
    }
}

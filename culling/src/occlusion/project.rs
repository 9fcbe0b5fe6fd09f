//! Projecting an occludee's box: the screen rectangle of its eight corners and its nearest
//! depth, eight boxes at a time with AVX2 or one at a time with the scalar reference.
//!
//! [`project_scalar`] is the reference. `project_avx2` repeats its steps with the same
//! operations in the same order (separate multiplies and adds, never fused; one division
//! per corner) and `min`/`max` whose choices match the scalar comparisons, so both give the
//! same bits for every box they can judge.

use glam::Mat4;

/// Smallest `w` of a corner that still counts as in front of the camera plane.
pub(crate) const MIN_W: f32 = 1.0e-6;

/// The projected bounds of one box.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Projected {
    /// Smallest NDC `x`, `y` of the corners.
    pub low: [f32; 2],
    /// Largest NDC `x`, `y` of the corners.
    pub high: [f32; 2],
    /// Largest reversed-Z depth of the corners.
    pub nearest: f32,
    /// False when an input is not finite or a corner has `w <= MIN_W` or `z >= w` (at or
    /// before the near plane); the other fields then mean nothing.
    pub judgeable: bool,
}

/// The view-projection matrix by rows: `rows[r] = (m[0][r], m[1][r], m[2][r], m[3][r])`,
/// so clip component `r` of a point `p` is `((rows[r][0] px + rows[r][1] py) + rows[r][2]
/// pz) + rows[r][3]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows(pub [[f32; 4]; 4]);

impl Rows {
    pub fn new(matrix: &Mat4) -> Rows {
        Rows([0, 1, 2, 3].map(|row| matrix.row(row).to_array()))
    }
}

/// Projects the box of centre `center` and half extents `half` (signs ignored).
#[inline]
pub(crate) fn project_scalar(rows: &Rows, center: [f32; 3], half: [f32; 3]) -> Projected {
    // Step 1: every input finite (a NaN fails the comparison).
    let finite = center.iter().chain(half.iter()).all(|value| value.abs() <= f32::MAX);
    let half = half.map(f32::abs);
    // Step 2: the centre in clip space and the clip-space offsets of the three half axes.
    let mut middle = [0.0f32; 4];
    let mut axes = [[0.0f32; 4]; 3];
    for (row, values) in rows.0.iter().enumerate() {
        middle[row] = ((values[0] * center[0] + values[1] * center[1]) + values[2] * center[2]) + values[3];
        for axis in 0..3 {
            axes[axis][row] = values[axis] * half[axis];
        }
    }
    // Step 3: each clip component at the eight corners, by a butterfly over the axes in
    // the order x, y, z (corner bit `axis` set: plus that axis's offset), so corner `c`
    // gets ((middle +- x) +- y) +- z.
    let mut corners = [[0.0f32; 8]; 4];
    for (row, values) in corners.iter_mut().enumerate() {
        values[0] = middle[row];
        for (axis, offsets) in axes.iter().enumerate() {
            let done = 1 << axis;
            for corner in (0..done).rev() {
                let value = values[corner];
                values[corner] = value - offsets[row];
                values[corner + done] = value + offsets[row];
            }
        }
    }
    let [x, y, z, w] = corners;
    // Step 4: every corner beyond the camera and near planes; one division per corner.
    let mut ok = true;
    let mut inverse_w = [0.0f32; 8];
    for corner in 0..8 {
        ok &= w[corner] > MIN_W && z[corner] < w[corner];
        inverse_w[corner] = 1.0 / w[corner];
    }
    // Step 5: the rectangle and the nearest depth.
    let (mut low, mut high, mut nearest) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2], f32::NEG_INFINITY);
    for corner in 0..8 {
        let screen = [x[corner] * inverse_w[corner], y[corner] * inverse_w[corner]];
        let depth = z[corner] * inverse_w[corner];
        for axis in 0..2 {
            low[axis] = if screen[axis] < low[axis] { screen[axis] } else { low[axis] };
            high[axis] = if screen[axis] > high[axis] { screen[axis] } else { high[axis] };
        }
        nearest = if depth > nearest { depth } else { nearest };
    }
    Projected { low, high, nearest, judgeable: finite && ok }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub(crate) use avx2::project as project_avx2;

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2 {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    use super::{Projected, Rows, MIN_W};

    /// Projects eight boxes (centres and half extents by axis, eight lanes each); same steps
    /// as [`super::project_scalar`].
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn project(rows: &Rows, center: [&[f32; 8]; 3], half: [&[f32; 8]; 3], out: &mut [Projected; 8]) {
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
        // Steps 2 and 3: per clip component, the centre, then the butterfly over x, y, z.
        let mut corners = [[_mm256_setzero_ps(); 8]; 4];
        for (row, values) in rows.0.iter().enumerate() {
            let splat = [_mm256_set1_ps(values[0]), _mm256_set1_ps(values[1]), _mm256_set1_ps(values[2])];
            let products = _mm256_add_ps(_mm256_mul_ps(splat[0], center[0]), _mm256_mul_ps(splat[1], center[1]));
            let middle =
                _mm256_add_ps(_mm256_add_ps(products, _mm256_mul_ps(splat[2], center[2])), _mm256_set1_ps(values[3]));
            let component = &mut corners[row];
            component[0] = middle;
            for axis in 0..3 {
                let offset = _mm256_mul_ps(splat[axis], half[axis]);
                let done = 1 << axis;
                for corner in (0..done).rev() {
                    let value = component[corner];
                    component[corner] = _mm256_sub_ps(value, offset);
                    component[corner + done] = _mm256_add_ps(value, offset);
                }
            }
        }
        let [x, y, z, w] = corners;
        // Step 4: every corner beyond the camera and near planes; one division per corner.
        let mut ok = finite;
        let min_w = _mm256_set1_ps(MIN_W);
        let one = _mm256_set1_ps(1.0);
        let mut inverse_w = [_mm256_setzero_ps(); 8];
        for corner in 0..8 {
            let in_front = _mm256_cmp_ps::<_CMP_GT_OQ>(w[corner], min_w);
            ok = _mm256_and_ps(ok, _mm256_and_ps(in_front, _mm256_cmp_ps::<_CMP_LT_OQ>(z[corner], w[corner])));
            inverse_w[corner] = _mm256_div_ps(one, w[corner]);
        }
        // Step 5: the rectangle and the nearest depth. min_ps(a, b) is `a < b ? a : b`,
        // max_ps(a, b) is `a > b ? a : b`.
        let mut low = [_mm256_set1_ps(f32::INFINITY); 2];
        let mut high = [_mm256_set1_ps(f32::NEG_INFINITY); 2];
        let mut nearest = _mm256_set1_ps(f32::NEG_INFINITY);
        for corner in 0..8 {
            let screen = [_mm256_mul_ps(x[corner], inverse_w[corner]), _mm256_mul_ps(y[corner], inverse_w[corner])];
            let depth = _mm256_mul_ps(z[corner], inverse_w[corner]);
            for axis in 0..2 {
                low[axis] = _mm256_min_ps(screen[axis], low[axis]);
                high[axis] = _mm256_max_ps(screen[axis], high[axis]);
            }
            nearest = _mm256_max_ps(depth, nearest);
        }
        let mut lanes = [[0.0f32; 8]; 5];
        for (slot, value) in lanes.iter_mut().zip([low[0], low[1], high[0], high[1], nearest]) {
            // SAFETY: eight writable floats; storeu needs no alignment.
            unsafe { _mm256_storeu_ps(slot.as_mut_ptr(), value) };
        }
        let judgeable = _mm256_movemask_ps(ok);
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

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn the_avx2_projection_matches_the_scalar_reference() {
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
                project_avx2(&rows, [&center[0], &center[1], &center[2]], [&half[0], &half[1], &half[2]], &mut simd)
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
}

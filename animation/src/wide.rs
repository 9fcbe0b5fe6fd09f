//! Posing four rigs at once, one rig per SIMD lane: rigs of one skeleton playing one packed
//! clip (each at its own time) run the same instructions joint by joint, so every step, from
//! sampling to the skin matrices, is straight lane arithmetic with no shuffle inside a
//! matrix product. The animation system groups its rigs for this ([`WideRig`]); a rig that
//! cannot join a group (a crossfade, a clip that is not packed) is posed alone by
//! [`pose_rig`](crate::pose_rig).
//!
//! Each lane computes exactly what it would alone (the lanes never mix), so a rig's palette
//! does not depend on which rigs share its group: the same on one thread or many.

use glam::{Affine3A, BVec4A, Mat4, Quat, Vec3, Vec4};

use crate::track::KeySpan;
use ecs::Aabb;

use crate::{AnimationClip, JointBoxes, JointPose, Skeleton};

/// Rigs posed together.
pub(crate) const LANES: usize = 4;

/// One 3x4 affine matrix per lane: `cols[c][r]` is row `r` of column `c` (the x, y and z
/// axes, then the translation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct WideAffine {
    pub(crate) cols: [[Vec4; 3]; 4],
}

impl WideAffine {
    /// `self * rhs`, lane by lane.
    #[inline(always)]
    fn mul(&self, rhs: &WideAffine) -> WideAffine {
        let a = &self.cols;
        let column = |b: &[Vec4; 3]| {
            [
                a[0][0] * b[0] + a[1][0] * b[1] + a[2][0] * b[2],
                a[0][1] * b[0] + a[1][1] * b[1] + a[2][1] * b[2],
                a[0][2] * b[0] + a[1][2] * b[1] + a[2][2] * b[2],
            ]
        };
        let t = column(&rhs.cols[3]);
        WideAffine {
            cols: [
                column(&rhs.cols[0]),
                column(&rhs.cols[1]),
                column(&rhs.cols[2]),
                [t[0] + a[3][0], t[1] + a[3][1], t[2] + a[3][2]],
            ],
        }
    }

    /// One matrix in every lane.
    #[inline(always)]
    pub(crate) fn splat(matrix: &Affine3A) -> WideAffine {
        let column = |col: glam::Vec3A| [Vec4::splat(col.x), Vec4::splat(col.y), Vec4::splat(col.z)];
        WideAffine {
            cols: [
                column(matrix.matrix3.x_axis),
                column(matrix.matrix3.y_axis),
                column(matrix.matrix3.z_axis),
                column(matrix.translation),
            ],
        }
    }

    /// `translate * rotate * scale` per lane, with glam's quaternion-to-matrix terms.
    #[inline(always)]
    fn from_trs(translation: [Vec4; 3], rotation: [Vec4; 4], scale: [Vec4; 3]) -> WideAffine {
        let [x, y, z, w] = rotation;
        let (x2, y2, z2) = (x + x, y + y, z + z);
        let (xx, xy, xz) = (x * x2, x * y2, x * z2);
        let (yy, yz, zz) = (y * y2, y * z2, z * z2);
        let (wx, wy, wz) = (w * x2, w * y2, w * z2);
        let one = Vec4::ONE;
        let [sx, sy, sz] = scale;
        WideAffine {
            cols: [
                [(one - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx],
                [(xy - wz) * sy, (one - (xx + zz)) * sy, (yz + wx) * sy],
                [(xz + wy) * sz, (yz - wx) * sz, (one - (xx + yy)) * sz],
                translation,
            ],
        }
    }

    /// Lanes whose entries are all finite and sum to a finite value: a sum of finite entries
    /// so large that it overflows counts as not finite (the rig falls back to its bind pose,
    /// as a box that overflows does), which costs one addition an entry instead of a test.
    #[inline(always)]
    fn finite_mask(&self) -> BVec4A {
        let column = |col: &[Vec4; 3]| col[0] + col[1] + col[2];
        let sum = (column(&self.cols[0]) + column(&self.cols[1])) + (column(&self.cols[2]) + column(&self.cols[3]));
        // Zero for a finite sum, NaN for an infinite or NaN one.
        (sum * Vec4::ZERO).cmpeq(Vec4::ZERO)
    }

    /// Each lane's matrix as the palette holds it (4x4, column-major).
    #[inline(always)]
    fn lanes_as_mat4(&self) -> [Mat4; LANES] {
        let column = |col: usize, last: Vec4| {
            let rows = &self.cols[col];
            Mat4::from_cols(rows[0], rows[1], rows[2], last).transpose()
        };
        let (x, y, z) = (column(0, Vec4::ZERO), column(1, Vec4::ZERO), column(2, Vec4::ZERO));
        let t = column(3, Vec4::ONE);
        [
            Mat4::from_cols(x.x_axis, y.x_axis, z.x_axis, t.x_axis),
            Mat4::from_cols(x.y_axis, y.y_axis, z.y_axis, t.y_axis),
            Mat4::from_cols(x.z_axis, y.z_axis, z.z_axis, t.z_axis),
            Mat4::from_cols(x.w_axis, y.w_axis, z.w_axis, t.w_axis),
        ]
    }
}

/// Where each lane's time falls among the clip's keys: its two keys and the weight between.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WideSpan {
    /// Each lane's key at or before its time.
    pub start: [usize; LANES],
    /// Each lane's next key (its `start` at or past the last key).
    pub next: [usize; LANES],
    /// Each lane's weight from `start` to `next`.
    pub weight: Vec4,
}

/// [`crate::fast_slerp`] lane by lane, with the same terms as the scalar function (within
/// rounding of it: tested), on quaternions given component by component.
#[inline(always)]
pub(crate) fn fast_slerp_lanes(start: [Vec4; 4], end: [Vec4; 4], weight: Vec4) -> [Vec4; 4] {
    let dot = start[0] * end[0] + start[1] * end[1] + start[2] * end[2] + start[3] * end[3];
    let negative = dot.cmplt(Vec4::ZERO);
    let sign = Vec4::select(negative, Vec4::NEG_ONE, Vec4::ONE);
    let cosine = dot * sign;
    let centred = weight - Vec4::splat(0.5);
    let curve_a = Vec4::splat(1.0904)
        + cosine * (Vec4::splat(-3.2452) + cosine * (Vec4::splat(3.55645) - cosine * Vec4::splat(1.43519)));
    let curve_b = Vec4::splat(0.848013) + cosine * (Vec4::splat(-1.06021) + cosine * Vec4::splat(0.215638));
    let curve = curve_a * centred * centred + curve_b;
    let corrected = weight + weight * centred * (weight - Vec4::ONE) * curve;
    let keep = Vec4::ONE - corrected;
    let toward = sign * corrected;
    let [x, y, z, w] = [
        start[0] * keep + end[0] * toward,
        start[1] * keep + end[1] * toward,
        start[2] * keep + end[2] * toward,
        start[3] * keep + end[3] * toward,
    ];
    let scale = Vec4::ONE / sqrt_lanes(x * x + y * y + z * z + w * w);
    [x * scale, y * scale, z * scale, w * scale]
}

/// The square root of each lane.
#[inline(always)]
fn sqrt_lanes(value: Vec4) -> Vec4 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        // SAFETY: SSE2 is enabled for this target (checked by the cfg).
        unsafe { Vec4::from(std::arch::x86_64::_mm_sqrt_ps(value.into())) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        Vec4::new(value.x.sqrt(), value.y.sqrt(), value.z.sqrt(), value.w.sqrt())
    }
}

/// `values[offsets[lane]]` of each lane, transposed: component `c` of every lane in `[c]`.
#[inline(always)]
pub(crate) fn gather_quats(values: &[Quat], offsets: [usize; LANES]) -> [Vec4; 4] {
    let [a, b, c, d] = offsets;
    let (a, b, c, d) = (Vec4::from(values[a]), Vec4::from(values[b]), Vec4::from(values[c]), Vec4::from(values[d]));
    let transposed = Mat4::from_cols(a, b, c, d).transpose();
    [transposed.x_axis, transposed.y_axis, transposed.z_axis, transposed.w_axis]
}

/// [`gather_quats`] for three-component values.
#[inline(always)]
pub(crate) fn gather_vec3s(values: &[Vec3], offsets: [usize; LANES]) -> [Vec4; 3] {
    let [a, b, c, d] = offsets;
    let (a, b, c, d) = (values[a].extend(0.0), values[b].extend(0.0), values[c].extend(0.0), values[d].extend(0.0));
    let transposed = Mat4::from_cols(a, b, c, d).transpose();
    [transposed.x_axis, transposed.y_axis, transposed.z_axis]
}

/// One rig of a group: its clip time and the palette slice it writes.
pub(crate) struct WideRig<'a> {
    /// The clip time it samples.
    pub time: f32,
    /// Its palette slice, one entry per joint.
    pub palette: &'a mut [Mat4],
}

/// Scratch for [`pose_wide`]: one wide matrix per joint, and a palette for lanes no rig
/// fills. Grows to the largest skeleton once.
#[derive(Clone, Debug, Default)]
pub(crate) struct WideScratch {
    locals: Vec<WideAffine>,
    models: Vec<WideAffine>,
    skins: Vec<WideAffine>,
    spare: [Vec<Mat4>; LANES],
}

/// Poses up to [`LANES`] rigs of `skeleton` playing `clip` (packed: checked by the caller),
/// each at its own time, writing each rig's palette; the lanes from the first `None` on
/// repeat the first rig into spare palettes (lanes with a rig must come first). Returns, per
/// lane, the box of its mesh (`boxes`, shared by the rigs) moved by its palette
/// ([`JointBoxes::posed`], bit for bit), or `None` when a skin matrix is not finite (the
/// caller falls back to the rig's bind pose then, and for a box that is not finite).
///
/// # Panics
/// Without a first rig, with a clip that is not packed, or a palette slice shorter than the
/// skeleton.
pub(crate) fn pose_wide(
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; LANES] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked above).
        return unsafe { pose_wide_avx(skeleton, clip, boxes, rigs, scratch) };
    }
    pose_wide_lanes(skeleton, clip, boxes, rigs, scratch)
}

/// [`pose_wide`] compiled for AVX: the same operations (no fused multiply-add, so the same
/// results bit for bit), in three-operand instructions that need no register copies.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn pose_wide_avx(
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; LANES] {
    pose_wide_lanes(skeleton, clip, boxes, rigs, scratch)
}

/// The body of [`pose_wide`], inlined into each instruction-set variant.
#[inline(always)]
fn pose_wide_lanes(
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; LANES] {
    let count = skeleton.joint_count();
    let first_time = rigs[0].as_ref().expect("a group has a first rig").time;
    assert!(rigs.iter().flatten().all(|rig| rig.palette.len() >= count), "one palette entry per joint");
    let (packed, times, step) = clip.packed().expect("the caller groups packed clips only");
    if scratch.models.len() < count {
        scratch.models.resize(count, WideAffine::default());
        scratch.locals.resize(count, WideAffine::default());
        scratch.skins.resize(count, WideAffine::default());
    }
    // Lanes without a rig repeat the first rig's time into a spare palette.
    let lane_time = |lane: usize| rigs[lane].as_ref().map_or(first_time, |rig| rig.time);
    let spans = [0, 1, 2, 3].map(|lane| KeySpan::find(times, lane_time(lane), step));
    let last = times.len() - 1;
    let span = WideSpan {
        start: spans.map(|span| span.start),
        next: spans.map(|span| (span.start + 1).min(last)),
        weight: Vec4::from_array(spans.map(|span| span.weight)),
    };
    for (spare, _) in scratch.spare.iter_mut().zip(rigs.iter()).filter(|(_, rig)| rig.is_none()) {
        if spare.len() < count {
            spare.resize(count, Mat4::IDENTITY);
        }
    }
    // Sampling first, in a loop of its own: its joints do not depend on one another, so the
    // long square root and division of one joint overlap the next joint's.
    let locals = &mut scratch.locals[..count];
    for (joint, (local, rest)) in locals.iter_mut().zip(skeleton.rest()).enumerate() {
        let (translation, rotation, scale) = packed.sample_wide(joint, &span, rest);
        *local = WideAffine::from_trs(translation, rotation, scale);
    }
    let models = &mut scratch.models[..count];
    let skins = &mut scratch.skins[..count];
    let [spare_a, spare_b, spare_c, spare_d] = &mut scratch.spare;
    let [rig_a, rig_b, rig_c, rig_d] = rigs;
    let outs = [
        lane_output(rig_a, spare_a, count),
        lane_output(rig_b, spare_b, count),
        lane_output(rig_c, spare_c, count),
        lane_output(rig_d, spare_d, count),
    ];
    let [out_a, out_b, out_c, out_d] = outs;
    let mut finite = BVec4A::splat(true);
    for (joint, local) in locals.iter().enumerate() {
        let model = match skeleton.parent(joint) {
            Some(parent) => models[parent].mul(local),
            None => WideAffine::splat(skeleton.root_base(joint)).mul(local),
        };
        models[joint] = model;
        let skin = model.mul(skeleton.inverse_bind_lanes(joint));
        skins[joint] = skin;
        finite &= skin.finite_mask();
        let [a, b, c, d] = skin.lanes_as_mat4();
        out_a[joint] = a;
        out_b[joint] = b;
        out_c[joint] = c;
        out_d[joint] = d;
    }
    let bits = finite.bitmask();
    let bounds = boxes.posed_lanes(skins);
    [0, 1, 2, 3].map(|lane| (bits & (1 << lane) != 0).then_some(bounds[lane]))
}

/// Where a lane writes: its rig's palette, or a spare one for a lane without a rig.
#[inline(always)]
fn lane_output<'a>(rig: &'a mut Option<WideRig<'_>>, spare: &'a mut [Mat4], count: usize) -> &'a mut [Mat4] {
    match rig {
        Some(rig) => &mut rig.palette[..count],
        None => &mut spare[..count],
    }
}

/// The rest value of a property no track animates, in every lane.
#[inline(always)]
pub(crate) fn splat_rest(pose: &JointPose) -> ([Vec4; 3], [Vec4; 4], [Vec4; 3]) {
    let splat3 = |value: Vec3| [Vec4::splat(value.x), Vec4::splat(value.y), Vec4::splat(value.z)];
    let rotation = pose.rotation;
    (
        splat3(pose.translation),
        [Vec4::splat(rotation.x), Vec4::splat(rotation.y), Vec4::splat(rotation.z), Vec4::splat(rotation.w)],
        splat3(pose.scale),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fast_slerp;

    #[test]
    fn lanes_slerp_as_the_scalar_function_does() {
        let axis = Vec3::new(0.3, -0.8, 0.52).normalize();
        let start = Quat::from_rotation_x(0.4) * Quat::from_rotation_z(-1.1);
        for step in 0..=90 {
            let ends = [0, 1, 2, 3].map(|lane| {
                Quat::from_axis_angle(axis, (step * 4 + lane) as f32 / 360.0 * std::f32::consts::TAU) * start
            });
            for sample in 0..=16 {
                let weights = [0, 1, 2, 3].map(|lane| (sample as f32 + lane as f32 * 0.25) / 17.0);
                let lanes = |values: [Quat; LANES]| {
                    let [x, y, z, w] =
                        [0, 1, 2, 3].map(|axis| Vec4::from_array(values.map(|value| Vec4::from(value)[axis])));
                    [x, y, z, w]
                };
                let wide = fast_slerp_lanes(lanes([start; LANES]), lanes(ends), Vec4::from_array(weights));
                for lane in 0..LANES {
                    let scalar = fast_slerp(start, ends[lane], weights[lane]);
                    let got = Quat::from_xyzw(wide[0][lane], wide[1][lane], wide[2][lane], wide[3][lane]);
                    assert!(got.abs_diff_eq(scalar, 1e-6), "lane {lane}: {got:?} against {scalar:?}");
                }
            }
        }
    }
}

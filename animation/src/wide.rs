//! Posing four rigs at once, one rig per SIMD lane: rigs of one skeleton playing one packed
//! clip (each at its own time) run the same instructions joint by joint, so every step, from
//! sampling to the skin matrices, is straight lane arithmetic with no shuffle inside a
//! matrix product. The animation system groups its rigs for this ([`WideRig`]); a rig that
//! cannot join a group (a crossfade, a clip that is not packed) is posed alone by
//! [`pose_rig`](crate::pose_rig).
//!
//! Each lane computes exactly what it would alone (the lanes never mix), so a rig's palette
//! does not depend on which rigs share its group: the same on one thread or many.

use glam::{Affine3A, Vec3, Vec3A, Vec4};

use crate::bounds::LaneBounds;
use crate::lanes::Lanes;
use crate::track::KeySpan;
use ecs::Aabb;

use crate::{AnimationClip, JointBoxes, JointPose, Skeleton, SkinMatrix};

/// The most rigs posed together (the AVX width).
pub(crate) const MAX_LANES: usize = 8;

/// How many rigs pose together: four (SSE, and the fallback everywhere) or eight (AVX,
/// detected at run time). All give each rig the same palette, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneWidth {
    /// Four rigs, in `Vec4` lanes.
    Four,
    /// Eight rigs, in AVX registers.
    Eight,
    /// Eight rigs, the same 256-bit operations compiled for AVX-512 VL: its 32 vector
    /// registers hold a joint's matrices that the 16 of AVX spill to the stack.
    EightWithAvx512,
}

impl LaneWidth {
    /// The widest this CPU runs.
    #[inline]
    pub(crate) fn detect() -> LaneWidth {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512vl") {
            return LaneWidth::EightWithAvx512;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            return LaneWidth::Eight;
        }
        LaneWidth::Four
    }

    /// Rigs per group.
    #[inline]
    pub(crate) fn lanes(self) -> usize {
        match self {
            LaneWidth::Four => 4,
            LaneWidth::Eight | LaneWidth::EightWithAvx512 => 8,
        }
    }
}

/// One 3x4 affine matrix per lane: `cols[c][r]` is row `r` of column `c` (the x, y and z
/// axes, then the translation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct WideAffine<L> {
    pub(crate) cols: [[L; 3]; 4],
}

impl<L> WideAffine<L> {
    /// `self * rhs`, lane by lane.
    #[inline(always)]
    fn mul<const N: usize>(&self, rhs: &WideAffine<L>) -> WideAffine<L>
    where
        L: Lanes<N>,
    {
        let a = &self.cols;
        let t = rotate_column(a, &rhs.cols[3]);
        WideAffine {
            cols: [
                rotate_column(a, &rhs.cols[0]),
                rotate_column(a, &rhs.cols[1]),
                rotate_column(a, &rhs.cols[2]),
                [t[0] + a[3][0], t[1] + a[3][1], t[2] + a[3][2]],
            ],
        }
    }

    /// One matrix in every lane.
    #[inline(always)]
    pub(crate) fn splat<const N: usize>(matrix: &Affine3A) -> WideAffine<L>
    where
        L: Lanes<N>,
    {
        let column = |col: glam::Vec3A| [L::splat(col.x), L::splat(col.y), L::splat(col.z)];
        WideAffine {
            cols: [
                column(matrix.matrix3.x_axis),
                column(matrix.matrix3.y_axis),
                column(matrix.matrix3.z_axis),
                column(matrix.translation),
            ],
        }
    }

    /// A matrix splat in four lanes ([`WideAffine::splat`] as `Vec4`) in every lane.
    #[inline(always)]
    fn widen<const N: usize>(splat: &WideAffine<Vec4>) -> WideAffine<L>
    where
        L: Lanes<N>,
    {
        let [x, y, z, t] = &splat.cols;
        WideAffine { cols: [widen_rows(x), widen_rows(y), widen_rows(z), widen_rows(t)] }
    }

    /// Lanes whose entries are all finite and sum to a finite value: a sum of finite entries
    /// so large that it overflows counts as not finite (the rig falls back to its bind pose,
    /// as a box that overflows does), which costs one addition an entry instead of a test.
    #[inline(always)]
    fn finite_mask<const N: usize>(&self) -> L::Mask
    where
        L: Lanes<N>,
    {
        let column = |col: &[L; 3]| col[0] + col[1] + col[2];
        let sum = (column(&self.cols[0]) + column(&self.cols[1])) + (column(&self.cols[2]) + column(&self.cols[3]));
        // Zero for a finite sum, NaN for an infinite or NaN one.
        let zero = L::splat(0.0);
        (sum * zero).cmpeq(zero)
    }

    /// Each lane's matrix as the palette holds it (three rows, [`SkinMatrix`]), written to
    /// entry `joint` of that lane's palette: row `r` of every lane is one transpose of the
    /// four columns' `r`-th components.
    #[inline(always)]
    fn write_lanes<const N: usize>(&self, outs: &mut [&mut [SkinMatrix]; N], joint: usize)
    where
        L: Lanes<N>,
    {
        let [x, y, z, t] = &self.cols;
        let row = |r: usize| L::to_rows([x[r], y[r], z[r], t[r]]);
        let (first, second, third) = (row(0), row(1), row(2));
        for (lane, out) in outs.iter_mut().enumerate() {
            out[joint] = SkinMatrix::from_rows([first[lane], second[lane], third[lane]]);
        }
    }
}

/// The axes of `rotate * scale` per lane, with glam's quaternion-to-matrix terms.
#[inline(always)]
fn scaled_axes<L: Lanes<N>, const N: usize>(rotation: [L; 4], scale: [L; 3]) -> [[L; 3]; 3] {
    let [sx, sy, sz] = scale;
    let [x_axis, y_axis, z_axis] = rotation_axes(rotation);
    [scaled(x_axis, sx), scaled(y_axis, sy), scaled(z_axis, sz)]
}

/// The axes of `rotate` per lane: [`scaled_axes`] with a scale of one, the same bits (a
/// product by one is exact).
#[inline(always)]
fn rotation_axes<L: Lanes<N>, const N: usize>(rotation: [L; 4]) -> [[L; 3]; 3] {
    let [x, y, z, w] = rotation;
    let (x2, y2, z2) = (x + x, y + y, z + z);
    let (xx, xy, xz) = (x * x2, x * y2, x * z2);
    let (yy, yz, zz) = (y * y2, y * z2, z * z2);
    let (wx, wy, wz) = (w * x2, w * y2, w * z2);
    let one = L::splat(1.0);
    [[one - (yy + zz), xy + wz, xz - wy], [xy - wz, one - (xx + zz), yz + wx], [xz + wy, yz - wx, one - (xx + yy)]]
}

/// `axis` times `by`, lane by lane (a function, not a closure: see [`rotate_column`]).
#[inline(always)]
fn scaled<L: Lanes<N>, const N: usize>(axis: [L; 3], by: L) -> [L; 3] {
    [axis[0] * by, axis[1] * by, axis[2] * by]
}

/// Three splat rows widened to every lane.
#[inline(always)]
fn widen_rows<L: Lanes<N>, const N: usize>(rows: &[Vec4; 3]) -> [L; 3] {
    [L::widen(rows[0]), L::widen(rows[1]), L::widen(rows[2])]
}

/// The 3x3 part of `a` times column `b`. Functions here, not closures or array `map`s: those
/// are compiled without the caller's AVX, would keep AVX operations as calls, and are not
/// always inlined.
#[inline(always)]
fn rotate_column<L: Lanes<N>, const N: usize>(a: &[[L; 3]; 4], b: &[L; 3]) -> [L; 3] {
    [
        a[0][0] * b[0] + a[1][0] * b[1] + a[2][0] * b[2],
        a[0][1] * b[0] + a[1][1] * b[1] + a[2][1] * b[2],
        a[0][2] * b[0] + a[1][2] * b[1] + a[2][2] * b[2],
    ]
}

/// Where each lane's time falls among the clip's keys: its two keys and the weight between.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WideSpan<L, const N: usize> {
    /// Each lane's key at or before its time.
    pub start: [usize; N],
    /// Each lane's next key (its `start` at or past the last key).
    pub next: [usize; N],
    /// Each lane's weight from `start` to `next`, and the terms of it every joint shares.
    pub weight: BlendWeight<L>,
}

/// A weight per lane and the terms of it that every joint's blend uses, computed once a
/// group instead of once a joint (the same operations in the same order: the same bits).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlendWeight<L> {
    /// The weight of the second value.
    pub weight: L,
    /// The weight of the first value in a lerp, `1 - weight`.
    pub keep: L,
    /// `weight - 0.5`, the slerp correction's variable.
    centred: L,
    /// `weight * centred * (weight - 1)`, the slerp correction's factor.
    bend: L,
}

impl<L> BlendWeight<L> {
    /// The terms of `weight`.
    #[inline(always)]
    pub(crate) fn new<const N: usize>(weight: L) -> BlendWeight<L>
    where
        L: Lanes<N>,
    {
        let one = L::splat(1.0);
        let centred = weight - L::splat(0.5);
        BlendWeight { weight, keep: one - weight, centred, bend: weight * centred * (weight - one) }
    }
}

/// [`crate::fast_slerp`] lane by lane, with the same terms as the scalar function (within
/// rounding of it: tested), on quaternions given component by component. The posing calls
/// its two halves apart ([`fast_slerp_unnormalized_lanes`], [`normalize_lanes`]).
#[cfg(test)]
#[inline(always)]
pub(crate) fn fast_slerp_lanes<L: Lanes<N>, const N: usize>(start: [L; 4], end: [L; 4], weight: L) -> [L; 4] {
    normalize_lanes(fast_slerp_unnormalized_lanes(start, end, &BlendWeight::new(weight)))
}

/// Each lane's quaternion scaled to unit length (the last step of [`fast_slerp_lanes`]).
#[inline(always)]
pub(crate) fn normalize_lanes<L: Lanes<N>, const N: usize>(quat: [L; 4]) -> [L; 4] {
    let [x, y, z, w] = quat;
    let scale = L::splat(1.0) / (x * x + y * y + z * z + w * w).sqrt();
    [x * scale, y * scale, z * scale, w * scale]
}

/// [`fast_slerp_lanes`] but the normalization: the blend of the two quaternions, not yet of
/// unit length. Apart so the sampling can leave the long square root and division to a short
/// loop of their own, where the joints' latencies overlap.
#[inline(always)]
pub(crate) fn fast_slerp_unnormalized_lanes<L: Lanes<N>, const N: usize>(
    start: [L; 4],
    end: [L; 4],
    weight: &BlendWeight<L>,
) -> [L; 4] {
    let &BlendWeight { weight, centred, bend, .. } = weight;
    let dot = start[0] * end[0] + start[1] * end[1] + start[2] * end[2] + start[3] * end[3];
    let negative = dot.cmplt(L::splat(0.0));
    let sign = L::select(negative, L::splat(-1.0), L::splat(1.0));
    let cosine = dot * sign;
    let curve_a =
        L::splat(1.0904) + cosine * (L::splat(-3.2452) + cosine * (L::splat(3.55645) - cosine * L::splat(1.43519)));
    let curve_b = L::splat(0.848013) + cosine * (L::splat(-1.06021) + cosine * L::splat(0.215638));
    let curve = curve_a * centred * centred + curve_b;
    let one = L::splat(1.0);
    let corrected = weight + bend * curve;
    let keep = one - corrected;
    let toward = sign * corrected;
    [
        start[0] * keep + end[0] * toward,
        start[1] * keep + end[1] * toward,
        start[2] * keep + end[2] * toward,
        start[3] * keep + end[3] * toward,
    ]
}

/// The four lanes of a `Vec3A`, the fourth unspecified (callers drop it): no instruction on
/// SSE, where the two are the same register.
#[inline(always)]
pub(crate) fn as_vec4(value: Vec3A) -> Vec4 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        Vec4::from(std::arch::x86_64::__m128::from(value))
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        value.extend(0.0)
    }
}

/// One rig of a group: its clip time and the palette slice it writes.
pub(crate) struct WideRig<'a> {
    /// The clip time it samples.
    pub time: f32,
    /// Its palette slice, one entry per joint.
    pub palette: &'a mut [SkinMatrix],
}

/// One width's scratch: local and model matrices, one wide matrix per joint. Grows to the largest skeleton once.
#[derive(Clone, Debug, Default)]
struct LaneScratch<L> {
    /// Each joint's sampled rotation (not yet normalized) and scale; the translation goes
    /// straight into its local matrix.
    rotation_scale: Vec<([L; 4], [L; 3])>,
    locals: Vec<WideAffine<L>>,
    models: Vec<WideAffine<L>>,
}

/// Scratch for [`pose_wide`]: each width's, and a palette for lanes no rig fills.
#[derive(Clone, Debug, Default)]
pub(crate) struct WideScratch {
    four: LaneScratch<Vec4>,
    #[cfg(target_arch = "x86_64")]
    eight: LaneScratch<crate::lanes::F32x8>,
    spare: [Vec<SkinMatrix>; MAX_LANES],
}

/// Poses up to `width` rigs of `skeleton` playing `clip` (packed: checked by the caller),
/// each at its own time, writing each rig's palette; the lanes from the first `None` on
/// repeat the first rig into spare palettes (lanes with a rig must come first). Returns, per
/// lane, the box of its mesh (`boxes`, shared by the rigs) moved by its palette
/// ([`JointBoxes::posed`], bit for bit), or `None` when a skin matrix is not finite (the
/// caller falls back to the rig's bind pose then, and for a box that is not finite); lanes
/// past `width` are `None`.
///
/// # Panics
/// Without a first rig, with a rig past `width`, with a clip that is not packed, or a
/// palette slice shorter than the skeleton; with [`LaneWidth::Eight`] on a CPU without AVX.
pub(crate) fn pose_wide(
    width: LaneWidth,
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; MAX_LANES] {
    let mut posed = [None; MAX_LANES];
    match width {
        LaneWidth::Four => {
            let (four, rest) = rigs.split_at_mut(4);
            assert!(rest.iter().all(Option::is_none), "four rigs at most");
            let four: &mut [Option<WideRig<'_>>; 4] = four.try_into().expect("four lanes");
            let bounds = pose_wide_lanes(skeleton, clip, boxes, four, &mut scratch.four, &mut scratch.spare);
            posed[..4].copy_from_slice(&bounds);
        }
        LaneWidth::Eight => {
            #[cfg(target_arch = "x86_64")]
            {
                assert!(std::arch::is_x86_feature_detected!("avx"), "eight lanes need AVX");
                // SAFETY: the CPU has AVX (checked above).
                posed = unsafe { pose_wide_avx(skeleton, clip, boxes, rigs, scratch) };
            }
            #[cfg(not(target_arch = "x86_64"))]
            panic!("eight lanes need AVX");
        }
        LaneWidth::EightWithAvx512 => {
            #[cfg(target_arch = "x86_64")]
            {
                assert!(std::arch::is_x86_feature_detected!("avx512vl"), "this width needs AVX-512 VL");
                // SAFETY: the CPU has AVX-512 VL (checked above).
                posed = unsafe { pose_wide_avx512(skeleton, clip, boxes, rigs, scratch) };
            }
            #[cfg(not(target_arch = "x86_64"))]
            panic!("this width needs AVX-512 VL");
        }
    }
    posed
}

/// [`pose_wide`] for eight rigs in AVX registers: the same operations as four lanes (no fused
/// multiply-add, so the same results bit for bit), twice as many rigs an instruction.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn pose_wide_avx(
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; MAX_LANES] {
    pose_wide_lanes::<crate::lanes::F32x8, 8>(skeleton, clip, boxes, rigs, &mut scratch.eight, &mut scratch.spare)
}

/// [`pose_wide_avx`] compiled for AVX-512 VL ([`LaneWidth::EightWithAvx512`]): the same
/// operations, so the same results bit for bit, with twice the vector registers.
///
/// # Safety
/// The CPU must have AVX-512 VL.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx512f,avx512vl")]
unsafe fn pose_wide_avx512(
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; MAX_LANES],
    scratch: &mut WideScratch,
) -> [Option<Aabb>; MAX_LANES] {
    pose_wide_lanes::<crate::lanes::F32x8, 8>(skeleton, clip, boxes, rigs, &mut scratch.eight, &mut scratch.spare)
}

/// The body of [`pose_wide`] for one lane type, inlined into each entry point.
#[inline(always)]
fn pose_wide_lanes<L: Lanes<N>, const N: usize>(
    skeleton: &Skeleton,
    clip: &AnimationClip,
    boxes: &JointBoxes,
    rigs: &mut [Option<WideRig<'_>>; N],
    scratch: &mut LaneScratch<L>,
    spare: &mut [Vec<SkinMatrix>; MAX_LANES],
) -> [Option<Aabb>; N] {
    let count = skeleton.joint_count();
    let first_time = rigs[0].as_ref().expect("a group has a first rig").time;
    assert!(rigs.iter().flatten().all(|rig| rig.palette.len() >= count), "one palette entry per joint");
    let (packed, times, step) = clip.packed().expect("the caller groups packed clips only");
    if scratch.models.len() < count {
        let zero = WideAffine::<L>::splat(&Affine3A::ZERO);
        scratch.models.resize(count, zero);
        scratch.locals.resize(count, zero);
        scratch.rotation_scale.resize(count, ([zero.cols[0][0]; 4], zero.cols[0]));
    }
    // Lanes without a rig repeat the first rig's time into a spare palette.
    let lane_time = |lane: usize| rigs[lane].as_ref().map_or(first_time, |rig| rig.time);
    let spans: [KeySpan; N] = std::array::from_fn(|lane| KeySpan::find(times, lane_time(lane), step));
    let last = times.len() - 1;
    let span = WideSpan {
        start: spans.map(|span| span.start),
        next: spans.map(|span| (span.start + 1).min(last)),
        weight: BlendWeight::new(L::from_array(spans.map(|span| span.weight))),
    };
    for (spare, _) in spare.iter_mut().zip(rigs.iter()).filter(|(_, rig)| rig.is_none()) {
        if spare.len() < count {
            spare.resize(count, SkinMatrix::IDENTITY);
        }
    }
    // Sampling first, in loops of their own: the joints do not depend on one another. The
    // first gathers and blends the keys, each translation straight into its local matrix
    // (no copy through the stack); the second, short, normalizes the rotations and makes the
    // local matrices' axes: a short loop lets the processor overlap many joints' latencies.
    let rows = packed.key_rows(&span);
    let (rotation_scale, locals) = (&mut scratch.rotation_scale[..count], &mut scratch.locals[..count]);
    for (joint, ((sampled, local), rest)) in
        rotation_scale.iter_mut().zip(locals.iter_mut()).zip(skeleton.rest()).enumerate()
    {
        let (translation, rotation, scale) = packed.sample_wide(joint, &rows, &span, rest);
        *sampled = (rotation, scale);
        local.cols[3] = translation;
    }
    for (joint, (local, &(rotation, scale))) in locals.iter_mut().zip(rotation_scale.iter()).enumerate() {
        let rotation = normalize_lanes(rotation);
        // A scale of exactly one (not animated, one at rest: most joints) multiplies by
        // nothing: the same bits without nine products.
        let [x_axis, y_axis, z_axis] = if packed.animates_scale(joint) || skeleton.rest()[joint].scale != Vec3::ONE {
            scaled_axes(rotation, scale)
        } else {
            rotation_axes(rotation)
        };
        local.cols[0] = x_axis;
        local.cols[1] = y_axis;
        local.cols[2] = z_axis;
    }
    let models = &mut scratch.models[..count];
    let mut lanes = rigs.iter_mut().zip(spare.iter_mut()).map(|(rig, spare)| lane_output(rig, spare, count));
    let mut outs: [&mut [SkinMatrix]; N] = std::array::from_fn(|_| lanes.next().expect("a palette per lane"));
    let mut finite = L::mask_splat(true);
    let mut bounds = LaneBounds::<L, N>::new();
    for (joint, local) in locals.iter().enumerate() {
        let model = match skeleton.parent(joint) {
            Some(parent) => models[parent].mul(local),
            None => WideAffine::splat(skeleton.root_base(joint)).mul(local),
        };
        models[joint] = model;
        let skin = model.mul(&WideAffine::widen(skeleton.inverse_bind_lanes(joint)));
        skin.write_lanes(&mut outs, joint);
        // A joint with a box has its matrix tested by the box; only the others are tested here.
        if !bounds.add_joint(boxes, joint, &skin) {
            finite = finite & skin.finite_mask();
        }
    }
    let bits = L::bitmask(finite);
    let bounds = bounds.finish(boxes);
    std::array::from_fn(|lane| (bits & (1 << lane) != 0).then_some(bounds[lane]))
}

/// Where a lane writes: its rig's palette, or a spare one for a lane without a rig.
#[inline(always)]
fn lane_output<'a>(
    rig: &'a mut Option<WideRig<'_>>,
    spare: &'a mut [SkinMatrix],
    count: usize,
) -> &'a mut [SkinMatrix] {
    match rig {
        Some(rig) => &mut rig.palette[..count],
        None => &mut spare[..count],
    }
}

/// The rest value of a property no track animates, in every lane.
#[inline(always)]
pub(crate) fn splat_rest<L: Lanes<N>, const N: usize>(pose: &JointPose) -> ([L; 3], [L; 4], [L; 3]) {
    let splat3 = |value: Vec3| [L::splat(value.x), L::splat(value.y), L::splat(value.z)];
    let rotation = pose.rotation;
    (
        splat3(pose.translation),
        [L::splat(rotation.x), L::splat(rotation.y), L::splat(rotation.z), L::splat(rotation.w)],
        splat3(pose.scale),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fast_slerp;
    use glam::Quat;

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
                let lanes = |values: [Quat; 4]| {
                    let [x, y, z, w] =
                        [0, 1, 2, 3].map(|axis| Vec4::from_array(values.map(|value| Vec4::from(value)[axis])));
                    [x, y, z, w]
                };
                let wide = fast_slerp_lanes(lanes([start; 4]), lanes(ends), Vec4::from_array(weights));
                for lane in 0..4 {
                    let scalar = fast_slerp(start, ends[lane], weights[lane]);
                    let got = Quat::from_xyzw(wide[0][lane], wide[1][lane], wide[2][lane], wide[3][lane]);
                    assert!(got.abs_diff_eq(scalar, 1e-6), "lane {lane}: {got:?} against {scalar:?}");
                }
            }
        }
    }
}

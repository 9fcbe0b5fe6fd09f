//! Bounds of a skinned mesh in any pose: per-joint boxes of the vertices each joint moves,
//! computed once from the bind-pose vertices, moved by the pose's skin matrices.
//!
//! **Why the union is conservative.** Linear blend skinning puts a vertex `v` with joints
//! `j_k` and weights `w_k` (non-negative, summing to 1) at `v' = Σ w_k · (M_{j_k} v)`, where
//! `M_j` is joint `j`'s skin matrix (its palette entry, affine). For every `k` with `w_k > 0`,
//! `v` lies in joint `j_k`'s bind box `B_{j_k}` (the box of all the vertices that joint moves
//! with a positive weight), so `M_{j_k} v` lies in `M_{j_k}(B_{j_k})`, and that in the axis-aligned box of
//! the transformed box (Arvo's method gives exactly it). Terms with `w_k = 0` add nothing.
//! So `v'` is a convex combination of points of the union `U` of the moved boxes, and a box is
//! convex, so `v'` lies in `U`. No assumption on the matrices but that they are affine (the
//! skeleton refuses a projective inverse bind) and that the GPU skins with the same palette
//! and weights; the weights are renormalized at import so they sum to 1.

use ecs::Aabb;
use glam::{Affine3A, BVec3A, Vec3, Vec3A};

use crate::lanes::Lanes;
use crate::wide::WideAffine;
use crate::SkinMatrix;

/// Normalizes four skinning weights in place so they are non-negative and sum to 1; returns
/// `false` (leaving full weight on the first influence) when they sum to 0 or are not finite.
///
/// ```
/// let mut weights = [2.0, 2.0, 0.0, 0.0];
/// assert!(animation::normalize_weights(&mut weights));
/// assert_eq!(weights, [0.5, 0.5, 0.0, 0.0]);
/// let mut zero = [0.0; 4];
/// assert!(!animation::normalize_weights(&mut zero));
/// assert_eq!(zero, [1.0, 0.0, 0.0, 0.0]);
/// ```
pub fn normalize_weights(weights: &mut [f32; 4]) -> bool {
    for weight in weights.iter_mut() {
        *weight = if weight.is_finite() { weight.max(0.0) } else { 0.0 };
    }
    let sum: f32 = weights.iter().sum();
    if sum.is_nan() || sum <= 0.0 || !sum.is_finite() {
        *weights = [1.0, 0.0, 0.0, 0.0];
        return false;
    }
    weights.iter_mut().for_each(|weight| *weight /= sum);
    true
}

/// Per joint, the mesh-space box of the bind-pose vertices it moves with a positive weight;
/// [`JointBoxes::posed`] bounds the skinned mesh in a pose (see the module docs for why).
#[derive(Clone, Debug, PartialEq)]
pub struct JointBoxes {
    /// `(joint, centre, half extent)` of each joint that moves a vertex.
    boxes: Vec<(u16, Vec3, Vec3)>,
    /// The box of every vertex (the bind pose).
    bind: Aabb,
}

impl JointBoxes {
    /// The boxes of a mesh's vertices: positions, and per vertex four joints and weights
    /// (normalized as [`normalize_weights`] does). Joints past `joint_count` are ignored
    /// (the importer refuses them before). `None` without a vertex.
    pub fn from_vertices(
        positions: &[[f32; 3]],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        joint_count: usize,
    ) -> Option<JointBoxes> {
        let bind = Aabb::from_points(positions.iter().map(|&position| Vec3::from(position)))?;
        let mut mins = vec![Vec3::splat(f32::INFINITY); joint_count];
        let mut maxs = vec![Vec3::splat(f32::NEG_INFINITY); joint_count];
        for ((position, joints), weights) in positions.iter().zip(joints).zip(weights) {
            let position = Vec3::from(*position);
            for (&joint, &weight) in joints.iter().zip(weights) {
                let joint = usize::from(joint);
                if weight > 0.0 && joint < joint_count {
                    mins[joint] = mins[joint].min(position);
                    maxs[joint] = maxs[joint].max(position);
                }
            }
        }
        let boxes = (0..joint_count)
            .filter(|&joint| mins[joint].cmple(maxs[joint]).all())
            .map(|joint| (joint as u16, (mins[joint] + maxs[joint]) * 0.5, (maxs[joint] - mins[joint]) * 0.5))
            .collect();
        Some(JointBoxes { boxes, bind })
    }

    /// The box of the bind-pose vertices.
    pub fn bind_bounds(&self) -> Aabb {
        self.bind
    }

    /// Number of joints that move some vertex.
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// Whether no joint moves a vertex.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// The largest joint index that moves a vertex, plus one (a palette must be this long).
    pub fn joints_needed(&self) -> usize {
        self.boxes.last().map_or(0, |&(joint, ..)| usize::from(joint) + 1)
    }

    /// The box of the skinned mesh under `palette` (one skin matrix per joint): the union of
    /// each joint's box moved by its matrix (Arvo's method). Conservative for every vertex
    /// (module docs). A non-finite matrix gives a non-finite box. The bind box when no joint
    /// moves a vertex.
    ///
    /// # Panics
    /// When `palette` is shorter than [`JointBoxes::joints_needed`].
    #[inline]
    pub fn posed(&self, palette: &[SkinMatrix]) -> Aabb {
        self.posed_by(|joint| palette[joint].columns())
    }

    /// [`JointBoxes::posed`] for skin matrices held as [`Affine3A`]: the same box, bit for
    /// bit, as `posed` gives for the same matrices as palette entries.
    ///
    /// # Panics
    /// When `skins` is shorter than [`JointBoxes::joints_needed`].
    #[inline]
    pub fn posed_affine(&self, skins: &[Affine3A]) -> Aabb {
        self.posed_by(|joint| {
            let skin = &skins[joint];
            [skin.matrix3.x_axis, skin.matrix3.y_axis, skin.matrix3.z_axis, skin.translation]
        })
    }

    /// The union of the moved boxes, each joint's matrix given by `columns` (its three axes
    /// and translation). The NaN test is a mask or-ed over every box and read once at the
    /// end, with no branch per joint.
    #[inline(always)]
    fn posed_by(&self, columns: impl Fn(usize) -> [Vec3A; 4]) -> Aabb {
        if self.boxes.is_empty() {
            return self.bind;
        }
        let mut min = Vec3A::splat(f32::INFINITY);
        let mut max = Vec3A::splat(f32::NEG_INFINITY);
        let mut nan = BVec3A::splat(false);
        for &(joint, center, half) in &self.boxes {
            let [x_axis, y_axis, z_axis, translation] = columns(usize::from(joint));
            // The order of `Affine3A::transform_point3a`, so both entry points agree bit for bit.
            let moved = x_axis * center.x + y_axis * center.y + z_axis * center.z + translation;
            let extent = x_axis.abs() * half.x + y_axis.abs() * half.y + z_axis.abs() * half.z;
            nan |= moved.is_nan_mask() | extent.is_nan_mask();
            min = min.min(moved - extent);
            max = max.max(moved + extent);
        }
        // `min`/`max` skip NaN; keep it visible instead, as the culls expect.
        if nan.any() {
            return Aabb::new(Vec3::NAN, Vec3::NAN);
        }
        Aabb::new(min.into(), max.into())
    }
}

/// [`JointBoxes::posed`] for `N` rigs at once, one per lane, gathered joint by joint while
/// the group posing makes each joint's skin matrices ([`crate::wide`]), so they are used
/// while in registers rather than stored and read back: per lane the same box, bit for bit,
/// as `posed` gives for that lane's matrices (the same terms, in the same joint order).
pub(crate) struct LaneBounds<L: Lanes<N>, const N: usize> {
    min: [L; 3],
    max: [L; 3],
    /// The sum of every moved box's upper corner: NaN or infinite once a moved box was not
    /// finite (a NaN that `min`/`max` would skip stays here), one addition a row instead of
    /// two NaN tests; a sum of finite corners that overflows counts as not finite too.
    sum: L,
    /// Joint boxes added so far.
    added: usize,
}

impl<L: Lanes<N>, const N: usize> LaneBounds<L, N> {
    /// No box yet.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        LaneBounds {
            min: [L::splat(f32::INFINITY); 3],
            max: [L::splat(f32::NEG_INFINITY); 3],
            sum: L::splat(0.0),
            added: 0,
        }
    }

    /// Adds joint `joint`'s box of `boxes` moved by `skin` (the joint's matrix in every lane),
    /// if the joint moves a vertex; returns whether it did. Every entry of `skin` reaches the
    /// moved box, so an added joint whose matrix is not finite makes its lanes' boxes not
    /// finite ([`LaneBounds::finish`]): the caller need not test that matrix itself. Joints
    /// must come in increasing order, each once.
    #[inline(always)]
    pub(crate) fn add_joint(&mut self, boxes: &JointBoxes, joint: usize, skin: &WideAffine<L>) -> bool {
        let Some(&(box_joint, center, half)) = boxes.boxes.get(self.added) else {
            return false;
        };
        if usize::from(box_joint) != joint {
            return false;
        }
        self.added += 1;
        let [x_axis, y_axis, z_axis, translation] = &skin.cols;
        let (cx, cy, cz) = (L::splat(center.x), L::splat(center.y), L::splat(center.z));
        let (hx, hy, hz) = (L::splat(half.x), L::splat(half.y), L::splat(half.z));
        for row in 0..3 {
            let moved = x_axis[row] * cx + y_axis[row] * cy + z_axis[row] * cz + translation[row];
            let extent = x_axis[row].abs() * hx + y_axis[row].abs() * hy + z_axis[row].abs() * hz;
            let high = moved + extent;
            self.sum = self.sum + high;
            self.min[row] = self.min[row].min(moved - extent);
            self.max[row] = self.max[row].max(high);
        }
        true
    }

    /// Each lane's box: NaN where a moved box was not finite (or the corners' sum overflows),
    /// the bind box when no joint moves a vertex.
    ///
    /// # Panics
    /// When a joint box was not added (its joint is past the skeleton: the palette is
    /// shorter than [`JointBoxes::joints_needed`]).
    #[inline(always)]
    pub(crate) fn finish(self, boxes: &JointBoxes) -> [Aabb; N] {
        assert_eq!(self.added, boxes.boxes.len(), "every joint box has its joint in the skeleton");
        if boxes.boxes.is_empty() {
            return [boxes.bind; N];
        }
        // Zero times a finite sum is zero; times an infinite or NaN one, NaN.
        let zero = L::splat(0.0);
        let nan = !L::bitmask((self.sum * zero).cmpeq(zero));
        std::array::from_fn(|lane| {
            if nan & (1 << lane) != 0 {
                return Aabb::new(Vec3::NAN, Vec3::NAN);
            }
            let corner = |rows: &[L; 3]| Vec3::new(rows[0].lane(lane), rows[1].lane(lane), rows[2].lane(lane));
            Aabb::new(corner(&self.min), corner(&self.max))
        })
    }
}

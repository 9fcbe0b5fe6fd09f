//! A skeleton: joints in parent-before-child order, each with its parent, rest pose, inverse
//! bind matrix and name, and the fingerprint clips are matched against.

use glam::{Affine3A, BVec3A, Mat4};

use crate::wide::WideAffine;
use crate::{AnimationError, JointPose, SkinMatrix};

/// Most joints one skeleton may have: vertex joint indices are 16-bit.
pub const MAX_JOINTS: usize = u16::MAX as usize;

/// A rig's joint hierarchy and bind data. Joints come parents first (a joint's parent has a
/// smaller index), so one forward walk computes every joint's model matrix.
///
/// The skinning matrix of joint `j` (its palette entry) is `model(j) * inverse_bind(j)`, where
/// `model(j) = model(parent) * local(j)` and a root's `model` is `root_base(j) * local(j)`:
/// the transform of what holds the root (the glTF nodes above it). It takes a vertex from
/// mesh space, where the bind pose put it, to rig space, where the pose puts it.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    name: String,
    names: Vec<String>,
    parents: Vec<Option<u16>>,
    rest: Vec<JointPose>,
    inverse_binds: Vec<Mat4>,
    /// The inverse binds as 3x4 affine matrices (they are affine: checked by `new`), what the
    /// posing multiplies by.
    inverse_bind_affines: Vec<Affine3A>,
    /// The inverse binds in every lane, what the four-rig posing multiplies by.
    inverse_bind_lanes: Vec<WideAffine<glam::Vec4>>,
    root_bases: Vec<Affine3A>,
    fingerprint: u64,
}

impl Skeleton {
    /// A skeleton named `name` from its joints: per joint its name, its parent (an earlier
    /// joint, or `None` for a root), its rest local pose and its inverse bind matrix; roots sit
    /// at the origin of rig space (see [`Skeleton::with_root_bases`]).
    ///
    /// Refused ([`AnimationError::BadSkeleton`], naming the skeleton and joint): no joint,
    /// more than [`MAX_JOINTS`], lists of different lengths, a parent that is not an earlier
    /// joint, a non-finite rest pose, or an inverse bind matrix that is not finite and affine
    /// (last row `0 0 0 1`; the posed bounds rely on affine skin matrices).
    pub fn new(
        name: impl Into<String>,
        names: Vec<String>,
        parents: Vec<Option<usize>>,
        rest: Vec<JointPose>,
        inverse_binds: Vec<Mat4>,
    ) -> Result<Skeleton, AnimationError> {
        let name = name.into();
        let count = names.len();
        let bad =
            |joint: usize, reason: &'static str| AnimationError::BadSkeleton { skeleton: name.clone(), joint, reason };
        if count == 0 || count > MAX_JOINTS {
            return Err(bad(0, "a skeleton has between 1 and 65535 joints"));
        }
        if parents.len() != count || rest.len() != count || inverse_binds.len() != count {
            return Err(bad(0, "names, parents, rest poses and inverse binds need one entry per joint"));
        }
        let mut packed = Vec::with_capacity(count);
        for (joint, parent) in parents.iter().enumerate() {
            match parent {
                Some(parent) if *parent >= joint => return Err(bad(joint, "a parent must come before its child")),
                Some(parent) => packed.push(Some(*parent as u16)),
                None => packed.push(None),
            }
        }
        if let Some(joint) = rest.iter().position(|pose| !pose.is_finite()) {
            return Err(bad(joint, "the rest pose is not finite"));
        }
        if let Some(joint) = inverse_binds.iter().position(|matrix| !is_affine(matrix)) {
            return Err(bad(joint, "the inverse bind matrix is not finite and affine"));
        }
        let fingerprint = fingerprint_of(&names, &packed);
        let inverse_bind_affines: Vec<Affine3A> = inverse_binds.iter().copied().map(Affine3A::from_mat4).collect();
        let inverse_bind_lanes = inverse_bind_affines.iter().map(WideAffine::splat).collect();
        Ok(Skeleton {
            name,
            names,
            parents: packed,
            rest,
            inverse_binds,
            inverse_bind_affines,
            inverse_bind_lanes,
            root_bases: vec![Affine3A::IDENTITY; count],
            fingerprint,
        })
    }

    /// Places each root joint under `bases[j]` (the transform of what holds it, in rig space;
    /// ignored for joints with a parent). Refused when the count differs or a base is not
    /// finite.
    pub fn with_root_bases(mut self, bases: Vec<Affine3A>) -> Result<Skeleton, AnimationError> {
        let bad = |joint, reason| AnimationError::BadSkeleton { skeleton: self.name.clone(), joint, reason };
        if bases.len() != self.joint_count() {
            return Err(bad(0, "one root base per joint"));
        }
        if let Some(joint) = bases.iter().position(|base| !base.is_finite()) {
            return Err(bad(joint, "a root base is not finite"));
        }
        self.root_bases = bases;
        Ok(self)
    }

    /// Its name (clips name the skeleton they were made for).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of joints.
    #[inline]
    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// The joints' names.
    pub fn joint_names(&self) -> &[String] {
        &self.names
    }

    /// The joint named `name`, if any.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|joint| joint == name)
    }

    /// Each joint's parent (an earlier joint), `None` for a root.
    pub fn parent(&self, joint: usize) -> Option<usize> {
        self.parents[joint].map(usize::from)
    }

    /// What holds root joint `joint` (the identity for a joint with a parent).
    #[inline]
    pub(crate) fn root_base(&self, joint: usize) -> &Affine3A {
        &self.root_bases[joint]
    }

    /// Joint `joint`'s inverse bind matrix in every lane.
    #[inline]
    pub(crate) fn inverse_bind_lanes(&self, joint: usize) -> &WideAffine<glam::Vec4> {
        &self.inverse_bind_lanes[joint]
    }

    /// The rest local poses.
    #[inline]
    pub fn rest(&self) -> &[JointPose] {
        &self.rest
    }

    /// The inverse bind matrices (mesh space to each joint's bind space).
    #[inline]
    pub fn inverse_binds(&self) -> &[Mat4] {
        &self.inverse_binds
    }

    /// A hash of the joint names and the hierarchy: a clip made for a skeleton of the same
    /// joints and parents plays on this one.
    #[inline]
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Model (rig-space) matrices of every joint from local poses, parents first. `locals`
    /// and `models` hold one entry per joint.
    #[inline]
    pub fn model_matrices(&self, locals: &[JointPose], models: &mut [Affine3A]) {
        let count = self.joint_count();
        assert!(
            locals.len() >= count && models.len() >= count,
            "skeleton '{}': one pose and matrix per joint",
            self.name
        );
        for joint in 0..count {
            let local = locals[joint].to_affine();
            models[joint] = match self.parents[joint] {
                Some(parent) => models[usize::from(parent)] * local,
                None => self.root_bases[joint] * local,
            };
        }
    }

    /// The skinning palette from model matrices: `model(j) * inverse_bind(j)` per joint.
    #[inline]
    pub fn palette_from_models(&self, models: &[Affine3A], palette: &mut [SkinMatrix]) {
        for ((entry, model), inverse_bind) in palette.iter_mut().zip(models).zip(&self.inverse_binds) {
            *entry = SkinMatrix::from_mat4(&(Mat4::from(*model) * *inverse_bind));
        }
    }

    /// Model matrices and skin matrices (`model * inverse_bind`) of every joint from local
    /// poses, in one pass parents first, all 3x4 affine: what [`Skeleton::model_matrices`]
    /// and [`Skeleton::palette_from_models`] compute, without the 4x4 products. `locals`,
    /// `models` and `skins` hold one entry per joint. Returns whether every skin matrix is
    /// finite.
    #[inline]
    pub fn skin_matrices(&self, locals: &[JointPose], models: &mut [Affine3A], skins: &mut [Affine3A]) -> bool {
        self.walk_skins(locals, models, |joint, skin| skins[joint] = *skin)
    }

    /// [`Skeleton::skin_matrices`] writing each skin matrix straight into `palette` as its
    /// rows (the same values): the palette is written in the walk, while the matrix is in
    /// registers, rather than in a second pass over a scratch copy. Returns whether every skin
    /// matrix is finite (the caller overwrites the palette when not).
    #[inline]
    pub(crate) fn skin_palette(
        &self,
        locals: &[JointPose],
        models: &mut [Affine3A],
        palette: &mut [SkinMatrix],
    ) -> bool {
        let palette = &mut palette[..self.joint_count()];
        self.walk_skins(locals, models, |joint, skin| palette[joint] = SkinMatrix::from_affine(skin))
    }

    /// The walk behind [`Skeleton::skin_matrices`]: parents first, each joint's model matrix
    /// from its parent's (or its root base), its skin matrix handed to `write`. The finite
    /// test is a mask and-ed over every matrix and read once at the end, with no branch per
    /// joint.
    #[inline(always)]
    fn walk_skins(
        &self,
        locals: &[JointPose],
        models: &mut [Affine3A],
        mut write: impl FnMut(usize, &Affine3A),
    ) -> bool {
        let count = self.joint_count();
        assert!(
            locals.len() >= count && models.len() >= count,
            "skeleton '{}': one pose and two matrices per joint",
            self.name
        );
        let (locals, models) = (&locals[..count], &mut models[..count]);
        let (parents, root_bases, inverse_binds) =
            (&self.parents[..count], &self.root_bases[..count], &self.inverse_bind_affines[..count]);
        let mut finite = BVec3A::splat(true);
        for joint in 0..count {
            let local = locals[joint].to_affine();
            let base = match parents[joint] {
                Some(parent) => &models[usize::from(parent)],
                None => &root_bases[joint],
            };
            let model = *base * local;
            models[joint] = model;
            let skin = model * inverse_binds[joint];
            finite &= skin.matrix3.x_axis.is_finite_mask()
                & skin.matrix3.y_axis.is_finite_mask()
                & skin.matrix3.z_axis.is_finite_mask()
                & skin.translation.is_finite_mask();
            write(joint, &skin);
        }
        finite.all()
    }

    /// The palette of the rest pose.
    pub fn rest_palette(&self) -> Vec<SkinMatrix> {
        let mut models = vec![Affine3A::IDENTITY; self.joint_count()];
        self.model_matrices(&self.rest, &mut models);
        let mut palette = vec![SkinMatrix::IDENTITY; self.joint_count()];
        self.palette_from_models(&models, &mut palette);
        palette
    }
}

/// Whether `matrix` is finite with the last row `0 0 0 1`.
pub(crate) fn is_affine(matrix: &Mat4) -> bool {
    matrix.is_finite() && matrix.row(3) == glam::Vec4::W
}

/// FNV-1a over the joint count, names and parents.
fn fingerprint_of(names: &[String], parents: &[Option<u16>]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(PRIME);
        }
    };
    eat(&(names.len() as u64).to_le_bytes());
    for (name, parent) in names.iter().zip(parents) {
        eat(name.as_bytes());
        eat(&[0xFF]);
        eat(&parent.map_or(u16::MAX, |parent| parent).to_le_bytes());
    }
    hash
}

//! Posing one rig: sample its clips, blend them, walk the joints parents first, write the
//! palette slice, and bound the skin. The animation system calls [`pose_rig`] once per rig
//! (in parallel over rigs); it is public so tools and benches pose rigs without a world.

use ecs::Aabb;
use glam::Affine3A;

use crate::wide::WideScratch;
use crate::{AnimationPlayer, JointBoxes, JointPose, Skeleton, SkinMatrix};

/// Scratch arrays for posing rigs, reused from rig to rig (one per thread): they grow to the
/// largest skeleton once and then allocate nothing.
#[derive(Clone, Debug, Default)]
pub struct PoseScratch {
    locals: Vec<JointPose>,
    fading: Vec<JointPose>,
    models: Vec<Affine3A>,
    /// The animation system's rigs that pose in groups: the place of the group key in
    /// `group_keys` and the row, packed to sort as one integer.
    pub(crate) grouped: Vec<u32>,
    /// The group keys a chunk of rigs met.
    pub(crate) group_keys: Vec<GroupKey>,
    /// The group posing's scratch.
    pub(crate) wide: WideScratch,
}

/// What rigs posed together share: their clip, skeleton and joint boxes (by address).
pub(crate) type GroupKey = (usize, usize, usize);

/// How a rig came out of [`pose_rig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoseOutcome {
    /// Posed by its player's clips (or its rest pose without a player).
    Posed,
    /// A clip gave a non-finite joint transform (or a box too far to hold): the rig was put in
    /// its bind pose.
    NonFinite,
}

/// Poses one rig: its local poses from `player`'s clip (and crossfade, blended per joint by
/// the fade's weight), else the rest pose; a clip that does not fit `skeleton` is left out
/// (the system refuses it by name, once). Writes `palette` (one skin matrix per joint:
/// `model * inverse_bind`) and returns the box of the skinned mesh from `boxes` with
/// `palette`. A non-finite joint transform puts the whole rig
/// in its bind pose ([`PoseOutcome::NonFinite`]): never a NaN box or palette.
///
/// # Panics
/// When `palette` is not one entry per joint.
#[inline]
pub fn pose_rig(
    skeleton: &Skeleton,
    boxes: &JointBoxes,
    player: Option<&AnimationPlayer>,
    palette: &mut [SkinMatrix],
    scratch: &mut PoseScratch,
) -> (Aabb, PoseOutcome) {
    let count = skeleton.joint_count();
    assert_eq!(palette.len(), count, "skeleton '{}': one palette entry per joint", skeleton.name());
    let PoseScratch { locals, fading, models, .. } = scratch;
    if locals.len() < count {
        locals.resize(count, JointPose::IDENTITY);
        fading.resize(count, JointPose::IDENTITY);
        models.resize(count, Affine3A::IDENTITY);
    }
    let (locals, fading, models) = (&mut locals[..count], &mut fading[..count], &mut models[..count]);
    locals.copy_from_slice(skeleton.rest());
    if let Some(player) = player {
        if player.clip.fits(skeleton) {
            player.clip.sample(player.time, locals);
        }
        if let Some(fade) = player.crossfade.as_ref().filter(|fade| fade.clip.fits(skeleton)) {
            fading.copy_from_slice(skeleton.rest());
            fade.clip.sample(fade.time, fading);
            let weight = fade.weight.clamp(0.0, 1.0);
            for (local, target) in locals.iter_mut().zip(fading.iter()) {
                *local = local.blend(target, weight);
            }
        }
    }
    // One pass over the joints for model and skin matrices (3x4), each skin written to the
    // palette (as rows) as it is made; then the box from the palette while it is in cache. A
    // non-finite matrix or box overwrites the whole slice with the bind pose.
    let finite = skeleton.skin_palette(locals, models, palette);
    bound_rig(boxes, palette, finite)
}

/// The box of a rig whose palette was just written (`finite`: whether every matrix is), or
/// its bind pose (palette and box) when a matrix or the box is not finite.
#[inline]
pub(crate) fn bound_rig(boxes: &JointBoxes, palette: &mut [SkinMatrix], finite: bool) -> (Aabb, PoseOutcome) {
    let bounds = finite.then(|| boxes.posed(palette));
    keep_or_bind(boxes, palette, bounds)
}

/// The posed box `bounds` of a rig whose palette was just written (`None`: a matrix was not
/// finite), or its bind pose (palette and box) when there is none or it is not finite.
#[inline]
pub(crate) fn keep_or_bind(
    boxes: &JointBoxes,
    palette: &mut [SkinMatrix],
    bounds: Option<Aabb>,
) -> (Aabb, PoseOutcome) {
    match bounds {
        // Finite matrices can still overflow a far box: that falls back too.
        Some(bounds) if bounds.is_finite() => (bounds, PoseOutcome::Posed),
        _ => bind_pose(boxes, palette),
    }
}

/// The bind pose: every skin matrix the identity (the pose the inverse binds undo), the
/// bind box.
#[cold]
fn bind_pose(boxes: &JointBoxes, palette: &mut [SkinMatrix]) -> (Aabb, PoseOutcome) {
    palette.fill(SkinMatrix::IDENTITY);
    (boxes.bind_bounds(), PoseOutcome::NonFinite)
}

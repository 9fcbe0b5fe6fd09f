//! Skeletal animation: skeletons and clips (as the glTF importer makes them), their sampling
//! (LINEAR, STEP and CUBICSPLINE, as glTF defines them), and the animation system that poses
//! every rig on the job system each frame.
//!
//! - Data: [`Skeleton`] (joints parents first, rest poses, inverse binds), [`AnimationClip`]
//!   (per-joint [`Track`]s), [`JointBoxes`] (per joint, the box of the vertices it moves).
//! - Components: [`SkinnedMesh`] (the joint boxes of what the entity draws), [`Skin`] (its
//!   skeleton and palette slice), [`AnimationPlayer`] (what plays, with a [`Crossfade`]).
//! - The [`animation_system`] (Input stage) writes the [`SkinPalette`] (one flat array of skin
//!   matrices, [`SkinMatrix`]: the GPU's 48-byte rows, each rig's slice
//!   `skin_first .. skin_first + skin_count`) and each rig's
//!   [`ecs::SkinnedPose`]: the union of its joint boxes moved by its skin matrices, which
//!   bounds every skinned vertex (the argument is in [`JointBoxes`]' module), and which the
//!   Visibility stage culls with.

#![warn(missing_docs)]

mod bounds;
mod clip;
mod components;
mod error;
mod lanes;
mod packed;
mod palette;
mod pose;
mod posing;
mod skeleton;
mod skin_matrix;
mod system;
mod track;
mod wide;

pub use bounds::{normalize_weights, JointBoxes};
pub use clip::{AnimationClip, JointTracks};
pub use components::{AnimationPlayer, Crossfade, PoseWhenSeen, Skin, SkinnedMesh};
pub use error::AnimationError;
pub use palette::{PaletteRig, SkinPalette, PALETTE_ENTRY_BYTES};
pub use pose::JointPose;
pub use posing::{pose_rig, PoseOutcome, PoseScratch};
pub use skeleton::{Skeleton, MAX_JOINTS};
pub use skin_matrix::SkinMatrix;
pub use system::{animation_system, AnimationReport, ANIMATION_SYSTEM};
pub use track::{fast_slerp, Interpolation, Track, TrackValue, SLERP_ERROR_BOUND};

use runtime::{App, Stage};

/// Adds animation to `app`: the [`SkinPalette`] and [`AnimationReport`] resources and the
/// [`animation_system`] in [`Stage::Input`]. Calling it again does nothing.
pub fn install(app: &mut App) {
    if app.resources().contains::<SkinPalette>() {
        return;
    }
    app.insert_resource(SkinPalette::new());
    app.insert_resource(AnimationReport::default());
    app.add_system(Stage::Input, animation_system());
}

#[cfg(test)]
mod tests;

//! glTF animations as engine clips: each animation becomes one [`AnimationClip`] for the skin
//! whose joints it moves (the skin of its first translation, rotation or scale channel's node).
//!
//! Translation, rotation and scale channels are read with their samplers (LINEAR, STEP,
//! CUBICSPLINE; outputs in floats or, for rotations, normalized integers). Skipped, with one
//! warning per file for each kind: morph-target weight channels (the engine has no morph
//! targets), channels of nodes outside that skin, and animations that move no joint.
//! Malformed samplers (times not increasing, an output count that does not fit the
//! interpolation) are [`ImportError::Animation`].

use std::collections::BTreeMap;
use std::sync::Arc;

use animation::{AnimationClip, Interpolation, JointTracks, Track};
use glam::{Quat, Vec3};
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::Property;

use super::accessors::read_checked;
use super::error::ImportError;
use super::skins::GltfSkin;
use super::views::ViewBytes;

/// An animation of the file, as an engine clip.
#[derive(Clone, Debug)]
pub struct GltfAnimation {
    /// The clip.
    pub clip: Arc<AnimationClip>,
    /// The skin it animates, an index into [`GltfScene::skins`](super::GltfScene::skins).
    pub skin: usize,
}

const TIME_TYPES: &[(DataType, bool)] = &[(DataType::F32, false)];
const VECTOR_TYPES: &[(DataType, bool)] = &[(DataType::F32, false)];
const ROTATION_TYPES: &[(DataType, bool)] =
    &[(DataType::F32, false), (DataType::I8, true), (DataType::U8, true), (DataType::I16, true), (DataType::U16, true)];

/// What was left out, for one warning per kind.
#[derive(Default)]
struct Skipped {
    morph_channels: usize,
    foreign_channels: usize,
    jointless_animations: usize,
}

/// Every animation of the document that moves a skin's joints.
pub(crate) fn read_animations(
    document: &gltf::Document,
    views: &[ViewBytes<'_>],
    skins: &[GltfSkin],
) -> Result<Vec<GltfAnimation>, ImportError> {
    check_references(document)?;
    let mut skipped = Skipped::default();
    let mut out = Vec::new();
    for animation in document.animations() {
        if let Some(read) = read_animation(&animation, views, skins, &mut skipped)? {
            out.push(read);
        }
    }
    if skipped.morph_channels > 0 {
        log::warn!("{} morph-target weight channels skipped: the engine has no morph targets", skipped.morph_channels);
    }
    if skipped.foreign_channels > 0 {
        log::warn!(
            "{} animation channels skipped: their nodes are not joints of the animated skin",
            skipped.foreign_channels
        );
    }
    if skipped.jointless_animations > 0 {
        log::warn!("{} animations skipped: they move no skin's joints", skipped.jointless_animations);
    }
    Ok(out)
}

fn read_animation(
    animation: &gltf::Animation<'_>,
    views: &[ViewBytes<'_>],
    skins: &[GltfSkin],
    skipped: &mut Skipped,
) -> Result<Option<GltfAnimation>, ImportError> {
    let index = animation.index();
    let fail = |reason: String| ImportError::Animation { animation: index, reason };
    let moving = |channel: &gltf::animation::Channel<'_>| channel.target().property() != Property::MorphTargetWeights;
    let skin = animation.channels().filter(moving).find_map(|channel| {
        let node = channel.target().node().index();
        skins.iter().position(|skin| skin.joint_nodes.contains(&node))
    });
    let Some(skin) = skin else {
        skipped.morph_channels += animation.channels().filter(|channel| !moving(channel)).count();
        skipped.jointless_animations += 1;
        return Ok(None);
    };
    let skeleton = &skins[skin].skeleton;
    let mut joints: BTreeMap<u16, JointTracks> = BTreeMap::new();
    for channel in animation.channels() {
        let property = channel.target().property();
        if property == Property::MorphTargetWeights {
            skipped.morph_channels += 1;
            continue;
        }
        let node = channel.target().node().index();
        let Some(joint) = skins[skin].joint_nodes.iter().position(|&joint| joint == node) else {
            skipped.foreign_channels += 1;
            continue;
        };
        let sampler = channel.sampler();
        let interpolation = match sampler.interpolation() {
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let times: Vec<[f32; 1]> =
            read_checked(&sampler.input(), views, Dimensions::Scalar, TIME_TYPES, "sampler input")?;
        let times: Vec<f32> = times.into_iter().map(|[time]| time).collect();
        let output = sampler.output();
        let bad_track = |error: animation::AnimationError| fail(format!("channel {}: {error}", channel.index()));
        let entry =
            joints.entry(joint as u16).or_insert_with(|| JointTracks { joint: joint as u16, ..JointTracks::default() });
        match property {
            Property::Translation | Property::Scale => {
                let values: Vec<[f32; 3]> =
                    read_checked(&output, views, Dimensions::Vec3, VECTOR_TYPES, "sampler output")?;
                let track = Track::new(interpolation, times, values.into_iter().map(Vec3::from).collect())
                    .map_err(bad_track)?;
                if property == Property::Translation {
                    entry.translation = Some(track);
                } else {
                    entry.scale = Some(track);
                }
            }
            Property::Rotation => {
                let values: Vec<[f32; 4]> =
                    read_checked(&output, views, Dimensions::Vec4, ROTATION_TYPES, "sampler output")?;
                // Key values are unit quaternions; tangents (cubic) are kept as stored.
                let cubic = interpolation == Interpolation::CubicSpline;
                let values = values
                    .into_iter()
                    .enumerate()
                    .map(|(slot, value)| {
                        let quat = Quat::from_array(value);
                        let is_key = !cubic || slot % 3 == 1;
                        if is_key && quat.length_squared() > 0.0 {
                            quat.normalize()
                        } else {
                            quat
                        }
                    })
                    .collect();
                entry.rotation = Some(Track::new(interpolation, times, values).map_err(bad_track)?);
            }
            // Counted and skipped before the joint was looked up.
            Property::MorphTargetWeights => {}
        }
    }
    let name = animation.name().map_or_else(|| format!("animation{index}"), String::from);
    let clip =
        AnimationClip::new(name, skeleton, joints.into_values().collect()).map_err(|error| fail(error.to_string()))?;
    Ok(Some(GltfAnimation { clip: Arc::new(clip), skin }))
}

/// Checks every index an animation names (channel samplers and nodes, sampler accessors)
/// before the `gltf` crate's accessors, which panic on a dangling one, are used.
fn check_references(document: &gltf::Document) -> Result<(), ImportError> {
    let root = document.as_json();
    for (index, animation) in root.animations.iter().enumerate() {
        let fail = |reason: &str| Err(ImportError::Animation { animation: index, reason: reason.to_owned() });
        for channel in &animation.channels {
            if channel.sampler.value() >= animation.samplers.len() {
                return fail("a channel names a sampler the animation does not have");
            }
            if channel.target.node.value() >= root.nodes.len() {
                return fail("a channel targets a node the file does not have");
            }
            if !matches!(channel.target.path, gltf::json::validation::Checked::Valid(_)) {
                return fail("a channel's target path is not translation, rotation, scale or weights");
            }
        }
        for sampler in &animation.samplers {
            if sampler.input.value() >= root.accessors.len() || sampler.output.value() >= root.accessors.len() {
                return fail("a sampler names an accessor the file does not have");
            }
            if !matches!(sampler.interpolation, gltf::json::validation::Checked::Valid(_)) {
                return fail("a sampler's interpolation is not LINEAR, STEP or CUBICSPLINE");
            }
        }
    }
    Ok(())
}

//! An animation clip: per-joint translation, rotation and scale tracks for one skeleton, and
//! sampling them into local poses.

use glam::{Quat, Vec3};

use crate::packed::PackedTracks;
use crate::track::KeySpan;
use crate::{AnimationError, JointPose, Skeleton, Track};

/// The tracks of one joint (each optional: a joint keeps what a missing track would set).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointTracks {
    /// The joint, an index into its skeleton.
    pub joint: u16,
    /// Its translation over time.
    pub translation: Option<Track<Vec3>>,
    /// Its rotation over time.
    pub rotation: Option<Track<Quat>>,
    /// Its scale over time.
    pub scale: Option<Track<Vec3>>,
}

/// A named clip for one skeleton: tracks for some of its joints, and a duration (the last key
/// of any track). It plays only on a skeleton of the same joints and hierarchy (matched by
/// [`Skeleton::fingerprint`]); on another it is refused by name
/// ([`AnimationError::WrongSkeleton`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AnimationClip {
    name: String,
    skeleton: String,
    joint_count: usize,
    fingerprint: u64,
    duration: f32,
    joints: Vec<JointTracks>,
    /// The key times every track shares, when they all do (exporters usually sample every
    /// channel at the same times): one key search per sample instead of one per track.
    shared: Option<SharedKeys>,
}

/// Key times shared by every track of a clip, and their step when evenly spaced.
#[derive(Clone, Debug, PartialEq)]
struct SharedKeys {
    times: Vec<f32>,
    step: Option<f32>,
    /// The tracks packed key-major, when they are all LINEAR.
    packed: Option<PackedTracks>,
}

impl SharedKeys {
    fn of(joints: &[JointTracks]) -> Option<SharedKeys> {
        let mut all = joints.iter().flat_map(|tracks| {
            [
                tracks.translation.as_ref().map(Track::times),
                tracks.rotation.as_ref().map(Track::times),
                tracks.scale.as_ref().map(Track::times),
            ]
        });
        let first = all.next().flatten().or_else(|| all.find_map(|times| times))?;
        if !all.flatten().all(|times| times == first) || first.len() < 2 {
            return None;
        }
        let step = (first[first.len() - 1] - first[0]) / (first.len() - 1) as f32;
        let even = step > 0.0
            && first
                .iter()
                .enumerate()
                .all(|(key, &time)| (time - (first[0] + step * key as f32)).abs() <= step * 1e-3);
        let packed = PackedTracks::of(joints, first);
        Some(SharedKeys { times: first.to_vec(), step: even.then_some(step), packed })
    }
}

impl AnimationClip {
    /// A clip named `name` of `joints` for `skeleton`. Refused ([`AnimationError::BadTrack`])
    /// when a joint index lies outside the skeleton or a joint has two entries.
    pub fn new(
        name: impl Into<String>,
        skeleton: &Skeleton,
        mut joints: Vec<JointTracks>,
    ) -> Result<AnimationClip, AnimationError> {
        joints.sort_by_key(|tracks| tracks.joint);
        if joints.last().is_some_and(|tracks| usize::from(tracks.joint) >= skeleton.joint_count()) {
            return Err(AnimationError::BadTrack("a track names a joint the skeleton does not have"));
        }
        if joints.windows(2).any(|pair| pair[0].joint == pair[1].joint) {
            return Err(AnimationError::BadTrack("a joint has two entries of tracks"));
        }
        let duration = joints
            .iter()
            .flat_map(|tracks| {
                [
                    tracks.translation.as_ref().map(Track::end),
                    tracks.rotation.as_ref().map(Track::end),
                    tracks.scale.as_ref().map(Track::end),
                ]
            })
            .flatten()
            .fold(0.0_f32, f32::max);
        let shared = SharedKeys::of(&joints);
        Ok(AnimationClip {
            name: name.into(),
            skeleton: skeleton.name().to_owned(),
            joint_count: skeleton.joint_count(),
            fingerprint: skeleton.fingerprint(),
            duration,
            joints,
            shared,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name of the skeleton it was made for.
    pub fn skeleton_name(&self) -> &str {
        &self.skeleton
    }

    /// Its length in seconds (the last key of any track; 0 for a clip without tracks).
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The joints it animates, in joint order.
    pub fn joint_tracks(&self) -> &[JointTracks] {
        &self.joints
    }

    /// Whether it plays on `skeleton` (same joints and hierarchy).
    #[inline]
    pub fn fits(&self, skeleton: &Skeleton) -> bool {
        self.fingerprint == skeleton.fingerprint() && self.joint_count == skeleton.joint_count()
    }

    /// `Ok` when it plays on `skeleton`, else [`AnimationError::WrongSkeleton`] naming both.
    pub fn check_skeleton(&self, skeleton: &Skeleton) -> Result<(), AnimationError> {
        if self.fits(skeleton) {
            Ok(())
        } else {
            Err(AnimationError::WrongSkeleton {
                clip: self.name.clone(),
                made_for: self.skeleton.clone(),
                skeleton: skeleton.name().to_owned(),
            })
        }
    }

    /// Its tracks packed key-major, with the key times they share and their step when even:
    /// `None` unless every track is LINEAR on the same times.
    #[inline]
    pub(crate) fn packed(&self) -> Option<(&PackedTracks, &[f32], Option<f32>)> {
        let shared = self.shared.as_ref()?;
        Some((shared.packed.as_ref()?, &shared.times, shared.step))
    }

    /// Writes the clip's value at `time` (seconds, clamped to its keys) into `poses`, one
    /// local pose per joint of its skeleton: each track sets its own property, and what no
    /// track animates keeps the value `poses` held (start from [`Skeleton::rest`]).
    ///
    /// # Panics
    /// When `poses` is shorter than the skeleton.
    #[inline]
    pub fn sample(&self, time: f32, poses: &mut [JointPose]) {
        assert!(poses.len() >= self.joint_count, "clip '{}': one pose per joint of '{}'", self.name, self.skeleton);
        if let Some(shared) = &self.shared {
            let span = KeySpan::find(&shared.times, time, shared.step);
            if let Some(packed) = &shared.packed {
                packed.sample(span, poses);
                return;
            }
            for tracks in &self.joints {
                let pose = &mut poses[usize::from(tracks.joint)];
                if let Some(track) = &tracks.translation {
                    pose.translation = track.sample_in(span);
                }
                if let Some(track) = &tracks.rotation {
                    pose.rotation = track.sample_in(span);
                }
                if let Some(track) = &tracks.scale {
                    pose.scale = track.sample_in(span);
                }
            }
            return;
        }
        for tracks in &self.joints {
            let pose = &mut poses[usize::from(tracks.joint)];
            if let Some(track) = &tracks.translation {
                pose.translation = track.sample(time);
            }
            if let Some(track) = &tracks.rotation {
                pose.rotation = track.sample(time);
            }
            if let Some(track) = &tracks.scale {
                pose.scale = track.sample(time);
            }
        }
    }
}

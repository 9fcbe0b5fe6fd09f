//! A clip's LINEAR tracks packed key-major: for each key, every animated joint's rotation side
//! by side (and likewise translations and scales), so sampling a clip is three straight loops
//! over two contiguous runs of values instead of one key search and three sampler dispatches
//! per joint.

use glam::{Quat, Vec3};

use crate::track::KeySpan;
use crate::{Interpolation, JointPose, JointTracks, Track, TrackValue};

/// One property of every joint that animates it, key-major: key `k` of the `n`-th joint in
/// `joints` is `values[k * joints.len() + n]`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Column<T> {
    joints: Vec<u16>,
    values: Vec<T>,
}

impl<T: TrackValue> Column<T> {
    /// The column of the tracks `track_of` picks; every picked track has `keys` keys.
    fn of<'a>(
        tracks: &'a [JointTracks],
        keys: usize,
        track_of: impl Fn(&'a JointTracks) -> Option<&'a Track<T>>,
    ) -> Self {
        let picked: Vec<(u16, &Track<T>)> =
            tracks.iter().filter_map(|joint| track_of(joint).map(|track| (joint.joint, track))).collect();
        let joints = picked.iter().map(|&(joint, _)| joint).collect();
        let values = (0..keys).flat_map(|key| picked.iter().map(move |(_, track)| track.key(key))).collect();
        Column { joints, values }
    }

    /// Writes each joint's value inside `span` with `write` (what [`Track::sample_in`] gives
    /// for a LINEAR track: the key itself on a key or past the last, else the interpolation).
    #[inline]
    fn sample(&self, span: KeySpan, keys: usize, poses: &mut [JointPose], write: impl Fn(&mut JointPose, T)) {
        let width = self.joints.len();
        if width == 0 {
            return;
        }
        let start = span.start.min(keys - 1);
        let here = &self.values[start * width..(start + 1) * width];
        if start + 1 >= keys || span.weight == 0.0 {
            for (&joint, &value) in self.joints.iter().zip(here) {
                write(&mut poses[usize::from(joint)], value);
            }
            return;
        }
        let next = &self.values[(start + 1) * width..(start + 2) * width];
        for ((&joint, &value), &target) in self.joints.iter().zip(here).zip(next) {
            write(&mut poses[usize::from(joint)], value.interpolate(target, span.weight));
        }
    }
}

/// Every track of a clip, packed key-major (see the module docs). Only for clips whose tracks
/// all share their key times and are all LINEAR (what exporters write for a sampled clip);
/// others sample track by track.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PackedTracks {
    keys: usize,
    translations: Column<Vec3>,
    rotations: Column<Quat>,
    scales: Column<Vec3>,
}

impl PackedTracks {
    /// The packed tracks of `tracks` whose times all equal `times`, or `None` when a track is
    /// not LINEAR.
    pub(crate) fn of(tracks: &[JointTracks], times: &[f32]) -> Option<PackedTracks> {
        let linear =
            |interpolation: Option<Interpolation>| interpolation.is_none_or(|mode| mode == Interpolation::Linear);
        let all_linear = tracks.iter().all(|joint| {
            linear(joint.translation.as_ref().map(Track::interpolation))
                && linear(joint.rotation.as_ref().map(Track::interpolation))
                && linear(joint.scale.as_ref().map(Track::interpolation))
        });
        if !all_linear {
            return None;
        }
        let keys = times.len();
        Some(PackedTracks {
            keys,
            translations: Column::of(tracks, keys, |joint| joint.translation.as_ref()),
            rotations: Column::of(tracks, keys, |joint| joint.rotation.as_ref()),
            scales: Column::of(tracks, keys, |joint| joint.scale.as_ref()),
        })
    }

    /// Writes every animated property at `span` into `poses` (one per joint of the skeleton).
    #[inline]
    pub(crate) fn sample(&self, span: KeySpan, poses: &mut [JointPose]) {
        self.rotations.sample(span, self.keys, poses, |pose, rotation| pose.rotation = rotation);
        self.translations.sample(span, self.keys, poses, |pose, translation| pose.translation = translation);
        self.scales.sample(span, self.keys, poses, |pose, scale| pose.scale = scale);
    }
}

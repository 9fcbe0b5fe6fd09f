//! A clip's LINEAR tracks packed key-major: for each key, every animated joint's rotation side
//! by side (and likewise translations and scales), so sampling a clip is three straight loops
//! over two contiguous runs of values instead of one key search and three sampler dispatches
//! per joint.

use glam::{Quat, Vec3A, Vec4};

use crate::lanes::Lanes;
use crate::track::KeySpan;
use crate::wide::{as_vec4, fast_slerp_unnormalized_lanes, splat_rest, WideSpan};
use crate::{Interpolation, JointPose, JointTracks, Track, TrackValue};

/// One property of every joint that animates it, key-major: key `k` of the `n`-th joint in
/// `joints` is `values[k * joints.len() + n]`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Column<T> {
    joints: Vec<u16>,
    values: Vec<T>,
}

/// A value as a column holds it: rotations as they are, translations and scales as `Vec3A`
/// (16 bytes, so the group posing loads each in one instruction).
trait ColumnValue: Copy {
    /// [`TrackValue::interpolate`] of the value it holds (the same operations: the same bits).
    fn interpolate(self, other: Self, weight: f32) -> Self;
}

impl ColumnValue for Quat {
    #[inline]
    fn interpolate(self, other: Self, weight: f32) -> Self {
        TrackValue::interpolate(self, other, weight)
    }
}

impl ColumnValue for Vec3A {
    #[inline]
    fn interpolate(self, other: Self, weight: f32) -> Self {
        // `Vec3::lerp`'s terms.
        self.lerp(other, weight)
    }
}

impl<T: ColumnValue> Column<T> {
    /// The column of the tracks `track_of` picks; every picked track has `keys` keys.
    fn of<'a, V: TrackValue>(
        tracks: &'a [JointTracks],
        keys: usize,
        track_of: impl Fn(&'a JointTracks) -> Option<&'a Track<V>>,
    ) -> Self
    where
        T: From<V>,
    {
        let picked: Vec<(u16, &Track<V>)> =
            tracks.iter().filter_map(|joint| track_of(joint).map(|track| (joint.joint, track))).collect();
        let joints = picked.iter().map(|&(joint, _)| joint).collect();
        let values = (0..keys).flat_map(|key| picked.iter().map(move |(_, track)| T::from(track.key(key)))).collect();
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
    translations: Column<Vec3A>,
    rotations: Column<Quat>,
    scales: Column<Vec3A>,
    /// Per joint, its place in the translation, rotation and scale columns ([`NOT_ANIMATED`]
    /// where no track sets that property); joints past the end animate nothing.
    slots: Vec<[u32; 3]>,
}

/// A slot of a joint property no track animates.
const NOT_ANIMATED: u32 = u32::MAX;

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
        let translations = Column::of(tracks, keys, |joint| joint.translation.as_ref());
        let rotations = Column::of(tracks, keys, |joint| joint.rotation.as_ref());
        let scales = Column::of(tracks, keys, |joint| joint.scale.as_ref());
        let joints = tracks.iter().map(|joint| usize::from(joint.joint) + 1).max().unwrap_or(0);
        let mut slots = vec![[NOT_ANIMATED; 3]; joints];
        for (property, column) in [&translations.joints, &rotations.joints, &scales.joints].into_iter().enumerate() {
            for (slot, &joint) in column.iter().enumerate() {
                slots[usize::from(joint)][property] = slot as u32;
            }
        }
        Some(PackedTracks { keys, translations, rotations, scales, slots })
    }

    /// Writes every animated property at `span` into `poses` (one per joint of the skeleton).
    #[inline]
    pub(crate) fn sample(&self, span: KeySpan, poses: &mut [JointPose]) {
        self.rotations.sample(span, self.keys, poses, |pose, rotation| pose.rotation = rotation);
        self.translations.sample(span, self.keys, poses, |pose, translation| pose.translation = translation.into());
        self.scales.sample(span, self.keys, poses, |pose, scale| pose.scale = scale.into());
    }

    /// Whether a track animates `joint`'s scale.
    #[inline(always)]
    pub(crate) fn animates_scale(&self, joint: usize) -> bool {
        self.slots.get(joint).is_some_and(|slots| slots[2] != NOT_ANIMATED)
    }

    /// Each lane's key rows of every column at `span`, for [`PackedTracks::sample_wide`].
    ///
    /// # Panics
    /// When a key of `span` is past the clip's keys.
    #[inline(always)]
    pub(crate) fn key_rows<L, const N: usize>(&self, span: &WideSpan<L, N>) -> WideKeyRows<'_, N> {
        WideKeyRows {
            translations: LaneRows::new(&self.translations, span),
            rotations: LaneRows::new(&self.rotations, span),
            scales: LaneRows::new(&self.scales, span),
        }
    }

    /// Every lane's translation, rotation and scale of `joint` at its span (lanes: one rig
    /// each, see [`crate::wide`]; `rows`: [`PackedTracks::key_rows`] of that span); a property
    /// no track animates keeps `rest`. The rotation is not yet of unit length: the caller
    /// normalizes it ([`normalize_lanes`](crate::wide::normalize_lanes)).
    #[inline(always)]
    pub(crate) fn sample_wide<L: Lanes<N>, const N: usize>(
        &self,
        joint: usize,
        rows: &WideKeyRows<'_, N>,
        span: &WideSpan<L, N>,
        rest: &JointPose,
    ) -> ([L; 3], [L; 4], [L; 3]) {
        let (mut translation, mut rotation, mut scale) = splat_rest(rest);
        let Some(&[t, r, s]) = self.slots.get(joint) else {
            return (translation, rotation, scale);
        };
        if r != NOT_ANIMATED {
            let (start, end) = rows.rotations.gather(r as usize, Vec4::from);
            rotation = fast_slerp_unnormalized_lanes(L::from_rows(start), L::from_rows(end), &span.weight);
        }
        if t != NOT_ANIMATED {
            translation = lerp_wide(&rows.translations, t as usize, span);
        }
        if s != NOT_ANIMATED {
            scale = lerp_wide(&rows.scales, s as usize, span);
        }
        (translation, rotation, scale)
    }
}

/// Each lane's key rows of a clip's three columns at its span: found once a group, so that
/// a joint's gather is one load a lane, with no index arithmetic and one bounds test.
pub(crate) struct WideKeyRows<'a, const N: usize> {
    translations: LaneRows<'a, Vec3A, N>,
    rotations: LaneRows<'a, Quat, N>,
    scales: LaneRows<'a, Vec3A, N>,
}

/// One column's rows at each lane's two keys: `start[lane]` and `next[lane]` hold every
/// animated joint's value at that lane's keys, `width` values each.
struct LaneRows<'a, T, const N: usize> {
    width: usize,
    start: [&'a [T]; N],
    next: [&'a [T]; N],
}

impl<'a, T: Copy, const N: usize> LaneRows<'a, T, N> {
    /// The rows of `column` at each lane's keys of `span`.
    #[inline(always)]
    fn new<L>(column: &'a Column<T>, span: &WideSpan<L, N>) -> Self {
        let width = column.joints.len();
        let (mut start, mut next): ([&[T]; N], [&[T]; N]) = ([&[]; N], [&[]; N]);
        for lane in 0..N {
            start[lane] = &column.values[span.start[lane] * width..][..width];
            next[lane] = &column.values[span.next[lane] * width..][..width];
        }
        LaneRows { width, start, next }
    }

    /// Each lane's value of column slot `slot` at its start and next key, made a `Vec4` by
    /// `widen`.
    ///
    /// # Panics
    /// When `slot` is past the column's joints.
    #[inline(always)]
    fn gather(&self, slot: usize, widen: impl Fn(T) -> Vec4) -> ([Vec4; N], [Vec4; N]) {
        assert!(slot < self.width, "a slot of the column");
        let (mut start, mut next) = ([Vec4::ZERO; N], [Vec4::ZERO; N]);
        for lane in 0..N {
            // SAFETY: every row holds `width` values (`LaneRows::new`), and `slot < width`
            // (asserted above).
            unsafe {
                start[lane] = widen(*self.start[lane].get_unchecked(slot));
                next[lane] = widen(*self.next[lane].get_unchecked(slot));
            }
        }
        (start, next)
    }
}

/// Every lane's value of `slot` in a three-component column, lerped across its span (glam's
/// `lerp` terms, lane by lane).
#[inline(always)]
fn lerp_wide<L: Lanes<N>, const N: usize>(rows: &LaneRows<'_, Vec3A, N>, slot: usize, span: &WideSpan<L, N>) -> [L; 3] {
    let (start, end) = rows.gather(slot, as_vec4);
    let ([start @ .., _], [end @ .., _]) = (L::from_rows(start), L::from_rows(end));
    let (keep, weight) = (span.weight.keep, span.weight.weight);
    [start[0] * keep + end[0] * weight, start[1] * keep + end[1] * weight, start[2] * keep + end[2] * weight]
}

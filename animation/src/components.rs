//! What a game puts on an animated entity: its skinned geometry's joint boxes
//! ([`SkinnedMesh`]), its rig ([`Skin`]) and what plays on it ([`AnimationPlayer`]).

use std::sync::Arc;

use hecs::Entity;

use crate::{AnimationClip, AnimationError, JointBoxes, PaletteRig, Skeleton, SkinPalette};

/// A skinned mesh's per-joint boxes (see [`JointBoxes`]), on the entity that draws it. With a
/// [`Skin`] the animation system bounds it by its pose each frame; without one it is drawn,
/// and culled, in its bind pose, with one warning.
#[derive(Clone, Debug)]
pub struct SkinnedMesh {
    /// The boxes, shared by every instance of the mesh.
    pub joint_boxes: Arc<JointBoxes>,
}

/// The rig that poses an entity's skinned mesh, and where its skin matrices live: entries
/// `skin_first .. skin_first + skin_count` of the [`SkinPalette`](crate::SkinPalette). The
/// animation system gives it its slice the first frame it sees it and frees the slice when
/// the entity or its `Skin` goes away.
///
/// Who owns a slice is the palette's record, not the `Skin`'s: a `Skin` names a slice, and
/// owns it only while the palette records that slice, of that size, as its entity's. A
/// clone copies the name but not the record, so a `Skin` cloned onto another entity, put
/// back after its slice was freed, or left on a reused entity id (a new generation) is given
/// a slice of its own.
#[derive(Clone, Debug)]
pub struct Skin {
    /// The skeleton.
    pub skeleton: Arc<Skeleton>,
    first: u32,
    count: u32,
    /// Where the palette keeps the record of the slice (`SkinPalette::records`).
    record: u32,
}

impl Skin {
    /// A rig of `skeleton`, without a palette slice yet.
    pub fn new(skeleton: Arc<Skeleton>) -> Skin {
        Skin { skeleton, first: 0, count: 0, record: u32::MAX }
    }

    /// First palette entry of the rig (meaningful once [`Skin::skin_count`] is not 0).
    #[inline]
    pub fn skin_first(&self) -> u32 {
        self.first
    }

    /// Palette entries of the rig: its joints, 0 until the animation system has run on it.
    #[inline]
    pub fn skin_count(&self) -> u32 {
        self.count
    }

    /// Whether `entity`, carrying this `Skin`, owns the slice it names: one of the
    /// skeleton's size that `palette` records as `entity`'s. An entity carries one `Skin` and
    /// the palette one record a slice, so two owning `Skin`s never share an entry.
    #[inline]
    pub(crate) fn owns_slice(&self, entity: Entity, palette: &SkinPalette) -> bool {
        self.count as usize == self.skeleton.joint_count()
            && palette.records(self.record, PaletteRig { entity, first: self.first, count: self.count })
    }

    /// Whether this `Skin` names the record at `place`, `rig`, at the skeleton's size: on
    /// `rig.entity`, that is [`Skin::owns_slice`] for a record the palette holds.
    #[inline]
    pub(crate) fn names(&self, place: u32, rig: &PaletteRig) -> bool {
        self.record == place
            && self.first == rig.first
            && self.count == rig.count
            && self.count as usize == self.skeleton.joint_count()
    }

    pub(crate) fn set_slice(&mut self, (first, record): (u32, u32)) {
        self.first = first;
        self.record = record;
        self.count = self.skeleton.joint_count() as u32;
    }
}

/// Marker: pose this rig only while it may be seen. On a frame its entity carries the main
/// view's [`Culled`](ecs::Culled) or [`Occluded`](ecs::Occluded) tag (last frame's answer, as
/// every system before the Visibility stage sees it) the animation system advances its player
/// but leaves its palette and its [`SkinnedPose`](ecs::SkinnedPose) as they were, so nothing of
/// it is uploaded either. This is Unity's "cull update transforms": the cost of a crowd follows
/// the part of it in view.
///
/// It never hides anything: the rig is culled by the box of the pose it is drawn in (both held),
/// and the frame its tag goes away it is culled and drawn in that held pose, posed afresh the
/// next frame. What it costs is a pose one frame old when a rig comes into view, and a shadow
/// of a rig out of view that holds still. A rig is always posed the first frame it has a
/// palette slice; without tags (`CpuAnswers::OnRequest` or `None`, or an unmarked entity under
/// `VisibilityTags::Marked`) the marker changes nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoseWhenSeen;

/// A second clip blending in over the first ([`AnimationPlayer::crossfade`]).
#[derive(Clone, Debug)]
pub struct Crossfade {
    /// The clip fading in.
    pub clip: Arc<AnimationClip>,
    /// Its time in seconds.
    pub time: f32,
    /// How much of it shows, 0 (none) to 1 (only it).
    pub weight: f32,
    /// Seconds the weight takes to go from 0 to 1; at 1 the clip replaces the player's and
    /// the crossfade ends. 0 holds the weight where the game sets it.
    pub fade_seconds: f32,
}

/// What plays on a rig: a clip at a time, how fast, whether it loops, and optionally a second
/// clip fading in. The animation system advances the times by `speed` times the frame's
/// delta, then samples.
#[derive(Clone, Debug)]
pub struct AnimationPlayer {
    /// The clip playing.
    pub clip: Arc<AnimationClip>,
    /// Its time in seconds.
    pub time: f32,
    /// Playback rate (1 = real time; negative plays backwards).
    pub speed: f32,
    /// Whether time wraps at the clip's end (else it holds the last pose).
    pub looping: bool,
    /// Whether time advances (a paused player still poses its rig at `time`).
    pub playing: bool,
    /// A clip fading in, if any.
    pub crossfade: Option<Crossfade>,
}

impl AnimationPlayer {
    /// Plays `clip` from its start, looping at normal speed. A clip made for another skeleton
    /// is refused by name ([`AnimationError::WrongSkeleton`]).
    pub fn new(clip: Arc<AnimationClip>, skeleton: &Skeleton) -> Result<AnimationPlayer, AnimationError> {
        clip.check_skeleton(skeleton)?;
        Ok(AnimationPlayer { clip, time: 0.0, speed: 1.0, looping: true, playing: true, crossfade: None })
    }

    /// Starts fading `clip` in over `seconds` (from its start), refused like
    /// [`AnimationPlayer::new`].
    pub fn crossfade_to(
        &mut self,
        clip: Arc<AnimationClip>,
        skeleton: &Skeleton,
        seconds: f32,
    ) -> Result<(), AnimationError> {
        clip.check_skeleton(skeleton)?;
        self.crossfade = Some(Crossfade { clip, time: 0.0, weight: 0.0, fade_seconds: seconds.max(0.0) });
        Ok(())
    }

    /// Moves the times on by `delta` seconds (times `speed`), wrapping or holding at the end,
    /// and the crossfade's weight on; a finished crossfade's clip becomes the player's.
    pub fn advance(&mut self, delta: f32) {
        if !self.playing {
            return;
        }
        let step = delta * self.speed;
        self.time = wrap(self.time + step, self.clip.duration(), self.looping);
        let finished = match &mut self.crossfade {
            Some(fade) => {
                fade.time = wrap(fade.time + step, fade.clip.duration(), self.looping);
                if fade.fade_seconds > 0.0 {
                    fade.weight = (fade.weight + delta / fade.fade_seconds).min(1.0);
                }
                fade.fade_seconds > 0.0 && fade.weight >= 1.0
            }
            None => false,
        };
        if finished {
            let fade = self.crossfade.take().expect("a finished crossfade exists");
            self.clip = fade.clip;
            self.time = fade.time;
        }
    }
}

/// `time` brought into `0..=duration`: wrapped when looping, clamped otherwise.
fn wrap(time: f32, duration: f32, looping: bool) -> f32 {
    if duration.is_nan() || duration <= 0.0 {
        0.0
    } else if looping {
        // A time already inside the clip is its own remainder (exactly): no division.
        if (0.0..duration).contains(&time) {
            time
        } else {
            time.rem_euclid(duration)
        }
    } else {
        time.clamp(0.0, duration)
    }
}

//! What moves in a skirmish, and the systems that move it: units walking their rounds, arrows
//! in flight, and the camera's zoom from high above the map down to street level.
//!
//! Every pose is a function of the frame index (60 frames a second), so a run is the same on
//! any thread count and a unit's place can be found again without reading the world.

use ecs::{scene, Transform};
use glam::{Quat, Vec3};
use hecs::{With, Without};
use runtime::System;

/// Frames per simulated second.
pub const FRAMES_PER_SECOND: f32 = 60.0;

/// Downward acceleration of an arrow, metres per second squared.
const GRAVITY: f32 = 9.81;

/// A unit's round: it walks a circle of `radius` around `home` at `speed`, `phase` radians
/// along at frame 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Walker {
    /// Centre of its round.
    pub home: Vec3,
    /// Radius of the round, metres.
    pub radius: f32,
    /// Where along the round it starts, radians.
    pub phase: f32,
    /// Walking speed, metres per second.
    pub speed: f32,
}

impl Walker {
    /// Where it stands at frame `frame`, facing the way it walks.
    pub fn pose(&self, frame: u64) -> Transform {
        let angle = self.phase + self.speed / self.radius.max(0.1) * frame as f32 / FRAMES_PER_SECOND;
        let (sin, cos) = angle.sin_cos();
        let place = self.home + Vec3::new(cos, 0.0, sin) * self.radius;
        // Walking counter-clockwise seen from above: the heading is the circle's tangent.
        Transform::from_translation_rotation(place, Quat::from_rotation_y(-angle))
    }
}

/// A unit whose carried item is a torch (walks in its own system, so it can stand still while
/// the others walk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TorchBearer;

/// An arrow: fired from `from` with `velocity` (metres per second) at frame `fired`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrow {
    /// Where it left the bow.
    pub from: Vec3,
    /// Its velocity when fired.
    pub velocity: Vec3,
    /// The frame it was fired in.
    pub fired: u64,
}

impl Arrow {
    /// Its pose at frame `frame`: on its arc, pointing the way it flies (the arrow mesh points
    /// down -Z).
    pub fn pose(&self, frame: u64) -> Transform {
        let seconds = frame.saturating_sub(self.fired) as f32 / FRAMES_PER_SECOND;
        let place = self.from + self.velocity * seconds - Vec3::Y * (0.5 * GRAVITY * seconds * seconds);
        let heading = (self.velocity - Vec3::Y * (GRAVITY * seconds)).normalize_or(Vec3::NEG_Z);
        Transform::from_translation_rotation(place, Quat::from_rotation_arc(Vec3::NEG_Z, heading))
    }
}

/// The camera's zoom over a map `field` metres square: from high above its middle, most of it
/// in view, down to street level and back up, every `period` frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkirmishCamera {
    /// Side of the map.
    pub field: f32,
    /// Frames of one zoom down and back up.
    pub period: u64,
}

/// Eye height at street level, metres.
const STREET_EYE: f32 = 1.8;

impl SkirmishCamera {
    /// Height of the eye at the top of the zoom, metres.
    pub fn top(&self) -> f32 {
        self.field * 0.35
    }

    /// How far down the zoom is at frame `frame`: 0 at the top, 1 at street level.
    pub fn descent(&self, frame: u64) -> f32 {
        let phase = (frame % self.period.max(1)) as f32 / self.period.max(1) as f32;
        0.5 - 0.5 * (phase * std::f32::consts::TAU).cos()
    }

    /// The camera's pose at frame `frame`: the eye height falls geometrically (the zoom looks
    /// steady) while the view tilts from 55 degrees down to the horizon, always looking at
    /// the map's middle, turning slowly about it.
    pub fn pose(&self, frame: u64) -> Transform {
        let descent = self.descent(frame);
        let height = self.top() * (STREET_EYE / self.top().max(STREET_EYE)).powf(descent);
        let pitch = (55.0 - 50.0 * descent).to_radians();
        let yaw = 0.4 + frame as f32 * 0.0015;
        let heading = Vec3::new(yaw.sin(), 0.0, -yaw.cos());
        let middle = Vec3::new(self.field * 0.5, 0.0, self.field * 0.5);
        let eye = middle - heading * (height / pitch.tan()) + Vec3::Y * height;
        scene::look_at(eye, middle)
    }
}

/// Moves the units that are not torch bearers along their rounds.
pub fn march() -> System {
    type Marching = Without<(&'static mut Transform, &'static Walker), &'static TorchBearer>;
    System::with_query::<Marching>("skirmish march", |ctx, units| {
        let frame = ctx.time.frame_index;
        units.par_for_each(1024, |(transform, walker)| *transform = walker.pose(frame));
    })
}

/// Moves the torch bearers along their rounds (their torches and lights follow as children).
pub fn patrol() -> System {
    type Patrolling = With<(&'static mut Transform, &'static Walker), &'static TorchBearer>;
    System::with_query::<Patrolling>("skirmish torch patrol", |ctx, bearers| {
        let frame = ctx.time.frame_index;
        for (transform, walker) in bearers.borrow().iter() {
            *transform = walker.pose(frame);
        }
    })
}

/// Moves every arrow along its arc.
pub fn fly_arrows() -> System {
    System::with_query::<(&mut Transform, &Arrow)>("skirmish arrows", |ctx, arrows| {
        let frame = ctx.time.frame_index;
        arrows.par_for_each(1024, |(transform, arrow)| *transform = arrow.pose(frame));
    })
}

/// Flies the camera along its zoom (in the Transform stage, before the hierarchy places it).
pub fn fly_camera() -> System {
    System::with_query::<(&mut Transform, &SkirmishCamera)>("skirmish camera", |ctx, cameras| {
        let frame = ctx.time.frame_index;
        for (transform, camera) in cameras.borrow().iter() {
            *transform = camera.pose(frame);
        }
    })
    .before(ecs::HIERARCHY_SYSTEM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_camera_zooms_from_high_above_to_street_level_and_back() {
        let camera = SkirmishCamera { field: 1000.0, period: 600 };
        let height = |frame: u64| camera.pose(frame).translation.y;
        assert!((height(0) - 350.0).abs() < 1e-3, "{}", height(0));
        assert!((height(300) - STREET_EYE).abs() < 1e-3, "{}", height(300));
        assert!((height(600) - height(0)).abs() < 1e-3, "the zoom loops");
        assert!((1..300).all(|frame| height(frame) < height(frame - 1)), "down for the first half");
        // Looking at the map's middle at every height.
        for frame in [0, 150, 299] {
            let pose = camera.pose(frame);
            let forward = pose.rotation * Vec3::NEG_Z;
            let to_middle = (Vec3::new(500.0, 0.0, 500.0) - pose.translation).normalize();
            assert!(forward.dot(to_middle) > 0.9999, "frame {frame}");
        }
    }

    #[test]
    fn walkers_keep_to_their_round_and_arrows_fall() {
        let walker = Walker { home: Vec3::new(10.0, 0.0, 5.0), radius: 4.0, phase: 1.0, speed: 1.5 };
        for frame in [0, 17, 600] {
            let place = walker.pose(frame).translation;
            assert!((place.distance(walker.home) - 4.0).abs() < 1e-4, "frame {frame}: {place}");
        }
        let step = walker.pose(1).translation.distance(walker.pose(0).translation);
        assert!((step - 1.5 / FRAMES_PER_SECOND).abs() < 1e-4, "walking speed: {step}");
        let arrow = Arrow { from: Vec3::Y, velocity: Vec3::new(20.0, 5.0, 0.0), fired: 10 };
        assert_eq!(arrow.pose(10).translation, Vec3::Y);
        assert!(arrow.pose(130).translation.y < 0.0, "two seconds later it has come down");
        let heading = arrow.pose(10).rotation * Vec3::NEG_Z;
        assert!(heading.dot(arrow.velocity.normalize()) > 0.9999, "it points the way it flies");
    }
}

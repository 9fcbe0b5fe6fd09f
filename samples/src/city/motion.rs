//! The systems that move the city, all in the `Input` stage so the `Transform` stage sees
//! this frame's poses: traffic, pedestrians' arms, and the camera's flight.

use culling::{ObjectState, Visibility};
use ecs::{SkinnedPose, Transform};
use glam::{Quat, Vec3};
use hecs::Entity;
use runtime::{Stage, System};

/// A car's motion along its street: +Z or -Z at `speed` metres per second, wrapping around
/// the city.
#[derive(Clone, Copy, Debug)]
pub struct Traffic {
    /// Signed speed along Z.
    pub speed: f32,
    /// Length of the street; a car past its end re-enters at the start.
    pub street_length: f32,
}

impl Traffic {
    /// The system that drives every car with a `Traffic` component.
    pub fn system() -> System {
        System::with_query::<(&mut Transform, &Traffic)>("traffic", |ctx, cars| {
            let delta = ctx.time.delta_seconds;
            for (transform, traffic) in cars.borrow().iter() {
                let length = traffic.street_length.max(1.0);
                let z = (transform.translation.z + traffic.speed * delta).rem_euclid(length);
                transform.translation.z = z;
                transform.rotation =
                    if traffic.speed >= 0.0 { Quat::IDENTITY } else { Quat::from_rotation_y(std::f32::consts::PI) };
            }
        })
    }
}

/// A pedestrian's arm-raising cycle: the posed bone box grows above and beside the bind box,
/// which is exactly what a culler using the bind box would get wrong.
#[derive(Clone, Copy, Debug)]
pub struct PoseAnimation {
    /// Phase offset, seconds.
    pub phase: f32,
    /// Seconds per raise-and-lower cycle.
    pub period: f32,
}

impl PoseAnimation {
    /// The system that poses the pedestrians with a `PoseAnimation`, as games animate their
    /// characters: only those on screen last frame (the [`Visibility`] answer, read before
    /// this frame's cull), each through its entity, so that the Visibility stage refreshes a
    /// few hundred objects at street level instead of the 32k pedestrians of a
    /// million-object city. An unseen pedestrian keeps its last pose, which is the pose it
    /// is culled and drawn with: nothing it shows is missed. When more than
    /// 2,048 (`POSE_ONE_BY_ONE`) were on screen (the view over the rooftops), or before the first
    /// answer, every pedestrian is posed at once on every thread.
    pub fn system() -> System {
        // The pedestrians seen last frame (a list kept from frame to frame).
        let mut seen: Vec<(Entity, PoseAnimation)> = Vec::new();
        System::new("pose animation", move |ctx| {
            let time = ctx.time.elapsed_seconds as f32;
            seen.clear();
            let everyone = match ctx.try_resource::<Visibility>() {
                Some(visibility) if visibility.view().is_some() => {
                    let shown = |entity: Entity| visibility.state_of(entity) == Some(ObjectState::Visible);
                    let mut walkers = ctx.query::<(Entity, &PoseAnimation)>();
                    for (entity, animation) in walkers.iter().filter(|(entity, _)| shown(*entity)) {
                        seen.push((entity, *animation));
                        if seen.len() > POSE_ONE_BY_ONE {
                            break;
                        }
                    }
                    seen.len() > POSE_ONE_BY_ONE
                }
                _ => true,
            };
            if everyone {
                ctx.par_for_each::<(&mut SkinnedPose, &PoseAnimation)>(4096, |(pose, animation)| {
                    animation.pose(time, pose)
                });
            } else {
                for (entity, animation) in &seen {
                    if let Ok(mut pose) = ctx.get_mut::<SkinnedPose>(*entity) {
                        animation.pose(time, &mut pose);
                    }
                }
            }
        })
        .reads::<PoseAnimation>()
        .writes::<SkinnedPose>()
        .reads_resource::<Visibility>()
    }

    /// Raises the arms of `pose` to where they are `time` seconds in.
    fn pose(&self, time: f32, pose: &mut SkinnedPose) {
        let cycle = ((time + self.phase) / self.period.max(0.1)).fract();
        let raise = raise_of(cycle);
        pose.origin_min = Vec3::new(-0.25, 0.0, -0.1);
        pose.origin_max = Vec3::new(0.25 + 0.45 * raise, 1.7 + 0.55 * raise, 0.1);
    }
}

/// Above this many pedestrians on screen, all are posed at once through their archetype
/// (one pass on every thread) rather than one by one through their entities.
pub const POSE_ONE_BY_ONE: usize = 2048;

/// How high the arms are at `cycle` turns into the cycle (0 to 1): up and down over the
/// first half, `sin(2 pi cycle)` there, resting over the second. Bhaskara's rational
/// approximation of the sine (within 0.002 of it), the arm's height needing no more: a
/// library `sin` per pedestrian was most of the Input stage of a million-object city.
fn raise_of(cycle: f32) -> f32 {
    if !(0.0..0.5).contains(&cycle) {
        return 0.0;
    }
    let t = 2.0 * cycle;
    let arc = t * (1.0 - t);
    16.0 * arc / (5.0 - 4.0 * arc)
}

/// The camera's flight: along a street through the city, looking around as it goes, diving
/// to street level (where buildings hide most of the city) and climbing over the rooftops.
#[derive(Clone, Copy, Debug)]
pub struct CameraPath {
    /// X of the street's centre line.
    pub street_x: f32,
    /// Length of the street; the camera flies from z = 0 to z = `length` and back.
    pub length: f32,
    /// Lowest and highest eye height, metres.
    pub heights: (f32, f32),
    /// Seconds per there-and-back flight.
    pub period: f32,
}

impl CameraPath {
    /// Where the camera is and what it looks at, `seconds` into the flight.
    pub fn pose_at(&self, seconds: f32) -> Transform {
        let phase = seconds / self.period.max(1.0) * std::f32::consts::TAU;
        let along = (0.5 - 0.5 * phase.cos()) * self.length;
        let climb = 0.5 - 0.5 * (phase * 1.5).cos();
        let height = self.heights.0 + (self.heights.1 - self.heights.0) * climb;
        let eye = Vec3::new(self.street_x, height, along);
        // Look ahead down the street, swinging up to 75 degrees to either side, and further
        // down the higher the camera is.
        let yaw = (phase * 2.5).sin() * 75f32.to_radians();
        let heading = Vec3::new(yaw.sin(), 0.0, yaw.cos());
        let target = eye + heading * 60.0 - Vec3::Y * (height * 0.5);
        ecs::scene::look_at(eye, target)
    }
}

/// The system that moves the entity tagged with [`CameraPath`] along its path.
pub fn camera_path_system() -> System {
    System::with_query::<(&mut Transform, &CameraPath)>("camera path", |ctx, cameras| {
        let seconds = ctx.time.elapsed_seconds as f32;
        for (transform, path) in cameras.borrow().iter() {
            *transform = path.pose_at(seconds);
        }
    })
}

/// Adds the motion systems to the `Input` stage.
pub fn install(app: &mut runtime::App) {
    app.add_system(Stage::Input, Traffic::system());
    app.add_system(Stage::Input, PoseAnimation::system());
    app.add_system(Stage::Input, camera_path_system());
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecs::{scene, Camera, Mesh};
    use runtime::App;

    /// An app with the pose animation, a camera looking down -Z and a pedestrian in front of
    /// it and one behind; returns (app, in front, behind).
    fn two_walkers() -> (App, Entity, Entity) {
        let mut app = App::with_threads(2);
        culling::install(&mut app);
        app.set_fixed_delta(Some(0.1));
        app.add_system(Stage::Input, PoseAnimation::system());
        scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::ZERO, Vec3::NEG_Z));
        let mut body: Mesh = scene::unit_cube_mesh();
        body.skin_radius = 0.1;
        let rest = SkinnedPose { origin_min: Vec3::ZERO, origin_max: Vec3::ZERO, max_bone_scale: 1.0 };
        let mut walker = |z: f32| {
            let entity = scene::spawn_mesh(app.world_mut(), body, Transform::from_translation(Vec3::new(0.0, -1.0, z)));
            let animation = PoseAnimation { phase: 0.3, period: 2.0 };
            app.world_mut().insert(entity, (rest, animation)).expect("just spawned");
            entity
        };
        let (front, behind) = (walker(-10.0), walker(10.0));
        (app, front, behind)
    }

    #[test]
    fn only_the_pedestrians_seen_last_frame_are_posed() {
        let (mut app, front, behind) = two_walkers();
        let pose = |app: &App, entity: Entity| *app.world().get::<&SkinnedPose>(entity).expect("a pose");
        // The first frame has no answer yet: everyone is posed.
        app.run_frame();
        let behind_pose = pose(&app, behind);
        assert_ne!(behind_pose.origin_max, Vec3::ZERO, "posed before any answer");
        let mut front_poses = Vec::new();
        for _ in 0..6 {
            app.run_frame();
            front_poses.push(pose(&app, front).origin_max);
            assert_eq!(pose(&app, behind), behind_pose, "the pedestrian behind the camera keeps its pose");
        }
        front_poses.dedup();
        assert!(front_poses.len() > 1, "the pedestrian in view moves its arms: {front_poses:?}");
        let visibility = app.resource::<Visibility>();
        assert!(visibility.stats().tracked, "posing one entity keeps the frame tracked");
    }

    #[test]
    fn arms_follow_the_sine_over_the_first_half_and_rest_over_the_second() {
        for step in 0..=1000 {
            let cycle = step as f32 / 1000.0;
            let exact = (cycle * std::f32::consts::TAU).sin().max(0.0);
            assert!((raise_of(cycle) - exact).abs() < 0.002, "cycle {cycle}: {} against {exact}", raise_of(cycle));
        }
        assert_eq!(raise_of(f32::NAN), 0.0, "a NaN phase rests");
    }
}

//! The systems that move the city, all in the `Input` stage so the `Transform` stage sees
//! this frame's poses: traffic, the camera's flight, and the animation system, which walks the
//! pedestrians (each a [`WalkerRig`](crate::walker::WalkerRig) playing its walk) and writes
//! the posed boxes they are culled by.

use ecs::Transform;
use glam::{Quat, Vec3};
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
    /// Seconds the flight is ahead of the clock (0: it starts at z = 0).
    pub phase: f32,
    /// 1 looks down the street towards +z, -1 towards -z.
    pub facing: f32,
}

impl CameraPath {
    /// Where the camera is and what it looks at, `seconds` into the flight.
    pub fn pose_at(&self, seconds: f32) -> Transform {
        let phase = (seconds + self.phase) / self.period.max(1.0) * std::f32::consts::TAU;
        let along = (0.5 - 0.5 * phase.cos()) * self.length;
        let climb = 0.5 - 0.5 * (phase * 1.5).cos();
        let height = self.heights.0 + (self.heights.1 - self.heights.0) * climb;
        let eye = Vec3::new(self.street_x, height, along);
        // Look ahead down the street, swinging up to 75 degrees to either side, and further
        // down the higher the camera is.
        let yaw = (phase * 2.5).sin() * 75f32.to_radians();
        let heading = Vec3::new(yaw.sin(), 0.0, yaw.cos()) * self.facing;
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

/// An object moved by [`Bobbing::system`]: it rises and sinks by half a metre around the
/// height it was chosen at, each on its own phase (`city --movers`).
#[derive(Clone, Copy, Debug)]
pub struct Bobbing {
    /// The height it bobs around.
    pub base_y: f32,
    /// Where in its period it starts, radians.
    pub phase: f32,
}

impl Bobbing {
    /// The system that moves every entity with a `Bobbing` (its archetypes alone are
    /// written: the query names the marker).
    pub fn system() -> System {
        System::with_query::<(&mut Transform, &Bobbing)>("bobbing", |ctx, movers| {
            let seconds = ctx.time.elapsed_seconds as f32;
            for (transform, bobbing) in movers.borrow().iter() {
                transform.translation.y = bobbing.base_y + 0.5 * (seconds * 3.0 + bobbing.phase).sin();
            }
        })
    }

    /// Gives `percent` of the mesh entities a `Bobbing`: every n-th root mesh entity with a
    /// `Transform` (buildings, trees, props, cars; wheels follow their cars), spread over
    /// the city by storage order. Returns how many.
    pub fn choose(world: &mut hecs::World, percent: f64) -> usize {
        let meshes = world.query::<&ecs::Mesh>().iter().count();
        let wanted = ((meshes as f64 * percent / 100.0).round() as usize).min(meshes);
        if wanted == 0 {
            return 0;
        }
        let roots: Vec<(hecs::Entity, f32)> = world
            .query::<hecs::Without<(hecs::Entity, &Transform, &ecs::Mesh), &ecs::Parent>>()
            .iter()
            .map(|(entity, transform, _)| (entity, transform.translation.y))
            .collect();
        let every = (roots.len() / wanted).max(1);
        let chosen: Vec<_> = roots.into_iter().step_by(every).take(wanted).collect();
        for (index, &(entity, base_y)) in chosen.iter().enumerate() {
            let bobbing = Bobbing { base_y, phase: index as f32 * 0.7 };
            world.insert_one(entity, bobbing).expect("a live mesh entity");
        }
        chosen.len()
    }
}

/// The motion of `city --world-motion off`: the camera's flight and the animation system
/// (with nothing to pose: the caller removes the pedestrians), no traffic.
pub fn install_still(app: &mut runtime::App) {
    animation::install(app);
    app.add_system(Stage::Input, camera_path_system());
}

/// Adds the motion systems to the `Input` stage, and the animation system
/// ([`animation::install`]).
pub fn install(app: &mut runtime::App) {
    app.add_system(Stage::Input, Traffic::system());
    animation::install(app);
    app.add_system(Stage::Input, camera_path_system());
}

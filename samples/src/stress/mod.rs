//! A stress world unlike the city: most of it moves, bullets are spawned and despawned every
//! frame, ships carry parented turrets that are re-parented, meshes and colours change, and
//! the camera flies over it all. What a game does to the engine, in one scene.
//!
//! Everything is a function of the frame index and the seed, so two runs (and one run on 1 or
//! 2 threads) see the same world.
//!
//! - **Movers** ([`Mover`]): a share of the objects bob and circle about their home every
//!   frame (a `With<&mut Transform, &Mover>` query, so only their archetypes are redone).
//! - **Bullets** ([`Bullet`]): `churn` are spawned and `churn` despawned each frame (the
//!   oldest), each flying straight while it lives.
//! - **Ships and turrets**: every [`StressConfig::children_every`]-th mover is a ship with a
//!   turret parented to it; a few turrets move to another ship each frame.
//! - **Restyling**: a few objects change mesh and colour each frame, some are hidden or shown.
//! - **Camera**: a fly-over on a fixed path, turning slowly.
//!
//! The `stress` binary's command line is [`options`]; [`run`] runs it step by step (the
//! world, the rendering, the frame loop with its checks, the summary).

use std::collections::VecDeque;

use ecs::{
    scene, BaseColor, Camera, HierarchyCommands, MaterialHandle, Mesh, MeshHandle, Transform, Visible, WorldTransform,
};
use glam::{Quat, Vec3};
use hecs::{Entity, With, World};
use renderer::MeshLibrary;
use runtime::{App, Stage, System};

use crate::random::XorShift;

pub mod options;
pub mod run;

/// The stage the stress systems run in, between `Input` and `Transform`.
pub const STRESS_STAGE: &str = "Stress";

/// What the stress world holds and does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StressConfig {
    /// Objects in the world at any time (bullets included).
    pub objects: usize,
    /// Share of the objects that move every frame (bullets included), 0 to 1.
    pub moving: f32,
    /// Bullets spawned, and despawned, each frame.
    pub churn: usize,
    /// Frames a bullet lives.
    pub bullet_frames: usize,
    /// Every n-th mover is a ship carrying a parented turret (0: none).
    pub children_every: usize,
    /// Objects restyled (mesh and colour) each frame.
    pub restyle: usize,
    /// Turrets moved to another ship each frame.
    pub reparent: usize,
    /// The seed of everything random.
    pub seed: u64,
}

impl Default for StressConfig {
    fn default() -> Self {
        StressConfig {
            objects: 100_000,
            moving: 0.3,
            churn: 500,
            bullet_frames: 6,
            children_every: 20,
            restyle: 64,
            reparent: 8,
            seed: 0x05EE_D0F5_7E55,
        }
    }
}

impl StressConfig {
    /// Side of the square field the objects stand on, in metres (about 3 m between objects).
    pub fn field(&self) -> f32 {
        (self.objects as f32).sqrt() * 3.0
    }

    /// Bullets alive at any time.
    pub fn bullets(&self) -> usize {
        (self.churn * self.bullet_frames).min(self.objects / 2)
    }
}

/// The meshes of the stress world, by handle: a cube, an octahedron, a wedge.
pub struct StressMeshes;

impl StressMeshes {
    /// Mesh handles in library order.
    pub const ALL: [MeshHandle; 3] = [MeshHandle(0), MeshHandle(1), MeshHandle(2)];

    /// The library: each mesh fits the unit box (`-0.5..0.5` on every axis).
    pub fn library() -> MeshLibrary {
        let mut library = MeshLibrary::with_unit_cube();
        let octahedron =
            [[0.5, 0.0, 0.0], [-0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, -0.5, 0.0], [0.0, 0.0, 0.5], [0.0, 0.0, -0.5]];
        let faces = [0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5];
        library.add_mesh(&octahedron, &faces).expect("a valid octahedron");
        let wedge = [
            [-0.5, -0.5, -0.5],
            [0.5, -0.5, -0.5],
            [0.5, -0.5, 0.5],
            [-0.5, -0.5, 0.5],
            [-0.5, 0.5, -0.5],
            [-0.5, 0.5, 0.5],
        ];
        let faces = [0, 1, 2, 0, 2, 3, 0, 4, 1, 3, 2, 5, 0, 3, 5, 0, 5, 4, 1, 4, 5, 1, 5, 2];
        library.add_mesh(&wedge, &faces).expect("a valid wedge");
        library
    }

    /// A drawable of `handle` in the unit box, with material `material`.
    pub fn mesh(handle: MeshHandle, material: u32) -> Mesh {
        Mesh::new(handle, MaterialHandle(material), ecs::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)))
    }
}

/// A moving object: it circles its home at `radius`, bobbing, `phase` radians along.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mover {
    /// Where it circles.
    pub home: Vec3,
    /// Radius of the circle, metres.
    pub radius: f32,
    /// Where along the circle it starts.
    pub phase: f32,
    /// Radians per frame.
    pub speed: f32,
}

impl Mover {
    /// Its place at frame `frame`.
    pub fn at(&self, frame: u64) -> Vec3 {
        let angle = self.phase + self.speed * frame as f32;
        self.home + Vec3::new(angle.cos() * self.radius, (angle * 2.0).sin() * 0.5 + 0.5, angle.sin() * self.radius)
    }
}

/// A bullet: it flies from `from` along `velocity` (metres per frame) from frame `born`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bullet {
    /// Where it was fired.
    pub from: Vec3,
    /// Metres per frame.
    pub velocity: Vec3,
    /// The frame it was fired in.
    pub born: u64,
}

/// A ship (a mover that carries a turret).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ship;

/// A turret, parented to a ship.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Turret;

/// The stress world's state between frames: its random stream and its live bullets, oldest
/// first.
pub struct StressState {
    /// The configuration it was built with.
    pub config: StressConfig,
    random: XorShift,
    bullets: VecDeque<Entity>,
    /// Every ship, in spawn order.
    pub ships: Vec<Entity>,
    /// Every turret, in spawn order.
    pub turrets: Vec<Entity>,
    /// Every object that is neither a bullet nor a turret, in spawn order.
    pub objects: Vec<Entity>,
    /// Spawns and despawns so far.
    pub churned: u64,
}

impl StressState {
    fn color(&mut self) -> BaseColor {
        BaseColor([self.random.range(0.2, 1.0), self.random.range(0.2, 1.0), self.random.range(0.2, 1.0), 1.0])
    }

    /// A new bullet fired at frame `frame` from a random point of the field.
    fn bullet(&mut self, frame: u64) -> (Transform, WorldTransform, Mesh, Visible, BaseColor, Bullet) {
        let field = self.config.field();
        let from = Vec3::new(self.random.range(0.0, field), self.random.range(0.5, 3.0), self.random.range(0.0, field));
        let direction = Quat::from_rotation_y(self.random.range(0.0, std::f32::consts::TAU)) * Vec3::X;
        let transform = Transform { translation: from, rotation: Quat::IDENTITY, scale: Vec3::splat(0.3) };
        let bullet = Bullet { from, velocity: direction * 0.8, born: frame };
        (
            transform,
            WorldTransform::from(transform),
            StressMeshes::mesh(MeshHandle(0), 9),
            Visible(true),
            BaseColor([1.0, 0.9, 0.2, 1.0]),
            bullet,
        )
    }
}

/// Spawns the stress world into `app` (its stage and systems, a camera) and returns how many
/// mesh entities it holds.
pub fn build_stress(app: &mut App, config: StressConfig) -> usize {
    let mut state = StressState {
        config,
        random: XorShift::new(config.seed),
        bullets: VecDeque::new(),
        ships: Vec::new(),
        turrets: Vec::new(),
        objects: Vec::new(),
        churned: 0,
    };
    // Bullets and turrets move too: the movers make up the rest of the moving share.
    let bullets = config.bullets();
    let moving = (config.objects as f32 * config.moving.clamp(0.0, 1.0)) as usize;
    let turrets = if config.children_every == 0 { 0 } else { moving / (config.children_every + 1) };
    let others = config.objects.saturating_sub(bullets + turrets);
    let movers = moving.saturating_sub(bullets + turrets).min(others);
    let side = (others as f32).sqrt().ceil().max(1.0) as usize;
    let world = app.world_mut();
    for index in 0..others {
        let home = Vec3::new((index % side) as f32 * 3.0 + 1.5, 0.0, (index / side) as f32 * 3.0 + 1.5);
        let handle = StressMeshes::ALL[index % 3];
        let scale = Vec3::new(state.random.range(0.6, 1.6), state.random.range(0.6, 2.5), state.random.range(0.6, 1.6));
        let transform = Transform { translation: home, rotation: Quat::IDENTITY, scale };
        let components = (
            transform,
            WorldTransform::from(transform),
            StressMeshes::mesh(handle, index as u32 % 4),
            Visible(true),
            state.color(),
        );
        // Movers are spread over the field: every k-th object.
        let moves = movers > 0 && index * movers / others != (index + 1) * movers / others;
        let entity = world.spawn(components);
        if moves {
            let mover = Mover {
                home,
                radius: state.random.range(0.2, 1.2),
                phase: state.random.range(0.0, std::f32::consts::TAU),
                speed: state.random.range(0.02, 0.08),
            };
            world.insert_one(entity, mover).expect("just spawned");
        }
        state.objects.push(entity);
    }
    // Ships: movers carrying a turret, re-parented now and then.
    let movers_list: Vec<Entity> = world.query::<With<Entity, &Mover>>().iter().collect();
    for (index, &ship) in movers_list.iter().enumerate() {
        if state.turrets.len() >= turrets || config.children_every == 0 || index % config.children_every != 0 {
            continue;
        }
        world.insert_one(ship, Ship).expect("the mover lives");
        let offset =
            Transform { translation: Vec3::new(0.0, 1.0, 0.0), rotation: Quat::IDENTITY, scale: Vec3::splat(0.5) };
        let turret = world.spawn((
            offset,
            WorldTransform::from(offset),
            StressMeshes::mesh(MeshHandle(1), 7),
            Visible(true),
            BaseColor([0.9, 0.2, 0.2, 1.0]),
            Turret,
        ));
        ecs::hierarchy::set_parent(world, turret, ship).expect("a fresh turret cannot be the ship's ancestor");
        state.ships.push(ship);
        state.turrets.push(turret);
    }
    for _ in 0..bullets {
        let bullet = state.bullet(0);
        state.bullets.push_back(world.spawn(bullet));
    }
    let field = config.field();
    let camera = scene::spawn_camera(world, Camera::default(), camera_pose(field, 0));
    world.insert_one(camera, StressCamera { field }).expect("just spawned");
    let count = world.query::<&Mesh>().iter().count();
    app.insert_resource(state);
    app.add_stage_after(Stage::Input, STRESS_STAGE).expect("Input exists and the stress stage is new");
    app.add_system(STRESS_STAGE, move_movers());
    app.add_system(STRESS_STAGE, fly_bullets());
    app.add_system(STRESS_STAGE, churn());
    app.add_system(STRESS_STAGE, restyle());
    app.add_system(STRESS_STAGE, reparent());
    app.add_system(Stage::Transform, fly_camera().before(ecs::HIERARCHY_SYSTEM));
    count
}

/// The camera of the stress world: it flies over the field on a fixed path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StressCamera {
    /// Side of the field.
    pub field: f32,
}

/// Where the camera is at frame `frame`: high over the field, circling its middle and looking
/// ahead and down, so the view sweeps over movers, bullets and ships.
pub fn camera_pose(field: f32, frame: u64) -> Transform {
    let angle = frame as f32 * 0.01;
    let middle = Vec3::new(field * 0.5, 0.0, field * 0.5);
    let eye =
        middle + Vec3::new(angle.cos() * field * 0.3, 20.0 + (angle * 3.0).sin() * 8.0, angle.sin() * field * 0.3);
    let target = middle + Vec3::new((angle + 0.6).cos() * field * 0.2, 0.0, (angle + 0.6).sin() * field * 0.2);
    scene::look_at(eye, target)
}

fn move_movers() -> System {
    System::with_query::<(&mut Transform, &Mover)>("stress move", |ctx, movers| {
        let frame = ctx.time.frame_index;
        movers.par_for_each(1024, |(transform, mover)| {
            transform.translation = mover.at(frame);
            transform.rotation = Quat::from_rotation_y(mover.phase + mover.speed * frame as f32);
        });
    })
}

fn fly_bullets() -> System {
    System::with_query::<(&mut Transform, &Bullet)>("stress bullets", |ctx, bullets| {
        let frame = ctx.time.frame_index;
        bullets.par_for_each(1024, |(transform, bullet)| {
            transform.translation = bullet.from + bullet.velocity * (frame - bullet.born.min(frame)) as f32;
        });
    })
}

/// Despawns the oldest `churn` bullets and fires `churn` new ones.
fn churn() -> System {
    System::new("stress churn", |ctx| {
        let frame = ctx.time.frame_index;
        let mut state = ctx.resource_mut::<StressState>();
        let churn = state.config.churn.min(state.bullets.len());
        for _ in 0..churn {
            if let Some(old) = state.bullets.pop_front() {
                ctx.commands.despawn(old);
            }
            let bullet = state.bullet(frame);
            let entity = ctx.commands.spawn(bullet);
            state.bullets.push_back(entity);
            state.churned += 2;
        }
    })
    .writes_resource::<StressState>()
    .spawns()
}

/// A few objects change mesh and colour, and one in eight of them is hidden or shown.
fn restyle() -> System {
    System::new("stress restyle", |ctx| {
        let mut state = ctx.resource_mut::<StressState>();
        for _ in 0..state.config.restyle {
            if state.objects.is_empty() {
                return;
            }
            let index = (state.random.next_u64() % state.objects.len() as u64) as usize;
            let entity = state.objects[index];
            let handle = StressMeshes::ALL[(state.random.next_u64() % 3) as usize];
            let color = state.color();
            if let Ok(mut mesh) = ctx.get_mut::<Mesh>(entity) {
                mesh.mesh = handle;
            }
            if let Ok(mut base) = ctx.get_mut::<BaseColor>(entity) {
                *base = color;
            }
            if state.random.next_u64() % 8 == 0 {
                if let Ok(mut shown) = ctx.get_mut::<Visible>(entity) {
                    shown.0 = !shown.0;
                }
            }
        }
    })
    .writes_resource::<StressState>()
    .writes::<Mesh>()
    .writes::<BaseColor>()
    .writes::<Visible>()
}

/// A few turrets move to another ship.
fn reparent() -> System {
    System::new("stress reparent", |ctx| {
        let mut state = ctx.resource_mut::<StressState>();
        if state.turrets.is_empty() || state.ships.len() < 2 {
            return;
        }
        for _ in 0..state.config.reparent {
            let (turret, ship) = (
                state.random.next_u64() % state.turrets.len() as u64,
                state.random.next_u64() % state.ships.len() as u64,
            );
            let (turret, ship) = (state.turrets[turret as usize], state.ships[ship as usize]);
            ctx.commands.set_parent(turret, ship);
        }
    })
    .writes_resource::<StressState>()
}

fn fly_camera() -> System {
    System::with_query::<(&mut Transform, &StressCamera)>("stress camera", |ctx, cameras| {
        let frame = ctx.time.frame_index;
        for (transform, camera) in cameras.borrow().iter() {
            *transform = camera_pose(camera.field, frame);
        }
    })
}

/// A hash of the world's poses, meshes and colours in entity-id order: equal on any thread
/// count for the same frames.
pub fn world_hash(world: &World) -> u64 {
    let mut rows: Vec<(u32, [u32; 10], u32)> = world
        .query::<(Entity, &Transform, &Mesh, Option<&BaseColor>)>()
        .iter()
        .map(|(entity, transform, mesh, color)| {
            let (t, r) = (transform.translation, transform.rotation);
            let color = color.map_or(BaseColor::WHITE, |color| *color).packed();
            (
                entity.id(),
                [t.x, t.y, t.z, r.x, r.y, r.z, r.w, transform.scale.x, transform.scale.y, transform.scale.z]
                    .map(f32::to_bits),
                mesh.mesh.0 ^ color.rotate_left(7),
            )
        })
        .collect();
    rows.sort_unstable_by_key(|row| row.0);
    let mut hash = 0xCBF2_9CE4_8422_2325u64;
    for (id, pose, style) in rows {
        for value in std::iter::once(id).chain(pose).chain([style]) {
            for byte in value.to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
            }
        }
    }
    hash
}

/// What kind of object `entity` is, for reports: a bullet and its age, a mover, a ship, a
/// turret or a still object.
pub fn describe(world: &World, entity: Entity) -> String {
    let Ok(object) = world.entity(entity) else { return String::from("despawned") };
    if let Some(bullet) = object.get::<&Bullet>() {
        format!("a bullet fired at frame {}", bullet.born)
    } else if object.has::<Turret>() {
        String::from("a turret")
    } else if object.has::<Ship>() {
        String::from("a ship")
    } else if object.has::<Mover>() {
        String::from("a mover")
    } else {
        String::from("a still object")
    }
}

//! A headless tower-defence simulation: how a game is built on the runtime.
//!
//! Enemies walk from the west edge towards a base at the east; turrets with parented barrels
//! shoot the nearest enemy in range; a camera follows the lead enemy. What it shows, in the
//! order the README's "Building a game" section explains it:
//!
//! - a custom stage, `Gameplay`, between `Input` and `Transform`;
//! - systems built from their query types (`System::with_query`, `System::with_queries`): the
//!   access is declared once, by the query the body gets, with `With`/`Without` filters so the
//!   scout and grunt movers share a batch;
//! - `SystemQuery::par_for_each` for the hot loops, the same result on any thread count;
//! - the engine's `Commands`: `spawn` returning the `Entity` (a drawable in one call with
//!   `ecs::MeshBundle` and `SpawnMesh::spawn_mesh_with`), hierarchy edits
//!   (`HierarchyCommands::set_parent`, `despawn_recursive`), plain despawns whose children keep
//!   their pose;
//! - a follow camera in `Transform` ordered `before(ecs::HIERARCHY_SYSTEM)`, so the view is
//!   never a frame late;
//! - AI that skips enemies tagged `Culled` (last frame's answer: gameplay runs before
//!   Visibility);
//! - animated units: every enemy is a [`WalkerRig`] playing its walk (a scout's faster), posed
//!   by the engine's animation system (`animation::install`) and culled by its posed box;
//! - `runtime::glam`, `App::frame_stats`, and the reports a game should watch.
//!
//! The simulation never needs a device: `tower_defence --window` draws the same game with the
//! engine's rendering (the meshes of [`TowerMeshes`], the ground and turret sizes of [`dress_for_window`]), the
//! debug overlay and picking.

use ecs::{scene, Aabb, BaseColor, Camera, Culled, HierarchyCommands, MaterialHandle, Mesh, MeshBundle, MeshHandle};
use ecs::{SpawnMesh, Transform};
use hecs::{Entity, With, Without};
use renderer::MeshLibrary;
use runtime::glam::{Quat, Vec3};
use runtime::{App, Stage, System};

use crate::random::XorShift;
use crate::walker::WalkerRig;

/// The meshes the game's drawables name, by handle: the unit cube (turrets, barrels, the
/// ground) and the walker's skinned body (enemies).
pub struct TowerMeshes;

impl TowerMeshes {
    /// The unit cube (`-0.5..0.5` on every axis).
    pub const CUBE: MeshHandle = MeshHandle(0);
    /// The walker's body, the finest level of its chain ([`WalkerRig::add_to`]).
    pub const WALKER: MeshHandle = MeshHandle(1);

    /// The library the handles index.
    pub fn library() -> MeshLibrary {
        let mut library = MeshLibrary::with_unit_cube();
        let walker = WalkerRig::new().add_to(&mut library);
        assert_eq!(walker.start, Self::WALKER.0, "the walker follows the unit cube");
        library
    }
}

/// Colours of the game's drawables (`BaseColor`), so a window tells them apart.
const GRUNT_COLOR: BaseColor = BaseColor([0.75, 0.2, 0.15, 1.0]);
const SCOUT_COLOR: BaseColor = BaseColor([0.95, 0.8, 0.2, 1.0]);
const TURRET_COLOR: BaseColor = BaseColor([0.35, 0.4, 0.5, 1.0]);
const BARREL_COLOR: BaseColor = BaseColor([0.15, 0.15, 0.2, 1.0]);
const GROUND_COLOR: BaseColor = BaseColor([0.3, 0.45, 0.25, 1.0]);

/// The game's own stage, between `Input` and `Transform`.
pub const GAMEPLAY: &str = "Gameplay";

/// Where enemies go: they are removed when they reach this x.
const BASE_X: f32 = 200.0;
/// Turret reach, in world units.
const TURRET_RANGE: f32 = 25.0;

/// An enemy: hit points left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Enemy {
    /// Hit points left; at zero the enemy is despawned.
    pub health: u32,
}

/// A fast enemy (moved by its own system; the filters keep it apart from grunts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scout;

/// Units per second, along +X with some drift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity(pub Vec3);

/// A turret: frames until it can fire again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Turret {
    /// Frames until the next shot.
    pub cooldown: u32,
}

/// A turret's barrel, parented to the turret.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Barrel;

/// The camera that follows the lead enemy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FollowCamera;

/// Game state: a deterministic random stream and the score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Game {
    /// xorshift64 state.
    pub random: XorShift,
    /// Enemies spawned per wave frame.
    pub spawn_per_frame: u32,
    /// Enemies killed by turrets.
    pub kills: u64,
    /// Enemies that reached the base.
    pub leaks: u64,
}

type ScoutMove = With<(&'static mut Transform, &'static Velocity), &'static Scout>;
type GruntMove = Without<With<(&'static mut Transform, &'static Velocity), &'static Enemy>, &'static Scout>;
type Thinking = Without<With<(&'static mut Velocity, &'static Transform), &'static Enemy>, &'static Culled>;

/// Builds the game on an app of `threads`-way parallelism, with `spawn_per_frame` enemies
/// spawned each frame (the 20k-enemy scene is `--spawn 80` for 250 frames).
pub fn build(threads: usize, spawn_per_frame: u32) -> App {
    let mut app = App::with_threads(threads);
    app.set_fixed_delta(Some(1.0 / 60.0));
    culling::install(&mut app);
    animation::install(&mut app);
    app.add_stage_after(Stage::Input, GAMEPLAY).expect("Input exists and Gameplay is new");
    app.insert_resource(Game { random: XorShift::new(0x9E37_79B9_7F4A_7C15), spawn_per_frame, kills: 0, leaks: 0 });

    let world = app.world_mut();
    let camera = scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 30.0, 40.0), Vec3::ZERO));
    world.insert_one(camera, FollowCamera).expect("just spawned");
    for index in 0..16 {
        let position = Vec3::new(12.0 * index as f32, 0.0, if index % 2 == 0 { 12.0 } else { -12.0 });
        let turret = scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(position));
        world.insert(turret, (Turret { cooldown: index % 4 }, TURRET_COLOR)).expect("just spawned");
        let barrel = scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(Vec3::Y));
        world.insert(barrel, (Barrel, BARREL_COLOR)).expect("just spawned");
        ecs::hierarchy::set_parent(world, barrel, turret).expect("both alive, no loop");
    }

    app.add_system(GAMEPLAY, spawn_wave());
    app.add_system(GAMEPLAY, think());
    app.add_system(GAMEPLAY, move_scouts());
    app.add_system(GAMEPLAY, move_grunts());
    app.add_system(GAMEPLAY, turrets());
    app.add_system(GAMEPLAY, rebuild_turrets());
    app.add_system(Stage::Transform, follow_camera());
    app
}

/// Dresses the game for a window: a ground under the lane (from behind the spawn line to past
/// the base) and turrets three times their size, so they read from the follow camera. Not
/// part of [`build`]: the headless game, its entities and its [`world_hash`] stay as they are.
/// Returns the ground.
pub fn dress_for_window(app: &mut App) -> Entity {
    const TURRET_SCALE: f32 = 3.0;
    let world = app.world_mut();
    for (transform, _) in world.query_mut::<(&mut Transform, &Turret)>() {
        transform.scale = Vec3::splat(TURRET_SCALE);
    }
    let size = Vec3::new(BASE_X + 120.0, 0.2, 200.0);
    let middle = Vec3::new(BASE_X * 0.5, -0.1, 0.0);
    let ground = Mesh::new(TowerMeshes::CUBE, MaterialHandle(0), Aabb::new(-Vec3::splat(0.5), Vec3::splat(0.5)));
    let transform = Transform { translation: middle, rotation: Quat::IDENTITY, scale: size };
    let entity = scene::spawn_mesh(world, ground, transform);
    world.insert_one(entity, GROUND_COLOR).expect("just spawned");
    entity
}

/// Lets the fly camera have the view: the camera stops following the lead enemy.
pub fn stop_following(app: &mut App) {
    let cameras: Vec<Entity> = app.world().query::<With<Entity, &FollowCamera>>().iter().collect();
    for camera in cameras {
        let _ = app.world_mut().remove_one::<FollowCamera>(camera);
    }
}

/// Enemies walk at this many metres per second at the walk's normal speed: a faster enemy
/// plays its walk faster.
const WALK_METRES_PER_SECOND: f32 = 6.0;

fn spawn_wave() -> System {
    let walker = WalkerRig::new();
    let body = Mesh::new(TowerMeshes::WALKER, MaterialHandle(0), WalkerRig::BIND_BOUNDS);
    System::new("spawn wave", move |ctx| {
        let mut game = ctx.resource_mut::<Game>();
        for _ in 0..game.spawn_per_frame {
            let z = game.random.unit() * 60.0 - 30.0;
            let scout = game.random.next_u64() % 5 == 0;
            let speed = if scout { 18.0 } else { 6.0 + game.random.unit() * 4.0 };
            let transform = Transform::from_translation(Vec3::new(-20.0, 0.0, z));
            let drift = (game.random.unit() - 0.5) * 2.0;
            // The drift, already random, sets the phase: no extra draw, the same waves.
            let phase = drift * 0.5 + 0.5;
            let (mesh, skin, player, pose) = walker.components(phase, speed / WALK_METRES_PER_SECOND);
            let enemy = ctx.commands.spawn_mesh_with(
                MeshBundle::new(body, transform),
                (
                    Enemy { health: 3 },
                    Velocity(Vec3::new(speed, 0.0, drift)),
                    mesh,
                    skin,
                    player,
                    pose,
                    if scout { SCOUT_COLOR } else { GRUNT_COLOR },
                ),
            );
            if scout {
                ctx.commands.insert_one(enemy, Scout);
            }
        }
    })
    .writes_resource::<Game>()
    .spawns()
}

/// AI that only thinks for enemies in view last frame: steer back towards the lane centre.
fn think() -> System {
    System::with_query::<Thinking>("think", |_ctx, thinking| {
        thinking.par_for_each(512, |(velocity, transform)| {
            velocity.0.z = (velocity.0.z - transform.translation.z * 0.01).clamp(-3.0, 3.0);
        })
    })
}

fn move_scouts() -> System {
    System::with_query::<ScoutMove>("move scouts", |ctx, scouts| {
        let dt = ctx.time.delta_seconds;
        scouts.par_for_each(512, |(transform, velocity)| transform.translation += velocity.0 * dt);
    })
}

fn move_grunts() -> System {
    System::with_query::<GruntMove>("move grunts", |ctx, grunts| {
        let dt = ctx.time.delta_seconds;
        grunts.par_for_each(512, |(transform, velocity)| {
            transform.translation += velocity.0 * dt;
            transform.rotation = Quat::from_rotation_y(transform.translation.x * 0.05);
        });
    })
}

/// Turrets shoot the nearest enemy in range; dead and leaked enemies are despawned.
fn turrets() -> System {
    System::with_queries::<((&mut Turret, &Transform), (Entity, &mut Enemy, &Transform))>(
        "turrets",
        |ctx, (turrets, enemies)| {
            let mut game = ctx.resource_mut::<Game>();
            let mut turrets = turrets.borrow();
            let mut enemies = enemies.borrow();
            let mut enemies: Vec<(Entity, &mut Enemy, &Transform)> = enemies.iter().collect();
            // Storage order is not an identity: sort by entity id so the choice is stable.
            enemies.sort_unstable_by_key(|(entity, ..)| entity.id());
            for (turret, at) in turrets.iter() {
                if turret.cooldown > 0 {
                    turret.cooldown -= 1;
                    continue;
                }
                let nearest = enemies
                    .iter_mut()
                    .filter(|(_, enemy, _)| enemy.health > 0)
                    .map(|(entity, enemy, transform)| (transform.translation.distance(at.translation), *entity, enemy))
                    .filter(|(distance, ..)| *distance <= TURRET_RANGE)
                    .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.id().cmp(&b.1.id())));
                if let Some((_, entity, enemy)) = nearest {
                    enemy.health -= 1;
                    turret.cooldown = 3;
                    if enemy.health == 0 {
                        ctx.commands.despawn(entity);
                        game.kills += 1;
                    }
                }
            }
            for (entity, enemy, transform) in &enemies {
                if enemy.health > 0 && transform.translation.x >= BASE_X {
                    ctx.commands.despawn(*entity);
                    game.leaks += 1;
                }
            }
        },
    )
    .writes_resource::<Game>()
}

/// Every 100 frames the oldest turret is torn down, three ways in turn: its barrels moved to
/// the next turret (a re-parent through commands) before a plain despawn; a plain despawn that
/// leaves its barrels standing where they were, as roots; a recursive despawn.
fn rebuild_turrets() -> System {
    System::with_queries::<(With<Entity, &Turret>, With<(Entity, &ecs::Parent), &Barrel>)>(
        "rebuild turrets",
        |ctx, (turrets, barrels)| {
            if ctx.time.frame_index % 100 != 99 {
                return;
            }
            let mut turrets: Vec<Entity> = turrets.borrow().iter().collect();
            turrets.sort_unstable_by_key(|entity| entity.id());
            let mut barrels: Vec<(Entity, Entity)> =
                barrels.borrow().iter().map(|(barrel, parent)| (barrel, parent.0)).collect();
            barrels.sort_unstable_by_key(|(barrel, _)| barrel.id());
            let [oldest, next, ..] = turrets[..] else {
                return;
            };
            match ctx.time.frame_index / 100 % 3 {
                0 => {
                    for (barrel, parent) in barrels {
                        if parent == oldest {
                            ctx.commands.set_parent(barrel, next);
                        }
                    }
                    ctx.commands.despawn(oldest);
                }
                1 => ctx.commands.despawn(oldest),
                _ => ctx.commands.despawn_recursive(oldest),
            }
        },
    )
}

/// The camera hovers behind the lead enemy. It writes a `Transform` the hierarchy reads, so it
/// runs before the hierarchy says so; otherwise the view would lag a frame.
fn follow_camera() -> System {
    System::with_queries::<(With<&Transform, &Enemy>, With<&mut Transform, &FollowCamera>)>(
        "follow camera",
        |_ctx, (enemies, cameras)| {
            let lead = enemies
                .borrow()
                .iter()
                .map(|transform| transform.translation)
                .max_by(|a, b| a.x.total_cmp(&b.x).then(a.z.total_cmp(&b.z)));
            let Some(lead) = lead else {
                return;
            };
            for transform in cameras.borrow().iter() {
                *transform = scene::look_at(lead + Vec3::new(-30.0, 25.0, 0.0), lead);
            }
        },
    )
    .before(ecs::HIERARCHY_SYSTEM)
}

/// A hash of everything the simulation decides: each entity's id, pose, health and tags, in
/// id order, plus the score. Equal on any thread count.
pub fn world_hash(app: &App) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01B3;
    let mut hash = 0xCBF2_9CE4_8422_2325u64;
    let mut mix = |value: u64| {
        for byte in value.to_le_bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
        }
    };
    let world = app.world();
    let mut rows: Vec<(u32, [u32; 7], u32, bool)> = world
        .query::<(Entity, &Transform, Option<&Enemy>, Option<&Culled>)>()
        .iter()
        .map(|(entity, transform, enemy, culled)| {
            let (t, r) = (transform.translation, transform.rotation);
            let pose = [t.x, t.y, t.z, r.x, r.y, r.z, r.w].map(f32::to_bits);
            (entity.id(), pose, enemy.map_or(u32::MAX, |enemy| enemy.health), culled.is_some())
        })
        .collect();
    rows.sort_unstable_by_key(|row| row.0);
    for (id, pose, health, culled) in rows {
        mix(u64::from(id));
        pose.iter().for_each(|bits| mix(u64::from(*bits)));
        mix(u64::from(health));
        mix(u64::from(culled));
    }
    let game = *app.resource::<Game>();
    mix(game.kills);
    mix(game.leaks);
    hash
}

/// Counts of the live scene, for the summary.
pub fn census(app: &App) -> (usize, usize, usize) {
    let world = app.world();
    let enemies = world.query::<&Enemy>().iter().count();
    let culled = world.query::<With<&Enemy, &Culled>>().iter().count();
    let meshes = world.query::<&Mesh>().iter().count();
    (enemies, culled, meshes)
}

//! Building the skirmish: the map's props chunk by chunk, the sun and the camera at load;
//! the units, what they carry and the torches' lights mustered on the first frame through
//! commands; and the volleys of arrows fired and despawned every frame.

use std::collections::VecDeque;

use culling::occlusion::OccluderMeshes;
use ecs::{
    scene, Camera, DirectionalLight, HierarchyCommands, MeshBundle, PointLight, RenderSettings, ShadowBias,
    ShadowCaster, SpawnMesh, Transform, Viewport, Visible, WorldTransform,
};
use glam::{Quat, Vec3};
use hecs::Entity;
use runtime::{App, Stage, System};

use super::art::{color, hut_occluder, SkirmishLibrary, SkirmishMeshes};
use super::motion::{fly_arrows, fly_camera, march, patrol, Arrow, SkirmishCamera, TorchBearer, Walker};
use super::{SkirmishConfig, PROP_SPACING};
use crate::random::XorShift;

/// The stage the skirmish's systems run in, between `Input` and `Transform`.
pub const SKIRMISH_STAGE: &str = "Skirmish";

/// Props per side of a chunk: the map is laid out (and its entities spawned) chunk by chunk,
/// as a level streams in, so neighbours on the map are neighbours in storage.
const CHUNK: usize = 8;

/// Where a torch sits on its bearer, and where its flame (the light) sits on the torch.
const TORCH_GRIP: Vec3 = Vec3::new(0.35, 0.85, -0.15);
const FLAME: Vec3 = Vec3::new(0.0, 1.0, 0.0);
/// Where a pack sits on its carrier's back.
const PACK_PLACE: Vec3 = Vec3::new(0.0, 1.05, 0.3);

/// What [`build_skirmish`] spawned at load (the units come on the first frame).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Skirmish {
    /// Static props.
    pub props: usize,
    /// Mesh entities at any time once the units are mustered (the arrows in flight included).
    pub objects: usize,
    /// Side of the map, metres.
    pub field: f32,
}

/// The skirmish between frames: its random stream, the units and their rounds, and the
/// arrows in flight, oldest first.
pub struct SkirmishState {
    /// The configuration it was built with.
    pub config: SkirmishConfig,
    random: XorShift,
    /// Each unit's round, in unit order (the first [`SkirmishConfig::torch_bearers`] carry
    /// torches).
    pub rounds: Vec<Walker>,
    /// Each unit and the item it carries, once mustered.
    pub units: Vec<(Entity, Entity)>,
    /// The torches' lights, once mustered.
    pub lights: Vec<Entity>,
    /// The arrows in flight, oldest first.
    pub arrows: VecDeque<Entity>,
    /// Arrows fired so far.
    pub fired: u64,
    /// Arrows despawned so far.
    pub despawned: u64,
    /// The frame the units were mustered in.
    pub mustered: Option<u64>,
    /// The frame index the skirmish's systems last ran with (`FrameTime::frame_index`, which
    /// `App::last_frame_index` names after the frame).
    pub frame: u64,
}

impl SkirmishState {
    /// Where unit `index` stands at frame `frame` (where it stood at the start, if it stands
    /// still).
    pub fn unit_pose(&self, index: usize, frame: u64) -> Transform {
        let still = self.config.still;
        let standing = still.units || (still.torches && index < self.config.torch_bearers());
        self.rounds[index].pose(if standing { 0 } else { frame })
    }

    /// An arrow loosed at frame `frame` by a random unit (not a torch bearer, when there are
    /// others), and its pose now.
    fn loose(&mut self, frame: u64) -> (Arrow, Transform) {
        let bearers = self.config.torch_bearers();
        let archers = self.rounds.len() - bearers;
        let index = if archers > 0 { bearers + (self.random.next_u64() % archers as u64) as usize } else { 0 };
        let from = self.unit_pose(index, frame).translation + Vec3::Y * 1.4;
        let heading = self.random.range(0.0, std::f32::consts::TAU);
        let speed = self.random.range(25.0, 35.0);
        let velocity = Vec3::new(heading.cos() * speed, self.random.range(4.0, 8.0), heading.sin() * speed);
        let arrow = Arrow { from, velocity, fired: frame };
        (arrow, arrow.pose(frame))
    }
}

/// A headless skirmish app as its sample runs it: `threads` workers, a `viewport`, the huts'
/// walls as occluders, fixed 60 Hz steps, visibility tags only on marked entities; its meshes
/// and what was spawned.
pub fn skirmish_app(config: SkirmishConfig, threads: usize, viewport: Viewport) -> (App, SkirmishLibrary, Skirmish) {
    let mut app = App::with_threads(threads);
    culling::install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(viewport);
    app.resource_mut::<RenderSettings>().visibility_tags = ecs::VisibilityTags::Marked;
    let mut occluders = OccluderMeshes::new();
    occluders.insert(SkirmishMeshes::HUT, hut_occluder());
    app.insert_resource(occluders);
    let library = SkirmishLibrary::build(config.field());
    let built = build_skirmish(&mut app, config, &library);
    (app, library, built)
}

/// Spawns the skirmish into `app` with the meshes of `library`: the ground, the props, the
/// sun and the camera now; its stage and systems, which muster the units on the first frame
/// and then fire and despawn the volleys. The app needs `culling::install` first.
pub fn build_skirmish(app: &mut App, config: SkirmishConfig, library: &SkirmishLibrary) -> Skirmish {
    let field = config.field();
    let mut state = SkirmishState {
        config,
        random: XorShift::new(config.seed),
        rounds: Vec::with_capacity(config.units),
        units: Vec::new(),
        lights: Vec::new(),
        arrows: VecDeque::new(),
        fired: 0,
        despawned: 0,
        mustered: None,
        frame: 0,
    };
    let world = app.world_mut();
    let ground = library.mesh(SkirmishMeshes::GROUND);
    world.spawn_mesh(MeshBundle::new(ground, Transform::IDENTITY).with_color(color(SkirmishMeshes::GROUND, 0)));
    let props = spawn_props(world, &mut state, library);
    // The torch bearers patrol the middle of the map, where the camera comes down; the
    // others walk their rounds anywhere.
    for index in 0..config.units {
        let (home, radius) = if index < config.torch_bearers() {
            let middle = field * 0.5;
            (
                Vec3::new(middle + state.random.range(-40.0, 40.0), 0.0, middle + state.random.range(-40.0, 40.0)),
                state.random.range(6.0, 15.0),
            )
        } else {
            (
                Vec3::new(state.random.range(0.0, field), 0.0, state.random.range(0.0, field)),
                state.random.range(3.0, 12.0),
            )
        };
        let walker = Walker {
            home,
            radius,
            phase: state.random.range(0.0, std::f32::consts::TAU),
            speed: state.random.range(1.0, 1.8),
        };
        state.rounds.push(walker);
    }
    // A low sun from the south-west: long shadows across the map.
    let sun = Quat::from_rotation_y(-0.8) * Quat::from_rotation_x(-40f32.to_radians());
    let sun_light = DirectionalLight {
        color: [1.0, 0.95, 0.85],
        illuminance: 1.0,
        casts_shadows: config.shadows,
        ..DirectionalLight::default()
    };
    world.spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), sun_light));
    let camera_path = SkirmishCamera { field, period: config.camera_period };
    let camera = scene::spawn_camera(world, Camera::default(), camera_path.pose(0));
    world.insert_one(camera, camera_path).expect("the camera was just spawned");

    app.insert_resource(state);
    app.add_stage_after(Stage::Input, SKIRMISH_STAGE).expect("Input exists and the skirmish stage is new");
    app.add_system(SKIRMISH_STAGE, muster(library));
    if !config.still.units {
        app.add_system(SKIRMISH_STAGE, march());
        if !config.still.torches {
            app.add_system(SKIRMISH_STAGE, patrol());
        }
    }
    app.add_system(SKIRMISH_STAGE, fly_arrows());
    app.add_system(SKIRMISH_STAGE, volley(library));
    if !config.still.camera {
        app.add_system(Stage::Transform, fly_camera());
    }
    Skirmish { props, objects: 1 + props + 2 * config.units + config.arrows(), field }
}

/// The static props, chunk by chunk: each on its cell of the grid, jittered, turned and
/// scaled, with its level chain and as a shadow caster. Returns how many.
fn spawn_props(world: &mut hecs::World, state: &mut SkirmishState, library: &SkirmishLibrary) -> usize {
    let count = state.config.props();
    let side = (count.max(1) as f32).sqrt().ceil() as usize;
    let chunks = side.div_ceil(CHUNK);
    let mut props = Vec::with_capacity(count);
    'chunks: for chunk in 0..chunks * chunks {
        let (chunk_x, chunk_z) = (chunk % chunks, chunk / chunks);
        for cell in 0..CHUNK * CHUNK {
            let (x, z) = (chunk_x * CHUNK + cell % CHUNK, chunk_z * CHUNK + cell / CHUNK);
            if x >= side || z >= side {
                continue;
            }
            if props.len() == count {
                break 'chunks;
            }
            let handle = SkirmishLibrary::prop(state.random.unit());
            let jitter = Vec3::new(state.random.range(-1.0, 1.0), 0.0, state.random.range(-1.0, 1.0));
            let place = Vec3::new(x as f32 + 0.5, 0.0, z as f32 + 0.5) * PROP_SPACING + jitter;
            let scale = state.random.range(0.8, 1.3);
            let turn = Quat::from_rotation_y(state.random.range(0.0, std::f32::consts::TAU));
            let transform = Transform { translation: place, rotation: turn, scale: Vec3::splat(scale) };
            props.push((transform, handle));
        }
    }
    let placed = props.len();
    world.spawn_batch(props.into_iter().enumerate().map(|(index, (transform, handle))| {
        (
            transform,
            WorldTransform::from(transform),
            library.mesh(handle),
            Visible(true),
            color(handle, index),
            library.lod(handle, transform.scale.x),
            ShadowCaster,
        )
    }));
    placed
}

/// On the first frame: every unit, the pack or torch it carries (its child) and each torch's
/// light (the torch's child), spawned and parented through commands; and a sky full of
/// arrows, fired over the frames before, so the volleys are steady from the start.
fn muster(library: &SkirmishLibrary) -> System {
    let (body, pack, torch) =
        (library.mesh(SkirmishMeshes::UNIT), library.mesh(SkirmishMeshes::PACK), library.mesh(SkirmishMeshes::TORCH));
    let body_lod = library.lod(SkirmishMeshes::UNIT, 1.0);
    let arrow_mesh = library.mesh(SkirmishMeshes::ARROW);
    System::new("skirmish muster", move |ctx| {
        let frame = ctx.time.frame_index;
        let mut state = ctx.resource_mut::<SkirmishState>();
        if state.mustered.is_some() {
            return;
        }
        state.mustered = Some(frame);
        let config = state.config;
        for index in 0..state.rounds.len() {
            let bearer = index < config.torch_bearers();
            let bundle =
                MeshBundle::new(body, state.unit_pose(index, frame)).with_color(color(SkirmishMeshes::UNIT, index));
            let walker = state.rounds[index];
            let unit = if bearer {
                ctx.commands.spawn_mesh_with(bundle, (walker, body_lod.clone(), ShadowCaster, TorchBearer))
            } else {
                ctx.commands.spawn_mesh_with(bundle, (walker, body_lod.clone(), ShadowCaster))
            };
            let (mesh, place) = if bearer { (torch, TORCH_GRIP) } else { (pack, PACK_PLACE) };
            let item = ctx.commands.spawn_mesh_with(
                MeshBundle::new(mesh, Transform::from_translation(place)).with_color(color(mesh.mesh, index)),
                (ShadowCaster,),
            );
            ctx.commands.set_parent(item, unit);
            if bearer {
                let light = PointLight {
                    color: [1.0, 0.72, 0.38],
                    intensity: 30.0,
                    range: 14.0,
                    casts_shadows: config.shadows,
                    shadow_resolution: 256,
                    bias: ShadowBias::default(),
                };
                let flame = Transform::from_translation(FLAME);
                let light = ctx.commands.spawn((flame, WorldTransform::from(flame), light));
                ctx.commands.set_parent(light, item);
                state.lights.push(light);
            }
            state.units.push((unit, item));
        }
        for age in (0..config.arrows() as u64).rev().map(|age| age / config.volley.max(1) as u64) {
            let (arrow, _) = state.loose(frame.saturating_sub(age));
            let pose = arrow.pose(frame);
            let entity = ctx.commands.spawn_mesh_with(
                MeshBundle::new(arrow_mesh, pose).with_color(color(SkirmishMeshes::ARROW, 0)),
                (arrow,),
            );
            state.arrows.push_back(entity);
            state.fired += 1;
        }
    })
    .writes_resource::<SkirmishState>()
    .spawns()
}

/// Every frame after the first: the `volley` oldest arrows are despawned and as many fired.
fn volley(library: &SkirmishLibrary) -> System {
    let arrow_mesh = library.mesh(SkirmishMeshes::ARROW);
    System::new("skirmish volley", move |ctx| {
        let frame = ctx.time.frame_index;
        let mut state = ctx.resource_mut::<SkirmishState>();
        state.frame = frame;
        // The muster's arrows fly their first frame.
        if state.mustered.is_none_or(|mustered| mustered == frame) {
            return;
        }
        for _ in 0..state.config.volley {
            if let Some(old) = state.arrows.pop_front() {
                ctx.commands.despawn(old);
                state.despawned += 1;
            }
            let (arrow, pose) = state.loose(frame);
            let bundle =
                MeshBundle::new(arrow_mesh, pose).with_color(color(SkirmishMeshes::ARROW, state.fired as usize));
            let entity = ctx.commands.spawn_mesh_with(bundle, (arrow,));
            state.arrows.push_back(entity);
            state.fired += 1;
        }
    })
    .writes_resource::<SkirmishState>()
    .spawns()
    .after("skirmish muster")
}

//! The shadow casters' GPU cull draws each chained caster at the level the camera's cull
//! chooses for it (`shadow_cull.h`), on lavapipe with validation, in a running app: over a
//! camera walk through a field of chained casters lit by the sun (four cascades), a spot light
//! and a point light (six faces), every command of every light view's list (`shadow_draws`,
//! read back) draws the level the CPU's error rule (`culling::select_lod_by_error`) picks from
//! the camera's eye and view (`Visibility::lod_error_view`) with the slot's state of last
//! frame (`object_lod_levels`, read back), whichever light's view it is in and whether the
//! camera sees the caster or not; and a caster the camera draws casts its shadow at the level
//! of the Visibility stage's own pick. Casters of a chain of the distance rule beside them
//! cast the record's level (the CPU's distance pick), as the camera draws them.

use std::sync::Arc;

use culling::{lod_box_distance_sq, lod_scale_sq, select_lod_by_error, CullingBackend, Visibility};
use ecs::{scene, Aabb, Camera, DirectionalLight, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, PointLight};
use ecs::{ShadowCaster, ShadowSettings, SpotLight, Transform};
use glam::{Quat, Vec3};
use meshes::{MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice, ReadbackBuffer};
use renderer::{install_render, shadow_draws_bytes, BitsReadback, MeshLibrary, RenderReport, RenderSetup};
use renderer::{MAX_SHADOW_VIEWS, OBJECT_LOD_LEVELS, SHADOW_DRAWS};

const WIDTH: u32 = 96;
const HEIGHT: u32 = 64;
const CAPACITY: u32 = 1024;
const SIDE: usize = 20;
const FRAMES: usize = 8;
/// The chain's errors, finest first (mesh units).
const ERRORS: [f32; 3] = [0.0, 0.02, 0.12];
/// Indices of each level: the whole cube, four faces, two faces.
const LEVEL_INDICES: [u32; 3] = [36, 24, 12];

/// The unit cube (mesh 0), a chain of three levels of it (meshes 1-3) with [`ERRORS`], and
/// the same levels again without errors (meshes 4-6: a chain of the distance rule).
fn library() -> MeshLibrary {
    let mut library = MeshLibrary::with_unit_cube();
    let normals = [[0.0, 0.0, 1.0]; 8];
    let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
    let levels = [&UNIT_CUBE_INDICES[..36], &UNIT_CUBE_INDICES[..24], &UNIT_CUBE_INDICES[..12]];
    let levels: Vec<(&[u32], &[meshes::Meshlet])> = levels.iter().map(|indices| (*indices, &[][..])).collect();
    let chain = library.add_mesh_levels(vertices, &levels).expect("a chain");
    library.set_level_errors(chain, &ERRORS).expect("errors of the whole chain");
    library.add_mesh_levels(vertices, &levels).expect("a chain");
    library
}

/// The first mesh of the chain of the distance rule.
const DISTANCE_CHAIN: u32 = 4;

/// Host buffers the frame's `shadow_draws` and `object_lod_levels` are copied into.
struct Readbacks {
    draws: ReadbackBuffer,
    states: ReadbackBuffer,
}

fn app(device: &Arc<GpuDevice>) -> (runtime::App, Readbacks) {
    let draws_bytes = shadow_draws_bytes(CAPACITY, MAX_SHADOW_VIEWS as u32);
    let readbacks = Readbacks {
        draws: ReadbackBuffer::new(device, "shadow draws readback", draws_bytes).expect("readback"),
        states: ReadbackBuffer::new(device, "lod states readback", u64::from(CAPACITY) * 4).expect("readback"),
    };
    let (draws, states) = (readbacks.draws.shared(), readbacks.states.shared());
    let add_readbacks: renderer::AddPasses = Box::new(move |graph| {
        graph.import_buffer("shadow draws readback", draws);
        graph.add_typed_pass(BufferReadbackPass::new(SHADOW_DRAWS, "shadow draws readback"));
        graph.import_buffer("lod states readback", states);
        graph.add_typed_pass(BufferReadbackPass::new(OBJECT_LOD_LEVELS, "lod states readback"));
        Ok(())
    });
    let setup = RenderSetup {
        shadows: true,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: library(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![add_readbacks],
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ShadowSettings>();
        settings.atlas_resolution = 1024;
        settings.cascade_resolution = 128;
        settings.max_distance = 60.0;
        // One phase per view: each view's whole list is `shadow_draws`.
        settings.caster_occlusion = false;
    }
    install_render(&mut app, setup).expect("a device is there");
    (app, readbacks)
}

/// A field of casters of the chain from mesh `first`, rotated and scaled apart, and the three
/// lights; the levels hand over at `max_distances` (the distance rule's; the error rule
/// ignores them).
fn build_scene(app: &mut runtime::App, first: u32, max_distances: [f32; 3]) -> runtime::hecs::Entity {
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_at(0));
    let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let levels: Arc<[LodLevel]> = (0..3)
        .map(|level| LodLevel { mesh: MeshHandle(first + level), max_distance: max_distances[level as usize] })
        .collect();
    for index in 0..SIDE * SIDE {
        let (column, row) = ((index % SIDE) as f32, (index / SIDE) as f32);
        let place = Vec3::new(column * 3.0 - 30.0, 0.5 + 0.4 * (index % 5) as f32, 4.0 - row * 3.0);
        let mut transform = Transform::from_translation(place);
        transform.rotation = Quat::from_rotation_y(index as f32 * 0.37);
        transform.scale = Vec3::new(0.6 + 0.1 * (index % 7) as f32, 0.5 + 0.2 * (index % 4) as f32, 0.8);
        let mesh = Mesh::new(MeshHandle(first), MaterialHandle(0), bounds);
        let entity = scene::spawn_mesh(app.world_mut(), mesh, transform);
        let lod = Lod { levels: Arc::clone(&levels), bias: 1.0 };
        app.world_mut().insert(entity, (lod, ShadowCaster)).expect("spawned");
    }
    let sun = Quat::from_rotation_y(0.6) * Quat::from_rotation_x(-0.9);
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let spot = Transform::from_translation_rotation(Vec3::new(-5.0, 8.0, -10.0), Quat::from_rotation_x(-1.3));
    app.world_mut().spawn((spot, SpotLight { range: 40.0, ..SpotLight::default() }));
    let lamp = Transform::from_translation(Vec3::new(8.0, 4.0, -20.0));
    app.world_mut().spawn((lamp, PointLight { range: 30.0, ..PointLight::default() }));
    camera
}

/// The camera of frame `frame`: it walks into the field and turns, so levels change and
/// casters come into and leave its view.
fn camera_at(frame: usize) -> Transform {
    let step = frame as f32;
    let eye = Vec3::new(-12.0 + 2.0 * step, 2.5, 12.0 - 4.0 * step + 2.0 * (step * 1.3).sin());
    scene::look_at(eye, eye + Vec3::new((step * 0.6).sin(), -0.1, -1.0))
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().expect("4 bytes"))).collect()
}

/// The level a state word of `object_lod_levels` names (the scene's one chain): 0 for none.
fn state_level(word: u32) -> u32 {
    if word >> 3 == 0 {
        0
    } else {
        word & 7
    }
}

/// What the frames' checks counted.
#[derive(Default)]
struct Seen {
    /// Commands checked per level.
    levels: [u32; 3],
    /// Commands of casters the camera does not see.
    unseen_casters: u32,
    /// Commands of casters the camera sees, checked against the Visibility stage's level.
    seen_casters: u32,
    /// Views that drew something.
    views: u32,
}

/// Checks every command of every light view of the frame just run against the CPU rule,
/// `last_states` being the camera's states of the frame before.
fn check_frame(app: &runtime::App, readbacks: &Readbacks, last_states: &[u32], frame: usize, seen: &mut Seen) {
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
    assert!(report.shadows.on_device, "frame {frame}: the GPU culls the casters");
    let visibility = app.resource::<Visibility>();
    let (lod, eye) = visibility.lod_error_view().expect("the error rule's view");
    let objects = visibility.objects();
    let visible = visibility.bits().words();
    let draws = words(readbacks.draws.read().expect("draws"));
    for (view, drawn) in report.shadows.views.iter().enumerate() {
        seen.views += u32::from(drawn.count > 0);
        let first = view * CAPACITY as usize * 5;
        for command in draws[first..first + drawn.count as usize * 5].chunks_exact(5) {
            let (index_count, slot) = (command[0], command[4] as usize);
            let level = LEVEL_INDICES.iter().position(|&count| count == index_count);
            let level = level.unwrap_or_else(|| panic!("frame {frame} view {view} slot {slot}: {index_count} indices"));
            let model = objects.models[slot];
            let scale_sq = lod_scale_sq([model.x_axis.truncate(), model.y_axis.truncate(), model.z_axis.truncate()]);
            let (center, half) = (objects.bounds[slot].center(), objects.bounds[slot].half_extent());
            let distance_sq = lod_box_distance_sq(eye, center, half);
            let expected = select_lod_by_error(&ERRORS, scale_sq, distance_sq, &lod, state_level(last_states[slot]));
            assert_eq!(
                level as u32, expected,
                "frame {frame} view {view} slot {slot}: the shadow's level is not the camera rule's"
            );
            seen.levels[level] += 1;
            if visible[slot / 64] >> (slot % 64) & 1 == 1 {
                let cpu = objects.draws[slot].mesh.0 - 1;
                assert_eq!(level as u32, cpu, "frame {frame} view {view} slot {slot}: the camera draws another level");
                seen.seen_casters += 1;
            } else {
                seen.unseen_casters += 1;
            }
        }
    }
}

#[test]
fn gpu_lod_shadow_views_draw_the_camera_rules_level_of_every_caster() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, readbacks) = app(&device);
    let camera = build_scene(&mut app, 1, [f32::INFINITY; 3]);
    let mut seen = Seen::default();
    let mut last_states = Vec::new();
    for frame in 0..FRAMES {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(frame);
        app.run_frame();
        // The first frame's states come from a history nothing wrote yet.
        if frame > 0 {
            check_frame(&app, &readbacks, &last_states, frame, &mut seen);
        }
        last_states = words(readbacks.states.read().expect("states"));
    }
    assert!(seen.levels.iter().all(|&count| count > 0), "every level cast a shadow: {:?}", seen.levels);
    assert!(seen.unseen_casters > 0 && seen.seen_casters > 0, "casters in and out of the camera's view");
    assert!(seen.views >= 3 * (FRAMES as u32 - 1), "the sun's, the spot's and the lamp's views drew casters");
    drop(app);
    assert_no_validation_messages(&device);
}

/// Chains of the distance rule beside chains of the error rule (the camera's cull chooses
/// those): the main view draws a distance chain's record level (the CPU's distance pick), and
/// so does every light view for its casters (the shadow of the mesh drawn), not a level the
/// error rule would read from the levels' greatest distances.
#[test]
fn gpu_lod_shadow_views_draw_distance_chains_at_the_records_level() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, readbacks) = app(&device);
    let camera = build_scene(&mut app, DISTANCE_CHAIN, [12.0, 24.0, f32::INFINITY]);
    for index in 0..8 {
        // A row of the error rule's chain, so the camera's cull chooses levels.
        let place = Transform::from_translation(Vec3::new(index as f32 * 2.0 - 8.0, 0.5, 6.0));
        let bounds = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
        let entity = scene::spawn_mesh(app.world_mut(), Mesh::new(MeshHandle(1), MaterialHandle(0), bounds), place);
        let levels: Arc<[LodLevel]> =
            (1..4).map(|mesh| LodLevel { mesh: MeshHandle(mesh), max_distance: f32::INFINITY }).collect();
        app.world_mut().insert(entity, (Lod { levels, bias: 1.0 }, ShadowCaster)).expect("spawned");
    }
    let mut levels = [0u32; 3];
    for frame in 0..FRAMES {
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(frame);
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        let visibility = app.resource::<Visibility>();
        let objects = visibility.objects();
        let draws = words(readbacks.draws.read().expect("draws"));
        for (view, drawn) in report.shadows.views.iter().enumerate() {
            let first = view * CAPACITY as usize * 5;
            for command in draws[first..first + drawn.count as usize * 5].chunks_exact(5) {
                let (index_count, slot) = (command[0], command[4] as usize);
                let Some(record) = objects.draws[slot].mesh.0.checked_sub(DISTANCE_CHAIN) else { continue };
                assert_eq!(index_count, LEVEL_INDICES[record as usize], "frame {frame} view {view} slot {slot}");
                levels[record as usize] += 1;
            }
        }
    }
    assert!(levels.iter().all(|&count| count > 0), "casters of every level: {levels:?}");
    drop(app);
    assert_no_validation_messages(&device);
}

//! The cost and the memory of meshes added while frames run, on lavapipe with validation: an
//! arrival rewrites only the slots of the mesh that arrived; under a mesh memory budget a
//! camera flight over meshes whose full levels exceed it keeps the resident bytes under it on
//! every frame, evicts levels and loads them again into the ranges they left (the buffers do
//! not grow), and every frame holds to the truth (nothing hidden that shows, the same image
//! with culling off drawing the same resident set), on both culling backends, pipelined and
//! under a sun whose cascades the domes cast into (no caster dropped); a budget below what the
//! views need at the coarsest levels evicts meshes whole (vertices and coarsest level), draws
//! their boxes meanwhile and brings them back when needed; a budget below the boxes draws the
//! boxes and warns once.

mod lit_cube;

use std::sync::{Arc, Mutex, Once};

use culling::ShadowViews;
use culling::{CullingBackend, Visibility};
use ecs::{
    scene, Aabb, Camera, DirectionalLight, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, ShadowCaster, Transform,
};
use glam::{Quat, Vec3};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, MeshVertices, RenderMeshes,
    RenderReport, RenderSetup, SharedCapture,
};

/// The warnings logged by this binary's tests.
static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        if record.level() <= log::Level::Warn {
            WARNINGS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

/// Installs [`Capture`] as the binary's logger (once, whichever test comes first).
fn capture_warnings() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        log::set_logger(&Capture).expect("the only logger of this binary");
        log::set_max_level(log::LevelFilter::Warn);
    });
}

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

/// A square patch of `side` x `side` quads over the unit square of y = 0, bulged into a dome,
/// with one level per `steps` entry (the quads taken every `step` rows and columns), finest
/// first.
struct Patch {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    levels: Vec<Vec<u32>>,
}

fn patch(side: u32, steps: &[u32]) -> Patch {
    let mut positions = Vec::new();
    for row in 0..=side {
        for column in 0..=side {
            let (x, z) = (column as f32 / side as f32 - 0.5, row as f32 / side as f32 - 0.5);
            positions.push([x, 0.5 - (x * x + z * z), z]);
        }
    }
    let normals = vec![[0.0, 1.0, 0.0]; positions.len()];
    let vertex = |row: u32, column: u32| row * (side + 1) + column;
    let levels = steps
        .iter()
        .map(|&step| {
            let mut indices = Vec::new();
            for row in (0..side).step_by(step as usize) {
                for column in (0..side).step_by(step as usize) {
                    let (a, b) = (vertex(row, column), vertex(row, column + step));
                    let (c, d) = (vertex(row + step, column), vertex(row + step, column + step));
                    // Counter-clockwise seen from above.
                    indices.extend([a, c, d, a, d, b]);
                }
            }
            indices
        })
        .collect();
    Patch { positions, normals, levels }
}

/// Side of the shadow atlas of the flights with a sun.
const ATLAS: u32 = 512;

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, capacity: u32) -> (runtime::App, SharedCapture) {
    app_with(device, backend, capacity, false)
}

/// An app of `capacity` slots at first, with shadows (a sun's cascades in an [`ATLAS`] atlas)
/// when `shadows`.
fn app_with(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    capacity: u32,
    shadows: bool,
) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity,
        meshes: lit_cube(),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    if shadows {
        let mut settings = app.resource_mut::<ecs::ShadowSettings>();
        settings.atlas_resolution = ATLAS;
        settings.cascade_resolution = 256;
        settings.max_distance = 40.0;
    }
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    if shadows {
        let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(0.5, -1.0, 0.3).normalize());
        app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    }
    (app, capture)
}

/// Cubes on a grid of `side` x `side` in the plane y = 0, one unit apart, centred.
fn spawn_cubes(app: &mut runtime::App, side: u32) {
    for index in 0..side * side {
        let (x, z) = ((index % side) as f32 - side as f32 / 2.0, (index / side) as f32 - side as f32 / 2.0);
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.3), Vec3::splat(0.3)));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(x, 0.0, z)));
    }
}

/// A GPU-culled app with `side` x `side` cubes, then (three frames later) a dome of three
/// levels added under a transfer budget of 16 KiB a frame (the box, then each level, in frames
/// of their own), drawn by `users` objects. Returns the app, its capture and the dome's ids.
fn cubes_then_a_dome(
    device: &Arc<GpuDevice>,
    side: u32,
    users: u32,
) -> (runtime::App, SharedCapture, std::ops::Range<u32>) {
    let (mut app, capture) = app(device, CullingBackend::Gpu, side * side + users);
    app.resource_mut::<ecs::RenderSettings>().transfer_budget = 16 << 10;
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 30.0, 30.0), Vec3::ZERO));
    spawn_cubes(&mut app, side);
    let dome = patch(64, &[1, 4, 16]);
    let vertices = MeshVertices { positions: &dome.positions, normals: &dome.normals, uvs: &[] };
    let levels: Vec<(&[u32], &[renderer::Meshlet])> = dome.levels.iter().map(|level| (&level[..], &[][..])).collect();
    for _ in 0..3 {
        app.run_frame();
    }
    let ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &levels).expect("a valid dome");
    for user in 0..users {
        let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        let place = Transform::from_translation(Vec3::new(user as f32 * 2.0, 1.0, 0.0));
        scene::spawn_mesh(app.world_mut(), mesh, place);
    }
    (app, capture, ids)
}

/// A scene of many cubes and a few objects of one added mesh whose levels arrive over several
/// frames: each arrival writes the added mesh's slots and no others, and uploads their
/// records alone.
#[test]
fn an_arrival_rewrites_only_the_slots_of_its_mesh() {
    let Some(device) = gpu_test_context() else { return };
    const USERS: u32 = 3;
    let (mut app, _capture, ids) = cubes_then_a_dome(&device, 40, USERS);
    let mut arrivals = 0;
    let mut drawn_before = None;
    for frame in 0..40 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "frame {frame}: {:?}", report.error);
        let drawn = report.stand_ins.iter().find(|(mesh, _)| *mesh == ids.start).map(|&(_, drawn)| drawn);
        if frame > 0 && drawn != drawn_before {
            arrivals += 1;
            assert!(
                report.synced_slots <= USERS,
                "frame {frame}: an arrival wrote {} slots, not only the {USERS} of its mesh",
                report.synced_slots
            );
            assert!(report.upload.records <= USERS, "frame {frame}: {} records uploaded", report.upload.records);
        }
        drawn_before = drawn;
        if drawn.is_none() && frame > 0 {
            break;
        }
    }
    assert!(arrivals >= 2, "the coarser levels then the finest arrive in frames of their own ({arrivals})");
    assert_no_validation_messages(&device);
}

/// The figure of the note (`cargo test --release -p renderer --test mesh_budget -- --ignored
/// --nocapture`): what an arrival writes and uploads among 100k cubes, frame by frame.
#[test]
#[ignore = "a figure for the docs, not a check"]
fn what_an_arrival_writes_among_100k_objects() {
    let Some(device) = gpu_test_context() else { return };
    const USERS: u32 = 3;
    let (mut app, _capture, ids) = cubes_then_a_dome(&device, 317, USERS);
    let mut before = None;
    for frame in 0..40 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let report = app.resource::<RenderReport>();
        let drawn = report.stand_ins.iter().find(|(mesh, _)| *mesh == ids.start).map(|&(_, drawn)| drawn);
        if frame > 0 && drawn != before {
            println!(
                "arrival in frame {frame} ({drawn:?}): {} slots written, {} records uploaded ({} bytes of objects), \
                 sync {:.3} ms",
                report.synced_slots,
                report.upload.records,
                report.upload.bytes,
                report.sync_seconds * 1e3
            );
        }
        before = drawn;
        if drawn.is_none() && frame > 0 {
            break;
        }
    }
}

/// Meshes added in a row along +x, `SPACING` apart, each an object of three levels chosen by
/// distance.
const MESHES: u32 = 8;
const SPACING: f32 = 12.0;
/// The levels' steps: full detail near, then coarser.
const STEPS: [u32; 3] = [1, 4, 16];

/// The flight's world: the meshes added (the reference given the same), one object each
/// with its levels, and the camera; returns the camera and each mesh's ids.
fn spawn_flight(
    app: &mut runtime::App,
    reference: &mut ReferenceRenderer,
    dome: &Patch,
) -> (runtime::hecs::Entity, Vec<std::ops::Range<u32>>) {
    let vertices = MeshVertices { positions: &dome.positions, normals: &dome.normals, uvs: &[] };
    let levels: Vec<(&[u32], &[renderer::Meshlet])> = dome.levels.iter().map(|level| (&level[..], &[][..])).collect();
    let mut all = Vec::new();
    for index in 0..MESHES {
        let ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &levels).expect("a valid dome");
        assert_eq!(reference.add_mesh_levels(vertices, &levels).expect("the same dome"), ids.clone());
        let lod_levels: Vec<LodLevel> = ids
            .clone()
            .zip([6.0, 14.0, f32::INFINITY])
            .map(|(id, max_distance)| LodLevel { mesh: MeshHandle(id), max_distance })
            .collect();
        let bounds = Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 0.5, 0.5));
        let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), bounds);
        let place =
            Transform::from_translation(Vec3::new(index as f32 * SPACING, 0.0, 0.0)).with_scale(Vec3::splat(4.0));
        let entity = scene::spawn_mesh(app.world_mut(), mesh, place);
        let lod = Lod { levels: lod_levels.into(), bias: 1.0 };
        app.world_mut().insert(entity, (lod, ShadowCaster)).expect("spawned");
        all.push(ids);
    }
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_at(0.0));
    (camera, all)
}

/// The camera over the row at `x`, looking ahead and down.
fn camera_at(x: f32) -> Transform {
    scene::look_at(Vec3::new(x - 3.0, 3.0, 3.0), Vec3::new(x + 2.0, 0.0, 0.0))
}

/// The camera's x in frame `frame` of `frames`: out along the row and back.
fn flight_x(frame: u32, frames: u32) -> f32 {
    let far = (MESHES - 1) as f32 * SPACING;
    let half = frames / 2;
    if frame < half {
        far * frame as f32 / half as f32
    } else {
        far * (frames - frame) as f32 / half as f32
    }
}

/// How a flight's frames run.
#[derive(Clone, Copy, Debug)]
struct Mode {
    pipelined: bool,
    /// A sun's shadows, the domes casting.
    shadows: bool,
    /// The view answers on request (no lists: the needs come from the frame's bits).
    on_request: bool,
}

/// What a flight saw.
struct Flight {
    max_resident: u64,
    evicted: u32,
    loaded: u32,
    /// Levels that were resident, evicted, then resident again.
    reloaded: usize,
    /// Of those, coarsest levels (their mesh's vertices left and came back with them).
    reloaded_coarsest: usize,
    /// Bytes of the mesh buffers when the camera turned back, and at the end.
    buffers_at_turn: u64,
    buffers_at_end: u64,
}

/// Flies the camera out along the row and back under `budget`, checking every frame against
/// the truth.
fn fly(device: &Arc<GpuDevice>, backend: CullingBackend, mode: Mode, budget: u64, frames: u32) -> Flight {
    let Mode { pipelined, shadows, on_request } = mode;
    let (mut app, capture) = app_with(device, backend, 16, shadows);
    {
        let mut settings = app.resource_mut::<ecs::RenderSettings>();
        settings.pipelined_frames = pipelined;
        settings.mesh_memory_budget = Some(budget);
        settings.evict_after_frames = 4;
        settings.transfer_budget = 64 << 10;
        if on_request {
            settings.cpu_answers = ecs::CpuAnswers::OnRequest;
        }
    }
    let mut reference = if shadows {
        ReferenceRenderer::with_shadows(Arc::clone(device), (WIDTH, HEIGHT), 16, lit_cube(), SKY, ATLAS)
    } else {
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 16, lit_cube(), SKY)
    }
    .expect("a reference");
    let dome = patch(48, &STEPS);
    // The first frame runs before the meshes are added: the budget is in force when they are.
    app.run_frame();
    let (camera, ids) = spawn_flight(&mut app, &mut reference, &dome);
    let meshes = app.resource::<RenderMeshes>().clone();
    let levels: Vec<u32> = ids.iter().flat_map(|ids| ids.clone()).collect();
    // By level: resident, then evicted, then resident again.
    let mut history = vec![(false, false, false); levels.len()];
    let mut flight = Flight {
        max_resident: 0,
        evicted: 0,
        loaded: 0,
        reloaded: 0,
        reloaded_coarsest: 0,
        buffers_at_turn: 0,
        buffers_at_end: 0,
    };
    for frame in 0..frames {
        if frame == frames / 2 {
            flight.buffers_at_turn = meshes.buffer_bytes();
        }
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(flight_x(frame, frames));
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let label = format!("{backend:?} {mode:?} frame {frame}");
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        let residency = report.residency;
        assert_eq!(residency.budget, Some(budget), "{label}");
        assert!(residency.resident_bytes <= budget, "{label}: {residency:?}");
        flight.max_resident = flight.max_resident.max(residency.resident_bytes);
        flight.evicted += residency.levels_evicted;
        flight.loaded += residency.levels_loaded;
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let views = app.resource::<ShadowViews>();
        let views = shadows.then_some(&*views);
        let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, views)
            .expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        assert!(checked.truth.objects_with_pixels >= 1, "{label}: the meshes ahead show");
        if shadows {
            assert_eq!(checked.truth.dropped_casters, Some(0), "{label}: {:?}", checked.truth);
        }
        for (index, &level) in levels.iter().enumerate() {
            let resident = meshes.is_resident(level);
            let seen = &mut history[index];
            match (resident, *seen) {
                (true, (false, _, _)) => seen.0 = true,
                (false, (true, false, _)) => seen.1 = true,
                (true, (true, true, _)) => seen.2 = true,
                _ => {}
            }
        }
    }
    flight.buffers_at_end = meshes.buffer_bytes();
    flight.reloaded = history.iter().filter(|seen| seen.2).count();
    let coarsest: Vec<bool> = ids.iter().flat_map(|ids| ids.clone().map(move |id| id == ids.end - 1)).collect();
    flight.reloaded_coarsest = history.iter().zip(&coarsest).filter(|(seen, &coarsest)| seen.2 && coarsest).count();
    assert_no_validation_messages(device);
    flight
}

/// The bytes a mesh of the flight takes with its levels, and at its coarsest (with its
/// vertices and box).
fn dome_bytes(dome: &Patch) -> (u64, u64) {
    let vertices = dome.positions.len() as u64 * 24 + 8 * 24 + 36 * 4;
    let levels: Vec<u64> = dome.levels.iter().map(|level| level.len() as u64 * 4).collect();
    (vertices + levels.iter().sum::<u64>(), vertices + levels.last().copied().unwrap_or(0))
}

#[test]
fn a_flight_under_a_budget_evicts_and_reloads_levels_and_holds_to_the_truth() {
    let Some(device) = gpu_test_context() else { return };
    let (full, coarsest) = dome_bytes(&patch(48, &STEPS));
    let cube = lit_cube();
    let install = cube.positions().len() as u64 * 24 + cube.indices().len() as u64 * 4;
    // Every mesh at its coarsest and three meshes in full: far below every level of every mesh.
    let budget = install + u64::from(MESHES) * coarsest + 3 * (full - coarsest);
    assert!(budget < install + u64::from(MESHES) * full * 3 / 4, "the full levels exceed the budget");
    // Where the device reports its heap's budget, the one in force is also capped by it: far
    // above this test's on any device it runs on.
    println!("the device's memory budget: {:?}", device.memory_budget());
    let serial = Mode { pipelined: false, shadows: false, on_request: false };
    let runs = [
        (CullingBackend::Gpu, serial),
        (CullingBackend::Cpu, serial),
        (CullingBackend::Gpu, Mode { pipelined: true, ..serial }),
        (CullingBackend::Gpu, Mode { shadows: true, ..serial }),
        (CullingBackend::Cpu, Mode { shadows: true, ..serial }),
        (CullingBackend::Gpu, Mode { on_request: true, ..serial }),
    ];
    for (backend, mode) in runs {
        let flight = fly(&device, backend, mode, budget, 120);
        let backend = format!("{backend:?} {mode:?}");
        println!(
            "{backend}: budget {budget} bytes (all levels {} bytes), resident at most {} bytes, {} levels loaded, \
             {} evicted, {} loaded again; mesh buffers {} bytes at the turn, {} at the end",
            install + u64::from(MESHES) * full,
            flight.max_resident,
            flight.loaded,
            flight.evicted,
            flight.reloaded,
            flight.buffers_at_turn,
            flight.buffers_at_end
        );
        assert!(flight.evicted > 0, "{backend}: levels were evicted");
        assert!(flight.reloaded > 0, "{backend}: an evicted level was loaded again on the way back");
        assert_eq!(
            flight.buffers_at_turn, flight.buffers_at_end,
            "{backend}: levels loaded again take the ranges freed: the buffers do not grow"
        );
    }
}

#[test]
fn a_flight_below_the_coarsest_levels_evicts_meshes_whole_and_brings_them_back() {
    let Some(device) = gpu_test_context() else { return };
    let (_, coarsest) = dome_bytes(&patch(48, &STEPS));
    let cube = lit_cube();
    let install = cube.positions().len() as u64 * 24 + cube.indices().len() as u64 * 4;
    let boxes = u64::from(MESHES) * (8 * 24 + 36 * 4);
    // Three meshes at their coarsest besides every box: the row's coarsest levels do not fit.
    let budget = install + boxes + 3 * (coarsest - 8 * 24 - 36 * 4);
    assert!(budget < install + u64::from(MESHES) * coarsest / 2, "far below every mesh at its coarsest");
    let serial = Mode { pipelined: false, shadows: false, on_request: false };
    let runs = [
        (CullingBackend::Gpu, serial),
        (CullingBackend::Cpu, serial),
        (CullingBackend::Gpu, Mode { pipelined: true, ..serial }),
        (CullingBackend::Gpu, Mode { on_request: true, ..serial }),
    ];
    for (backend, mode) in runs {
        let flight = fly(&device, backend, mode, budget, 120);
        let backend = format!("{backend:?} {mode:?}");
        println!(
            "{backend}: budget {budget} bytes (every mesh at its coarsest {} bytes), resident at most {} bytes, {} \
             levels loaded, {} evicted, {} loaded again ({} of them coarsest)",
            install + u64::from(MESHES) * coarsest,
            flight.max_resident,
            flight.loaded,
            flight.evicted,
            flight.reloaded,
            flight.reloaded_coarsest
        );
        assert!(flight.max_resident <= budget, "{backend}: checked every frame too");
        assert!(flight.reloaded_coarsest > 0, "{backend}: a mesh evicted whole came back when needed again");
    }
}

#[test]
fn a_budget_below_the_boxes_draws_the_boxes_and_warns_once() {
    let Some(device) = gpu_test_context() else { return };
    capture_warnings();
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let (mut app, capture) = app(&device, backend, 16);
        app.resource_mut::<ecs::RenderSettings>().mesh_memory_budget = Some(1024);
        let mut reference = ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 16, lit_cube(), SKY)
            .expect("a reference");
        let dome = patch(48, &STEPS);
        app.run_frame();
        let (_camera, ids) = spawn_flight(&mut app, &mut reference, &dome);
        let meshes = app.resource::<RenderMeshes>().clone();
        for frame in 0..12 {
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let capture = lock_capture(&capture);
            let report = app.resource::<RenderReport>();
            let label = format!("{backend:?} frame {frame}");
            assert!(report.error.is_none(), "{label}: {:?}", report.error);
            assert_eq!(report.residency.levels_loaded, 0, "{label}: no level fits");
            let (world, visibility) = (app.world(), app.resource::<Visibility>());
            let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None)
                .expect("the truth answers");
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
            if frame >= 2 {
                assert!(report.residency.levels_deferred > 0, "{label}: the views want the meshes");
                assert!(checked.truth.objects_with_pixels >= 1, "{label}: the boxes draw");
            }
        }
        for ids in &ids {
            assert!(!meshes.is_resident(ids.end - 1), "{backend:?}: no coarsest level fits");
        }
    }
    let warnings = WARNINGS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let below: Vec<&String> = warnings.iter().filter(|warning| warning.contains("budget of 1024 bytes")).collect();
    assert_eq!(below.len(), 2, "one warning a renderer, naming the budget: {below:?}");
    assert!(below.iter().all(|warning| warning.contains("draw their placeholder box")), "{below:?}");
    assert_no_validation_messages(&device);
}

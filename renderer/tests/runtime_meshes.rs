//! Meshes added while the game runs, on lavapipe with validation: a world starts with a
//! small library (a lit cube); a few frames in, a sphere of about 100k triangles with a
//! coarser level is added under a 256 KiB transfer budget, so its bytes arrive over several
//! frames, and an object using it is spawned in the same frame, before any of it is on the
//! GPU. Every frame, serial and pipelined, with GPU and CPU culling: no frame copies more
//! than the budget, the truth finds nothing hidden that shows and the same picture as with
//! culling off (drawing the same stand-ins), and the sphere's object draws its placeholder
//! box, then its coarse level, then its own triangles, never nothing. A removed mesh's object
//! draws nothing (bad removals are named errors), and a replaced mesh's object draws the old
//! data until the new is on the GPU, under the same id.

mod headless_app;
mod lit_cube;

use headless_app::{headless_app, SKY};
use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{lock_capture, FrameInFlight, MeshVertices, RenderMeshes, RenderReport, SharedCapture};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const BUDGET: u64 = 256 << 10;
/// Quads around and from pole to pole of the sphere's fine level (2 * 256 * 192 triangles).
const SLICES: u32 = 256;
const STACKS: u32 = 192;
/// The coarse level takes every `COARSE`-th row and column of the same vertices.
const COARSE: u32 = 8;
/// The frame the sphere is added and its object spawned in.
const ADDED: u64 = 3;

/// A unit sphere's vertices (a grid of latitude and longitude) and two levels over them.
struct Sphere {
    positions: Vec<[f32; 3]>,
    fine: Vec<u32>,
    coarse: Vec<u32>,
}

fn sphere() -> Sphere {
    sphere_of(SLICES, STACKS)
}

/// A sphere of `slices` quads around and `stacks` from pole to pole, and its level of every
/// `COARSE`-th row and column.
fn sphere_of(slices: u32, stacks: u32) -> Sphere {
    let mut positions = Vec::new();
    for stack in 0..=stacks {
        let polar = std::f32::consts::PI * stack as f32 / stacks as f32;
        for slice in 0..=slices {
            let azimuth = std::f32::consts::TAU * slice as f32 / slices as f32;
            positions.push([polar.sin() * azimuth.cos(), polar.cos(), polar.sin() * azimuth.sin()]);
        }
    }
    let vertex = |stack: u32, slice: u32| stack * (slices + 1) + slice;
    let grid = |step: u32| {
        let mut indices = Vec::new();
        for stack in (0..stacks).step_by(step as usize) {
            for slice in (0..slices).step_by(step as usize) {
                let (a, b) = (vertex(stack, slice), vertex(stack, slice + step));
                let (c, d) = (vertex(stack + step, slice), vertex(stack + step, slice + step));
                // Counter-clockwise from outside.
                indices.extend([a, b, d, a, d, c]);
            }
        }
        indices
    };
    Sphere { fine: grid(1), coarse: grid(COARSE), positions }
}

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> (runtime::App, SharedCapture) {
    let (mut app, capture) = headless_app(device, backend, lit_cube(), (WIDTH, HEIGHT, 16), |settings| {
        settings.pipelined_frames = pipelined;
        settings.transfer_budget = BUDGET;
    });
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 2.0, 6.0), Vec3::ZERO));
    for x in [-2.5f32, 2.5] {
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(x, 0.0, -1.0)));
    }
    (app, capture)
}

/// What the sphere's object drew in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Drawn {
    Placeholder,
    Coarse,
    Full,
}

/// Runs the frames and checks each; returns what the sphere's object drew, frame by frame.
fn stream_and_check(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> Vec<Drawn> {
    let (mut app, capture) = app(device, backend, pipelined);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 16, lit_cube(), SKY).expect("a reference");
    let sphere = sphere();
    let normals = sphere.positions.clone();
    let vertices = MeshVertices { positions: &sphere.positions, normals: &normals, uvs: &[] };
    let levels: [(&[u32], &[renderer::Meshlet]); 2] = [(&sphere.fine, &[]), (&sphere.coarse, &[])];
    let mut ids = 0..0;
    let mut drawn = Vec::new();
    for frame in 0..24u64 {
        if frame == ADDED {
            ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &levels).expect("a valid sphere");
            assert_eq!(reference.add_mesh_levels(vertices, &levels).expect("the same sphere"), ids.clone());
            assert!(!app.resource::<RenderMeshes>().is_resident(ids.start), "nothing is on the GPU yet");
            let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-1.0), Vec3::ONE));
            let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::ZERO));
            app.world_mut().insert_one(entity, BaseColor::from_rgba8([230, 120, 40, 255])).expect("spawned");
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let label = format!("{backend:?} pipelined {pipelined} frame {frame}");
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        assert_eq!(report.game_frame, Some(frame), "{label}: the report is the frame's");
        assert!(report.upload.mesh_bytes <= BUDGET, "{label}: {} bytes of meshes", report.upload.mesh_bytes);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        if frame >= ADDED {
            let stand_in = report.stand_ins.iter().find(|(mesh, _)| *mesh == ids.start).map(|&(_, drawn)| drawn);
            let now = match stand_in {
                None => Drawn::Full,
                Some(Some(mesh)) if mesh == ids.start + 1 => Drawn::Coarse,
                Some(Some(mesh)) => {
                    assert_eq!(mesh, ids.end, "{label}: the placeholder box follows the levels");
                    Drawn::Placeholder
                }
                Some(None) => panic!("{label}: the sphere's object drew nothing"),
            };
            assert!(checked.truth.objects_with_pixels >= 3, "{label}: the sphere and the cubes show");
            drawn.push(now);
        }
    }
    assert_no_validation_messages(device);
    drawn
}

#[test]
fn a_mesh_added_while_frames_run_arrives_under_the_budget_and_is_never_missing() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        for pipelined in [false, true] {
            let drawn = stream_and_check(&device, backend, pipelined);
            let label = format!("{backend:?} pipelined {pipelined}: {drawn:?}");
            assert!(drawn.windows(2).all(|pair| pair[0] <= pair[1]), "{label}: never a step back");
            assert_eq!(drawn.first(), Some(&Drawn::Placeholder), "{label}: the box in the spawn frame");
            assert!(drawn.contains(&Drawn::Coarse), "{label}: the coarse level before the fine one");
            assert_eq!(drawn.last(), Some(&Drawn::Full), "{label}: full detail in the end");
            let waited = drawn.iter().filter(|&&now| now != Drawn::Full).count();
            assert!(waited >= 4, "{label}: about 2.4 MB at 256 KiB a frame takes several frames");
        }
    }
}

/// The figure of the note (run it in release: `cargo test --release -p renderer --test
/// runtime_meshes -- --ignored --nocapture`): frames and milliseconds from the spawn of an
/// object of a new 1M-triangle mesh to its full-detail draw under the default budget, and the
/// median frame before the mesh is added, while it uploads and once it is drawn in full.
#[test]
#[ignore = "a timing for the docs, not a check"]
fn time_from_spawn_to_full_detail_of_a_million_triangles() {
    let Some(device) = gpu_test_context() else { return };
    let (mut app, _capture) = app(&device, CullingBackend::Gpu, false);
    app.resource_mut::<ecs::RenderSettings>().transfer_budget = ecs::DEFAULT_TRANSFER_BUDGET;
    // 2 * 1024 * 512 triangles, and a level of every 8th row and column.
    let Sphere { positions, fine, coarse } = sphere_of(1024, 512);
    let vertices = MeshVertices { positions: &positions, normals: &positions, uvs: &[] };
    let levels: [(&[u32], &[renderer::Meshlet]); 2] = [(&fine, &[]), (&coarse, &[])];
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times.get(times.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let frame_ms = |app: &mut runtime::App| {
        let started = std::time::Instant::now();
        app.run_frame();
        started.elapsed().as_secs_f64() * 1e3
    };
    let mut before: Vec<f64> = (0..10).map(|_| frame_ms(&mut app)).collect();
    let started = std::time::Instant::now();
    let ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &levels).expect("a valid sphere");
    let add_ms = started.elapsed().as_secs_f64() * 1e3;
    let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-1.0), Vec3::ONE));
    scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::ZERO));
    // The frames drawing a stand-in, then the first at full detail.
    let mut during = Vec::new();
    let first_full = loop {
        let milliseconds = frame_ms(&mut app);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        if !report.stand_ins.iter().any(|&(mesh, _)| mesh == ids.start) {
            break milliseconds;
        }
        during.push(milliseconds);
    };
    let to_full = started.elapsed().as_secs_f64() * 1e3;
    let frames = during.len() + 1;
    let mut after: Vec<f64> = (0..10).map(|_| frame_ms(&mut app)).collect();
    let bytes = (positions.len() * 24 + (fine.len() + coarse.len()) * 4) as f64 / f64::from(1 << 20);
    println!(
        "{} triangles ({bytes:.1} MiB with the coarse level and texture coordinates), budget {} MiB a frame: full \
         detail drawn by frame {frames} after the spawn, {to_full:.1} ms from the add (the add itself {add_ms:.1} ms, \
         the first full frame {first_full:.1} ms); median frame {:.2} ms before the add, {:.2} ms while a stand-in \
         draws ({} frames), {:.2} ms at full detail",
        fine.len() / 3,
        ecs::DEFAULT_TRANSFER_BUDGET >> 20,
        median(&mut before),
        median(&mut during.clone()),
        during.len(),
        median(&mut after),
    );
    assert_no_validation_messages(&device);
}

/// A mesh removed while its object still names it, frames pipelined: the object draws nothing
/// from then on (the truth reference agrees), the cubes go on, and removing it again, an
/// unknown id or a mesh of the install-time library is refused by name.
#[test]
fn a_removed_mesh_draws_nothing_and_bad_removals_are_named_errors() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let (mut app, capture) = app(&device, backend, true);
        app.resource_mut::<ecs::RenderSettings>().transfer_budget = ecs::DEFAULT_TRANSFER_BUDGET;
        let mut reference = ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 16, lit_cube(), SKY)
            .expect("a reference");
        let sphere = sphere();
        let vertices = MeshVertices { positions: &sphere.positions, normals: &sphere.positions, uvs: &[] };
        let levels: [(&[u32], &[renderer::Meshlet]); 2] = [(&sphere.fine, &[]), (&sphere.coarse, &[])];
        let meshes = app.resource::<RenderMeshes>().clone();
        let ids = meshes.add_mesh_levels(vertices, &levels).expect("a valid sphere");
        assert_eq!(reference.add_mesh_levels(vertices, &levels).expect("the same sphere"), ids.clone());
        let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-1.0), Vec3::ONE));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::ZERO));
        const REMOVED: u64 = 4;
        for frame in 0..10u64 {
            if frame == REMOVED {
                assert!(meshes.is_resident(ids.start), "{backend:?}: the sphere arrived under the default budget");
                assert_eq!(meshes.remove_mesh(ids.start), Ok(ids.clone()));
                assert!(!meshes.is_resident(ids.start), "{backend:?}: a removed mesh is not drawn");
                assert_eq!(meshes.remove_mesh(ids.start), Err(renderer::RemoveMeshError::AlreadyRemoved(ids.start)));
                assert_eq!(meshes.remove_mesh(9999), Err(renderer::RemoveMeshError::Unknown(9999)));
                assert_eq!(meshes.remove_mesh(0), Err(renderer::RemoveMeshError::NotAdded(0)));
                assert_eq!(
                    meshes.remove_mesh(ids.start + 1),
                    Err(renderer::RemoveMeshError::NotAdded(ids.start + 1)),
                    "{backend:?}: a coarser level alone cannot be removed"
                );
            }
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let capture = lock_capture(&capture);
            let report = app.resource::<RenderReport>();
            let label = format!("{backend:?} frame {frame}");
            assert!(report.error.is_none(), "{label}: {:?}", report.error);
            let (world, visibility) = (app.world(), app.resource::<Visibility>());
            let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None)
                .expect("the truth answers");
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
            let stand_in = report.stand_ins.iter().find(|(mesh, _)| *mesh == ids.start).map(|&(_, drawn)| drawn);
            if frame >= REMOVED {
                assert_eq!(stand_in, Some(None), "{label}: the removed sphere's object draws nothing");
                assert_eq!(checked.truth.objects_with_pixels, 2, "{label}: the two cubes alone show");
            } else if frame >= 2 {
                assert_eq!(stand_in, None, "{label}: the sphere is drawn in full");
                assert_eq!(checked.truth.objects_with_pixels, 3, "{label}: the sphere and the cubes show");
            }
        }
    }
    assert_no_validation_messages(&device);
}

/// A mesh's data replaced while frames run, pipelined, under the small budget: its object
/// draws the old data until the new is on the GPU, then the new, under the same id, never
/// nothing; the truth reference (given the same new data) agrees every frame.
#[test]
fn a_replaced_mesh_keeps_its_id_and_draws_the_old_data_until_the_new_is_resident() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let (mut app, capture) = app(&device, backend, true);
        let mut reference = ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 16, lit_cube(), SKY)
            .expect("a reference");
        let sphere = sphere();
        let vertices = MeshVertices { positions: &sphere.positions, normals: &sphere.positions, uvs: &[] };
        let levels: [(&[u32], &[renderer::Meshlet]); 2] = [(&sphere.fine, &[]), (&sphere.coarse, &[])];
        // The new data: a smaller sphere, flattened.
        let squashed: Vec<[f32; 3]> = sphere.positions.iter().map(|&[x, y, z]| [0.8 * x, 0.4 * y, 0.8 * z]).collect();
        let new_vertices = MeshVertices { positions: &squashed, normals: &sphere.positions, uvs: &[] };
        let meshes = app.resource::<RenderMeshes>().clone();
        let ids = meshes.add_mesh_levels(vertices, &levels).expect("a valid sphere");
        assert_eq!(reference.add_mesh_levels(vertices, &levels).expect("the same sphere"), ids.clone());
        let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-1.0), Vec3::ONE));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::ZERO));
        let mut replaced = None;
        let (mut old_frames, mut new_frames) = (0, 0);
        for frame in 0..40u64 {
            let label = format!("{backend:?} frame {frame}");
            if replaced.is_none() && meshes.is_resident(ids.start) {
                let new = meshes.replace_mesh_levels(ids.start, new_vertices, &levels).expect("same level count");
                assert_eq!(reference.add_mesh_levels(new_vertices, &levels).expect("the same data"), new.clone());
                let one_level: [(&[u32], &[renderer::Meshlet]); 1] = [(&sphere.fine, &[])];
                assert!(
                    matches!(
                        meshes.replace_mesh_levels(ids.start, new_vertices, &one_level),
                        Err(renderer::ReplaceMeshError::LevelCount { levels: 2, given: 1, .. })
                    ),
                    "{label}: another level count is refused"
                );
                assert!(
                    matches!(
                        meshes.replace_mesh_levels(0, new_vertices, &levels),
                        Err(renderer::ReplaceMeshError::Mesh(renderer::RemoveMeshError::NotAdded(0)))
                    ),
                    "{label}: a mesh of the install-time library cannot be replaced"
                );
                replaced = Some(new);
            }
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let capture = lock_capture(&capture);
            let report = app.resource::<RenderReport>();
            assert!(report.error.is_none(), "{label}: {:?}", report.error);
            assert!(report.upload.mesh_bytes <= BUDGET, "{label}: {} bytes of meshes", report.upload.mesh_bytes);
            let (world, visibility) = (app.world(), app.resource::<Visibility>());
            let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None)
                .expect("the truth answers");
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
            let stand_in = report.stand_ins.iter().find(|(mesh, _)| *mesh == ids.start).map(|&(_, drawn)| drawn);
            assert_ne!(stand_in, Some(None), "{label}: the sphere's object drew nothing");
            let Some(new) = &replaced else { continue };
            assert!(checked.truth.objects_with_pixels >= 3, "{label}: the sphere and the cubes show");
            match stand_in {
                None => {
                    assert_eq!(new_frames, 0, "{label}: never back to the old data");
                    old_frames += 1;
                }
                Some(Some(mesh)) if mesh == new.start => new_frames += 1,
                Some(other) => panic!("{label}: the replaced sphere drew {other:?}"),
            }
        }
        assert!(old_frames >= 2, "{backend:?}: the old data drawn while the new uploads ({old_frames} frames)");
        assert!(new_frames >= 2, "{backend:?}: the new data drawn in the end ({new_frames} frames)");
    }
    assert_no_validation_messages(&device);
}

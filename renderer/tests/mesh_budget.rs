//! The cost and the memory of meshes added while frames run, on lavapipe with validation: an
//! arrival rewrites only the slots of the mesh that arrived.

mod lit_cube;

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Aabb, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{
    install_render_to, BitsReadback, FrameInFlight, HeadlessTarget, MeshVertices, RenderMeshes, RenderReport,
    RenderSetup, SharedCapture,
};

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

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, capacity: u32) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity,
        meshes: lit_cube(),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
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

/// A scene of many cubes and a few objects of one added mesh whose levels arrive over several
/// frames: each arrival writes the added mesh's slots and no others, and uploads their
/// records alone.
#[test]
fn an_arrival_rewrites_only_the_slots_of_its_mesh() {
    let Some(device) = gpu_test_context() else { return };
    const SIDE: u32 = 40;
    const USERS: u32 = 3;
    let (mut app, _capture) = app(&device, CullingBackend::Gpu, SIDE * SIDE + USERS);
    // A small budget: the box, then each level, in frames of their own.
    app.resource_mut::<ecs::RenderSettings>().transfer_budget = 16 << 10;
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 30.0, 30.0), Vec3::ZERO));
    spawn_cubes(&mut app, SIDE);
    let dome = patch(64, &[1, 4, 16]);
    let vertices = MeshVertices { positions: &dome.positions, normals: &dome.normals, uvs: &[] };
    let levels: Vec<(&[u32], &[renderer::Meshlet])> = dome.levels.iter().map(|level| (&level[..], &[][..])).collect();
    for _ in 0..3 {
        app.run_frame();
    }
    let ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &levels).expect("a valid dome");
    for user in 0..USERS {
        let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        let place = Transform::from_translation(Vec3::new(user as f32 * 2.0, 1.0, 0.0));
        scene::spawn_mesh(app.world_mut(), mesh, place);
    }
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

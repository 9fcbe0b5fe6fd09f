//! Device memory exhausted while the mesh buffers grow for a mesh added under a memory
//! budget, on lavapipe with validation: the frames go on (the error named in the report),
//! the mesh's object draws nothing rather than bytes that are not there, and once the memory
//! is there again the mesh arrives and every frame holds to the truth. (Its own test binary:
//! the memory limit is the process's.)

mod lit_cube;

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, set_scene_memory_limit, BitsReadback, FrameInFlight, HeadlessTarget, MeshVertices,
    RenderMeshes, RenderReport, RenderSetup,
};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

#[test]
fn mesh_buffers_that_cannot_grow_degrade_and_recover() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let setup = RenderSetup {
            backend,
            device: Some(Arc::clone(&device)),
            extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
            capacity: 16,
            meshes: lit_cube(),
            clear_color: SKY,
            bits: BitsReadback::Wait,
            passes: Vec::new(),
            shadows: false,
        };
        let mut app = runtime::App::with_threads(2);
        app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
        ecs::install(&mut app);
        app.resource_mut::<ecs::RenderSettings>().mesh_memory_budget = Some(4 << 20);
        let (target, capture) = HeadlessTarget::new();
        install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
        let mut reference = ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 16, lit_cube(), SKY)
            .expect("a reference");
        scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 2.0, 6.0), Vec3::ZERO));
        app.run_frame();
        // A ball of 2,000 vertices: its vertices alone outgrow the cube's buffers, and the
        // limit leaves the object slots their room but no mesh buffer of 16 KiB.
        set_scene_memory_limit(Some(16 << 10));
        let positions: Vec<[f32; 3]> = (0..2000)
            .map(|index| {
                let (polar, azimuth) = (index as f32 * 0.618, index as f32 * 2.4);
                [polar.sin() * azimuth.cos(), polar.cos(), polar.sin() * azimuth.sin()]
            })
            .collect();
        let indices: Vec<u32> = (0..1998).flat_map(|index| [0, index + 1, index + 2]).collect();
        let vertices = MeshVertices { positions: &positions, normals: &positions, uvs: &[] };
        let levels: [(&[u32], &[renderer::Meshlet]); 1] = [(&indices, &[])];
        let ids = app.resource::<RenderMeshes>().add_mesh_levels(vertices, &levels).expect("a valid ball");
        assert_eq!(reference.add_mesh_levels(vertices, &levels).expect("the same ball"), ids.clone());
        let mesh = Mesh::new(MeshHandle(ids.start), MaterialHandle(0), Aabb::new(Vec3::splat(-1.0), Vec3::ONE));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::ZERO));
        for frame in 0..4 {
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let report = app.resource::<RenderReport>();
            let error = report.error.clone().unwrap_or_default();
            assert!(error.contains("mesh buffers could not grow"), "{backend:?} frame {frame}: {error:?}");
            let drawn = report.stand_ins.iter().find(|(mesh, _)| *mesh == ids.start).map(|&(_, drawn)| drawn);
            assert_eq!(drawn, Some(None), "{backend:?} frame {frame}: nothing of the ball is on the GPU");
        }
        set_scene_memory_limit(None);
        for frame in 4..10 {
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
        }
        assert!(app.resource::<RenderMeshes>().is_resident(ids.start), "{backend:?}: the ball arrived");
    }
    assert_no_validation_messages(&device);
}

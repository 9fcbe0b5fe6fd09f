//! A skinned object in a split-screen frame, on both culling backends, on lavapipe with
//! validation: the bar of `test_assets::skinned_bar`, bent at the knee, seen by two cameras,
//! each in one half of the window. Each view's truth draws the bar in the frame's pose (the reference
//! given the frame's palette), so each half equals its unculled reference; drawn in its bind
//! pose instead, the reference differs from both halves (the pose shows in each).

use std::sync::Arc;

use animation::{AnimationPlayer, SkinPalette};
use assets::{load_gltf_bytes, spawn_model, ProcessOptions};
use culling::occlusion::OccluderMeshes;
use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, CameraRect, ResolvedViews, Transform, ViewTarget};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_gpu_view, check_view, FrameCheck, ReferenceRenderer};
use renderer::{install_render_to, lock_capture, BitsReadback, HeadlessTarget, MeshLibrary, RenderReport, RenderSetup};
use test_assets::skinned_bar::gltf_text;

const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
const FRAMES: u64 = 3;

/// The split frames of the bent bar culled by `backend`, each view judged by `posed` (given
/// the frame's palette) and by `bind_pose` (never given one).
fn check_split_skinned(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    (posed, bind_pose): (&mut ReferenceRenderer, &mut ReferenceRenderer),
) {
    let scene =
        load_gltf_bytes(gltf_text().as_bytes(), None, &ProcessOptions::default()).expect("a valid skinned file");
    let mut library = MeshLibrary::new();
    let model = scene.add_model(&mut library, &mut OccluderMeshes::new()).expect("the model goes in the library");
    assert_eq!(library.len(), posed.parts().1.len(), "the references hold the same meshes");

    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    animation::install(&mut app);
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 16,
        meshes: library,
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let spawned = spawn_model(app.world_mut(), &model, Transform::IDENTITY);
    let leg = spawned.drawables[0];
    {
        // Bent and held: the upper half lies along -x instead of up the y axis.
        let mut player = app.world_mut().get::<&mut AnimationPlayer>(leg).expect("a player");
        (player.time, player.playing) = (1.0, false);
    }
    let eyes = [
        scene::look_at(Vec3::new(0.3, 1.0, 4.0), Vec3::new(0.0, 1.0, 0.0)),
        // The same side (the bar is one-sided, facing +z), from higher up and to the left.
        scene::look_at(Vec3::new(-1.5, 2.5, 3.0), Vec3::new(-0.3, 1.0, 0.0)),
    ];
    let world = app.world_mut();
    let first = scene::spawn_camera(world, Camera::default(), eyes[0]);
    let second = scene::spawn_camera(world, Camera { order: 1, ..Camera::default() }, eyes[1]);
    world.insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
    world.insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");

    for frame in 0..FRAMES {
        app.run_frame();
        renderer::FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let label = format!("{backend:?} frame {frame}");
        assert_eq!(report.error, None, "{label}");
        assert_eq!(capture.extent, (WIDTH, HEIGHT), "{label}: the window");
        posed.set_palette(&app.resource::<SkinPalette>()).expect("the reference takes the palette");
        let views = app.resource::<ResolvedViews>();
        let visibility = app.resource::<Visibility>();
        let slot = visibility.slot_of(leg).expect("the leg has a slot");
        assert_eq!(views.len(), 2, "{label}: two views");
        for view in views.views() {
            let ViewTarget::Window(rect) = &view.target else { panic!("{label}: a window view") };
            let rect = [rect.x, rect.y, rect.width, rect.height];
            let index = usize::from(views.main() != Some(view.id));
            let judge = |reference: &mut ReferenceRenderer| -> FrameCheck {
                let image = (&capture.pixels[..], capture.extent);
                let checked = if backend == CullingBackend::Gpu {
                    check_gpu_view(reference, image, rect, (app.world(), &visibility), (view.id, index), &report)
                } else {
                    check_view(reference, image, rect, app.world(), &visibility, view.id)
                };
                checked.expect("the truth answers")
            };
            let label = format!("{label} view {}", view.id.0);
            let checked = judge(posed);
            assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
            assert!(checked.submitted.objects.contains(&slot), "{label}: the view draws the leg");
            assert_eq!(checked.differing_pixels, 0, "{label}: the frame's pose, drawn again, is the frame");
            let unposed = judge(bind_pose);
            assert!(unposed.differing_pixels > 20, "{label}: the pose shows ({} pixels)", unposed.differing_pixels);
        }
    }
}

/// Each view of a split-screen frame is judged against the frame's poses, not bind poses.
#[test]
fn each_split_screen_views_truth_draws_the_frames_pose() {
    let Some(device) = gpu_test_context() else { return };
    let scene =
        load_gltf_bytes(gltf_text().as_bytes(), None, &ProcessOptions::default()).expect("a valid skinned file");
    let mut library = MeshLibrary::new();
    scene.add_model(&mut library, &mut OccluderMeshes::new()).expect("the model goes in the library");
    let reference = || {
        ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 16, library.clone(), SKY)
            .expect("a reference")
    };
    let (mut posed, mut bind_pose) = (reference(), reference());
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        check_split_skinned(&device, backend, (&mut posed, &mut bind_pose));
    }
    assert_no_validation_messages(&device);
}

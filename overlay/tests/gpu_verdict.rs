//! On the GPU path the selection panel's "why not drawn" comes from the GPU's bits read back
//! (`culling::GpuFeedback::verdict`): on lavapipe with validation, every object of a scene with
//! a wall and cubes hidden behind it is explained `Occluded` exactly where the bits of the
//! frame before (the waiting readback's latency: one frame) say the GPU hid it.

use std::sync::Arc;

use culling::{CullingBackend, GpuFeedback, Reason, Visibility};
use ecs::{scene, Camera, RenderSettings, Transform};
use glam::Vec3;
use overlay::{Overlay, Selection};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use renderer::{install_render, BitsReadback, MeshLibrary, RenderSetup, Screenshots, COLOR};
use runtime::hecs::Entity;

const SIZE: u32 = 256;

#[test]
fn the_gpu_verdict_read_back_agrees_with_the_explanation_of_every_object() {
    let Some(device) = gpu_test_context() else { return };
    let overlay = Overlay::new(false);
    let setup = RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: SIZE, height: SIZE },
        capacity: 64,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.2, 0.4, 0.6, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![overlay.passes()],
    };
    let mut app = runtime::App::with_threads(1);
    app.insert_resource(ecs::Viewport { width: SIZE, height: SIZE });
    let choice = install_render(&mut app, setup).expect("a device is there");
    assert!(choice.on_device, "the GPU culls");
    let world = app.world_mut();
    scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    let wall = Transform { scale: Vec3::new(14.0, 14.0, 0.5), ..Transform::IDENTITY };
    scene::spawn_mesh(world, scene::unit_cube_mesh(), wall);
    let mut hidden = Vec::new();
    for index in 0..12 {
        let place = Vec3::new((index % 4) as f32 * 1.5 - 2.25, (index / 4) as f32 * 1.5 - 1.5, -8.0);
        hidden.push(scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(place)));
    }
    let mut seen = Vec::new();
    for x in [-2.0, 2.0] {
        seen.push(scene::spawn_mesh(
            world,
            scene::unit_cube_mesh(),
            Transform::from_translation(Vec3::new(x, 0.0, 3.0)),
        ));
    }
    for _ in 0..5 {
        app.resource_mut::<Screenshots>().request(COLOR);
        app.run_frame();
        let _ = app.resource_mut::<Screenshots>().take();
    }
    let now = app.last_frame_index().expect("frames ran");
    let visibility = app.resource::<Visibility>();
    let settings = app.resource::<RenderSettings>();
    let feedback = app.resource::<GpuFeedback>();
    let mut occluded = Vec::new();
    for &entity in visibility.objects().entities.iter().filter(|&&entity| entity != Entity::DANGLING) {
        let explanation = visibility.explain(app.world(), &settings, entity);
        let slot = explanation.slot.expect("every object has a slot");
        let verdict = feedback.verdict(slot, now).expect("the bits were read back");
        assert_eq!(verdict.frames_late, 1, "the waiting readback gives the frame before's bits");
        assert!(verdict.in_view, "every object is in the view: {explanation:?}");
        assert_eq!(explanation.reason == Reason::Occluded, verdict.occluded(), "{explanation:?} {verdict:?}");
        if verdict.occluded() {
            occluded.push(entity);
        }
    }
    drop((visibility, settings, feedback));
    occluded.sort_unstable_by_key(|entity| entity.id());
    hidden.sort_unstable_by_key(|entity| entity.id());
    assert_eq!(occluded, hidden, "the GPU hid the cubes behind the wall, and only them");
    // What the selection panel shows for one of them.
    let selection = Selection::read(&app, hidden[0]).expect("a Visibility stage");
    assert_eq!(selection.explanation.reason, Reason::Occluded);
    assert!(selection.gpu.is_some_and(|gpu| gpu.occluded() && gpu.frames_late == 1), "{selection:?}");
    let front = Selection::read(&app, seen[0]).expect("a Visibility stage");
    assert!(front.gpu.is_some_and(|gpu| gpu.visible), "{front:?}");
    assert_no_validation_messages(&device);
}

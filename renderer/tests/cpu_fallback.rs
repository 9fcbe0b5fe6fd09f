//! The CPU fallback: with `ENGINE_CPU_CULLING=1` (no device, as far as culling is
//! concerned) the automatic backend culls on the CPU, says why, and its frustum bits are the
//! kernel's (which `gpu_cull.rs` proves equal to the GPU's); the GPU backend refuses.
//! One test in its own binary: it sets an environment variable.

use culling::{AabbSoa, CullingBackend, Frustum, Kernel, Visibility, FORCE_CPU_CULLING_ENV};
use ecs::{scene, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::vk;
use renderer::MeshLibrary;
use renderer::{install_render, BitsReadback, RenderSetup, RENDER_SYSTEM};

fn setup(backend: CullingBackend) -> RenderSetup {
    RenderSetup {
        shadows: false,
        backend,
        device: None,
        extent: vk::Extent2D { width: 64, height: 64 },
        capacity: 4096,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0; 4],
        bits: BitsReadback::None,
        passes: Vec::new(),
    }
}

#[test]
fn forced_cpu_culling_falls_back_with_a_reason_and_gives_the_kernel_bits() {
    std::env::set_var(FORCE_CPU_CULLING_ENV, "1");
    let mut refused = runtime::App::with_threads(1);
    assert!(install_render(&mut refused, setup(CullingBackend::Gpu)).is_err(), "the GPU backend needs a device");

    let mut app = runtime::App::with_threads(2);
    let choice = install_render(&mut app, setup(CullingBackend::Auto)).expect("auto falls back");
    assert!(!choice.on_device);
    assert!(choice.reason.as_deref().is_some_and(|reason| reason.contains(FORCE_CPU_CULLING_ENV)), "{choice:?}");
    let render_batches = app.schedule().batches(runtime::Stage::Render).expect("the Render stage exists");
    assert!(!render_batches.iter().flatten().any(|name| name == RENDER_SYSTEM), "no device: nothing is drawn");
    // The frustum alone: the renderer gives the cube an occluder of its own, and the cubes
    // that hide others would otherwise lose their bits to occlusion.
    app.resource_mut::<ecs::RenderSettings>().occlusion_culling = false;
    app.insert_resource(Viewport { width: 64, height: 64 });
    let eye = Vec3::new(3.0, 2.0, 25.0);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::new(-4.0, 0.0, 0.0)));
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = |low: f32, high: f32| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        low + (high - low) * ((seed >> 40) as f32 / (1u64 << 24) as f32)
    };
    for _ in 0..3001 {
        let position = Vec3::new(random(-60.0, 60.0), random(-20.0, 20.0), random(-60.0, 60.0));
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position));
    }
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    let view = visibility.view().expect("a camera");
    let frustum = Frustum::from_view_projection(view.projection * view.view);
    let mut boxes = AabbSoa::default();
    for bounds in &visibility.objects().bounds {
        boxes.push(bounds);
    }
    let mut words = vec![0u64; visibility.bits().words().len()];
    Kernel::Scalar.cull_aabbs(&frustum, boxes.slices(), &mut words);
    let visible = visibility.bits().count_visible();
    assert!(visible > 0 && visible < 3001, "the view sees part of the scene: {visible}");
    assert_eq!(visibility.bits().words(), &words[..], "the CPU fallback's bits are the frustum kernel's");
}

//! Timings for the docs, not checks (`cargo test -p tests --test geometry_timing --
//! --ignored --nocapture`): the geometry pass's GPU milliseconds for 2,000 copies of Khronos'
//! RiggedSimple cylinder (96 vertices, 188 triangles), drawn rigid, and drawn skinned by one
//! posed rig. The same device and image size for both.

use std::sync::Arc;

use assets::{load_gltf, ProcessOptions};
use glam::{Mat4, Vec3};
use render_graph::testing::gpu_test_context;
use render_graph::{vk, GpuDevice, RenderGraph};
use renderer::{add_scene_passes, lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};

const COPIES: u32 = 2000;
const FRAMES: usize = 30;
const SIDE: u32 = 256;

fn rigged_simple() -> assets::GltfScene {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/tests/data/RiggedSimple.gltf");
    load_gltf(&file, &ProcessOptions::default()).expect("the sample loads")
}

/// Every copy in a grid in front of the camera; `skin` sets each record's palette slice.
fn measure(
    device: &Arc<GpuDevice>,
    library: MeshLibrary,
    mesh: u32,
    prepare: impl FnOnce(&mut GpuScene),
    skin: Option<(u32, u32)>,
) -> f64 {
    let scene = GpuScene::new(device, library, COPIES).expect("a scene").into_shared();
    let mut graph = RenderGraph::new(Arc::clone(device), vk::Extent2D { width: SIDE, height: SIDE }).expect("a graph");
    add_scene_passes(&mut graph, &scene, &ScenePassOptions::default()).expect("the scene's passes");
    let view = Mat4::look_at_rh(Vec3::new(0.0, 0.0, 120.0), Vec3::ZERO, Vec3::Y);
    let projection = Mat4::perspective_infinite_reverse_rh(0.9, 1.0, 0.1);
    graph.set_param(FrameView::from_view_projection(projection * view));
    {
        let mut scene = lock_scene(&scene);
        prepare(&mut scene);
        for copy in 0..COPIES {
            let at = Vec3::new((copy % 50) as f32 * 2.2 - 55.0, (copy / 50) as f32 * 2.2 - 44.0, 0.0);
            let world = (Mat4::from_translation(at) * Mat4::from_scale(Vec3::splat(0.5))).to_cols_array_2d();
            let index = scene.push_object(ObjectDesc { world, color: 0xff80_c0ff, mesh, material: 0 }).expect("room");
            if let Some((first, count)) = skin {
                apply_skin(&mut scene, index, first, count);
            }
        }
    }
    let mut generation = 0;
    let mut times = Vec::new();
    for frame in 0..FRAMES + 2 {
        lock_scene(&scene).follow_growth(&mut graph, &mut generation);
        lock_scene(&scene).draw_all_objects();
        graph.execute_frame().expect("a frame");
        graph.wait_idle().expect("idle");
        let geometry = graph.stats().passes.iter().find(|pass| pass.name == "geometry").and_then(|pass| pass.gpu_ms);
        if frame >= 2 {
            times.extend(geometry);
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Skins object `index` with palette entries `first .. first + count`.
fn apply_skin(scene: &mut GpuScene, index: u32, first: u32, count: u32) {
    let record = renderer::ObjectRecord { skin_first: first, skin_count: count, ..*scene.record(index).expect("set") };
    let transform = *scene.transform(index).expect("set");
    scene.set_parts(index, transform, record).expect("in range");
}

/// The rigid variant: the cylinder's mesh without its influences.
fn rigid_ms(device: &Arc<GpuDevice>, scene: &assets::GltfScene) -> f64 {
    let mut rigid = scene.meshes[0].clone();
    rigid.skin = None;
    let mut library = MeshLibrary::new();
    let mesh = assets::add_to_library(&mut library, &rigid).expect("in the library").levels.start;
    measure(device, library, mesh, |_| {}, None)
}

/// The skinned variant: every copy skinned by one rig posed half-way through the clip.
fn skinned_ms(device: &Arc<GpuDevice>, scene: &assets::GltfScene) -> f64 {
    let mut library = MeshLibrary::new();
    let mesh = assets::add_to_library(&mut library, &scene.meshes[0]).expect("in the library").levels.start;
    let mut app = runtime::App::with_threads(1);
    animation::install(&mut app);
    let skeleton = Arc::clone(&scene.skins[0].skeleton);
    let mut player =
        animation::AnimationPlayer::new(Arc::clone(&scene.animations[0].clip), &skeleton).expect("the clip fits");
    (player.time, player.playing) = (1.0, false);
    let boxes = scene.joint_boxes[0].clone().expect("skinned");
    let rig =
        app.world_mut().spawn((animation::SkinnedMesh { joint_boxes: boxes }, animation::Skin::new(skeleton), player));
    app.run_frame();
    let skin =
        app.world().get::<&animation::Skin>(rig).map(|skin| (skin.skin_first(), skin.skin_count())).expect("a rig");
    let palette = app.resource::<animation::SkinPalette>().clone();
    measure(device, library, mesh, |scene| scene.sync_palette(&palette).expect("the palette fits"), Some(skin))
}

#[test]
#[ignore = "a timing for the docs, not a check"]
fn geometry_pass_gpu_ms_rigid_against_skinned_interleaved() {
    let Some(device) = gpu_test_context() else { return };
    let scene = rigged_simple();
    let (mut rigid, mut skinned) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        rigid.push(rigid_ms(&device, &scene));
        skinned.push(skinned_ms(&device, &scene));
    }
    rigid.sort_by(f64::total_cmp);
    skinned.sort_by(f64::total_cmp);
    println!(
        "geometry pass, {COPIES} copies, {SIDE}x{SIDE} on {}, 4 interleaved runs: rigid min {:.3} median {:.3} ms, \
         skinned min {:.3} median {:.3} ms",
        device.capabilities().name,
        rigid[0],
        rigid[2],
        skinned[0],
        skinned[2]
    );
}

#[test]
#[ignore = "a timing for the docs, not a check"]
fn geometry_pass_gpu_ms_of_rigid_copies() {
    let Some(device) = gpu_test_context() else { return };
    let ms = rigid_ms(&device, &rigged_simple());
    println!(
        "geometry pass, {COPIES} rigid copies, {SIDE}x{SIDE} on {}: median {ms:.3} ms",
        device.capabilities().name
    );
}

#[test]
#[ignore = "a timing for the docs, not a check"]
fn geometry_pass_gpu_ms_of_skinned_copies() {
    let Some(device) = gpu_test_context() else { return };
    let ms = skinned_ms(&device, &rigged_simple());
    println!(
        "geometry pass, {COPIES} skinned copies, {SIDE}x{SIDE} on {}: median {ms:.3} ms",
        device.capabilities().name
    );
}

//! Materials added, replaced and removed while the game runs, on lavapipe with validation:
//! a world starts with one material; a few frames in, forty materials are added (the GPU
//! table grows past its first size) and then an alpha-masked one, named in the same frame by
//! a new cube whose colour's alpha is under the cutoff (so it draws as a hole); later the
//! material is replaced by an opaque one under the same id (the cube shows), masked again
//! (a hole again), then removed while the cube still names it (the cube draws with the
//! default material, opaque). Every frame,
//! serial and pipelined, GPU and CPU culling: the truth finds nothing hidden that shows and
//! the same picture as with culling off, and bad ids are named errors.

mod headless_app;
mod lit_cube;
mod textured_cube;

use headless_app::{headless_app, SKY};
use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, BaseColor, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{
    lock_capture, FrameInFlight, Material, MaterialError, MeshLibrary, RenderMeshes, RenderReport, SharedCapture,
};
use textured_cube::{checkerboard, textured_cube};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
/// The frame the materials are added and the masked cube spawned in.
const ADDED: u64 = 2;
/// The frame its material is replaced by an opaque one.
const REPLACED: u64 = 6;
/// The frame its material is masked again.
const REMASKED: u64 = 9;
/// The frame its material is removed.
const REMOVED: u64 = 12;
const FRAMES: u64 = 16;
/// Materials added before the masked one: the table outgrows its first entry.
const FILLERS: u32 = 40;

/// The lit cube with one opaque material.
fn library() -> MeshLibrary {
    let mut library = lit_cube();
    library.add_material(Material::default()).expect("a plain material");
    library
}

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> (runtime::App, SharedCapture) {
    let (mut app, capture) = headless_app(device, backend, library(), (WIDTH, HEIGHT, 16), |settings| {
        settings.pipelined_frames = pipelined;
    });
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 2.0, 6.0), Vec3::ZERO));
    for x in [-2.5f32, 2.5] {
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(x, 0.0, -1.0)));
    }
    (app, capture)
}

/// Runs the frames, checking each; returns the objects with pixels, frame by frame.
fn run(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> Vec<usize> {
    let (mut app, capture) = app(device, backend, pipelined);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 16, library(), SKY).expect("a reference");
    let materials = app.resource::<RenderMeshes>().clone();
    let mut masked = None;
    let mut shown = Vec::new();
    let mut material_bytes = 0;
    for frame in 0..FRAMES {
        let label = format!("{backend:?} pipelined {pipelined} frame {frame}");
        if frame == ADDED {
            for filler in 0..FILLERS {
                let material = Material { double_sided: filler % 2 == 0, ..Material::default() };
                let id = materials.add_material(material).expect("a valid material");
                assert_eq!(reference.add_material(material), Ok(id));
            }
            let material = Material { alpha_cutoff: Some(0.5), ..Material::default() };
            let id = materials.add_material(material).expect("a valid material");
            assert_eq!(id, 1 + FILLERS, "{label}: ids follow the install-time table");
            assert_eq!(reference.add_material(material), Ok(id));
            let mesh = Mesh::new(MeshHandle(0), MaterialHandle(id), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
            let entity =
                scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(0.0, 0.0, -1.0)));
            // Alpha under the cutoff: a hole while the material masks.
            app.world_mut().insert_one(entity, BaseColor::from_rgba8([230, 120, 40, 64])).expect("spawned");
            masked = Some(id);
        }
        if frame == REPLACED {
            let id = masked.expect("added");
            let opaque = Material { double_sided: true, ..Material::default() };
            materials.replace_material(id, opaque).expect("a known material");
            reference.replace_material(id, opaque).expect("the same material");
        }
        if frame == REMASKED {
            let id = masked.expect("added");
            let material = Material { alpha_cutoff: Some(0.5), ..Material::default() };
            materials.replace_material(id, material).expect("a known material");
            reference.replace_material(id, material).expect("the same material");
        }
        if frame == REMOVED {
            let id = masked.expect("added");
            assert_eq!(materials.remove_material(id), Ok(()));
            reference.remove_material(id).expect("the same material");
            assert_eq!(materials.remove_material(id), Err(MaterialError::Removed(id)), "{label}");
            assert_eq!(materials.replace_material(id, Material::default()), Err(MaterialError::Removed(id)));
            assert_eq!(materials.remove_material(9999), Err(MaterialError::Unknown(9999)), "{label}");
            let bad = Material { texture: Some(7), ..Material::default() };
            assert!(matches!(materials.add_material(bad), Err(MaterialError::Invalid(_))), "{label}");
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        material_bytes += report.upload.material_bytes;
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        shown.push(checked.truth.objects_with_pixels);
    }
    assert!(material_bytes >= u64::from(FILLERS + 1) * 16, "{backend:?} pipelined {pipelined}: {material_bytes}");
    assert_no_validation_messages(device);
    shown
}

#[test]
fn materials_added_replaced_and_removed_while_frames_run_draw_at_once() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        for pipelined in [false, true] {
            let shown = run(&device, backend, pipelined);
            let label = format!("{backend:?} pipelined {pipelined}: {shown:?}");
            for (frame, &objects) in shown.iter().enumerate() {
                let frame = frame as u64;
                // The masked cube is a hole until replaced, and again once masked again, until
                // its material is removed (it then draws with the default, opaque).
                let hole = (ADDED..REPLACED).contains(&frame) || (REMASKED..REMOVED).contains(&frame);
                let expected = if frame < ADDED || hole { 2 } else { 3 };
                assert_eq!(objects, expected, "{label}: frame {frame}");
            }
        }
    }
}

/// Side of the test textures.
const TEXTURE_SIDE: u32 = 64;
/// A budget under one 64x64 mip (16 KiB): the finest mip arrives over several frames.
const SMALL_BUDGET: u64 = 4 << 10;
/// The frame the textures are added in.
const TEXTURED: u64 = 2;

const RED: [u8; 4] = [220, 40, 30, 255];
const CREAM: [u8; 4] = [240, 230, 200, 255];
const BLUE: [u8; 4] = [30, 60, 200, 255];
const GREEN: [u8; 4] = [40, 180, 60, 255];

/// The textured cube with the first texture and its material; with `preloaded`, the second
/// texture and its material too (what the streamed run adds at [`TEXTURED`]).
fn textured_library(preloaded: bool) -> MeshLibrary {
    let mut library = textured_cube();
    let first = library.add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 4, RED, CREAM)).expect("a texture");
    library.add_material(Material { texture: Some(first), ..Material::default() }).expect("a material");
    if preloaded {
        let second = library.add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 8, BLUE, CREAM)).expect("a texture");
        library.add_material(Material { texture: Some(second), ..Material::default() }).expect("a material");
    }
    library
}

fn textured_app(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    pipelined: bool,
    preloaded: bool,
) -> (runtime::App, SharedCapture) {
    let (mut app, capture) =
        headless_app(device, backend, textured_library(preloaded), (WIDTH, HEIGHT, 16), |settings| {
            settings.pipelined_frames = pipelined;
            settings.transfer_budget = SMALL_BUDGET;
        });
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.5, 3.5), Vec3::ZERO));
    spawn_textured(&mut app, -0.8, 0);
    if preloaded {
        spawn_textured(&mut app, 0.8, 1);
    }
    (app, capture)
}

fn spawn_textured(app: &mut runtime::App, x: f32, material: u32) {
    let mesh = Mesh::new(MeshHandle(0), MaterialHandle(material), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
    scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(x, 0.0, 0.0)));
}

/// The picture of the preloaded run once its frames settle.
fn preloaded_picture(device: &Arc<GpuDevice>, backend: CullingBackend) -> Vec<u8> {
    let (mut app, capture) = textured_app(device, backend, false, true);
    for _ in 0..4 {
        app.run_frame();
        FrameInFlight::finish(&mut app);
    }
    let pixels = lock_capture(&capture).pixels.clone();
    pixels
}

/// Textures added while frames run under a budget smaller than one mip: the array grows past
/// its one layer (the install-time texture copied on the GPU), each new texture's materials
/// sample ever finer mips, never one without texels (the truth reference samples the same
/// mips and agrees every frame), the picture settles to the picture of the same textures
/// loaded at install, and replaced and removed textures follow, bad ids being named errors.
#[test]
fn textures_added_while_frames_run_stream_smallest_mips_first_and_settle_to_the_preloaded_picture() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        let preloaded = preloaded_picture(&device, backend);
        for pipelined in [false, true] {
            let label = format!("{backend:?} pipelined {pipelined}");
            let (mut app, capture) = textured_app(&device, backend, pipelined, false);
            let mut reference =
                ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, 16, textured_library(false), SKY)
                    .expect("a reference");
            let assets = app.resource::<RenderMeshes>().clone();
            assert_eq!(assets.texture_size(), TEXTURE_SIDE);
            let (mut second, mut third) = (0, 0);
            let mut finest_seen = Vec::new();
            let mut settled_at = None;
            let mut replaced_at = None;
            for frame in 0..48u64 {
                let label = format!("{label} frame {frame}");
                if frame == TEXTURED {
                    second = assets
                        .add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 8, BLUE, CREAM))
                        .expect("a texture");
                    assert_eq!(
                        reference.add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 8, BLUE, CREAM)),
                        Ok(second)
                    );
                    // A third layer: the array grows past two as well.
                    third = assets
                        .add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 2, GREEN, CREAM))
                        .expect("a texture");
                    assert_eq!(
                        reference.add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 2, GREEN, CREAM)),
                        Ok(third)
                    );
                    let material = Material { texture: Some(second), ..Material::default() };
                    let id = assets.add_material(material).expect("a material");
                    assert_eq!((id, reference.add_material(material)), (1, Ok(1)));
                    spawn_textured(&mut app, 0.8, id);
                    assert!(!assets.is_texture_resident(second), "{label}: nothing is on the GPU yet");
                    let wrong = checkerboard(TEXTURE_SIDE, 1, BLUE, BLUE)[1..].to_vec();
                    assert!(matches!(assets.add_texture(32, wrong), Err(MaterialError::Invalid(_))), "{label}");
                }
                if settled_at.is_some_and(|settled| frame == settled + 3) && replaced_at.is_none() {
                    // The picture settled: replace the second texture, remove the third.
                    assets
                        .replace_texture(second, TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 2, GREEN, CREAM))
                        .expect("known");
                    assets.remove_texture(third).expect("known");
                    assert_eq!(assets.remove_texture(third), Err(MaterialError::Removed(third)), "{label}");
                    assert_eq!(assets.remove_texture(99), Err(MaterialError::Unknown(99)), "{label}");
                    let naming_removed = Material { texture: Some(third), ..Material::default() };
                    assert_eq!(assets.add_material(naming_removed), Err(MaterialError::Removed(third)), "{label}");
                    replaced_at = Some(frame);
                    // The reference gets the new texels whole (it follows the frame's mips).
                    reference
                        .replace_texture(second, TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 2, GREEN, CREAM))
                        .expect("known");
                    reference.remove_texture(third).expect("known");
                }
                app.run_frame();
                FrameInFlight::finish(&mut app);
                let capture = lock_capture(&capture);
                let report = app.resource::<RenderReport>();
                assert!(report.error.is_none(), "{label}: {:?}", report.error);
                assert!(
                    report.upload.texture_bytes <= SMALL_BUDGET,
                    "{label}: {} bytes of texels",
                    report.upload.texture_bytes
                );
                let (world, visibility) = (app.world(), app.resource::<Visibility>());
                let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None)
                    .expect("the truth answers");
                assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
                assert_eq!(checked.differing_pixels, 0, "{label}: the picture is the reference's");
                if frame >= TEXTURED && replaced_at.is_none() {
                    let finest =
                        report.texture_mips.iter().find(|&&(layer, _)| layer == second).map_or(0, |&(_, mip)| mip);
                    finest_seen.push(finest);
                    if finest == 0 && settled_at.is_none() {
                        settled_at = Some(frame);
                    }
                    if settled_at.is_some_and(|settled| frame > settled) {
                        assert_eq!(capture.pixels, preloaded, "{label}: the preloaded picture once resident");
                    }
                }
            }
            assert!(settled_at.is_some(), "{label}: the texture arrived: {finest_seen:?}");
            assert!(finest_seen.windows(2).all(|pair| pair[1] <= pair[0]), "{label}: ever finer: {finest_seen:?}");
            assert!(
                finest_seen.iter().filter(|&&mip| mip != 0).count() >= 4,
                "{label}: several frames: {finest_seen:?}"
            );
            assert!(replaced_at.is_some(), "{label}: replaced");
            assert!(assets.is_texture_resident(second), "{label}: the replacement arrived");
            assert!(!assets.is_texture_resident(third), "{label}: removed");
        }
    }
    assert_no_validation_messages(&device);
}

/// Runs `count` frames of `app`, each finished.
fn frames(app: &mut runtime::App, count: u32) {
    for _ in 0..count {
        app.run_frame();
        FrameInFlight::finish(app);
        assert!(app.resource::<RenderReport>().error.is_none());
    }
}

/// Removed textures' layers are given again: not while a frame in flight may read them (a
/// texture added at once takes a new layer), nor while a material names them, and once given
/// the layer shows the new texels only (the picture of the same texture loaded at install).
#[test]
fn removed_texture_layers_are_given_again_once_their_frames_finished() {
    let Some(device) = gpu_test_context() else { return };
    let preloaded = preloaded_picture(&device, CullingBackend::Cpu);
    let (mut app, capture) = textured_app(&device, CullingBackend::Cpu, true, false);
    let assets = app.resource::<RenderMeshes>().clone();
    frames(&mut app, 2);
    let green = || checkerboard(TEXTURE_SIDE, 2, GREEN, CREAM);
    let first = assets.add_texture(TEXTURE_SIDE, green()).expect("a texture");
    frames(&mut app, 3);
    assets.remove_texture(first).expect("known");
    let second = assets.add_texture(TEXTURE_SIDE, green()).expect("a texture");
    assert_ne!(second, first, "a frame in flight may still read the removed layer");
    assets.remove_texture(second).expect("known");
    frames(&mut app, 4);
    let blue = assets.add_texture(TEXTURE_SIDE, checkerboard(TEXTURE_SIDE, 8, BLUE, CREAM)).expect("a texture");
    assert_eq!(blue, first, "the oldest layer free of frames and materials is given again");
    let material = assets.add_material(Material { texture: Some(blue), ..Material::default() }).expect("a material");
    spawn_textured(&mut app, 0.8, material);
    for _ in 0..64 {
        frames(&mut app, 1);
        if assets.is_texture_resident(blue) {
            break;
        }
    }
    frames(&mut app, 2);
    assert!(assets.is_texture_resident(blue), "the texture arrived");
    assert_eq!(lock_capture(&capture).pixels, preloaded, "the given layer shows the new texels only");
    // A removed layer a material still names is kept from the next texture.
    assets.remove_texture(blue).expect("known");
    frames(&mut app, 4);
    let reused = assets.add_texture(TEXTURE_SIDE, green()).expect("a texture");
    assert_eq!(reused, second, "the layer free of frames and materials");
    let fresh = assets.add_texture(TEXTURE_SIDE, green()).expect("a texture");
    assert_eq!(fresh, second + 1, "the layer the material names stays as it is");
    assert_no_validation_messages(&device);
}

/// The figure of the note (run it in release: `cargo test --release -p renderer --test
/// runtime_materials -- --ignored --nocapture`): the frame that takes a new 1024x1024
/// texture (5.3 MiB with its mips) under the default transfer budget against the frames
/// around it, and the bytes each moves. Every add past a power of two of layers also grows
/// the array (a GPU copy of the layers before it).
#[test]
#[ignore = "a timing for the docs, not a check"]
fn time_of_a_frame_that_adds_a_1024_texture() {
    let Some(device) = gpu_test_context() else { return };
    const SIDE: u32 = 1024;
    let chain = |seed: u8| -> Vec<Vec<u8>> {
        (0..=SIDE.trailing_zeros())
            .map(|level| {
                let side = (SIDE >> level) as usize;
                (0..side * side * 4).map(|byte| (byte as u8).wrapping_mul(seed)).collect()
            })
            .collect()
    };
    let mut library = textured_cube();
    let first = library.add_texture(SIDE, chain(3)).expect("a texture");
    library.add_material(Material { texture: Some(first), ..Material::default() }).expect("a material");
    let (mut app, _capture) = headless_app(&device, CullingBackend::Gpu, library, (WIDTH, HEIGHT, 16), |_| {});
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.5, 3.5), Vec3::ZERO));
    spawn_textured(&mut app, -0.8, 0);
    let assets = app.resource::<RenderMeshes>().clone();
    let frame_ms = |app: &mut runtime::App| {
        let started = std::time::Instant::now();
        app.run_frame();
        FrameInFlight::finish(app);
        started.elapsed().as_secs_f64() * 1e3
    };
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    for _ in 0..5 {
        frame_ms(&mut app);
    }
    let (mut quiet, mut adding, mut growing) = (Vec::new(), Vec::new(), Vec::new());
    for add in 0..7u8 {
        for _ in 0..4 {
            quiet.push(frame_ms(&mut app));
        }
        let texels = chain(add + 5);
        let started = std::time::Instant::now();
        let id = assets.add_texture(SIDE, texels).expect("a texture");
        let add_ms = started.elapsed().as_secs_f64() * 1e3;
        let milliseconds = frame_ms(&mut app);
        let bytes = app.resource::<RenderReport>().upload.texture_bytes;
        let grew = id.is_power_of_two();
        println!(
            "texture {id}: add {add_ms:.2} ms, its frame {milliseconds:.2} ms, {bytes} bytes of texels{}",
            if grew { ", the array grew" } else { "" }
        );
        assert!(assets.is_texture_resident(id), "one frame takes it under the default budget");
        if grew {
            growing.push(milliseconds)
        } else {
            adding.push(milliseconds)
        }
    }
    println!(
        "median frame: {:.2} ms without an add, {:.2} ms taking a 1024x1024 texture ({} frames), {:.2} ms taking one and growing the array ({} frames)",
        median(&mut quiet),
        median(&mut adding.clone()),
        adding.len(),
        median(&mut growing.clone()),
        growing.len(),
    );
    assert_no_validation_messages(&device);
}

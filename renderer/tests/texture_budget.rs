//! Texture mips under the memory budget, on lavapipe with validation: a row of textured
//! cubes, each with its own texture, and a camera flying close along the row and back under a
//! budget of two textures' full chains (every texture at install would take eight). Every
//! frame the resident bytes (meshes and texture mips) stay within the budget, the textures of
//! the cubes passed are evicted mip by mip and reloaded on the way back, and the picture is
//! the truth reference's, which samples exactly the mips the frame had resident
//! (`RenderReport::texture_mips`), so nothing outside the resident mips is sampled; nothing
//! visible is culled. GPU and CPU culling, serial and pipelined.

mod headless_app;
mod textured_cube;

use headless_app::{headless_app, SKY};
use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Aabb, Camera, MaterialHandle, Mesh, MeshHandle, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::GpuDevice;
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{lock_capture, FrameInFlight, Material, MeshLibrary, RenderReport, SharedCapture};
use textured_cube::{checkerboard, textured_cube};

const WIDTH: u32 = 128;
const HEIGHT: u32 = 96;
const SIDE: u32 = 64;
/// Cubes (and textures) along the row.
const CUBES: u32 = 8;
/// Metres between the cubes.
const SPACING: f32 = 3.0;
/// Frames out along the row, and as many back.
const HALF: u32 = 40;
/// Bytes of one texture with every mip.
const CHAIN: u64 = (64 * 64 + 32 * 32 + 16 * 16 + 8 * 8 + 4 * 4 + 2 * 2 + 1) * 4;

/// The cube with one checkerboard texture and material per cube, every mip given at install.
fn library() -> MeshLibrary {
    let mut library = textured_cube();
    let colours = [[220, 40, 30, 255], [30, 60, 200, 255], [40, 180, 60, 255], [200, 180, 40, 255]];
    for cube in 0..CUBES {
        let cells = 2 << (cube % 3);
        let texels = checkerboard(SIDE, cells, colours[cube as usize % 4], [240, 230, 200, 255]);
        let texture = library.add_texture(SIDE, texels).expect("a texture");
        library.add_material(Material { texture: Some(texture), ..Material::default() }).expect("a material");
    }
    library
}

fn app(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> (runtime::App, SharedCapture) {
    let (mut app, capture) = headless_app(device, backend, library(), (WIDTH, HEIGHT, 16), |settings| {
        settings.pipelined_frames = pipelined;
        settings.evict_after_frames = 4;
        // A 64x64 mip takes two frames: loads wait in the queue across frames.
        settings.transfer_budget = 8 << 10;
    });
    for cube in 0..CUBES {
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(cube), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        let place = Transform::from_translation(Vec3::new(cube as f32 * SPACING, 0.0, 0.0));
        scene::spawn_mesh(app.world_mut(), mesh, place);
    }
    (app, capture)
}

/// The camera's pose at frame `frame`: close in front of the row, out along it and back.
fn camera_at(frame: u32) -> Transform {
    let end = (CUBES - 1) as f32 * SPACING;
    let along = if frame <= HALF { frame as f32 / HALF as f32 } else { (2 * HALF - frame) as f32 / HALF as f32 };
    let x = along * end;
    scene::look_at(Vec3::new(x, 0.4, 2.2), Vec3::new(x, 0.0, 0.0))
}

/// What a flight saw.
#[derive(Debug)]
struct Flight {
    max_resident: u64,
    loaded: u32,
    evicted: u32,
    /// Textures whose finest sampled mip went coarser (an eviction), then finer again.
    reloaded: usize,
    /// Frames that sampled some texture coarser than its finest mip.
    coarser_frames: u32,
}

fn fly(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool) -> Flight {
    let (mut app, capture) = app(device, backend, pipelined);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, 16, library(), SKY).expect("a reference");
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera_at(0));
    // The first frame runs without a budget: every mip is resident, as given at install.
    app.run_frame();
    FrameInFlight::finish(&mut app);
    let first = app.resource::<RenderReport>().residency;
    assert_eq!(first.texture_bytes, u64::from(CUBES) * CHAIN, "every mip at install: {first:?}");
    // Two textures in full, the rest at their 1x1.
    let budget = first.mesh_bytes + 2 * CHAIN + u64::from(CUBES) * 4;
    app.resource_mut::<ecs::RenderSettings>().mesh_memory_budget = Some(budget);
    let mut flight = Flight { max_resident: 0, loaded: 0, evicted: 0, reloaded: 0, coarser_frames: 0 };
    // By texture: the finest mip sampled last frame, whether it went coarser, whether it then
    // went finer.
    let mut history = vec![(0u32, false, false); CUBES as usize];
    for frame in 0..=2 * HALF {
        let label = format!("{backend:?} pipelined {pipelined} frame {frame}");
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = camera_at(frame);
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{label}: {:?}", report.error);
        let residency = report.residency;
        assert_eq!(residency.budget, Some(budget), "{label}");
        assert!(residency.resident_bytes <= budget, "{label}: {residency:?}");
        assert_eq!(residency.resident_bytes, residency.mesh_bytes + residency.texture_bytes, "{label}");
        flight.max_resident = flight.max_resident.max(residency.resident_bytes);
        flight.loaded += residency.texture_mips_loaded;
        flight.evicted += residency.texture_mips_evicted;
        flight.coarser_frames += u32::from(!report.texture_mips.is_empty());
        for (texture, seen) in history.iter_mut().enumerate() {
            let sampled = report.texture_mips.iter().find(|&&(layer, _)| layer as usize == texture);
            let finest = sampled.map_or(0, |&(_, mip)| mip);
            assert_ne!(finest, u32::MAX, "{label}: the 1x1 of texture {texture} is never evicted");
            seen.1 |= finest > seen.0;
            seen.2 |= seen.1 && finest < seen.0;
            seen.0 = finest;
        }
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: the picture of the same resident mips");
        assert!(checked.truth.objects_with_pixels >= 1, "{label}: the cubes ahead show");
    }
    flight.reloaded = history.iter().filter(|seen| seen.2).count();
    assert_no_validation_messages(device);
    flight
}

#[test]
fn a_flight_under_a_budget_evicts_and_reloads_texture_mips_and_samples_only_resident_ones() {
    let Some(device) = gpu_test_context() else { return };
    for (backend, pipelined) in
        [(CullingBackend::Gpu, false), (CullingBackend::Cpu, false), (CullingBackend::Gpu, true)]
    {
        let flight = fly(&device, backend, pipelined);
        println!("{backend:?} pipelined {pipelined}: {flight:?}");
        let label = format!("{backend:?} pipelined {pipelined}: {flight:?}");
        assert!(flight.evicted >= CUBES, "{label}: the budget bites");
        assert!(flight.reloaded >= 4, "{label}: mips evicted come back on the way back");
        assert!(flight.loaded > 0, "{label}");
        assert!(flight.coarser_frames > 0, "{label}");
    }
}

//! The overlay inside the engine's headless frame, on lavapipe with validation (zero
//! messages): it appears in the picture, changes pixels only inside its panels' rectangles,
//! and a renderer error drops it while the frame goes on; a zero-size window draws nothing,
//! picks nothing (`PickMiss::ZeroSize`) and leaves the overlay working for the frames after.

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Camera, Transform};
use glam::Vec3;
use overlay::egui::{self, epaint::ImageDelta, Color32, ColorImage, TextureId, TextureOptions};
use overlay::{lock_painted, Overlay, Switches, OVERLAY_PASS};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, MeshLibrary, RenderReport, RenderSetup, Screenshots, COLOR};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 720;

/// A frame of a few cubes with the overlay's pass, culled by `backend`.
fn overlay_app(device: &Arc<GpuDevice>, backend: CullingBackend, overlay: &Overlay) -> runtime::App {
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 16,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.2, 0.4, 0.6, 1.0],
        bits: BitsReadback::None,
        passes: vec![overlay.passes()],
    };
    let mut app = runtime::App::with_threads(1);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(2.0, 1.5, 6.0), Vec3::ZERO));
    for index in 0..9 {
        let place = Vec3::new((index % 3) as f32 * 1.6 - 1.6, (index / 3) as f32 * 1.6 - 1.6, 0.0);
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(place));
    }
    app
}

/// Runs one frame (the overlay built from the frame before) and returns its `color`.
fn frame(app: &mut runtime::App, overlay: &mut Overlay) -> Vec<u8> {
    overlay.update(app, &Switches::default());
    app.resource_mut::<Screenshots>().request(COLOR);
    app.run_frame();
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    assert!(report.dropped_passes.is_empty(), "{:?}", report.dropped_passes);
    drop(report);
    let shot = app.resource_mut::<Screenshots>().take().into_iter().next().expect("taken");
    assert_eq!((shot.width, shot.height), (WIDTH, HEIGHT));
    shot.rgba8
}

/// Frames whose overlay cost is measured.
const COST_FRAMES: usize = 30;

/// The median of `values`.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Pixels of `with` that differ from `without`, and those of them outside every rectangle.
fn differences(without: &[u8], with: &[u8], rects: &[egui::Rect]) -> (usize, Vec<(u32, u32)>) {
    let mut changed = 0;
    let mut outside = Vec::new();
    for (index, (old, new)) in without.chunks_exact(4).zip(with.chunks_exact(4)).enumerate() {
        if old == new {
            continue;
        }
        changed += 1;
        let (x, y) = (index as u32 % WIDTH, index as u32 / WIDTH);
        let centre = egui::pos2(x as f32 + 0.5, y as f32 + 0.5);
        // Anti-aliasing feathers an edge by up to a pixel outside the rectangle.
        if !rects.iter().any(|rect| rect.expand(1.5).contains(centre)) {
            outside.push((x, y));
        }
    }
    (changed, outside)
}

fn appears_only_inside_its_panels(backend: CullingBackend) {
    let Some(device) = gpu_test_context() else { return };
    let mut overlay = Overlay::new(false);
    let mut app = overlay_app(&device, backend, &overlay);
    for _ in 0..4 {
        frame(&mut app, &mut overlay);
    }
    let without = frame(&mut app, &mut overlay);
    overlay.set_open(true);
    // egui sizes a window from what it drew the frame before: a few frames settle them.
    for _ in 0..4 {
        frame(&mut app, &mut overlay);
    }
    let with = frame(&mut app, &mut overlay);
    let rects: Vec<egui::Rect> = overlay.panel_rects().collect();
    // A look at the picture: OVERLAY_TEST_PNG=<folder> writes it there.
    if let Some(folder) = std::env::var_os("OVERLAY_TEST_PNG") {
        let path = std::path::Path::new(&folder).join(format!("overlay_{backend:?}.png"));
        renderer::write_png(&path, &with, WIDTH, HEIGHT).expect("the picture is written");
    }
    assert_eq!(rects.len(), 5, "every panel is open: {rects:?}");
    let (changed, outside) = differences(&without, &with, &rects);
    let area: f32 = rects
        .iter()
        .map(|rect| {
            rect.intersect(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(WIDTH as f32, HEIGHT as f32))).area()
        })
        .sum();
    assert!(changed as f32 > area * 0.5, "the panels cover the frame: {changed} pixels changed of {area} in panels");
    assert!(
        outside.is_empty(),
        "{} pixels changed outside the panels {rects:?}, first {:?}",
        outside.len(),
        &outside[..outside.len().min(8)]
    );
    // The cost a frame, medians of a few frames with every panel open (a release build
    // gives the figures worth quoting).
    let (mut builds, mut records, mut gpu) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..COST_FRAMES {
        // Lavapipe draws on the CPU: the frames before are finished first, so that its
        // threads do not share the cores with the overlay's build.
        device.wait_idle().expect("the device waits");
        frame(&mut app, &mut overlay);
        let report = app.resource::<RenderReport>();
        let pass = report.passes.iter().find(|pass| pass.name == OVERLAY_PASS).expect("the overlay's pass runs");
        builds.push(overlay.build_seconds() * 1e3);
        records.push(pass.cpu_record_ms);
        gpu.extend(pass.gpu_ms);
    }
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    let (build_mean, record_mean) = (mean(&builds), mean(&records));
    println!(
        "overlay ({backend:?}), medians of {COST_FRAMES} frames: build {:.3} ms CPU, record {:.3} ms CPU, pass {:?} ms \
         GPU; means: build {build_mean:.3} ms, record {record_mean:.3} ms, together {:.3} ms",
        median(&mut builds),
        median(&mut records),
        (!gpu.is_empty()).then(|| median(&mut gpu)),
        build_mean + record_mean,
    );
    // Closed again, the frame is the frame without it.
    overlay.set_open(false);
    frame(&mut app, &mut overlay);
    assert_eq!(frame(&mut app, &mut overlay), without, "a closed overlay draws nothing");
    assert_no_validation_messages(&device);
}

#[test]
fn the_overlay_changes_pixels_only_inside_its_panels_gpu_culled() {
    appears_only_inside_its_panels(CullingBackend::Gpu);
}

#[test]
fn the_overlay_changes_pixels_only_inside_its_panels_cpu_culled() {
    appears_only_inside_its_panels(CullingBackend::Cpu);
}

#[test]
fn a_renderer_error_drops_the_overlay_and_the_frame_goes_on() {
    let Some(device) = gpu_test_context() else { return };
    let mut overlay = Overlay::new(false);
    let mut app = overlay_app(&device, CullingBackend::Gpu, &overlay);
    for _ in 0..3 {
        frame(&mut app, &mut overlay);
    }
    let without = frame(&mut app, &mut overlay);
    overlay.set_open(true);
    frame(&mut app, &mut overlay);
    assert!(overlay.error().is_none());
    // An update of a texture the renderer never had: its `set_texture` fails.
    let bogus = ImageDelta::partial([0, 0], ColorImage::new([1, 1], vec![Color32::RED]), TextureOptions::default());
    lock_painted(overlay.painted()).textures.push((TextureId::Managed(9999), bogus));
    frame(&mut app, &mut overlay);
    let error = overlay.error().expect("the overlay is dropped");
    assert!(!error.is_empty());
    for _ in 0..2 {
        assert_eq!(frame(&mut app, &mut overlay), without, "the frame goes on, without the overlay");
    }
    assert!(app.resource::<RenderReport>().frames >= 8, "every frame was drawn");
    assert_no_validation_messages(&device);
}

#[test]
fn the_selected_entity_is_explained_in_a_panel_of_its_own() {
    let Some(device) = gpu_test_context() else { return };
    let mut overlay = Overlay::new(true);
    let mut app = overlay_app(&device, CullingBackend::Cpu, &overlay);
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    for _ in 0..3 {
        frame(&mut app, &mut overlay);
    }
    assert_eq!(overlay.panel_rects().count(), 5, "nothing selected: no panel for it");
    overlay.select(Some(cube));
    frame(&mut app, &mut overlay);
    assert_eq!(overlay.panel_rects().count(), 6, "the selection's panel");
    let picture = frame(&mut app, &mut overlay);
    the_box_is_drawn_over_the_frame(&overlay, &picture);
    let selection = overlay.snapshot().selection.clone().expect("the cube is selected");
    assert_eq!(selection.explanation.reason, culling::Reason::Visible);
    assert_eq!(selection.explanation.state, Some(culling::ObjectState::Visible));
    assert_eq!(selection.position, Some([0.0, 0.0, 0.0]));
    assert!(selection.other_views.is_empty(), "one camera, no other view");
    // A second camera looking away from the cube: the panel says why it is not drawn there.
    let away = scene::look_at(glam::Vec3::new(0.0, 0.0, 20.0), glam::Vec3::new(0.0, 0.0, 40.0));
    scene::spawn_camera(app.world_mut(), ecs::Camera { order: 1, ..ecs::Camera::default() }, away);
    // The overlay reads the frame before the one it draws over, and rebuilds its panels
    // within `REBUILD_PERIOD` frames.
    for _ in 0..=overlay::REBUILD_PERIOD {
        frame(&mut app, &mut overlay);
    }
    let selection = overlay.snapshot().selection.clone().expect("the cube is selected");
    assert_eq!(selection.explanation.reason, culling::Reason::Visible, "the main view still sees it");
    assert_eq!(selection.other_views.len(), 1, "{:?}", selection.other_views);
    assert!(matches!(selection.other_views[0].1.reason, culling::Reason::OffFrustum { .. }), "{selection:?}");
    assert_no_validation_messages(&device);
}

/// The selection's box, as the overlay projected it, shows the outline's colour at the middle
/// of each of its edges that no panel covers (at least one).
fn the_box_is_drawn_over_the_frame(overlay: &Overlay, picture: &[u8]) {
    let outline = &overlay.snapshot().outline;
    assert_eq!(outline.len(), 12, "a cube in front of the camera: twelve edges");
    let rects: Vec<egui::Rect> = overlay.panel_rects().collect();
    let mut checked = 0;
    for [a, b] in outline {
        let middle = (*a + *b) * 0.5;
        let centre = egui::pos2(middle.x, middle.y);
        if rects.iter().any(|rect| rect.expand(2.0).contains(centre)) {
            continue;
        }
        let at = (middle.y as usize * WIDTH as usize + middle.x as usize) * 4;
        let [r, g, b] = [picture[at], picture[at + 1], picture[at + 2]];
        let want = overlay::OUTLINE_COLOUR;
        let near = |got: u8, want: u8| got.abs_diff(want) <= 40;
        assert!(near(r, want.r()) && near(g, want.g()) && near(b, want.b()), "({r}, {g}, {b}) at {middle}");
        checked += 1;
    }
    assert!(checked > 0, "every edge's middle lies under a panel: {outline:?}");
}

#[test]
fn a_zero_size_window_picks_nothing_and_the_overlay_goes_on() {
    let Some(device) = gpu_test_context() else { return };
    let mut overlay = Overlay::new(true);
    let mut app = overlay_app(&device, CullingBackend::Cpu, &overlay);
    // In front of the grid, nearer the camera than any of its cubes.
    let place = Vec3::new(0.0, 0.0, 2.0);
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(place));
    for _ in 0..3 {
        frame(&mut app, &mut overlay);
    }
    overlay.select(Some(cube));
    let mut picking = overlay::Picking::new(Some(Arc::clone(&device)), MeshLibrary::with_unit_cube());
    // Minimised: the window has no area. Every panel is open and an entity selected, so the
    // update builds the panels and projects the box for frames with no pixels.
    app.insert_resource(ecs::Viewport { width: 0, height: 0 });
    for _ in 0..=overlay::REBUILD_PERIOD {
        overlay.update(&app, &Switches::default());
        app.run_frame();
        assert!(app.resource::<RenderReport>().error.is_none());
    }
    assert!(overlay.error().is_none(), "the overlay is kept: {:?}", overlay.error());
    assert_eq!(picking.at(&app, 0, 0), Err(overlay::PickMiss::ZeroSize));
    picking.request(&app, 0, 0).expect("nothing in flight");
    assert_eq!(picking.poll(), Some(Err(overlay::PickMiss::ZeroSize)), "answered without drawing");
    // The window back: the overlay draws the box over the frame and the cube is picked.
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    for _ in 0..=overlay::REBUILD_PERIOD {
        frame(&mut app, &mut overlay);
    }
    let picture = frame(&mut app, &mut overlay);
    the_box_is_drawn_over_the_frame(&overlay, &picture);
    let clip = app.resource::<culling::Visibility>().view().expect("a view").view_projection * place.extend(1.0);
    let (x, y) = (0.5 + 0.5 * clip.x / clip.w, 0.5 - 0.5 * clip.y / clip.w);
    let (x, y) = ((x * WIDTH as f32) as u32, (y * HEIGHT as f32) as u32);
    assert_eq!(picking.at(&app, x, y), Ok(cube), "the cube at ({x}, {y}) once the window has its size");
    assert_no_validation_messages(&device);
}

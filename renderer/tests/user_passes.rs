//! A user's passes inside the engine's frame: placed at the frame's insertion points
//! (`renderer::points`), they run there in every frame kind, read the engine's `view`
//! uniform, and what they write is what the cull and the draw see in the same frame. On
//! lavapipe with validation (zero messages).

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{scene, Camera, Transform, Viewport};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Binding, BindingKind, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice, ImageRead, Pass,
    Registry, RenderGraph, ShaderStage, TypedPass,
};
use renderer::{
    add_gpu_culled_scene_passes, add_scene_passes, install_render, points, BitsReadback, GpuCullSettings, GpuScene,
    MeshLibrary, ObjectDesc, RenderReport, RenderSetup, ScenePassOptions, OBJECT_TRANSFORMS, VIEW,
};

/// Moves every object by `offset` on the GPU (`shaders::MOVE_OBJECTS_COMP`), reading the
/// object count from the engine's `view` block: what a game's GPU animation looks like.
struct MoveObjects {
    pipeline: ComputePipeline,
    offset: [f32; 4],
    capacity: u32,
}

impl MoveObjects {
    fn new(device: &Arc<GpuDevice>, offset: Vec3, capacity: u32) -> render_graph::Result<MoveObjects> {
        let kinds = [BindingKind::StorageBuffer, BindingKind::UniformBuffer];
        let pipeline = ComputePipeline::new(device, "move objects", shaders::MOVE_OBJECTS_COMP.words(), &kinds, 16)?;
        Ok(MoveObjects { pipeline, offset: offset.extend(0.0).to_array(), capacity })
    }
}

impl TypedPass for MoveObjects {
    /// The transforms it moves, and the view it reads.
    type Handles = (BufferWrite, BufferRead);

    fn name(&self) -> &str {
        "move objects"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        registry.claim_engine_write(transforms);
        let view = registry.buffer(VIEW);
        (
            registry.read_write_storage_buffer(transforms, ShaderStage::Compute),
            registry.read_uniform_buffer(view, ShaderStage::Compute),
        )
    }

    fn execute(&mut self, (transforms, view): &Self::Handles, context: &mut ExecuteContext<'_>) {
        context.bind_compute(&self.pipeline, &[Binding::buffer(transforms), Binding::buffer(*view)]);
        let bytes: Vec<u8> = self.offset.iter().flat_map(|value| value.to_le_bytes()).collect();
        context.push_constant_bytes(&bytes);
        context.dispatch(self.capacity.div_ceil(64), 1, 1);
    }
}

/// A pass that only marks where it ran.
struct Marker(&'static str);

impl Pass for Marker {
    fn name(&self) -> &str {
        self.0
    }
    fn register(&mut self, registry: &mut Registry<'_>) {
        registry.side_effect();
    }
    fn execute(&mut self, _: &mut ExecuteContext<'_>) {}
}

/// The position of `name` in `order`.
fn at(order: &[String], name: &str) -> usize {
    order.iter().position(|pass| pass == name).unwrap_or_else(|| panic!("{name} runs: {order:?}"))
}

/// A Render-stage setup with GPU culling on `device`: an image of `width` x `height`,
/// `capacity` slots, the unit cube, a black clear colour, no bits read back and no passes of
/// the user's (tests override what they need).
fn gpu_setup(device: &Arc<GpuDevice>, width: u32, height: u32, capacity: u32) -> RenderSetup {
    RenderSetup {
        shadows: false,
        backend: CullingBackend::Gpu,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width, height },
        capacity,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::None,
        passes: Vec::new(),
    }
}

/// An app rendering with `setup`, its camera at `eye` looking at the origin.
fn rendering_app(threads: usize, setup: RenderSetup, eye: Vec3) -> runtime::App {
    let mut app = runtime::App::with_threads(threads);
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::ZERO));
    app
}

#[test]
fn every_frame_kind_has_every_point_in_frame_order() {
    let Some(device) = gpu_test_context() else { return };
    let extent = vk::Extent2D { width: 32, height: 32 };
    for gpu_culled in [false, true] {
        let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), 16).expect("scene");
        scene
            .push_object(ObjectDesc { world: renderer::IDENTITY, color: 0xffff_ffff, mesh: 0, material: 0 })
            .expect("fits");
        scene.draw_all_objects();
        let scene = scene.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(&device), extent).expect("graph");
        let options = ScenePassOptions::default();
        if gpu_culled {
            let settings = Arc::new(std::sync::Mutex::new(GpuCullSettings::default()));
            add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, false).expect("passes");
        } else {
            add_scene_passes(&mut graph, &scene, &options).expect("passes");
        }
        assert_eq!(graph.insertion_points().collect::<Vec<_>>(), points::ALL);
        // Placed last point first: each still runs at its own point.
        for point in points::ALL.iter().rev() {
            graph.add_pass_at(point, Marker(point)).expect("a point of the frame");
        }
        let order = graph.execution_order().expect("compiles");
        let positions: Vec<usize> = points::ALL.iter().map(|point| at(&order, point)).collect();
        assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "points in frame order: {order:?}");
        let (upload, geometry, readback) =
            (at(&order, "object_upload"), at(&order, "geometry"), at(&order, "readback color"));
        assert!(upload < positions[0] && positions[4] > geometry && positions[5] < readback, "{order:?}");
        assert!(positions[3] < geometry, "after depth prepass comes before geometry: {order:?}");
        if gpu_culled {
            assert!(positions[1] < at(&order, "gpu cull early"), "{order:?}");
            let (hiz, late) = (at(&order, "hi-z build"), at(&order, "gpu cull late"));
            assert!(hiz < positions[2] && positions[2] < late, "between the phases: {order:?}");
            assert!(at(&order, "depth_prepass late") < positions[3], "{order:?}");
        } else {
            assert!(positions[1] < at(&order, "draw_list_upload"), "{order:?}");
        }
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn a_pass_before_the_cull_moves_objects_and_the_cull_and_draw_see_it_that_frame() {
    let Some(device) = gpu_test_context() else { return };
    const CUBES: u32 = 5;
    let setup = RenderSetup {
        bits: BitsReadback::Wait,
        passes: vec![Box::new(|graph: &mut RenderGraph| {
            let pass = MoveObjects::new(graph.device(), Vec3::X * 100.0, 64)?;
            graph.add_typed_pass_at(points::BEFORE_CULL, pass)
        })],
        ..gpu_setup(&device, 48, 32, 64)
    };
    let mut app = rendering_app(2, setup, Vec3::new(0.0, 0.0, 20.0));
    // Far to the left, out of view, on the host: the GPU pass moves them 100 m right a frame.
    for index in 0..CUBES {
        let place = Transform::from_translation(Vec3::new(-100.0 + index as f32 * 2.0 - 4.0, 0.0, 0.0));
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), place);
    }
    for frame in 0..3 {
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        assert_eq!(report.bits_frame, Some(frame), "the frame's own answer (BitsReadback::Wait)");
        let stats = report.gpu.expect("read back");
        // The CPU's computation of where the pass put them: 100 m right per frame from the
        // host's places, which are uploaded once (the cubes are still on the host): in view
        // (x about 0) on frame 0, then 100 m and 200 m right, out of view.
        let in_view = frame == 0;
        let drawn = stats.early_drawn + stats.late_drawn;
        assert_eq!(drawn, if in_view { CUBES } else { 0 }, "frame {frame}: {stats:?}");
        assert_eq!(stats.frustum_rejected, if in_view { 0 } else { CUBES }, "frame {frame}: {stats:?}");
        let visible = report.bits.iter().map(|word| word.count_ones()).sum::<u32>();
        assert_eq!(visible, drawn, "frame {frame}: the bits follow the moved boxes");
    }
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn the_image_follows_the_viewport_and_a_zero_viewport_keeps_the_last_size() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = rendering_app(1, gpu_setup(&device, 40, 24, 16), Vec3::new(0.0, 0.0, 10.0));
    assert_eq!(*app.resource::<Viewport>(), Viewport { width: 40, height: 24 }, "the setup's extent");
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    app.run_frame();
    let extent = |app: &runtime::App| {
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        (report.extent.width, report.extent.height, report.frames)
    };
    assert_eq!(extent(&app), (40, 24, 1));
    app.insert_resource(Viewport { width: 64, height: 16 });
    app.run_frame();
    assert_eq!(extent(&app), (64, 16, 2), "a game resizing its viewport resizes the image");
    app.insert_resource(Viewport { width: 0, height: 0 });
    app.run_frame();
    // Culling keeps its last answer (the viewport's rule), and the image its last size.
    assert_eq!(extent(&app), (64, 16, 3), "a zero viewport is neither an error nor a zero-size graph");
    app.insert_resource(Viewport { width: 32, height: 32 });
    app.run_frame();
    assert_eq!(extent(&app), (32, 32, 4));
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn screenshots_of_any_image_at_a_game_frame_without_a_frame_target() {
    let Some(device) = gpu_test_context() else { return };
    let setup = RenderSetup { clear_color: [0.0, 0.0, 1.0, 1.0], ..gpu_setup(&device, 32, 24, 16) };
    let mut app = rendering_app(1, setup, Vec3::new(0.0, 0.0, 4.0));
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    let png = std::env::temp_dir().join(format!("engine-screenshot-{}.png", std::process::id()));
    {
        let mut shots = app.resource_mut::<renderer::Screenshots>();
        shots.request(renderer::COLOR);
        shots.request_png(renderer::DEPTH_PREPASS, Some(2), &png);
        shots.request("colr");
    }
    app.run_frame();
    let first = app.resource_mut::<renderer::Screenshots>().take();
    assert_eq!(first.len(), 2, "{first:?}");
    let missing = first.iter().find(|shot| shot.image == "colr").expect("answered");
    assert!(missing.error.as_deref().is_some_and(|error| error.contains("did you mean `color`")), "{missing:?}");
    let color = first.iter().find(|shot| shot.image == renderer::COLOR).expect("taken");
    assert!(color.error.is_none(), "{:?}", color.error);
    assert_eq!((color.frame, color.width, color.height, color.texels.len()), (0, 32, 24, 32 * 24 * 4));
    // The white cube in the middle, the blue clear colour in the corner.
    let texel = |x: usize, y: usize| &color.rgba8[(y * 32 + x) * 4..(y * 32 + x) * 4 + 4];
    assert_eq!(texel(16, 12), [255, 255, 255, 255]);
    assert_eq!(texel(0, 0), [0, 0, 255, 255]);
    app.run_frame();
    assert!(app.resource_mut::<renderer::Screenshots>().take().is_empty(), "the depth is asked of frame 2");
    app.run_frame();
    let depth = app.resource_mut::<renderer::Screenshots>().take();
    assert_eq!(depth.len(), 1);
    let depth = &depth[0];
    assert!(depth.error.is_none(), "{:?}", depth.error);
    assert_eq!((depth.frame, depth.format), (2, vk::Format::D32_SFLOAT));
    assert_eq!(depth.saved.as_deref(), Some(png.as_path()));
    let near = f32::from_le_bytes(depth.texels[(12 * 32 + 16) * 4..(12 * 32 + 16) * 4 + 4].try_into().unwrap());
    assert!(near > 0.0 && depth.texels[..4] == [0; 4], "the cube has a depth, the sky none: {near}");
    let written = std::fs::read(&png).expect("the PNG is written");
    assert_eq!(&written[1..4], b"PNG");
    let _ = std::fs::remove_file(&png);
    assert!(app.resource::<RenderReport>().error.is_none());
    drop(app);
    assert_no_validation_messages(&device);
}

/// Draws the complement of `input` over the whole of `color` (a full-screen triangle).
struct Invert {
    pipeline: render_graph::GraphicsPipeline,
}

impl TypedPass for Invert {
    type Handles = ImageRead;
    fn name(&self) -> &str {
        "invert"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> ImageRead {
        let input = registry.image("invert input");
        let color = registry.image(renderer::COLOR);
        registry.color_attachment(color, render_graph::AttachmentLoad::DontCare);
        registry.sample(input, ShaderStage::Fragment)
    }
    fn record_draw(&mut self, &input: &ImageRead, context: &mut ExecuteContext<'_>) {
        context.bind_graphics(&self.pipeline, &[Binding::image(input)]);
        context.draw(3, 1);
    }
}

/// The colour of frame 0 of a small scene, with the invert post-process or without.
fn first_frame(device: &Arc<GpuDevice>, inverted: bool) -> Vec<u8> {
    let passes: Vec<renderer::AddPasses> = if inverted {
        vec![Box::new(|graph: &mut RenderGraph| {
            let desc = render_graph::GraphicsPipelineDesc {
                vertex: shaders::FULLSCREEN_VERT.words(),
                fragment: shaders::INVERT_FRAG.words(),
                bindings: &[BindingKind::SampledImage],
                push_constant_bytes: 0,
                color_formats: &[renderer::COLOR_FORMAT],
                depth: None,
                topology: vk::PrimitiveTopology::TRIANGLE_LIST,
                cull_mode: vk::CullModeFlags::NONE,
                blend: render_graph::ColorBlend::Replace,
            };
            let pipeline = render_graph::GraphicsPipeline::new(graph.device(), "invert", &desc)?;
            renderer::add_post_process(graph, "invert input", Invert { pipeline })
        })]
    } else {
        Vec::new()
    };
    let setup = RenderSetup { clear_color: [0.2, 0.4, 0.6, 1.0], passes, ..gpu_setup(device, 24, 16, 8) };
    let mut app = rendering_app(1, setup, Vec3::new(1.0, 0.5, 3.0));
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
    app.run_frame();
    let shots = app.resource_mut::<renderer::Screenshots>().take();
    assert!(app.resource::<RenderReport>().error.is_none(), "{:?}", app.resource::<RenderReport>().error);
    shots.into_iter().next().expect("taken").rgba8
}

#[test]
fn a_post_process_samples_a_copy_of_the_colour_while_it_writes_the_colour() {
    let Some(device) = gpu_test_context() else { return };
    let (plain, inverted) = (first_frame(&device, false), first_frame(&device, true));
    assert_eq!(plain.len(), 24 * 16 * 4);
    let complement: Vec<u8> =
        plain.chunks_exact(4).flat_map(|texel| [255 - texel[0], 255 - texel[1], 255 - texel[2], texel[3]]).collect();
    assert_eq!(inverted, complement, "the screenshot sees the post-processed colour");
    let colours: std::collections::HashSet<&[u8]> = plain.chunks_exact(4).collect();
    assert!(colours.len() >= 2, "the cube and the sky, not one flat colour: {colours:?}");
    assert_no_validation_messages(&device);
}

#[test]
fn the_debug_view_shows_any_image_of_the_frame_in_place_of_the_colour() {
    let Some(device) = gpu_test_context() else { return };
    let setup = RenderSetup { clear_color: [0.2, 0.4, 0.6, 1.0], ..gpu_setup(&device, 32, 24, 8) };
    let mut app = rendering_app(1, setup, Vec3::new(0.5, 0.5, 3.0));
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    let frame = |app: &mut runtime::App, view: renderer::DebugView| {
        *app.resource_mut::<renderer::DebugView>() = view;
        {
            let mut shots = app.resource_mut::<renderer::Screenshots>();
            shots.request(renderer::COLOR);
            shots.request(renderer::DEPTH_PREPASS);
        }
        app.run_frame();
        assert!(app.resource::<RenderReport>().error.is_none(), "{:?}", app.resource::<RenderReport>().error);
        let shots = app.resource_mut::<renderer::Screenshots>().take();
        let of = |name: &str| shots.iter().find(|shot| shot.image == name).expect("taken").clone();
        (of(renderer::COLOR), of(renderer::DEPTH_PREPASS))
    };
    let (plain, _) = frame(&mut app, renderer::DebugView::default());
    let view =
        |image: &str, mip: u32| renderer::DebugView { image: Some(String::from(image)), mip, ..Default::default() };
    let (shown, depth) = frame(&mut app, view(renderer::DEPTH_PREPASS, 0));
    // The depth as grey: what the debug view draws, computed from the depth's own texels.
    let grey: Vec<u8> = depth
        .texels
        .chunks_exact(4)
        .flat_map(|texel| {
            let value = (f32::from_le_bytes(texel.try_into().unwrap()).clamp(0.0, 1.0) * 255.0).round() as u8;
            [value, value, value, 255]
        })
        .collect();
    assert_eq!(shown.rgba8.len(), grey.len());
    assert!(shown.rgba8.iter().zip(&grey).all(|(&a, &b)| a.abs_diff(b) <= 1), "the colour shows the depth");
    assert_ne!(shown.rgba8, plain.rgba8);
    // On a logarithmic scale of four decades: 1 + log10(depth) / 4.
    let (logged, depth) = frame(&mut app, renderer::DebugView::depth(renderer::DEPTH_PREPASS, 0));
    let expected = depth.texels.chunks_exact(4).map(|texel| {
        let depth = f32::from_le_bytes(texel.try_into().unwrap()).max(1e-30);
        ((1.0 + depth.log10() / 4.0).clamp(0.0, 1.0) * 255.0).round() as u8
    });
    let texels = logged.rgba8.chunks_exact(4);
    assert!(texels.zip(expected).all(|(texel, grey)| texel[0].abs_diff(grey) <= 1), "the depth on a log scale");
    // A mip of the pyramid, smaller than the frame, fills it.
    let (pyramid, _) = frame(&mut app, view(renderer::HIZ_DEPTH, 1));
    assert!(pyramid.rgba8.chunks_exact(4).any(|texel| texel[0] > 0), "the pyramid has depths");
    // An image the frame does not have: the frame is shown, without an error.
    let (unknown, _) = frame(&mut app, view("no such image", 0));
    assert_eq!(unknown.rgba8, plain.rgba8);
    let (back, _) = frame(&mut app, renderer::DebugView::default());
    assert_eq!(back.rgba8, plain.rgba8, "cleared, the frame is shown again");
    drop(app);
    assert_no_validation_messages(&device);
}

#[test]
fn depth_screenshots_are_developed_on_the_debug_views_log_scale() {
    let Some(device) = gpu_test_context() else { return };
    let setup = RenderSetup { clear_color: [0.2, 0.4, 0.6, 1.0], ..gpu_setup(&device, 32, 24, 8) };
    let mut app = rendering_app(1, setup, Vec3::new(0.5, 0.5, 3.0));
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    *app.resource_mut::<renderer::DebugView>() = renderer::DebugView::depth(renderer::DEPTH_PREPASS, 0);
    let shoot = |app: &mut runtime::App| {
        {
            let mut shots = app.resource_mut::<renderer::Screenshots>();
            shots.request(renderer::COLOR);
            shots.request(renderer::DEPTH_PREPASS);
        }
        app.run_frame();
        assert!(app.resource::<RenderReport>().error.is_none(), "{:?}", app.resource::<RenderReport>().error);
        let shots = app.resource_mut::<renderer::Screenshots>().take();
        let of = |name: &str| shots.iter().find(|shot| shot.image == name).expect("taken").clone();
        (of(renderer::COLOR), of(renderer::DEPTH_PREPASS))
    };
    let (shown, depth) = shoot(&mut app);
    let greys: Vec<u8> = depth.rgba8.chunks_exact(4).map(|texel| texel[0]).collect();
    // The cube's faces spread over the grey range, not all crowded near black.
    let cube: Vec<u8> = greys.iter().copied().filter(|&grey| grey > 0).collect();
    assert!(!cube.is_empty() && cube.iter().all(|&grey| grey > 128), "the cube is clearly visible: {greys:?}");
    let shades: std::collections::BTreeSet<u8> = greys.iter().copied().collect();
    assert!(shades.len() >= 3, "the sky and more than one shade of the cube: {shades:?}");
    // The same picture as the debug view draws of the same depth.
    let drawn = shown.rgba8.chunks_exact(4).map(|texel| texel[0]);
    assert!(drawn.zip(&greys).all(|(a, &b)| a.abs_diff(b) <= 1), "the screenshot shows the depth as the view does");
    let mapped = depth.texels.chunks_exact(4).map(|texel| {
        let value = f32::from_le_bytes(texel.try_into().unwrap());
        (renderer::debug_view_grey(value, renderer::DebugView::DEPTH_LOG_DECADES) * 255.0).round() as u8
    });
    assert!(mapped.eq(greys.iter().copied()), "developed with the debug view's mapping");
    // The raw depth, when asked for: reversed-Z puts a cube a few metres away near black.
    app.resource_mut::<renderer::Screenshots>().set_depth_log_decades(0.0);
    let (_, raw) = shoot(&mut app);
    let darkest = raw.rgba8.chunks_exact(4).map(|texel| texel[0]).max().unwrap_or(0);
    assert!(darkest < 64, "the raw depth is dark: {darkest}");
    assert_eq!(raw.rgba8, renderer::picture(&raw.texels, raw.format));
    drop(app);
    assert_no_validation_messages(&device);
}

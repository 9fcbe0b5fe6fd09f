//! The glTF viewer: loads a .gltf or .glb scene into the ECS (meshes processed by meshopt:
//! LOD chains and meshlets), frames it with a camera (or looks through the file's first
//! camera), runs the engine's stages with culling on, and draws it through the standard
//! passes into a PNG, checking the image against one drawn with culling off.
//!
//! Run: `cargo run --release -p samples --bin viewer -- scene.glb [--out IMAGE.png] [--size WxH]
//! [--classify]`
//!
//! `--window` shows the scene in a window instead (the engine's Render stage, GPU culling
//! where a device can, textures, masks and blending as in the PNG), starting from the same
//! camera, pipelined; fly with W A S D, Space, Ctrl and the left mouse button, F1 turns culling off,
//! V cycles the depth views, Esc closes. With `--frames N` it closes after N frames, and
//! `--screenshot PATH` writes the last one.
//!
//! `--shadows` lights the scene with a sun casting shadows (four cascades) from every mesh
//! onto every mesh, in the PNG (every caster drawn into every cascade, checked culled against
//! unculled like the rest) and in the window (the Render stage culls the casters per cascade,
//! on the GPU with GPU culling).
//!
//! `--classify` also culls meshlet by meshlet on the GPU (a `cluster cull:` line, checked
//! against the unculled image and the meshlet truth) and writes `IMAGE-meshlets.png`: every
//! meshlet drawn with culling off in its verdict's colour (visible green, frustum red,
//! back-facing purple, occluded blue, kept conservatively amber), and `IMAGE-materials.png`:
//! every object drawn with culling off in its material's alpha mode (opaque grey, masked
//! green, blended blue; textured ones lighter).
//!
//! Prints objects, triangles per LOD level drawn, and meshlets. A file with nothing to draw
//! says so and exits 0; a bad file exits 1 with one line naming the problem. Without a
//! Vulkan device the viewer says why, skips the image and exits 0.

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::path::PathBuf;
use std::process::ExitCode;

use assets::{load_gltf, AlphaMode, BaseColor, GltfScene, ProcessOptions};
use culling::occlusion::OccluderMeshes;
use culling::Visibility;
use ecs::{Aabb, Camera, Viewport};
use glam::Vec3;
use renderer::{pack_rgba8, MeshLibrary};
use runtime::App;
use samples::mesh_render::MeshRenderer;

const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

struct Options {
    scene: PathBuf,
    out: PathBuf,
    width: u32,
    height: u32,
    classify: bool,
    window: bool,
    frames: Option<u64>,
    screenshot: Option<PathBuf>,
    shadows: bool,
}

fn parse_options() -> Result<Options, String> {
    let mut scene = None;
    let mut out = PathBuf::from("viewer.png");
    let (mut width, mut height) = (1280, 720);
    let mut classify = false;
    let (mut window, mut frames, mut screenshot) = (false, None, None);
    let mut shadows = false;
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--out" => out = PathBuf::from(arguments.next().ok_or("--out needs a path")?),
            "--size" => {
                let size = arguments.next().ok_or("--size needs WxH")?;
                let parsed = size.split_once('x').and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
                match parsed {
                    Some((w, h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => (width, height) = (w, h),
                    _ => return Err(format!("--size: '{size}' is not WxH with sides from 1 to 16384")),
                }
            }
            "--classify" => classify = true,
            "--window" => window = true,
            "--shadows" => shadows = true,
            "--frames" => {
                let count = arguments.next().ok_or("--frames needs a count")?;
                match count.parse::<u64>() {
                    Ok(count) if count > 0 => frames = Some(count),
                    _ => return Err(format!("--frames: '{count}' is not a positive count")),
                }
            }
            "--screenshot" => screenshot = Some(PathBuf::from(arguments.next().ok_or("--screenshot needs a path")?)),
            "--help" | "-h" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown option '{flag}'")),
            path if scene.is_none() => scene = Some(PathBuf::from(path)),
            extra => return Err(format!("one scene only ('{extra}' is a second)")),
        }
    }
    let scene = scene.ok_or("no scene file given")?;
    if (frames.is_some() || screenshot.is_some()) && !window {
        return Err(String::from("--frames and --screenshot are for --window"));
    }
    if screenshot.is_some() && frames.is_none() {
        return Err(String::from("--screenshot needs --frames N (the last frame is the screenshot)"));
    }
    Ok(Options { scene, out, width, height, classify, window, frames, screenshot, shadows })
}

fn main() -> ExitCode {
    samples::init_logging();
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("viewer: {message}");
            }
            eprintln!(
                "usage: viewer SCENE.gltf|SCENE.glb [--out IMAGE.png] [--size WxH] [--classify] [--shadows] \
                 [--window [--frames N] [--screenshot IMAGE.png]]"
            );
            return if message.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
    };
    let scene = match load_gltf(&options.scene, &ProcessOptions::default()) {
        Ok(scene) => scene,
        Err(error) => {
            eprintln!("viewer: {}: {error}", options.scene.display());
            return ExitCode::FAILURE;
        }
    };
    let timings = scene.timings;
    println!(
        "load: {} meshes, {} triangles in {:.1} ms (read {:.1}, parse {:.1}, buffers {:.1}, decode {:.1}, meshopt {:.1}){}",
        scene.meshes.len(),
        scene.triangle_count(),
        timings.total().as_secs_f64() * 1e3,
        timings.read.as_secs_f64() * 1e3,
        timings.parse.as_secs_f64() * 1e3,
        timings.buffers.as_secs_f64() * 1e3,
        timings.decode.as_secs_f64() * 1e3,
        timings.process.as_secs_f64() * 1e3,
        match scene.skipped_primitives {
            0 => String::new(),
            skipped => format!("; {skipped} non-triangle primitives skipped"),
        }
    );
    for (index, mesh) in scene.meshes.iter().enumerate() {
        println!("mesh {index}: {}", mesh.summary());
    }
    let count = |mode: fn(&AlphaMode) -> bool| {
        scene.material_list[..scene.material_list.len() - 1].iter().filter(|material| mode(&material.alpha)).count()
    };
    println!(
        "materials: {} opaque, {} masked, {} blended; {} textures decoded, {:.1} MiB with mips",
        count(|mode| *mode == AlphaMode::Opaque),
        count(|mode| matches!(mode, AlphaMode::Mask { .. })),
        count(|mode| *mode == AlphaMode::Blend),
        scene.images.len(),
        scene.image_bytes() as f64 / (1 << 20) as f64
    );
    view(&options, &scene)
}

fn view(options: &Options, scene: &GltfScene) -> ExitCode {
    let mut app = App::new();
    culling::install(&mut app);
    app.insert_resource(Viewport { width: options.width, height: options.height });
    let mut library = MeshLibrary::new();
    let mut occluders = OccluderMeshes::new();
    let spawned = match scene.spawn(app.world_mut(), &mut library, &mut occluders) {
        Ok(spawned) => spawned,
        Err(error) => {
            eprintln!("viewer: {}: {error}", options.scene.display());
            return ExitCode::FAILURE;
        }
    };
    if spawned.drawables.is_empty() {
        println!("viewer: {} has nothing to draw", options.scene.display());
        return ExitCode::SUCCESS;
    }
    app.insert_resource(occluders);
    if options.shadows {
        add_sun(&mut app, scene, &spawned.drawables);
    }
    if spawned.cameras.is_empty() {
        let eye = frame_scene(scene, options.width as f32 / options.height as f32);
        ecs::scene::spawn_camera(app.world_mut(), Camera::default(), eye);
        println!("camera: framing the scene's bounds");
    } else {
        println!("camera: the file's first camera");
    }
    if options.window {
        let window = samples::window::run::WindowOptions {
            title: "viewer",
            size: (options.width, options.height),
            frames: options.frames,
            present: render_graph::vk::PresentModeKHR::FIFO,
            screenshot: options.screenshot.clone(),
            resize_to: None,
            backend: culling::CullingBackend::Auto,
            frame_passes: samples::frame_passes::FramePassChoice::default(),
            debug_view: renderer::DebugView::default(),
            pipelined: true,
            shadows: options.shadows,
        };
        let outcome = samples::window::run::run(app, &library, window);
        return samples::window::run::WindowSummary::report(outcome, "viewer", options.screenshot.as_deref());
    }
    app.run_frame();

    let visibility = app.resource::<Visibility>();
    // Which level of which mesh each library id is.
    let mut level_of = vec![0_usize; library.len()];
    let mut levels_drawn = Vec::new();
    for mesh in &spawned.meshes {
        for (level, id) in mesh.levels.clone().enumerate() {
            level_of[id as usize] = level;
        }
    }
    let mut meshlets = 0;
    for &object in visibility.visible() {
        let mesh = visibility.objects().draws[object as usize].mesh.0;
        let level = level_of[mesh as usize];
        if levels_drawn.len() <= level {
            levels_drawn.resize(level + 1, 0_u64);
        }
        levels_drawn[level] += u64::from(library.triangle_count(mesh));
        meshlets += library.meshlets(mesh).len();
    }
    println!(
        "visibility: {} objects, {} visible; triangles drawn per LOD level {:?}; {} meshlets in the drawn levels",
        visibility.objects().len(),
        visibility.visible().len(),
        levels_drawn,
        meshlets
    );
    let colors: Vec<u32> = visibility
        .objects()
        .entities
        .iter()
        .map(|&entity| {
            let [red, green, blue, alpha] =
                app.world().get::<&BaseColor>(entity).map_or([255; 4], |color| color.to_rgba8());
            pack_rgba8(red, green, blue, alpha)
        })
        .collect();
    let capacity = visibility.objects().len() as u32;
    let atlas = if options.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
    let device = render_graph::GpuDevice::new(&render_graph::DeviceConfig {
        app_name: "viewer".into(),
        ..render_graph::DeviceConfig::default()
    });
    let made = device.map_err(samples::mesh_render::RenderError::from).and_then(|device| {
        let size = (options.width, options.height);
        MeshRenderer::with_shadows(std::sync::Arc::new(device), size, capacity, library, SKY, atlas)
    });
    let mut renderer = match made {
        Ok(renderer) => renderer,
        Err(reason) => {
            println!("render: no usable Vulkan device ({reason}); no image drawn");
            return ExitCode::SUCCESS;
        }
    };
    if options.shadows {
        renderer.set_shadows(Some(&app.resource::<culling::ShadowViews>()), &visibility);
    }
    let outcome = renderer.render_and_check(&visibility, |object| colors[object]).and_then(|(pixels, frame)| {
        renderer.write_png(&options.out, &pixels)?;
        Ok(frame)
    });
    match outcome {
        Ok(frame) => {
            println!(
                "render: {}x{} on {}: drew {} of {} objects, {} triangles, wrote {}; culling on vs off: {}",
                options.width,
                options.height,
                renderer.device_name(),
                frame.drawn,
                frame.drawn_without_culling,
                frame.triangles,
                options.out.display(),
                if frame.differing_pixels == 0 {
                    String::from("identical images")
                } else {
                    format!("{} pixels differ", frame.differing_pixels)
                }
            );
            if options.classify {
                let outs = [options.out.clone()];
                if let Err(error) = write_material_classes(
                    &mut renderer,
                    &visibility,
                    app.world(),
                    scene,
                    spawned.material_base,
                    &options.out,
                ) {
                    eprintln!("viewer: materials: {error}");
                    return ExitCode::FAILURE;
                }
                match samples::cluster_render::report_frame(
                    &mut renderer,
                    &visibility,
                    |object| colors[object],
                    &outs,
                    true,
                    true,
                ) {
                    Ok(line) => println!("{line}"),
                    Err(error) => {
                        eprintln!("viewer: cluster culling: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            let problems = renderer.validation_problems();
            if !problems.is_empty() {
                eprintln!("viewer: validation reported problems: {problems:?}");
                return ExitCode::FAILURE;
            }
            if frame.differing_pixels == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("viewer: render: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Lights the scene with a sun from above and behind the framing camera's side and makes
/// every drawable a shadow caster; the cascades reach as far as the scene is wide, three
/// times over.
fn add_sun(app: &mut App, scene: &GltfScene, drawables: &[runtime::hecs::Entity]) {
    let direction = Vec3::new(-0.5, -1.0, -0.35).normalize();
    let pose =
        ecs::Transform::from_translation_rotation(Vec3::ZERO, glam::Quat::from_rotation_arc(Vec3::NEG_Z, direction));
    app.world_mut().spawn((pose, ecs::DirectionalLight::default()));
    for &entity in drawables {
        let _ = app.world_mut().insert_one(entity, ecs::ShadowCaster);
    }
    let size = scene_bounds(scene).map_or(10.0, |bounds| (bounds.max - bounds.min).length());
    app.resource_mut::<ecs::ShadowSettings>().max_distance = (size * 3.0).max(1.0);
}

/// The scene's bounds: every drawable node's mesh box in world space (`None` without one).
fn scene_bounds(scene: &GltfScene) -> Option<Aabb> {
    let mut bounds: Option<Aabb> = None;
    for (node, world) in scene.nodes.iter().zip(scene.node_worlds()) {
        for &mesh in &node.meshes {
            let mesh = &scene.meshes[mesh];
            let local_box = Aabb::new(Vec3::from(mesh.bounds_min), Vec3::from(mesh.bounds_max));
            let world_box = local_box.transformed(&world);
            bounds = Some(match bounds {
                Some(all) => Aabb::new(all.min.min(world_box.min), all.max.max(world_box.max)),
                None => world_box,
            });
        }
    }
    bounds
}

/// A camera pose that sees the whole scene: its bounds (every drawable node's mesh box in
/// world space) seen from above and to the side, far enough for the bounding sphere to fit
/// the default 60° vertical field of view at `aspect`.
fn frame_scene(scene: &GltfScene, aspect: f32) -> ecs::Transform {
    let bounds = scene_bounds(scene).unwrap_or(Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)));
    let center = bounds.center();
    let radius = (bounds.max - bounds.min).length().max(1.0e-3) * 0.5;
    let half_fov = 30f32.to_radians().min((30f32.to_radians().tan() * aspect.min(1.0)).atan());
    let distance = radius / half_fov.sin() * 1.05;
    let direction = Vec3::new(0.6, 0.45, 1.0).normalize();
    ecs::scene::look_at(center + direction * distance, center)
}

/// Writes `IMAGE-materials.png`: every object drawn with culling off in its material's alpha
/// mode's colour (opaque grey, masked green, blended blue; lighter where textured).
fn write_material_classes(
    renderer: &mut MeshRenderer,
    visibility: &Visibility,
    world: &hecs::World,
    scene: &GltfScene,
    material_base: u32,
    out: &std::path::Path,
) -> Result<(), samples::city::RenderError> {
    let classes: Vec<u32> = visibility
        .objects()
        .entities
        .iter()
        .map(|&entity| {
            let material =
                world.get::<&ecs::Mesh>(entity).ok().and_then(|mesh| mesh.material.0.checked_sub(material_base));
            let material =
                material.and_then(|index| scene.material_list.get(index as usize)).cloned().unwrap_or_default();
            let lift = if material.base_color_texture.is_some() { 60 } else { 0 };
            match material.alpha {
                AlphaMode::Opaque => pack_rgba8(140 + lift, 140 + lift, 140 + lift, 255),
                AlphaMode::Mask { .. } => pack_rgba8(40, 170 + lift, 40, 255),
                AlphaMode::Blend => pack_rgba8(40, 80, 170 + lift, 255),
            }
        })
        .collect();
    let image = renderer.draw_all(visibility, |object| classes[object])?;
    let stem = out.file_stem().map_or(String::from("viewer"), |stem| stem.to_string_lossy().into_owned());
    let path = out.with_file_name(format!("{stem}-materials.png"));
    renderer.write_png(&path, &image)?;
    println!("materials: wrote {}", path.display());
    Ok(())
}

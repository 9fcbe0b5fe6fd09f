//! The glTF viewer: loads one or more .gltf or .glb files into one scene in the ECS (meshes
//! processed by meshopt: LOD chains and meshlets), frames it with a camera (or looks through
//! the file's first camera when one file is given), runs the engine's stages with culling
//! on, and draws it through the standard passes into a PNG, checking the image against one
//! drawn with culling off.
//!
//! Run: `cargo run --release -p samples --bin viewer -- SCENE.glb [MORE.gltf ...] [--as-is]
//! [--out IMAGE.png] [--size WxH] [--classify]`
//!
//! Several files: each file's model is added to the mesh library once and spawned once
//! (`GltfScene::add_model`, `spawn_model`). They stand side by side along +x by their
//! bounds, the first at its own origin, each next one shifted along x only to start a tenth
//! of the largest model's size after the previous one ends, so none overlaps another;
//! `--as-is` leaves every model at its own origin instead. The files' own cameras are then
//! left inactive and the framing camera sees them all. A file that cannot be loaded gets one
//! line naming it and the problem on standard error; the others are still drawn, and the
//! viewer exits 1 at the end so scripts notice.
//!
//! The framing camera looks at the centre of the scene's bounds, far enough for the bounding
//! sphere to fit the field of view, its near plane following the scene's size (a 2 cm model
//! and a 2 km one are framed alike; see `samples::viewer::framing`).
//!
//! `--window` shows the scene in a window instead (the engine's Render stage, GPU culling
//! where a device can, textures, masks and blending as in the PNG), starting from the same
//! camera, pipelined; fly with W A S D, Space, Ctrl and the left mouse button, F1 turns culling off,
//! V cycles the depth views, F3 shows the debug overlay (`--hud`: from the start), Esc closes.
//! With `--frames N` it closes after N frames, and `--screenshot PATH` writes the last one.
//!
//! `--stream` loads the files through the engine's asset server on a loader thread while
//! frames run (the Render stage draws from the first frame, in the window or headless): each
//! model appears once it is ready, its meshes drawing stand-ins until their bytes are on the
//! GPU, beside those arrived before it (in arrival order), and the camera frames everything
//! arrived (`samples::viewer::stream`). Headless, frames run until every file has arrived and
//! is on the GPU; the last one is the PNG, checked against the unculled image and the truth
//! (`false_hidden`).
//!
//! `--shadows` lights the scene with a sun casting shadows (four cascades) from every mesh
//! onto every mesh, in the PNG (every caster drawn into every cascade, checked culled against
//! unculled like the rest) and in the window (the Render stage culls the casters per cascade,
//! on the GPU with GPU culling).
//!
//! `--animate [CLIP]` plays the files' animations: each skinned mesh is rigged when spawned
//! and plays the clip named CLIP (a name or an index into the file's clips; the first clip
//! of its skin without one), looping, posed by the animation system and skinned on the GPU.
//! Headless it draws `--frames N` frames (60 without) at 30 frames a second, writes every
//! `--png-every K`-th one (only the last without) beside `--out` as `IMAGE-NNNN.png`, and
//! prints how many frames differ from the first; `--truth` compares each frame's culled
//! image with the unculled one (else only the last frame is compared). In the window it
//! plays until closed. Without `--animate` skinned meshes stand in their bind pose.
//!
//! `--classify` also culls meshlet by meshlet on the GPU (a `cluster cull:` line, checked
//! against the unculled image and the meshlet truth) and writes `IMAGE-meshlets.png`: every
//! meshlet drawn with culling off in its verdict's colour (visible green, frustum red,
//! back-facing purple, occluded blue, kept conservatively amber), and `IMAGE-materials.png`:
//! every object drawn with culling off in its material's alpha mode (opaque grey, masked
//! green, blended blue; textured ones lighter).
//!
//! Prints, per file, objects, triangles per LOD level drawn, and meshlets. A scene with
//! nothing to draw says so and exits 0; a bad file exits 1 with one line naming the problem.
//! Without a Vulkan device the viewer says why, skips the image and exits 0 (1 if a file was
//! bad).

/// Every heap allocation, in the Tracy capture's memory view (feature `profile-memory`).
#[cfg(feature = "profile-memory")]
#[global_allocator]
static ALLOCATOR: runtime::profiling::TrackedAllocator = runtime::profiling::tracked_allocator();

use std::path::PathBuf;
use std::process::ExitCode;

use assets::{
    load_gltf, spawn_model_animated, AlphaMode, BaseColor, GltfMaterial, GltfScene, Model, ModelAnimation,
    ProcessOptions,
};
use culling::occlusion::OccluderMeshes;
use culling::Visibility;
use ecs::{Aabb, Camera, Transform, Viewport};
use glam::Vec3;
use renderer::{pack_rgba8, MeshLibrary};
use runtime::App;
use samples::mesh_render::MeshRenderer;
use samples::viewer::{frame_bounds, place_models, scene_bounds, stream, Placement};

const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

const USAGE: &str = "usage: viewer SCENE.gltf|SCENE.glb [MORE.gltf|MORE.glb ...] [--as-is] [--out IMAGE.png] \
                     [--size WxH] [--classify] [--shadows] [--stream] [--window [--hud] [--frames N] [--screenshot IMAGE.png]] \
                     [--animate [CLIP] [--frames N] [--png-every K] [--truth]]\n\
                     several files stand side by side along +x by their bounds (--as-is: each at its own \
                     origin); a bad one is named, the others drawn, and the exit code is 1";

struct Options {
    scenes: Vec<PathBuf>,
    placement: Placement,
    out: PathBuf,
    width: u32,
    height: u32,
    classify: bool,
    window: bool,
    frames: Option<u64>,
    screenshot: Option<PathBuf>,
    shadows: bool,
    hud: bool,
    stream: bool,
    /// `--animate`: the clip asked for (`Some(None)`: each skin's first).
    animate: Option<Option<String>>,
    png_every: Option<u64>,
    truth: bool,
}

/// Frames `--animate` draws headless without `--frames`.
const ANIMATE_FRAMES: u64 = 60;
/// The animation's time step, seconds a frame.
const ANIMATE_DELTA: f32 = 1.0 / 30.0;

fn parse_options() -> Result<Options, String> {
    let mut scenes = Vec::new();
    let mut placement = Placement::SideBySide;
    let mut out = PathBuf::from("viewer.png");
    let (mut width, mut height) = (1280, 720);
    let mut classify = false;
    let (mut window, mut frames, mut screenshot) = (false, None, None);
    let (mut shadows, mut hud, mut stream) = (false, false, false);
    let (mut animate, mut png_every, mut truth) = (None, None, false);
    let mut arguments = std::env::args().skip(1).peekable();
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
            "--as-is" => placement = Placement::AsIs,
            "--classify" => classify = true,
            "--window" => window = true,
            "--shadows" => shadows = true,
            "--hud" => hud = true,
            "--stream" => stream = true,
            "--truth" => truth = true,
            "--animate" => {
                // The clip is the next argument unless it is an option or a file.
                let next = arguments
                    .peek()
                    .filter(|next| !next.starts_with("--") && !next.ends_with(".gltf") && !next.ends_with(".glb"));
                let clip = next.cloned();
                if clip.is_some() {
                    arguments.next();
                }
                animate = Some(clip);
            }
            "--png-every" => {
                let count = arguments.next().ok_or("--png-every needs a count")?;
                match count.parse::<u64>() {
                    Ok(count) if count > 0 => png_every = Some(count),
                    _ => return Err(format!("--png-every: '{count}' is not a positive count")),
                }
            }
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
            path => scenes.push(PathBuf::from(path)),
        }
    }
    if scenes.is_empty() {
        return Err(String::from("no scene file given"));
    }
    if (screenshot.is_some() || hud) && !window {
        return Err(String::from("--screenshot and --hud are for --window"));
    }
    if frames.is_some() && !window && animate.is_none() {
        return Err(String::from("--frames is for --window or --animate"));
    }
    if (png_every.is_some() || truth) && animate.is_none() {
        return Err(String::from("--png-every and --truth are for --animate"));
    }
    if animate.is_some() && (stream || classify) {
        return Err(String::from("--animate draws the preloaded scene: leave out --stream and --classify"));
    }
    if screenshot.is_some() && frames.is_none() {
        return Err(String::from("--screenshot needs --frames N (the last frame is the screenshot)"));
    }
    if stream && classify {
        return Err(String::from("--classify draws the preloaded scene: leave out --stream"));
    }
    Ok(Options {
        scenes,
        placement,
        out,
        width,
        height,
        classify,
        window,
        frames,
        screenshot,
        shadows,
        hud,
        stream,
        animate,
        png_every,
        truth,
    })
}

/// A file that loaded, with its path (for the lines naming it).
struct Loaded {
    path: PathBuf,
    scene: GltfScene,
}

fn main() -> ExitCode {
    samples::init_logging();
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("viewer: {message}");
            }
            eprintln!("{USAGE}");
            return if message.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        }
    };
    if options.stream {
        return view_streamed(&options);
    }
    let mut loaded = Vec::with_capacity(options.scenes.len());
    let mut any_bad = false;
    for path in &options.scenes {
        match load_gltf(path, &ProcessOptions::default()) {
            Ok(scene) => {
                if options.scenes.len() > 1 {
                    println!("file: {}", path.display());
                }
                report_load(&scene);
                loaded.push(Loaded { path: path.clone(), scene });
            }
            Err(error) => {
                eprintln!("viewer: {}: {error}", path.display());
                any_bad = true;
            }
        }
    }
    let outcome = if loaded.is_empty() { ExitCode::FAILURE } else { view(&options, &loaded, &mut any_bad) };
    // A bad file among good ones: the good ones were shown, the exit code still says so.
    if any_bad {
        ExitCode::FAILURE
    } else {
        outcome
    }
}

/// Prints what a file held and how long each load step took.
fn report_load(scene: &GltfScene) {
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
}

/// What the viewer spawned of every file.
struct Spawned {
    /// Per spawned file: its model in the library and its scene's materials.
    models: Vec<(Model, Vec<GltfMaterial>)>,
    /// Every entity with a mesh.
    drawables: Vec<runtime::hecs::Entity>,
    /// Every entity with a camera, in file order.
    cameras: Vec<runtime::hecs::Entity>,
    /// The placed scenes' bounds together (`None` when nothing is drawn).
    bounds: Option<Aabb>,
}

/// Adds each file's model to the library once and spawns it where `placement` puts it,
/// playing `animate`'s clip (see [`model_animation`]; still without); a file whose model does
/// not fit the library, or has no such clip, is named and left out (`any_bad` set).
fn spawn_files(
    app: &mut App,
    loaded: &[Loaded],
    placement: Placement,
    animate: Option<&Option<String>>,
    library: &mut MeshLibrary,
    occluders: &mut OccluderMeshes,
    any_bad: &mut bool,
) -> Spawned {
    let file_bounds: Vec<Option<Aabb>> = loaded.iter().map(|file| scene_bounds(&file.scene)).collect();
    let offsets = place_models(&file_bounds, placement);
    let mut spawned = Spawned { models: Vec::new(), drawables: Vec::new(), cameras: Vec::new(), bounds: None };
    for ((file, bounds), offset) in loaded.iter().zip(&file_bounds).zip(offsets) {
        let model = match file.scene.add_model(library, occluders) {
            Ok(model) => model,
            Err(error) => {
                eprintln!("viewer: {}: {error}", file.path.display());
                *any_bad = true;
                continue;
            }
        };
        let animation = match model_animation(&model, animate) {
            Ok(animation) => animation,
            Err(error) => {
                eprintln!("viewer: {}: {error}", file.path.display());
                *any_bad = true;
                continue;
            }
        };
        let placed = spawn_model_animated(app.world_mut(), &model, Transform::from_translation(offset), animation);
        spawned.drawables.extend(placed.drawables);
        spawned.cameras.extend(placed.cameras);
        if let Some(bounds) = bounds {
            let moved = Aabb::new(bounds.min + offset, bounds.max + offset);
            spawned.bounds = Some(spawned.bounds.map_or(moved, |all| all.union(&moved)));
        }
        spawned.models.push((model, file.scene.material_list.clone()));
    }
    spawned
}

/// What plays on `model` for `--animate` (`animate`): the clip named or numbered, or each
/// skin's first; nothing without `--animate`.
fn model_animation(model: &Model, animate: Option<&Option<String>>) -> Result<ModelAnimation, String> {
    let Some(clip) = animate else { return Ok(ModelAnimation::Still) };
    let Some(clip) = clip else { return Ok(ModelAnimation::First) };
    let index =
        clip.parse::<usize>().ok().filter(|&index| index < model.clips().len()).or_else(|| model.clip_named(clip));
    match index {
        Some(index) => Ok(ModelAnimation::Clip(index)),
        None => {
            let names: Vec<&str> = model.clips().map(|(clip, _)| clip.name()).collect();
            Err(format!("no animation '{clip}' (the file has {names:?})"))
        }
    }
}

fn view(options: &Options, loaded: &[Loaded], any_bad: &mut bool) -> ExitCode {
    let mut app = App::new();
    culling::install(&mut app);
    if options.animate.is_some() {
        animation::install(&mut app);
        if !options.window {
            app.set_fixed_delta(Some(ANIMATE_DELTA));
        }
    }
    app.insert_resource(Viewport { width: options.width, height: options.height });
    let mut library = MeshLibrary::new();
    let mut occluders = OccluderMeshes::new();
    let spawned = spawn_files(
        &mut app,
        loaded,
        options.placement,
        options.animate.as_ref(),
        &mut library,
        &mut occluders,
        any_bad,
    );
    let names = || loaded.iter().map(|file| file.path.display().to_string()).collect::<Vec<_>>().join(", ");
    if spawned.drawables.is_empty() {
        println!("viewer: {} has nothing to draw", names());
        return ExitCode::SUCCESS;
    }
    app.insert_resource(occluders);
    if options.shadows {
        add_sun(&mut app, spawned.bounds, &spawned.drawables);
    }
    // One file looks through its own first camera; several are framed together.
    if loaded.len() == 1 && !spawned.cameras.is_empty() {
        println!("camera: the file's first camera");
    } else {
        for &entity in &spawned.cameras {
            if let Ok(mut camera) = app.world_mut().get::<&mut Camera>(entity) {
                camera.active = false;
            }
        }
        let bounds = spawned.bounds.unwrap_or(Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)));
        let framing = frame_bounds(bounds, options.width as f32 / options.height as f32);
        ecs::scene::spawn_camera(app.world_mut(), framing.camera, framing.pose);
        let (near, _) = framing.camera.projection.planes();
        println!(
            "camera: framing the scene's bounds (centre {:.4?}, radius {:.4}, distance {:.4}, near plane {:.4})",
            bounds.center().to_array(),
            framing.radius,
            framing.distance,
            near
        );
    }
    if options.window {
        let window = window_options(options);
        let outcome = samples::window::run::run(app, &library, window);
        return samples::window::run::WindowSummary::report(outcome, "viewer", options.screenshot.as_deref());
    }
    app.run_frame();

    let visibility = app.resource::<Visibility>();
    // Which level of which mesh each library id is.
    let mut level_of = vec![0_usize; library.len()];
    let mut levels_drawn = Vec::new();
    for mesh in spawned.models.iter().flat_map(|(model, _)| model.meshes()) {
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
    if options.animate.is_some() {
        drop(visibility);
        return animate_frames(options, &mut app, &mut renderer, &colors);
    }
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
                if let Err(error) =
                    write_material_classes(&mut renderer, &visibility, app.world(), &spawned.models, &options.out)
                {
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

/// `--animate` headless: draws the frames, the skinned meshes posed by the animation system
/// and skinned on the GPU, writes the PNGs asked for and compares culled with unculled
/// images (every frame with `--truth`, else the last).
fn animate_frames(options: &Options, app: &mut App, renderer: &mut MeshRenderer, colors: &[u32]) -> ExitCode {
    let frames = options.frames.unwrap_or(ANIMATE_FRAMES);
    let every = options.png_every.unwrap_or(frames);
    let (mut first, mut moved, mut differing, mut written) = (None::<Vec<u8>>, 0_u64, 0_usize, Vec::new());
    for frame in 0..frames {
        if frame > 0 {
            app.run_frame();
        }
        if let Err(error) = renderer.set_palette(&app.resource::<animation::SkinPalette>()) {
            eprintln!("viewer: animate: {error}");
            return ExitCode::FAILURE;
        }
        let visibility = app.resource::<Visibility>();
        renderer.follow_skins(app.world(), &visibility);
        if options.shadows {
            renderer.set_shadows(Some(&app.resource::<culling::ShadowViews>()), &visibility);
        }
        let white = pack_rgba8(255, 255, 255, 255);
        let color_of = |object: usize| colors.get(object).copied().unwrap_or(white);
        let (pixels, checked) = match renderer.render_and_check(&visibility, color_of) {
            Ok(drawn) => drawn,
            Err(error) => {
                eprintln!("viewer: render: {error}");
                return ExitCode::FAILURE;
            }
        };
        let last = frame + 1 == frames;
        if options.truth || last {
            differing += checked.differing_pixels;
        }
        match &first {
            None => first = Some(pixels.clone()),
            Some(first) => moved += u64::from(*first != pixels),
        }
        if (frame + 1) % every == 0 || last {
            let path = frame_path(&options.out, frame);
            if let Err(error) = renderer.write_png(&path, &pixels) {
                eprintln!("viewer: {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
            written.push(path);
        }
    }
    let report = app.resource::<animation::AnimationReport>();
    println!(
        "animate: {} rigs, {} joints; {frames} frames, {moved} differ from the first; culled vs unculled: {}; wrote {} PNGs ({})",
        report.rigs,
        report.joints,
        if differing == 0 { String::from("identical images") } else { format!("{differing} pixels differ") },
        written.len(),
        written.last().map_or(String::new(), |path| path.display().to_string())
    );
    let problems = renderer.validation_problems();
    if !problems.is_empty() {
        eprintln!("viewer: validation reported problems: {problems:?}");
        return ExitCode::FAILURE;
    }
    if differing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--animate`'s PNG of frame `frame`: beside `out`, named `STEM-NNNN.png`.
fn frame_path(out: &std::path::Path, frame: u64) -> PathBuf {
    let stem = out.file_stem().map_or_else(|| String::from("viewer"), |stem| stem.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}-{frame:04}.png"))
}

/// Frames the viewer runs at most while streaming headless.
const STREAM_FRAMES: u64 = 100_000;

/// `--stream`: the files load through the asset server while the Render stage draws frames
/// (see `samples::viewer::stream`); headless, the last frame once all is on the GPU is the
/// PNG, checked against the unculled image and the truth.
fn view_streamed(options: &Options) -> ExitCode {
    let mut app = App::new();
    culling::install(&mut app);
    app.insert_resource(Viewport { width: options.width, height: options.height });
    let aspect = options.width as f32 / options.height as f32;
    let framing = frame_bounds(Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)), aspect);
    let camera = ecs::scene::spawn_camera(app.world_mut(), framing.camera, framing.pose);
    if options.shadows {
        add_sun(&mut app, None, &[]);
    }
    let arrivals = stream::install(&mut app, &options.scenes, options.placement, camera, aspect, options.shadows);
    // The library the renderer starts with: the unit cube alone (the files' meshes come later).
    let library = MeshLibrary::with_unit_cube();
    let any_failed = || !stream::lock(&arrivals).failed.is_empty();
    if options.window {
        let window = window_options(options);
        let outcome = samples::window::run::run(app, &library, window);
        let code = samples::window::run::WindowSummary::report(outcome, "viewer", options.screenshot.as_deref());
        return if any_failed() { ExitCode::FAILURE } else { code };
    }
    let device = match render_graph::GpuDevice::new(&render_graph::DeviceConfig {
        app_name: "viewer".into(),
        ..render_graph::DeviceConfig::default()
    }) {
        Ok(device) => std::sync::Arc::new(device),
        Err(reason) => {
            println!("render: no usable Vulkan device ({reason}); --stream draws while it loads, nothing done");
            return ExitCode::SUCCESS;
        }
    };
    let (target, capture) = renderer::HeadlessTarget::drawing();
    let setup = renderer::RenderSetup {
        backend: culling::CullingBackend::Auto,
        device: Some(std::sync::Arc::clone(&device)),
        extent: render_graph::vk::Extent2D { width: options.width, height: options.height },
        capacity: 64,
        meshes: library.clone(),
        clear_color: SKY,
        bits: renderer::BitsReadback::Wait,
        passes: Vec::new(),
        shadows: options.shadows,
    };
    if let Err(error) = renderer::install_render_to(&mut app, setup, Some(Box::new(target))) {
        eprintln!("viewer: rendering could not be set up: {error}");
        return ExitCode::FAILURE;
    }
    let started = std::time::Instant::now();
    let mut frame_ms = Vec::new();
    let mut stand_in_frames = 0_u64;
    loop {
        renderer::lock_capture(&capture).capture = true;
        let frame_started = std::time::Instant::now();
        app.run_frame();
        frame_ms.push(frame_started.elapsed().as_secs_f64() * 1e3);
        let report = app.resource::<renderer::RenderReport>();
        if let Some(error) = &report.error {
            eprintln!("viewer: frame {}: {error}", frame_ms.len() - 1);
            return ExitCode::FAILURE;
        }
        stand_in_frames += u64::from(!report.stand_ins.is_empty());
        if stream::lock(&arrivals).done() && report.stand_ins.is_empty() {
            break;
        }
        if frame_ms.len() as u64 >= STREAM_FRAMES {
            eprintln!("viewer: the files did not arrive in {STREAM_FRAMES} frames");
            return ExitCode::FAILURE;
        }
    }
    frame_ms.sort_by(f64::total_cmp);
    let (scenes, drawables) = {
        let arrived = stream::lock(&arrivals);
        (arrived.scenes.clone(), arrived.drawables.len())
    };
    println!(
        "stream: {} of {} files arrived in {} frames ({:.1} ms; frame median {:.3} ms, worst {:.3} ms), {} frames drew stand-ins",
        scenes.len(),
        options.scenes.len(),
        frame_ms.len(),
        started.elapsed().as_secs_f64() * 1e3,
        frame_ms[frame_ms.len() / 2],
        frame_ms[frame_ms.len() - 1],
        stand_in_frames
    );
    if drawables == 0 {
        println!("viewer: nothing to draw");
        return if any_failed() { ExitCode::FAILURE } else { ExitCode::SUCCESS };
    }
    // The check's renderer gets the same meshes in the same order, so the same ids.
    let capacity = app.resource::<Visibility>().objects().len() as u32;
    let atlas = if options.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
    let size = (options.width, options.height);
    let mut checker = match MeshRenderer::with_shadows(device, size, capacity, library.clone(), SKY, atlas) {
        Ok(checker) => checker,
        Err(error) => {
            eprintln!("viewer: the check's renderer: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut refused = None;
    for (_, scene) in &scenes {
        let added = scene.add_model_with(|vertices, levels| match checker.add_mesh_levels(vertices, levels) {
            Ok(ids) => Ok(ids),
            Err(error) => {
                refused = Some(error.to_string());
                Ok(0..levels.len() as u32)
            }
        });
        if let Err(error) = added {
            refused = Some(error.to_string());
        }
    }
    if let Some(error) = refused {
        eprintln!("viewer: the check's renderer refused a mesh: {error}");
        return ExitCode::FAILURE;
    }
    let visibility = app.resource::<Visibility>();
    let report = app.resource::<renderer::RenderReport>();
    let shadows = options.shadows.then(|| app.resource::<culling::ShadowViews>());
    let request =
        samples::city::check::CheckRequest { truth: true, pngs: vec![options.out.clone()], ..Default::default() };
    let checked = samples::city::check::check_frame(
        &mut checker,
        &renderer::lock_capture(&capture),
        &visibility,
        &report,
        app.world(),
        &library,
        shadows.as_deref(),
        app.resources().get::<animation::SkinPalette>().as_deref(),
        &request,
    );
    let code = match checked {
        Ok(samples::city::check::Checked { frame, truth, .. }) => {
            let false_hidden = truth.map_or(0, |truth| truth.false_hidden);
            println!(
                "render: {}x{} on {}: drew {} of {} objects, {} triangles, wrote {}; culling on vs off: {}; false_hidden {false_hidden}",
                options.width,
                options.height,
                checker.device_name(),
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
            if frame.differing_pixels == 0 && false_hidden == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("viewer: render: {error}");
            ExitCode::FAILURE
        }
    };
    let problems = checker.validation_problems();
    if !problems.is_empty() {
        eprintln!("viewer: validation reported problems: {problems:?}");
        return ExitCode::FAILURE;
    }
    if any_failed() {
        ExitCode::FAILURE
    } else {
        code
    }
}

/// Lights the scene with a sun from above and behind the framing camera's side and makes
/// every drawable a shadow caster; the cascades reach as far as the scene is wide, three
/// times over.
fn add_sun(app: &mut App, bounds: Option<Aabb>, drawables: &[runtime::hecs::Entity]) {
    let direction = Vec3::new(-0.5, -1.0, -0.35).normalize();
    let pose =
        ecs::Transform::from_translation_rotation(Vec3::ZERO, glam::Quat::from_rotation_arc(Vec3::NEG_Z, direction));
    app.world_mut().spawn((pose, ecs::DirectionalLight::default()));
    for &entity in drawables {
        let _ = app.world_mut().insert_one(entity, ecs::ShadowCaster);
    }
    let size = bounds.map_or(10.0, |bounds| (bounds.max - bounds.min).length());
    app.resource_mut::<ecs::ShadowSettings>().max_distance = (size * 3.0).max(1.0);
}

/// Writes `IMAGE-materials.png`: every object drawn with culling off in its material's alpha
/// mode's colour (opaque grey, masked green, blended blue; lighter where textured). `models`
/// gives each file's model and materials: a material handle belongs to the model whose
/// range of library materials holds it.
fn write_material_classes(
    renderer: &mut MeshRenderer,
    visibility: &Visibility,
    world: &hecs::World,
    models: &[(Model, Vec<GltfMaterial>)],
    out: &std::path::Path,
) -> Result<(), samples::city::RenderError> {
    let material_of = |handle: u32| {
        models.iter().find_map(|(model, materials)| {
            handle.checked_sub(model.material_base()).and_then(|index| materials.get(index as usize))
        })
    };
    let classes: Vec<u32> = visibility
        .objects()
        .entities
        .iter()
        .map(|&entity| {
            let material = world.get::<&ecs::Mesh>(entity).ok().and_then(|mesh| material_of(mesh.material.0)).cloned();
            let material = material.unwrap_or_default();
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

/// The window the viewer opens with `--window`, preloaded or streamed alike.
fn window_options(options: &Options) -> samples::window::run::WindowOptions {
    samples::window::run::WindowOptions {
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
        hud: options.hud,
    }
}

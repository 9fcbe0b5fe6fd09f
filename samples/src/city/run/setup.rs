//! The city before its first frame: the app and its settings, the meshes, the city's
//! entities, and what the options add to them (streamed districts, a camera path, lights, a
//! second view, the monitor); the options that do not go together are refused here.

use std::time::Instant;

use culling::occlusion::OccluderMeshes;
use culling::CullingBackend;
use ecs::{RenderSettings, Viewport};
use runtime::{App, Stage};

use crate::city::districts::DistrictFiles;
use crate::city::monitor::{self, MonitorMeshes};
use crate::city::options::LodRule;
use crate::city::{self, CameraKeyframes, CameraPath, City, CityConfig, CityLibrary, CityMeshes, CityOptions};
use crate::city::{CullChoice, RenderChoice, Switch};
use crate::frame_passes::FramePassChoice;

/// The city as built before its first frame.
pub(super) struct Scene {
    /// Its meshes (with the monitor's, given `--monitor`).
    pub(super) meshes: CityLibrary,
    /// Its entities.
    pub(super) city: City,
    /// `--stream`: the district files the streamer loads.
    pub(super) districts: Option<DistrictFiles>,
    /// `--monitor`: what the monitor added to the library.
    pub(super) monitor: Option<MonitorMeshes>,
    /// `--views 2`: split-screen.
    pub(super) split: bool,
}

/// How the frames run, chosen from the options.
#[derive(Clone, Copy)]
pub(super) struct Choices {
    /// Where the frames are culled.
    pub(super) backend: CullingBackend,
    /// The users' frame passes (`--post`, `--debug-boxes`, `--gpu-animate`).
    pub(super) passes: FramePassChoice,
}

/// The app with the culling installed, the motion the options ask for, and the render
/// settings of the options.
pub(super) fn app(options: &CityOptions) -> App {
    let (width, height) = options.size;
    let mut app = match options.threads {
        Some(threads) => App::with_threads(threads as usize),
        None => App::new(),
    };
    culling::install(&mut app);
    if options.world_motion == Switch::On {
        city::install_motion(&mut app);
    } else {
        city::install_still(&mut app);
    }
    app.add_system(Stage::Input, city::Bobbing::system());
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(Viewport { width, height });
    {
        let mut settings = app.resource_mut::<RenderSettings>();
        settings.cull_min_pixels = options.min_pixels;
        settings.cull_max_distance = options.max_distance;
        settings.occlusion_culling = options.occlusion == Switch::On;
        settings.visibility_tags = options.tags.policy();
        settings.cpu_answers = options.cpu_answers.policy();
        settings.batch_draws = options.batch == Switch::On;
        settings.gpu_lod_selection = options.gpu_lod == Switch::On;
        settings.mesh_memory_budget = options.budget.map(|mib| (mib * f64::from(1 << 20)) as u64);
        // `--cull gpu|auto` are decided once the city's size is known (the renderer that
        // culls on the GPU is made then).
        if options.cull == CullChoice::Off {
            settings.frustum_culling = false;
            settings.occlusion_culling = false;
            settings.cull_min_pixels = 0.0;
            settings.cull_max_distance = 0.0;
        }
    }
    // Buildings occlude: their occluder is their full-footprint base block (authored, so
    // exact; the setbacks above it are narrower).
    let mut occluders = OccluderMeshes::new();
    occluders.insert(CityMeshes::BUILDING, city::building_occluder());
    app.insert_resource(occluders);
    app
}

/// Builds the meshes and the city in `app`'s world, with what the options add.
pub(super) fn scene(app: &mut App, options: &CityOptions) -> Result<Scene, String> {
    let config = options.city_config();
    // The meshes first, so the city's entities are spawned with their LOD chains.
    let meshes_started = Instant::now();
    let mut meshes = CityLibrary::build(&config);
    let monitor = match options.monitor.then(|| monitor::add_to_library(&mut meshes.library)) {
        Some(Ok(added)) => Some(added),
        Some(Err(error)) => return Err(format!("city: --monitor: {error}")),
        None => None,
    };
    if options.lod_rule == LodRule::Error {
        app.insert_resource(meshes.lod_errors());
    }
    let meshes_ms = meshes_started.elapsed().as_secs_f64() * 1e3;
    let city = populate(app, options, &config, &meshes, meshes_ms);
    let districts = districts(app, options, &config)?;
    if let Some(path) = &options.camera_path {
        let keyframes = CameraKeyframes::load(path).map_err(|error| format!("city: camera path {error}"))?;
        let camera = city.camera.expect("the city has a camera");
        let world = app.world_mut();
        let _ = world.remove_one::<CameraPath>(camera);
        world.insert_one(camera, keyframes).expect("the camera exists");
        app.add_system(Stage::Input, CameraKeyframes::system());
        println!("camera: following {}", path.display());
    }
    if options.shadows {
        add_lights(app, options, &config);
    }
    let split = options.views > 1;
    if split {
        city::views::add_second_view(app.world_mut(), &config, &city)
            .map_err(|error| format!("city: --views 2: {error}"))?;
        println!("views: 2, split-screen (left: the street's camera, right: another street, the other way)");
    }
    if let Some(added) = monitor {
        monitor::spawn(app.world_mut(), &config, &city, added).map_err(|error| format!("city: --monitor: {error}"))?;
        println!("monitor: a rooftop camera renders into a 256x256 image shown on a billboard in the street view");
    }
    Ok(Scene { meshes, city, districts, monitor, split })
}

/// Spawns the city with its LOD chains and bobbing objects, and says what was built.
fn populate(app: &mut App, options: &CityOptions, config: &CityConfig, meshes: &CityLibrary, meshes_ms: f64) -> City {
    let build_started = Instant::now();
    let city = city::build_city(app.world_mut(), config, Some(meshes));
    let with_lods = city::attach_lods(app.world_mut(), meshes);
    // A still world: its pedestrians, who always walk, are left out.
    let walkers = if options.world_motion == Switch::On { city.pedestrians.len() } else { 0 };
    if walkers == 0 {
        city.pedestrians.iter().for_each(|&walker| drop(app.world_mut().despawn(walker)));
    }
    let movers = city::Bobbing::choose(app.world_mut(), options.movers);
    println!(
        "meshes: {} generated and processed by meshopt in {:.1} ms; {with_lods} entities got their LOD chain",
        meshes.summaries.len(),
        meshes_ms
    );
    for (_, name, summary) in &meshes.summaries {
        println!("  {name}: {summary}");
    }
    println!(
        "city: {} mesh entities ({} buildings, {} cars with 4 wheels each, {} pedestrians, {movers} bobbing) on {} blocks, built in {:.1} ms",
        city.mesh_entities - (city.pedestrians.len() - walkers),
        city.buildings.len(),
        city.cars.len(),
        walkers,
        config.blocks * config.blocks,
        build_started.elapsed().as_secs_f64() * 1e3
    );
    for line in city::bounds::describe(app.world(), config) {
        println!("{line}");
    }
    city
}

/// `--stream`: writes the districts' files once (or reuses them) and takes their buildings
/// and trees out of the world, for the streamer to load.
fn districts(app: &mut App, options: &CityOptions, config: &CityConfig) -> Result<Option<DistrictFiles>, String> {
    if !options.stream {
        return Ok(None);
    }
    if !options.window && options.render_choice() == RenderChoice::None {
        return Err(String::from("city: --stream draws its frames (no --render none)"));
    }
    let folder =
        options.stream_dir.clone().unwrap_or_else(|| DistrictFiles::default_folder(options.seed, options.objects));
    let started = Instant::now();
    let files = DistrictFiles::take_from(app.world_mut(), config, &folder)
        .map_err(|error| format!("city: cannot write the district files in {}: {error}", folder.display()))?;
    println!(
        "stream: {} buildings and trees in {} districts of {}x{} blocks, {} files in {} ({:.1} MiB, {} in {:.1} ms); radius {} m",
        files.objects,
        files.grid.count(),
        files.grid.blocks,
        files.grid.blocks,
        files.paths.len(),
        folder.display(),
        files.file_bytes as f64 / f64::from(1 << 20),
        if files.written { "written" } else { "reused" },
        started.elapsed().as_secs_f64() * 1e3,
        options.stream_radius
    );
    Ok(Some(files))
}

/// `--shadows`: the sun and the street lamps, with the options' shadow budget.
fn add_lights(app: &mut App, options: &CityOptions, config: &CityConfig) {
    let lamps = city::lights::spawn_lights(app.world_mut(), config);
    let mut settings = app.resource_mut::<ecs::ShadowSettings>();
    settings.max_shadowed_lights = options.shadow_lights;
    settings.caster_culling = options.shadow_culling == Switch::On;
    println!(
        "shadows: a sun with {} cascades and {lamps} street lamps, at most {} casting (budget {} views); atlas {}x{}, caster culling {}",
        settings.cascade_count,
        options.shadow_lights,
        settings.max_light_views,
        settings.atlas_resolution,
        settings.atlas_resolution,
        if settings.caster_culling { "on" } else { "off" }
    );
}

/// The culling backend and the users' passes, refusing what `--monitor` and `--views 2` cannot
/// be judged with (each message says why).
pub(super) fn choices(options: &CityOptions, scene: &Scene) -> Result<Choices, String> {
    if options.monitor && options.clusters {
        return Err(String::from(
            "city: --monitor does not take --clusters: the cluster check draws the street view again in frames of \
             its own, which have no image views, so their billboard shows no monitor picture and differs from the frame",
        ));
    }
    if options.monitor && options.classify && options.cull != CullChoice::Cpu {
        return Err(String::from(
            "city: --monitor takes --classify on the CPU backend only (--cull cpu): with GPU culling --classify also \
             runs the cluster check, whose frames have no image views (see --clusters)",
        ));
    }
    let backend = match options.cull {
        CullChoice::Cpu | CullChoice::Off => CullingBackend::Cpu,
        CullChoice::Gpu => CullingBackend::Gpu,
        CullChoice::Auto => CullingBackend::Auto,
    };
    let passes = FramePassChoice::parse(&options.post, options.debug_boxes, options.gpu_animate)
        .map_err(|error| format!("city: {error}"))?;
    if scene.split && (options.classify || options.clusters) {
        return Err(String::from(
            "city: --views 2 does not take --classify or --clusters: a split frame writes no PNG for the classify \
             image to go beside, and the cluster check draws one view over the whole image",
        ));
    }
    Ok(Choices { backend, passes })
}

/// Refuses, headless, the options only the window takes, and `--hud` beside the checks that
/// read the final image (the overlay is drawn over it).
pub(super) fn refuse_window_options(options: &CityOptions) -> Result<(), String> {
    if options.debug_view.is_some() {
        return Err(String::from("city: --debug-view shows an image in the window: add --window"));
    }
    if options.hud && (options.views > 1 || passes_chosen(options)) {
        return Err(String::from(
            "city: a headless --hud draws over the image the checks of --views 2, --post, --debug-boxes and \
             --gpu-animate read: run them without it",
        ));
    }
    if options.pipelined || options.serial {
        return Err(String::from(
            "city: --pipelined and --serial choose the window's frames (add --window); the headless run checks every \
             frame against its own reference and is serial",
        ));
    }
    Ok(())
}

/// Whether a users' frame pass (`--post`, `--debug-boxes`, `--gpu-animate`) was asked for.
fn passes_chosen(options: &CityOptions) -> bool {
    !options.post.is_empty() || options.debug_boxes || options.gpu_animate
}

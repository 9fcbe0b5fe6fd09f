//! glTF files loaded while frames run, written as a game would: two outside threads ask the
//! `AssetServer` for two small .glb files (a sphere with an LOD chain each) while the game
//! thread runs frames; once a handle is `Ready`, one call hands the scene's meshes to the
//! renderer's `RenderMeshes` and spawns its nodes. Under a small transfer budget the new
//! objects draw stand-ins first, then their own levels. Every frame, with GPU and CPU culling,
//! the truth finds nothing hidden that shows and the same picture as with culling off.
//! Lavapipe with validation.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use assets::{spawn_model, AssetServer, LoadState, SceneHandle, ServerOptions, SpawnedModel};
use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, MaterialHandle, Transform};
use glam::Vec3;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::truth::{check_frame, ReferenceRenderer};
use renderer::{
    install_render_to, lock_capture, BitsReadback, FrameInFlight, HeadlessTarget, MeshLibrary, RenderMeshes,
    RenderReport, RenderSetup, SharedCapture,
};
use runtime::JobSystem;

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];
const CAPACITY: u32 = 16;
/// Small enough that each sphere's bytes take several frames.
const BUDGET: u64 = 8 << 10;
/// Frames the test runs at most: the loads, then the uploads.
const FRAMES: u64 = 400;

/// A .glb holding one node with a unit sphere of `slices` x `stacks` quads, its material's
/// base colour `color`.
fn sphere_glb(slices: u32, stacks: u32, color: [f32; 4]) -> Vec<u8> {
    let mut positions = Vec::new();
    for stack in 0..=stacks {
        let polar = std::f32::consts::PI * stack as f32 / stacks as f32;
        for slice in 0..=slices {
            let azimuth = std::f32::consts::TAU * slice as f32 / slices as f32;
            positions.push([polar.sin() * azimuth.cos(), polar.cos(), polar.sin() * azimuth.sin()]);
        }
    }
    let vertex = |stack: u32, slice: u32| stack * (slices + 1) + slice;
    let mut indices = Vec::new();
    for stack in 0..stacks {
        for slice in 0..slices {
            let (a, b) = (vertex(stack, slice), vertex(stack, slice + 1));
            let (c, d) = (vertex(stack + 1, slice), vertex(stack + 1, slice + 1));
            // Counter-clockwise from outside.
            indices.extend([a, b, d, a, d, c]);
        }
    }
    let mut bin: Vec<u8> = positions.iter().flatten().flat_map(|value| value.to_le_bytes()).collect();
    let position_bytes = bin.len();
    bin.extend(indices.iter().flat_map(|value| value.to_le_bytes()));
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"materials":[{{"pbrMetallicRoughness":{{"baseColorFactor":[{},{},{},{}]}}}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}},"indices":1,"material":0}}]}}],
"buffers":[{{"byteLength":{}}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":{position_bytes}}},{{"buffer":0,"byteOffset":{position_bytes},"byteLength":{}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":{},"type":"VEC3","min":[-1,-1,-1],"max":[1,1,1]}},
{{"bufferView":1,"componentType":5125,"count":{},"type":"SCALAR"}}]}}"#,
        color[0],
        color[1],
        color[2],
        color[3],
        bin.len(),
        indices.len() * 4,
        positions.len(),
        indices.len(),
    );
    assets::gltf_export::glb_container(&json, &bin)
}

/// A fresh folder for this test's files.
fn scratch() -> PathBuf {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime-gltf");
    std::fs::create_dir_all(&folder).expect("a scratch folder");
    folder
}

/// The renderer's app over `library`, with a camera and a unit cube in view.
fn app(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    pipelined: bool,
    library: &MeshLibrary,
    cube: u32,
) -> (runtime::App, SharedCapture) {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: library.clone(),
        clear_color: SKY,
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ecs::RenderSettings>();
        settings.pipelined_frames = pipelined;
        settings.transfer_budget = BUDGET;
    }
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 2.0, 7.0), Vec3::ZERO));
    let mut mesh = scene::unit_cube_mesh();
    (mesh.mesh, mesh.material) = (ecs::MeshHandle(cube), MaterialHandle::PLAIN);
    scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(Vec3::new(0.0, -1.5, 0.0)));
    (app, capture)
}

/// Loads the two files from two outside threads while frames run, spawning each scene once it
/// is ready, and checks every frame; returns the frames in which a spawned object drew a
/// stand-in.
fn load_while_running(device: &Arc<GpuDevice>, backend: CullingBackend, pipelined: bool, files: &[PathBuf]) -> usize {
    let label = format!("{backend:?} pipelined {pipelined}");
    let mut library = MeshLibrary::new();
    let cube = library.add_unit_cube();
    let (mut app, capture) = app(device, backend, pipelined, &library, cube);
    let mut reference =
        ReferenceRenderer::with_device(Arc::clone(device), WIDTH, HEIGHT, CAPACITY, library, SKY).expect("a reference");
    let jobs = Some(Arc::new(JobSystem::new(1)));
    let server = Arc::new(AssetServer::new(ServerOptions { loader_threads: 2, jobs, ..ServerOptions::default() }));
    let (sender, handles) = mpsc::channel::<(usize, SceneHandle)>();
    // The game's own threads ask for the files while the game thread runs frames.
    let askers: Vec<_> = files
        .iter()
        .cloned()
        .enumerate()
        .map(|(index, path)| {
            let (server, sender) = (Arc::clone(&server), sender.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(5 * index as u64));
                sender.send((index, server.load(path))).expect("the game thread listens");
            })
        })
        .collect();
    drop(sender);
    let mut waiting: Vec<(usize, SceneHandle)> = Vec::new();
    let mut spawned: Vec<Option<SpawnedModel>> = vec![None; files.len()];
    let mut stand_in_frames = 0;
    let mut frame = 0u64;
    while frame < FRAMES {
        waiting.extend(handles.try_iter());
        let mut index = 0;
        while index < waiting.len() {
            let (file, handle) = waiting[index];
            match server.state(handle).expect("a live handle") {
                LoadState::Loading => index += 1,
                LoadState::Failed(error) => panic!("{label}: {error}"),
                LoadState::Ready => {
                    waiting.swap_remove(index);
                    let scene = server.get(handle).expect("a live handle").expect("ready");
                    let meshes = app.resource::<RenderMeshes>().clone();
                    let model = scene
                        .add_model_with(|vertices, levels| {
                            let ids = meshes.add_mesh_levels(vertices, levels)?;
                            let twin = reference.add_mesh_levels(vertices, levels).expect("the reference takes it");
                            assert_eq!(twin, ids, "{label}: the reference numbers the meshes alike");
                            Ok(ids)
                        })
                        .expect("a loaded scene's meshes are valid");
                    assert!(model.meshes()[0].levels.len() > 1, "{label}: the sphere comes with its LOD chain");
                    let place = Vec3::new(if file == 0 { -1.5 } else { 1.5 }, 0.0, 0.0);
                    spawned[file] = Some(spawn_model(app.world_mut(), &model, Transform::from_translation(place)));
                }
            }
        }
        app.run_frame();
        FrameInFlight::finish(&mut app);
        let capture = lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let at = format!("{label} frame {frame}");
        assert!(report.error.is_none(), "{at}: {:?}", report.error);
        assert!(report.upload.mesh_bytes <= BUDGET, "{at}: {} bytes of meshes", report.upload.mesh_bytes);
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let checked =
            check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None).expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{at}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{at}: culling changed the picture");
        let drawn_meshes: Vec<u32> = spawned
            .iter()
            .flatten()
            .flat_map(|model| &model.drawables)
            .map(|&entity| world.get::<&ecs::Mesh>(entity).expect("a drawable").mesh.0)
            .collect();
        for mesh in &drawn_meshes {
            let stand_in = report.stand_ins.iter().find(|(missing, _)| missing == mesh);
            assert!(!matches!(stand_in, Some((_, None))), "{at}: mesh {mesh} drew nothing");
        }
        if drawn_meshes.iter().any(|mesh| report.stand_ins.iter().any(|(missing, _)| missing == mesh)) {
            stand_in_frames += 1;
        }
        frame += 1;
        let all_spawned = spawned.iter().all(Option::is_some);
        if all_spawned && report.stand_ins.is_empty() {
            // Both spheres and the cube show in their own colours.
            assert!(checked.truth.objects_with_pixels >= 3, "{at}: {:?}", checked.truth);
            break;
        }
    }
    assert!(frame < FRAMES, "{label}: both files load and reach the GPU in {FRAMES} frames");
    for asker in askers {
        asker.join().expect("an asking thread");
    }
    stand_in_frames
}

#[test]
fn gltf_files_loaded_by_outside_threads_while_frames_run_are_drawn_and_culling_hides_nothing() {
    let Some(device) = gpu_test_context() else { return };
    let folder = scratch();
    let files: Vec<PathBuf> = [(24, 16, [1.0, 0.4, 0.1, 1.0]), (32, 24, [0.2, 0.9, 0.3, 1.0])]
        .iter()
        .enumerate()
        .map(|(index, &(slices, stacks, color))| {
            let path = folder.join(format!("sphere {index}.glb"));
            std::fs::write(&path, sphere_glb(slices, stacks, color)).expect("the file is written");
            path
        })
        .collect();
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        for pipelined in [false, true] {
            let stand_in_frames = load_while_running(&device, backend, pipelined, &files);
            assert!(stand_in_frames > 0, "{backend:?} pipelined {pipelined}: stand-ins under a small budget");
        }
    }
    assert_no_validation_messages(&device);
}

/// Side of the textured file's image.
const IMAGE_SIDE: u32 = 64;

/// A PNG of `IMAGE_SIDE` texels a side (16 KiB of finest mip: more than the budget): a checkerboard of orange and cream cells, with a
/// transparent band (alpha 0) across its middle rows, which an alpha mask cuts out.
fn checker_png() -> Vec<u8> {
    let side = IMAGE_SIDE as usize;
    let mut texels = Vec::with_capacity(side * side * 4);
    for y in 0..side {
        for x in 0..side {
            let color = if (x / 16 + y / 16).is_multiple_of(2) { [240, 120, 30] } else { [245, 235, 210] };
            let alpha = if (24..40).contains(&y) { 0 } else { 255 };
            texels.extend([color[0], color[1], color[2], alpha]);
        }
    }
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, IMAGE_SIDE, IMAGE_SIDE);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("a PNG header");
        writer.write_image_data(&texels).expect("the texels");
    }
    bytes
}

/// A .glb of one node with a unit quad facing +z (texture coordinates over it), its material
/// textured with [`checker_png`], alpha-masked and double-sided.
fn textured_quad_glb() -> Vec<u8> {
    let positions: [[f32; 3]; 4] = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]];
    let uvs: [[f32; 2]; 4] = [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]];
    let indices: [u32; 6] = [0, 1, 2, 0, 2, 3];
    let mut bin: Vec<u8> = positions.iter().flatten().flat_map(|value| value.to_le_bytes()).collect();
    let uv_at = bin.len();
    bin.extend(uvs.iter().flatten().flat_map(|value| value.to_le_bytes()));
    let index_at = bin.len();
    bin.extend(indices.iter().flat_map(|value| value.to_le_bytes()));
    let image_at = bin.len();
    let image = checker_png();
    bin.extend(&image);
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"materials":[{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":0}}}},"alphaMode":"MASK","alphaCutoff":0.5,"doubleSided":true}}],
"textures":[{{"source":0}}],
"images":[{{"bufferView":3,"mimeType":"image/png"}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"TEXCOORD_0":1}},"indices":2,"material":0}}]}}],
"buffers":[{{"byteLength":{}}}],
"bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":{uv_at}}},{{"buffer":0,"byteOffset":{uv_at},"byteLength":{}}},
{{"buffer":0,"byteOffset":{index_at},"byteLength":24}},{{"buffer":0,"byteOffset":{image_at},"byteLength":{}}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[-1,-1,0],"max":[1,1,0]}},
{{"bufferView":1,"componentType":5126,"count":4,"type":"VEC2"}},
{{"bufferView":2,"componentType":5125,"count":6,"type":"SCALAR"}}]}}"#,
        bin.len(),
        index_at - uv_at,
        image.len(),
    );
    assets::gltf_export::glb_container(&json, &bin)
}

/// Hands a loaded model's parts to the renderer under test and to its truth reference alike.
struct Twin<'a> {
    meshes: RenderMeshes,
    reference: &'a mut ReferenceRenderer,
}

impl renderer::AssetSink for Twin<'_> {
    fn add_mesh_levels(
        &mut self,
        vertices: renderer::MeshVertices<'_>,
        levels: &[(&[u32], &[renderer::Meshlet])],
    ) -> Result<std::ops::Range<u32>, renderer::LibraryError> {
        let ids = self.meshes.add_mesh_levels(vertices, levels)?;
        assert_eq!(self.reference.add_mesh_levels(vertices, levels).expect("the reference takes it"), ids);
        Ok(ids)
    }

    fn texture_size(&self) -> u32 {
        self.meshes.texture_size()
    }

    fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32, renderer::LibraryError> {
        let id = self.meshes.add_texture(size, mips.clone())?;
        assert_eq!(self.reference.add_texture(size, mips), Ok(id));
        Ok(id)
    }

    fn add_material(&mut self, material: renderer::Material) -> Result<u32, renderer::LibraryError> {
        let id = self.meshes.add_material(material)?;
        assert_eq!(self.reference.add_material(material), Ok(id));
        Ok(id)
    }
}

/// Where the textured quad is placed: turned a little, so its back face shows (it is
/// double-sided) and its texture is minified unevenly.
fn quad_place() -> Transform {
    Transform {
        translation: Vec3::new(0.0, 0.3, 0.0),
        rotation: glam::Quat::from_rotation_y(2.6),
        scale: Vec3::splat(1.2),
    }
}

/// A textured, masked, double-sided glTF file loaded by the `AssetServer` while frames run
/// keeps its look: its texture streams in under the small budget (the truth reference samples
/// the same mips every frame and agrees), and once resident the picture equals the picture
/// of the same file loaded into the library before the first frame.
#[test]
fn a_textured_gltf_loaded_while_frames_run_draws_as_when_preloaded() {
    let Some(device) = gpu_test_context() else { return };
    let path = scratch().join("textured quad.glb");
    std::fs::write(&path, textured_quad_glb()).expect("the file is written");
    let loaded = assets::load_gltf(&path, &assets::ProcessOptions::default()).expect("a valid file");
    assert!(loaded.images.len() == 1, "the image is decoded");
    for backend in [CullingBackend::Gpu, CullingBackend::Cpu] {
        // The same file in the library before the first frame.
        let mut library = MeshLibrary::new();
        let cube = library.add_unit_cube();
        let model = loaded.add_model_to(&mut library).expect("the file's parts");
        let (mut first, capture) = app(&device, backend, false, &library, cube);
        spawn_model(first.world_mut(), &model, quad_place());
        for _ in 0..4 {
            first.run_frame();
            FrameInFlight::finish(&mut first);
        }
        let preloaded = lock_capture(&capture).pixels.clone();
        drop(first);
        // The quad's back (lit dimly) shows its orange cells.
        let orange = preloaded
            .chunks(4)
            .filter(|pixel| pixel[0] > 60 && u32::from(pixel[0]) > 2 * u32::from(pixel[2]) + 10)
            .count();
        assert!(orange > 20, "{backend:?}: the texture shows ({orange} orange pixels)");
        for pipelined in [false, true] {
            let label = format!("{backend:?} pipelined {pipelined}");
            let mut library = MeshLibrary::new();
            let cube = library.add_unit_cube();
            let (mut game, capture) = app(&device, backend, pipelined, &library, cube);
            let mut reference =
                ReferenceRenderer::with_device(Arc::clone(&device), WIDTH, HEIGHT, CAPACITY, library, SKY)
                    .expect("a reference");
            let server = AssetServer::new(ServerOptions { loader_threads: 1, ..ServerOptions::default() });
            let handle = server.load(path.clone());
            let mut spawned_at = None;
            let mut settled_at = None;
            let mut streaming_frames = 0;
            for frame in 0..FRAMES {
                let at = format!("{label} frame {frame}");
                if spawned_at.is_none() && server.state(handle).expect("a live handle") == LoadState::Ready {
                    let scene = server.get(handle).expect("a live handle").expect("ready");
                    let meshes = game.resource::<RenderMeshes>().clone();
                    let model =
                        scene.add_model_to(&mut Twin { meshes, reference: &mut reference }).expect("the file's parts");
                    spawn_model(game.world_mut(), &model, quad_place());
                    spawned_at = Some(frame);
                }
                game.run_frame();
                FrameInFlight::finish(&mut game);
                let capture = lock_capture(&capture);
                let report = game.resource::<RenderReport>();
                assert!(report.error.is_none(), "{at}: {:?}", report.error);
                let (world, visibility) = (game.world(), game.resource::<Visibility>());
                let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, None)
                    .expect("the truth answers");
                assert_eq!(checked.truth.false_hidden, 0, "{at}: {:?}", checked.truth);
                assert_eq!(checked.differing_pixels, 0, "{at}: the picture is the reference's");
                streaming_frames += usize::from(!report.texture_mips.is_empty());
                if spawned_at.is_some() && report.stand_ins.is_empty() && report.texture_mips.is_empty() {
                    let settled = *settled_at.get_or_insert(frame);
                    if frame > settled {
                        assert!(capture.pixels == preloaded, "{at}: the preloaded picture once resident");
                        break;
                    }
                }
            }
            assert!(settled_at.is_some(), "{label}: the file loads and reaches the GPU in {FRAMES} frames");
            assert!(streaming_frames >= 2, "{label}: the texture streams over frames ({streaming_frames})");
        }
    }
    assert_no_validation_messages(&device);
}

/// The figure of the note, run in release (`cargo test --release -p tests --test runtime_gltf
/// -- --ignored --nocapture`): a .glb of a sphere of 2 x 1024 x 512 triangles asked of the
/// `AssetServer` by an outside thread while the game thread runs frames; once `Ready` its scene
/// is handed to the renderer and spawned, drawing its full level (its chain taken off, so the
/// small image does not pick a coarser one) under the default transfer budget. Prints the ms
/// from the request to `Ready` (reading, parsing, meshopt's chain and meshlets, all off the
/// frame), the frames and ms to the first frame that draws the full level, and the median frame
/// before the request, while it loads, while a stand-in draws and after.
#[test]
#[ignore = "a timing for the docs, not a check"]
fn time_from_a_glb_request_to_full_detail_of_a_million_triangles() {
    let Some(device) = gpu_test_context() else { return };
    const SLICES: u32 = 1024;
    const STACKS: u32 = 512;
    let path = scratch().join("million.glb");
    let bytes = sphere_glb(SLICES, STACKS, [0.8, 0.3, 0.2, 1.0]);
    std::fs::write(&path, &bytes).expect("a scratch file");
    let mut library = MeshLibrary::new();
    let cube = library.add_unit_cube();
    let (mut app, _capture) = app(&device, CullingBackend::Gpu, false, &library, cube);
    app.resource_mut::<ecs::RenderSettings>().transfer_budget = ecs::DEFAULT_TRANSFER_BUDGET;
    let server = Arc::new(AssetServer::new(ServerOptions { loader_threads: 2, ..ServerOptions::default() }));
    let frame_ms = |app: &mut runtime::App| {
        let started = std::time::Instant::now();
        app.run_frame();
        let report = app.resource::<RenderReport>();
        assert!(report.error.is_none(), "{:?}", report.error);
        started.elapsed().as_secs_f64() * 1e3
    };
    let median = |times: &[f64]| {
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let before: Vec<f64> = (0..10).map(|_| frame_ms(&mut app)).collect();
    let requested = std::time::Instant::now();
    let handle = {
        let (server, path) = (Arc::clone(&server), path.clone());
        std::thread::spawn(move || server.load(path)).join().expect("the asking thread")
    };
    let mut loading = Vec::new();
    while server.state(handle).expect("a live handle") == LoadState::Loading {
        loading.push(frame_ms(&mut app));
        assert!(loading.len() < 100_000, "the file loads");
    }
    let ready_ms = requested.elapsed().as_secs_f64() * 1e3;
    let scene = server.get(handle).expect("a live handle").expect("ready");
    let handed = std::time::Instant::now();
    let meshes = app.resource::<RenderMeshes>().clone();
    // The occluder the loader derived goes with the mesh, so this frame does not search it.
    let model = scene
        .add_model_with_occluders(|vertices, levels, occluder| {
            meshes.add_mesh_levels_with_occluder(vertices, levels, occluder.cloned())
        })
        .expect("valid");
    let spawned = spawn_model(app.world_mut(), &model, Transform::from_translation(Vec3::ZERO));
    let entity = spawned.drawables[0];
    let _ = app.world_mut().remove_one::<ecs::Lod>(entity);
    let mesh = app.world().get::<&ecs::Mesh>(entity).expect("a drawable").mesh.0;
    let hand_over_ms = handed.elapsed().as_secs_f64() * 1e3;
    let mut stand_in = Vec::new();
    let first_full = loop {
        let milliseconds = frame_ms(&mut app);
        if !app.resource::<RenderReport>().stand_ins.iter().any(|&(missing, _)| missing == mesh) {
            break milliseconds;
        }
        stand_in.push(milliseconds);
        assert!(stand_in.len() < 100_000, "the mesh reaches the GPU");
    };
    let to_full = requested.elapsed().as_secs_f64() * 1e3;
    let after: Vec<f64> = (0..10).map(|_| frame_ms(&mut app)).collect();
    println!(
        "{} triangles ({:.1} MiB .glb), default budget {} MiB a frame: Ready {ready_ms:.1} ms after the request \
         ({} frames ran meanwhile); hand-over and spawn {hand_over_ms:.1} ms; full detail drawn by frame {} after \
         the spawn, {to_full:.1} ms after the request (that frame {first_full:.1} ms); median frame {:.2} ms \
         before, {:.2} ms while loading, {:.2} ms while a stand-in draws, {:.2} ms after",
        2 * SLICES * STACKS,
        bytes.len() as f64 / f64::from(1 << 20),
        ecs::DEFAULT_TRANSFER_BUDGET >> 20,
        loading.len(),
        stand_in.len() + 1,
        median(&before),
        median(&loading),
        median(&stand_in),
        median(&after),
    );
    assert_no_validation_messages(&device);
}

//! A skinned glTF of our own making (a bar of two joints, hip and knee, bent by a clip)
//! imported, spawned (which rigs it and starts its clip), posed by the animation system and
//! drawn by the engine: the vertices the GPU skins (`skinning.h`, read back by a compute
//! probe over the scene's own buffers) equal a CPU reference skinning of the same palette.
//! Forty rigs outgrow the palette's first buffer, which grows; only rigs that moved upload
//! (48 bytes a joint); a rig whose `Skin` is taken away is drawn in its bind pose; a skinned
//! mesh added while frames run skins once it arrives; a limb swung out of its bind box at
//! the screen's edge is drawn on both culling backends and in the shadows (the truth), and
//! picked where it is drawn.
//! Lavapipe with validation.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use animation::{AnimationPlayer, Skin, SkinMatrix, SkinPalette};
use assets::{load_gltf_bytes, spawn_model, ProcessOptions};
use culling::occlusion::OccluderMeshes;
use culling::Visibility;
use ecs::{scene, Camera, Transform};
use glam::{Vec3, Vec4};
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice,
    ReadbackBuffer, Registry, ShaderStage, TypedPass,
};
use renderer::{
    gpu_skin_weights, install_render_to, points, BitsReadback, HeadlessTarget, MeshLibrary, RenderReport, RenderSetup,
    MESH_SKIN, MESH_VERTICES, OBJECT_RECORDS, PALETTE_JOINT_BYTES, SKIN_PALETTE,
};
use test_assets::skinned_bar::{gltf_text, HIP_DEPTH_SCALE, NORMAL, POSITIONS};

/// Rigs spawned: 80 palette entries, past the buffer's first 64.
const RIGS: usize = 40;
const PROBE: &str = "skin_probe";
const PROBE_READBACK: &str = "skin_probe_readback";

/// Runs `shaders::PROBE_SKIN_COMP` on the object in `object` (a slot), writing its skinned
/// vertices to `skin_probe`.
struct SkinProbe {
    pipeline: ComputePipeline,
    object: Arc<AtomicU32>,
}

impl TypedPass for SkinProbe {
    /// Records, vertices, palette, influences; the report.
    type Handles = ([BufferRead; 4], BufferWrite);

    fn name(&self) -> &str {
        "skin probe"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let reads = [OBJECT_RECORDS, MESH_VERTICES, SKIN_PALETTE, MESH_SKIN].map(|name| {
            let buffer = registry.buffer(name);
            registry.read_storage_buffer(buffer, ShaderStage::Compute)
        });
        let report = registry.create_buffer(PROBE, BufferDesc { size: POSITIONS.len() as u64 * 32 });
        (reads, registry.write_storage_buffer(report, ShaderStage::Compute))
    }

    fn execute(&mut self, (reads, report): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let [records, vertices, palette, skin] = *reads;
        // Bindings 0, 4, 5 and 6 are not read by the probe: the records stand in.
        let filler = Binding::buffer(records);
        let bindings = [
            filler,
            Binding::buffer(records),
            Binding::buffer(vertices),
            Binding::buffer(report),
            filler,
            filler,
            filler,
            Binding::buffer(palette),
            Binding::buffer(skin),
        ];
        context.bind_compute(&self.pipeline, &bindings);
        context.push_constants(&[self.object.load(Ordering::Relaxed), 0, POSITIONS.len() as u32]);
        context.dispatch(1, 1, 1);
    }
}

/// The CPU reference: each vertex of `mesh` skinned by `rows` (the rig's palette slice as
/// the GPU holds it, three rows per joint) with the weights the GPU keeps, summed in joint
/// order like `skinning.h`: its position, and its normal turned by the inverse transpose of
/// the blended matrix, normalized.
fn cpu_skinned(library: &MeshLibrary, mesh: u32, rows: &[[[f32; 4]; 3]]) -> Vec<(Vec3, Vec3)> {
    let range = library.range(mesh).expect("the mesh");
    let first = range.vertex_offset as usize;
    (first..first + POSITIONS.len())
        .map(|vertex| {
            let [x, y, z, normal_bits] = library.positions()[vertex];
            let position = Vec3::new(x, y, z);
            let (joints, weights) =
                (library.vertex_joints()[vertex], gpu_skin_weights(library.vertex_weights()[vertex]));
            let mut blended = [Vec4::ZERO; 3];
            for slot in 0..4 {
                let joint = rows[usize::from(joints[slot]).min(rows.len() - 1)];
                for row in 0..3 {
                    blended[row] += Vec4::from(joint[row]) * weights[slot];
                }
            }
            let point = position.extend(1.0);
            let axes = glam::Mat3::from_cols(
                Vec3::new(blended[0].x, blended[1].x, blended[2].x),
                Vec3::new(blended[0].y, blended[1].y, blended[2].y),
                Vec3::new(blended[0].z, blended[1].z, blended[2].z),
            );
            let normal = axes.inverse().transpose() * unpack_normal(normal_bits.to_bits());
            (Vec3::new(blended[0].dot(point), blended[1].dot(point), blended[2].dot(point)), normal.normalize())
        })
        .collect()
}

/// A packed vertex normal (`meshes::pack_normal`'s three signed 10-bit values), unpacked as
/// `vertex_normal.h` does.
fn unpack_normal(bits: u32) -> Vec3 {
    let component = |axis: u32| (((bits >> (10 * axis)) & 0x3FF) as i32) << 22 >> 22;
    Vec3::new(component(0) as f32, component(1) as f32, component(2) as f32) / 511.0
}

/// The bind positions of `mesh`'s vertices, in the library's order.
fn bind_positions(library: &MeshLibrary, mesh: u32) -> Vec<Vec3> {
    let first = library.range(mesh).expect("the mesh").vertex_offset as usize;
    library.positions()[first..first + POSITIONS.len()].iter().map(|&[x, y, z, _]| Vec3::new(x, y, z)).collect()
}

/// What the probe read back: each vertex's position and (normalized) normal.
fn probed_with_normals(readback: &ReadbackBuffer) -> Vec<(Vec3, Vec3)> {
    let words = readback.read_u32().expect("the probe's report");
    let vector = |word: &[u32]| Vec3::new(f32::from_bits(word[0]), f32::from_bits(word[1]), f32::from_bits(word[2]));
    words.chunks_exact(8).map(|vertex| (vector(&vertex[..4]), vector(&vertex[4..]))).collect()
}

/// What the probe read back, as points.
fn probed(readback: &ReadbackBuffer) -> Vec<Vec3> {
    probed_with_normals(readback).into_iter().map(|(position, _)| position).collect()
}

#[test]
fn a_skinned_gltf_is_skinned_on_the_gpu_as_on_the_cpu_and_in_bind_pose_without_a_rig() {
    let Some(device) = gpu_test_context() else { return };
    let scene =
        load_gltf_bytes(gltf_text().as_bytes(), None, &ProcessOptions::default()).expect("a valid skinned file");
    let mut library = MeshLibrary::new();
    let model = scene.add_model(&mut library, &mut OccluderMeshes::new()).expect("the model goes in the library");
    let mesh = model.meshes()[0].finest().0;
    assert!(renderer::mesh_is_skinned(&library, mesh), "the bar keeps its influences in the library");

    let mut app = runtime::App::with_threads(2);
    animation::install(&mut app);
    let mut legs = Vec::new();
    for index in 0..RIGS {
        let place = Transform::from_translation(Vec3::new(index as f32 * 0.5 - 10.0, 0.0, 0.0));
        let spawned = spawn_model(app.world_mut(), &model, place);
        legs.push(spawned.drawables[0]);
    }
    let leg = legs[RIGS - 1];
    for &entity in &legs {
        let world = app.world_mut();
        let mut player = world.get::<&mut AnimationPlayer>(entity).expect("spawning a skinned model starts its clip");
        assert_eq!(player.clip.name(), "bend");
        // Half bent, held.
        player.time = 0.5;
        player.playing = false;
    }
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.0, 12.0), Vec3::Y));

    let (object, readback, add_probe) = skin_probe(&device);
    let setup = RenderSetup {
        shadows: false,
        backend: culling::CullingBackend::Cpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: 64, height: 64 },
        capacity: 64,
        meshes: library.clone(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::None,
        passes: vec![add_probe],
    };
    let (target, _capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");

    app.run_frame();
    let slot = app.resource::<Visibility>().slot_of(leg).expect("the leg has a slot");
    object.store(slot, Ordering::Relaxed);
    app.run_frame();
    device.wait_idle().expect("the GPU finishes");
    assert_eq!(app.resource::<RenderReport>().error, None);

    let reference = {
        let palette = app.resource::<SkinPalette>();
        assert_eq!(palette.matrices().len(), 2 * RIGS, "every rig has its slice");
        let skin = app.world().get::<&Skin>(leg).expect("a rig");
        let slice = palette.slice(skin.skin_first(), skin.skin_count());
        let rows: Vec<[[f32; 4]; 3]> = slice.iter().map(SkinMatrix::to_rows_array).collect();
        cpu_skinned(&library, mesh, &rows)
    };
    let gpu_with_normals = probed_with_normals(&readback);
    for (vertex, ((gpu, gpu_normal), (cpu, cpu_normal))) in gpu_with_normals.iter().zip(&reference).enumerate() {
        assert!(gpu.distance(*cpu) < 1e-5, "vertex {vertex}: the GPU skinned it to {gpu}, the CPU to {cpu}");
        assert!(
            gpu_normal.distance(*cpu_normal) < 1e-4,
            "vertex {vertex}: the GPU turned its normal to {gpu_normal}, the inverse transpose to {cpu_normal}"
        );
    }
    // The check can fail: the blended matrix itself would turn the normals elsewhere.
    let scaled_by_matrix = (Vec3::from(NORMAL) * Vec3::new(1.0, 1.0, HIP_DEPTH_SCALE)).normalize();
    // The importer reorders vertices: the bind positions are the library's.
    let bind = bind_positions(&library, mesh);
    let hip_only = gpu_with_normals.iter().zip(&bind).find(|(_, bind)| bind.y == 0.0);
    let ((_, hip_normal), _) = hip_only.expect("the hip holds the bar's foot");
    assert!(hip_normal.distance(scaled_by_matrix) > 0.3, "{hip_normal} must not be the matrix's {scaled_by_matrix}");
    let gpu: Vec<Vec3> = gpu_with_normals.iter().map(|(position, _)| *position).collect();
    for (drawn, bind) in gpu.iter().zip(&bind) {
        if bind.y == 0.0 {
            assert!(drawn.distance(*bind) < 1e-6, "the hip's vertices stay: {bind} went to {drawn}");
        }
        if bind.y == 2.0 {
            assert!(drawn.distance(*bind) > 0.5, "the knee's bend moved the tip: {bind} went to {drawn}");
        }
    }

    // Forty rigs of two joints outgrew the palette's first 64 entries: it grew.
    // (The upload of the grown buffer sent every entry; a held pose sends nothing after.)
    app.run_frame();
    assert_eq!(app.resource::<RenderReport>().upload.palette_bytes, 0, "a held pose uploads no palette");
    assert_eq!(app.resource::<RenderReport>().upload.records, 0, "nor any record: the posed boxes stand still");
    let moving = legs[0];
    app.world_mut().get::<&mut AnimationPlayer>(moving).expect("a player").time = 0.25;
    app.run_frame();
    assert_eq!(
        app.resource::<RenderReport>().upload.palette_bytes,
        2 * PALETTE_JOINT_BYTES,
        "the one rig that moved uploads its two joints, 48 bytes each"
    );

    // Every rig playing: the palette upload is the animated joints, 48 bytes each.
    for &entity in &legs {
        app.world_mut().get::<&mut AnimationPlayer>(entity).expect("a player").playing = true;
    }
    app.run_frame();
    let animated = app.resource::<animation::AnimationReport>().joints as u64;
    assert_eq!(animated, 2 * RIGS as u64);
    assert_eq!(app.resource::<RenderReport>().upload.palette_bytes, animated * PALETTE_JOINT_BYTES);

    // Without its rig the leg is drawn in its bind pose.
    app.world_mut().remove_one::<Skin>(leg).expect("the leg had a rig");
    app.run_frame();
    app.run_frame();
    device.wait_idle().expect("the GPU finishes");
    let drawn = probed(&readback);
    for (vertex, (drawn, position)) in drawn.iter().zip(&bind).enumerate() {
        assert!(drawn.distance(*position) < 1e-6, "vertex {vertex} without a rig: {drawn}, bind {position}");
    }
    assert_no_validation_messages(&device);
}

const LIMB_WIDTH: u32 = 96;
const LIMB_HEIGHT: u32 = 64;
const SKY: [f32; 4] = [0.1, 0.2, 0.3, 1.0];

#[test]
fn a_limb_swung_out_of_the_bind_box_at_the_screens_edge_is_drawn_on_both_backends_and_in_the_shadows() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [culling::CullingBackend::Cpu, culling::CullingBackend::Gpu] {
        swing_and_check(&device, backend);
    }
    assert_no_validation_messages(&device);
}

/// The bar stands just past the right edge of the view in its bind pose; bent, its upper
/// half swings a unit to the left, into the view. The culled frame must draw it (its posed
/// box, not its bind box), in the camera's view and the sun's shadow views.
fn swing_and_check(device: &Arc<GpuDevice>, backend: culling::CullingBackend) {
    use ecs::{DirectionalLight, ShadowCaster};
    use renderer::truth::{check_frame, ReferenceRenderer};

    let scene =
        load_gltf_bytes(gltf_text().as_bytes(), None, &ProcessOptions::default()).expect("a valid skinned file");
    let mut library = MeshLibrary::new();
    let ground_mesh = library.add_unit_cube();
    let model = scene.add_model(&mut library, &mut OccluderMeshes::new()).expect("the model goes in the library");

    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: LIMB_WIDTH, height: LIMB_HEIGHT });
    ecs::install(&mut app);
    app.resource_mut::<ecs::ShadowSettings>().atlas_resolution = 1024;
    animation::install(&mut app);
    let eye = scene::look_at(Vec3::new(0.0, 1.0, 6.0), Vec3::new(0.0, 1.0, 0.0));
    scene::spawn_camera(app.world_mut(), Camera::default(), eye);
    // Where the bind box (x ± 0.1, y 0..2) first lies wholly right of the view.
    let view_projection =
        Camera::default().projection.matrix(LIMB_WIDTH as f32 / LIMB_HEIGHT as f32) * eye.to_matrix().inverse();
    let outside = |x: f32| {
        [0.0, 2.0].into_iter().all(|y| {
            let clip = view_projection * Vec3::new(x - 0.1, y, 0.0).extend(1.0);
            clip.x / clip.w > 1.0
        })
    };
    let x = (0..400).map(|step| step as f32 * 0.02).find(|&x| outside(x)).expect("the view ends somewhere") + 0.05;
    let spawned = spawn_model(app.world_mut(), &model, Transform::from_translation(Vec3::new(x, 0.0, 0.0)));
    let leg = spawned.drawables[0];
    app.world_mut().insert_one(leg, ShadowCaster).expect("spawned");
    {
        let mut player = app.world_mut().get::<&mut AnimationPlayer>(leg).expect("a player");
        player.time = 0.0;
        player.playing = false;
    }
    let ground = ecs::Mesh::new(
        ecs::MeshHandle(ground_mesh),
        ecs::MaterialHandle::PLAIN,
        ecs::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)),
    );
    let place = Transform::from_translation(Vec3::new(0.0, -0.5, 0.0)).with_scale(Vec3::new(40.0, 1.0, 40.0));
    scene::spawn_mesh(app.world_mut(), ground, place);
    let sun = glam::Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(-0.6, -1.0, -0.3).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));

    let setup = RenderSetup {
        shadows: true,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: LIMB_WIDTH, height: LIMB_HEIGHT },
        capacity: 16,
        meshes: library.clone(),
        clear_color: SKY,
        bits: if backend == culling::CullingBackend::Gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes: Vec::new(),
    };
    let (target, capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    let mut reference =
        ReferenceRenderer::with_shadows(Arc::clone(device), (LIMB_WIDTH, LIMB_HEIGHT), 16, library.clone(), SKY, 1024)
            .expect("a reference");
    let mut picking = overlay::Picking::new(Some(Arc::clone(device)), library);

    // Frames 0-1 in the bind pose (out of view), then bent (its upper half in view).
    for frame in 0..5 {
        if frame == 2 {
            app.world_mut().get::<&mut AnimationPlayer>(leg).expect("a player").time = 1.0;
        }
        app.run_frame();
        let capture = renderer::lock_capture(&capture);
        let report = app.resource::<RenderReport>();
        let label = format!("{backend:?} frame {frame}");
        assert_eq!(report.error, None, "{label}");
        reference.set_palette(&app.resource::<SkinPalette>()).expect("the reference takes the palette");
        let (world, visibility) = (app.world(), app.resource::<Visibility>());
        let shadows = app.resource::<culling::ShadowViews>();
        let checked = check_frame(&mut reference, &capture.pixels, world, &visibility, &report, Some(&shadows))
            .expect("the truth answers");
        assert_eq!(checked.truth.false_hidden, 0, "{label}: {:?}", checked.truth);
        assert_eq!(checked.truth.dropped_casters, Some(0), "{label}: {:?}", checked.truth);
        assert_eq!(checked.differing_pixels, 0, "{label}: culling changed the picture");
        let slot = visibility.slot_of(leg).expect("the leg has a slot");
        let owners = reference.objects_with_pixels(world, &visibility).expect("the truth answers");
        assert_eq!(owners.contains(&slot), frame >= 2, "{label}: the leg shows only bent ({owners:?})");
        // Picking draws the pose too: the middle of the swung half is the leg once bent, sky before.
        let (px, py) = pixel_of(view_projection, Vec3::new(x - 0.6, 1.0, 0.0));
        let picked = picking.at(&app, px, py);
        let expected = if frame >= 2 { Ok(leg) } else { Err(overlay::PickMiss::Sky) };
        assert_eq!(picked, expected, "{label}: pick at ({px}, {py})");
    }
}

/// The pixel (rows from the top) `point` projects to through `view_projection`.
fn pixel_of(view_projection: glam::Mat4, point: Vec3) -> (u32, u32) {
    let clip = view_projection * point.extend(1.0);
    let (x, y) = (clip.x / clip.w, clip.y / clip.w);
    (((0.5 + 0.5 * x) * LIMB_WIDTH as f32) as u32, ((0.5 - 0.5 * y) * LIMB_HEIGHT as f32) as u32)
}

/// A skinned mesh added while frames run (`RenderMeshes::add_skinned_mesh_levels`) streams
/// its influences with its vertices: once it is on the GPU, its rig skins it as the CPU does.
#[test]
fn a_skinned_mesh_added_while_frames_run_is_skinned_once_it_arrives() {
    let Some(device) = gpu_test_context() else { return };
    let scene =
        load_gltf_bytes(gltf_text().as_bytes(), None, &ProcessOptions::default()).expect("a valid skinned file");
    let bar = &scene.meshes[0];
    let influences = bar.skin.as_ref().expect("the bar is skinned");

    let mut app = runtime::App::with_threads(2);
    animation::install(&mut app);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.0, 1.0, 8.0), Vec3::Y));
    let (object, readback, add_probe) = skin_probe(&device);
    let setup = RenderSetup {
        shadows: false,
        backend: culling::CullingBackend::Cpu,
        device: Some(Arc::clone(&device)),
        extent: vk::Extent2D { width: 64, height: 64 },
        capacity: 16,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::None,
        passes: vec![add_probe],
    };
    let (target, _capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    app.run_frame();

    let vertices = renderer::MeshVertices { positions: &bar.positions, normals: &bar.normals, uvs: &bar.uvs };
    let skin = renderer::VertexSkin { joints: &influences.joints, weights: &influences.weights };
    let levels: Vec<(&[u32], &[renderer::Meshlet])> =
        bar.levels.iter().map(|level| (level.indices.as_slice(), &[][..])).collect();
    let ids = app
        .resource::<renderer::RenderMeshes>()
        .add_skinned_mesh_levels(vertices, skin, &levels)
        .expect("a valid skinned mesh");
    let bounds = ecs::Aabb::new(Vec3::from(bar.bounds_min), Vec3::from(bar.bounds_max));
    let mesh = ecs::Mesh::new(ecs::MeshHandle(ids.start), ecs::MaterialHandle::PLAIN, bounds);
    let skeleton = Arc::clone(&scene.skins[0].skeleton);
    let mut player = AnimationPlayer::new(Arc::clone(&scene.animations[0].clip), &skeleton).expect("the clip fits");
    (player.time, player.playing) = (0.5, false);
    let joint_boxes = scene.joint_boxes[0].clone().expect("joint boxes");
    let leg = scene::spawn_mesh(app.world_mut(), mesh, Transform::IDENTITY);
    app.world_mut()
        .insert(leg, (animation::SkinnedMesh { joint_boxes }, Skin::new(skeleton), player))
        .expect("spawned");
    for _ in 0..8 {
        app.run_frame();
        if app.resource::<RenderReport>().stand_ins.is_empty() {
            break;
        }
    }
    assert!(app.resource::<RenderReport>().stand_ins.is_empty(), "the mesh arrived");
    object.store(app.resource::<Visibility>().slot_of(leg).expect("a slot"), Ordering::Relaxed);
    app.run_frame();
    device.wait_idle().expect("the GPU finishes");
    assert_eq!(app.resource::<RenderReport>().error, None);

    let palette = app.resource::<SkinPalette>();
    let rig = app.world().get::<&Skin>(leg).map(|skin| (skin.skin_first(), skin.skin_count())).expect("a rig");
    let rows: Vec<[[f32; 4]; 3]> = palette.slice(rig.0, rig.1).iter().map(SkinMatrix::to_rows_array).collect();
    let gpu = probed(&readback);
    let mut moved = 0;
    for (vertex, drawn) in gpu.iter().enumerate() {
        let position = Vec3::from(bar.positions[vertex]);
        let weights = gpu_skin_weights(influences.weights[vertex]);
        let mut blended = [Vec4::ZERO; 3];
        for slot in 0..4 {
            let joint = rows[usize::from(influences.joints[vertex][slot]).min(rows.len() - 1)];
            for row in 0..3 {
                blended[row] += Vec4::from(joint[row]) * weights[slot];
            }
        }
        let point = position.extend(1.0);
        let cpu = Vec3::new(blended[0].dot(point), blended[1].dot(point), blended[2].dot(point));
        assert!(drawn.distance(cpu) < 1e-5, "vertex {vertex}: the GPU skinned it to {drawn}, the CPU to {cpu}");
        moved += usize::from(drawn.distance(position) > 0.1);
    }
    assert!(moved >= 2, "the bend moved the upper vertices ({moved})");
    assert_no_validation_messages(&device);
}

/// The skin probe's passes after the geometry pass: it skins the slot `object` holds and its
/// positions are read back into the returned buffer.
fn skin_probe(device: &Arc<GpuDevice>) -> (Arc<AtomicU32>, Arc<ReadbackBuffer>, renderer::AddPasses) {
    let object = Arc::new(AtomicU32::new(0));
    let readback =
        Arc::new(ReadbackBuffer::new(device, PROBE_READBACK, POSITIONS.len() as u64 * 32).expect("a buffer"));
    let (probe_object, probe_readback, probe_device) = (Arc::clone(&object), Arc::clone(&readback), Arc::clone(device));
    let add_probe: renderer::AddPasses = Box::new(move |graph| {
        let kinds = [BindingKind::StorageBuffer; 9];
        let pipeline = ComputePipeline::new(&probe_device, "skin probe", shaders::PROBE_SKIN_COMP.words(), &kinds, 12)?;
        graph.import_buffer(PROBE_READBACK, probe_readback.shared());
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, SkinProbe { pipeline, object: probe_object })?;
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, BufferReadbackPass::new(PROBE, PROBE_READBACK))
    });
    (object, readback, add_probe)
}

//! The engine's frame drawn with and without a user's passes, to show that a faulty pass
//! leaves the engine's answers alone: the same colour image, the same visibility bits (the
//! host's and, with GPU culling, the GPU's) and the same cull counts, frame after frame.

#![allow(dead_code)]

use std::sync::Arc;

use culling::{CullingBackend, Visibility};
use ecs::{scene, Camera, Transform};
use glam::{Mat4, Quat, Vec3};
use render_graph::{vk, Binding, BindingKind, ComputePipeline, ExecuteContext, GpuDevice, Registry, TypedPass};
use renderer::{install_render, AddPasses, BitsReadback, MeshLibrary, RenderReport, RenderSetup};

/// The size of the frames drawn.
pub const WIDTH: u32 = 48;
/// The size of the frames drawn.
pub const HEIGHT: u32 = 32;
/// Object slots of the scene.
pub const CAPACITY: u32 = 64;

/// The user's passes of one `RenderSetup::passes` closure.
pub fn passes(
    add: impl FnOnce(&mut render_graph::RenderGraph) -> render_graph::Result<()> + Send + 'static,
) -> Vec<AddPasses> {
    vec![Box::new(add)]
}

/// What the engine answered, frame by frame.
#[derive(Clone, Debug, Default)]
pub struct Drawn {
    /// The colour of each frame (RGBA8).
    pub images: Vec<Vec<u8>>,
    /// The Visibility stage's bits of each frame.
    pub host_bits: Vec<Vec<u64>>,
    /// The GPU's bits of each frame (GPU culling; empty words on the CPU).
    pub gpu_bits: Vec<Vec<u64>>,
    /// The GPU's cull counts of each frame: objects, frustum rejects, early draws, occlusion
    /// rejects, late draws, triangles.
    pub counts: Vec<[u32; 6]>,
    /// `RenderReport::frames` after each frame.
    pub frames: Vec<u64>,
    /// The report after the last frame.
    pub report: RenderReport,
}

/// Draws `frames` frames of a small scene (a wall hiding some cubes, others in front of it)
/// with `backend` and the user's `passes`.
pub fn draw(device: &Arc<GpuDevice>, backend: CullingBackend, passes: Vec<AddPasses>, frames: u32) -> Drawn {
    let gpu = backend == CullingBackend::Gpu;
    let setup = RenderSetup {
        shadows: false,
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: CAPACITY,
        meshes: MeshLibrary::with_unit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: if gpu { BitsReadback::Wait } else { BitsReadback::None },
        passes,
    };
    let mut app = runtime::App::with_threads(1);
    install_render(&mut app, setup).expect("a device is there");
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(Vec3::new(0.5, 1.0, 10.0), Vec3::ZERO));
    let wall = Mat4::from_scale_rotation_translation(Vec3::new(8.0, 5.0, 0.2), Quat::IDENTITY, Vec3::ZERO);
    scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_matrix(wall));
    for index in 0..6 {
        let x = index as f32 * 1.4 - 3.5;
        let behind = Transform::from_translation(Vec3::new(x, 0.0, -4.0));
        scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), behind);
        let front = Transform::from_translation(Vec3::new(x, -1.0 + index as f32 * 0.3, 3.0));
        let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), front);
        let colour = ecs::BaseColor([0.2 + 0.13 * index as f32, 0.9 - 0.1 * index as f32, 0.5, 1.0]);
        app.world_mut().insert_one(cube, colour).expect("spawned");
    }
    let mut drawn = Drawn::default();
    for _ in 0..frames {
        app.resource_mut::<renderer::Screenshots>().request(renderer::COLOR);
        app.run_frame();
        let report = app.resource::<RenderReport>().clone();
        assert!(report.error.is_none(), "the engine's frame is drawn: {:?}", report.error);
        let shots = app.resource_mut::<renderer::Screenshots>().take();
        let shot = shots.into_iter().next().expect("the colour is taken every frame");
        assert!(shot.error.is_none(), "{:?}", shot.error);
        drawn.images.push(shot.rgba8);
        drawn.host_bits.push(app.resource::<Visibility>().bits().words().to_vec());
        drawn.gpu_bits.push(report.bits.clone());
        let stats = report.gpu.unwrap_or_default();
        drawn.counts.push([
            stats.objects,
            stats.frustum_rejected,
            stats.early_drawn,
            stats.occlusion_rejected,
            stats.late_drawn,
            stats.triangles,
        ]);
        drawn.frames.push(report.frames);
        drawn.report = report;
    }
    drop(app);
    drawn
}

/// Asserts that `faulty` drew what `baseline` drew, frame by frame.
pub fn assert_same_frames(baseline: &Drawn, faulty: &Drawn) {
    assert_eq!(baseline.images.len(), faulty.images.len());
    for frame in 0..baseline.images.len() {
        assert!(baseline.images[frame] == faulty.images[frame], "frame {frame}: the engine's image changed");
        assert_eq!(baseline.host_bits[frame], faulty.host_bits[frame], "frame {frame}: the host's bits");
        assert_eq!(baseline.gpu_bits[frame], faulty.gpu_bits[frame], "frame {frame}: the GPU's visibility_bits");
        assert_eq!(baseline.counts[frame], faulty.counts[frame], "frame {frame}: the cull counts");
    }
    assert_eq!(baseline.frames, faulty.frames, "frame numbers advance once per frame");
    let occluded = baseline.counts.last().map_or(0, |counts| counts[3]);
    let colours: std::collections::HashSet<&[u8]> = baseline.images[0].chunks_exact(4).collect();
    assert!(colours.len() >= 3, "a scene worth comparing: {colours:?}");
    if baseline.gpu_bits.iter().any(|bits| !bits.is_empty()) {
        assert!(occluded > 0, "the wall hides cubes (occlusion is compared too): {:?}", baseline.counts);
    }
}

/// The one message of `drawn`'s dropped passes.
pub fn dropped_message(drawn: &Drawn) -> &str {
    assert_eq!(drawn.report.dropped_passes.len(), 1, "one group dropped: {:?}", drawn.report.dropped_passes);
    &drawn.report.dropped_passes[0]
}

/// A compute pass of the user's: declares what `declare` declares (returning the bindings it
/// dispatches with), binds them to `pipeline` and dispatches `groups` workgroups.
pub struct UserCompute<D> {
    pub name: &'static str,
    pub pipeline: ComputePipeline,
    pub declare: D,
    pub groups: u32,
}

impl<D> TypedPass for UserCompute<D>
where
    D: FnMut(&mut Registry<'_>) -> Vec<Binding> + Send + 'static,
{
    type Handles = Vec<Binding>;

    fn name(&self) -> &str {
        self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Vec<Binding> {
        (self.declare)(registry)
    }

    fn execute(&mut self, bindings: &Vec<Binding>, context: &mut ExecuteContext<'_>) {
        context.bind_compute(&self.pipeline, bindings);
        context.push_constants(&[7, 0]);
        context.dispatch(self.groups, 1, 1);
    }
}

/// The probe pipeline that fills binding 0 (a `writeonly` storage buffer).
pub fn fill_pipeline(device: &Arc<GpuDevice>) -> render_graph::Result<ComputePipeline> {
    ComputePipeline::new(device, "fill", shaders::PROBE_FILL_BUFFER_COMP.words(), &[BindingKind::StorageBuffer], 8)
}

/// A compute pipeline of a shader of `renderer/tests/shaders` (its SPIR-V bytes).
pub fn test_pipeline(
    device: &Arc<GpuDevice>,
    name: &'static str,
    spirv: &[u8],
    kinds: &[BindingKind],
) -> render_graph::Result<ComputePipeline> {
    let shader = shaders::Shader::from_bytes(name, shaders::Stage::Compute, spirv).expect("committed SPIR-V");
    ComputePipeline::new(device, name, shader.words(), kinds, 8)
}

/// A pass of the user's that does nothing but run (a marker).
pub struct Marker(pub &'static str);

impl TypedPass for Marker {
    type Handles = ();

    fn name(&self) -> &str {
        self.0
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        registry.side_effect();
    }
}

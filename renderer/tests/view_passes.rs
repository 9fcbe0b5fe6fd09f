//! Users' passes per view, on lavapipe with validation: in a split-screen frame a pass wrapped
//! in `PerView` runs once for each window view, in draw order, with that view's rectangle and
//! its block of the `view` uniform (its camera's matrix and eye, its rectangle as viewport;
//! read back from the GPU), while a plain pass at the same point runs once and reads the
//! frame's block; once the second camera is gone the per-view pass runs once, for the whole
//! image. On both culling backends.

mod lit_cube;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use culling::CullingBackend;
use ecs::{scene, Camera, CameraRect, ResolvedViews, Transform, ViewTarget};
use glam::{Mat4, Vec3, Vec4};
use lit_cube::lit_cube;
use render_graph::readback::BufferReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Access, Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice,
    ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};
use renderer::{
    install_render_to, points, BitsReadback, FrameInFlight, HeadlessTarget, PassView, PerView, RenderReport,
    RenderSetup, ViewPass, VIEW,
};

const VIEW_COPY: &[u8] = include_bytes!("shaders/view_copy.comp.spv");
const WIDTH: u32 = 128;
const HEIGHT: u32 = 64;
/// Slots of `seen views`: one per possible window view, then the once-a-frame pass's.
const ONCE_SLOT: u32 = 4;
/// Words of one slot: four columns, the viewport and the eye.
const SLOT_WORDS: usize = 24;
const SEEN_BYTES: u64 = 16 + (ONCE_SLOT as u64 + 1) * SLOT_WORDS as u64 * 4;

/// What the host side of the passes saw this frame.
#[derive(Default)]
struct Runs {
    per_view: Mutex<Vec<PassView>>,
    once: AtomicU32,
}

fn pipeline(device: &Arc<GpuDevice>) -> render_graph::Result<ComputePipeline> {
    let spirv = shaders::Shader::from_bytes("view_copy.comp", shaders::Stage::Compute, VIEW_COPY).expect("SPIR-V");
    ComputePipeline::new(
        device,
        "view copy",
        spirv.words(),
        &[BindingKind::UniformBuffer, BindingKind::StorageBuffer],
        4,
    )
}

/// Creates `seen views` and zeroes it, once a frame.
struct ClearSeen;

impl TypedPass for ClearSeen {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "clear seen views"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let seen = registry.create_buffer("seen views", BufferDesc { size: SEEN_BYTES });
        registry.write_buffer(seen, Access::TransferWrite)
    }
    fn execute(&mut self, seen: &BufferWrite, context: &mut ExecuteContext<'_>) {
        context.fill_buffer(seen, 0, SEEN_BYTES, 0);
    }
}

/// Copies the view's block it is given into slot `index` (per view) or [`ONCE_SLOT`] (once).
struct CopyView {
    name: &'static str,
    pipeline: ComputePipeline,
    runs: Arc<Runs>,
}

fn register_copy(registry: &mut Registry<'_>) -> (BufferRead, BufferWrite) {
    let (view, seen) = (registry.buffer(VIEW), registry.buffer("seen views"));
    (
        registry.read_uniform_buffer(view, ShaderStage::Compute),
        registry.read_write_storage_buffer(seen, ShaderStage::Compute),
    )
}

fn copy(pipeline: &ComputePipeline, view: Binding, seen: &BufferWrite, slot: u32, context: &mut ExecuteContext<'_>) {
    context.bind_compute(pipeline, &[view, Binding::buffer(seen)]);
    context.push_constants(&[slot]);
    context.dispatch(1, 1, 1);
}

impl ViewPass for CopyView {
    type Handles = (BufferRead, BufferWrite);
    fn name(&self) -> &str {
        self.name
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        register_copy(registry)
    }
    fn execute_view(&mut self, (view, seen): &Self::Handles, at: &PassView, context: &mut ExecuteContext<'_>) {
        self.runs.per_view.lock().unwrap().push(*at);
        copy(&self.pipeline, at.uniform(*view), seen, at.index, context);
    }
}

/// The same copy as a plain pass: once a frame, of the whole `view` buffer (block 0).
struct CopyOnce(CopyView);

impl TypedPass for CopyOnce {
    type Handles = (BufferRead, BufferWrite);
    fn name(&self) -> &str {
        self.0.name
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        register_copy(registry)
    }
    fn execute(&mut self, (view, seen): &Self::Handles, context: &mut ExecuteContext<'_>) {
        self.0.runs.once.fetch_add(1, Ordering::Relaxed);
        copy(&self.0.pipeline, Binding::buffer(*view), seen, ONCE_SLOT, context);
    }
}

/// The split-screen app on `backend` with the passes at `after geometry` and their answers
/// read back into `seen`.
fn app(device: &Arc<GpuDevice>, backend: CullingBackend, runs: &Arc<Runs>, seen: &ReadbackBuffer) -> runtime::App {
    let (runs, shared) = (Arc::clone(runs), seen.shared());
    let add = move |graph: &mut RenderGraph| {
        let device = Arc::clone(graph.device());
        let pass = |name| {
            Ok::<_, render_graph::GraphError>(CopyView { name, pipeline: pipeline(&device)?, runs: Arc::clone(&runs) })
        };
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, ClearSeen)?;
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, PerView::new(pass("copy per view")?))?;
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, CopyOnce(pass("copy once")?))?;
        graph.import_buffer("seen views readback", shared);
        graph.add_typed_pass_at(points::BEFORE_OUTPUT, BufferReadbackPass::new("seen views", "seen views readback"))
    };
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity: 64,
        meshes: lit_cube(),
        clear_color: [0.1, 0.2, 0.3, 1.0],
        bits: BitsReadback::Wait,
        passes: vec![Box::new(add)],
        shadows: false,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    let (target, _capture) = HeadlessTarget::new();
    install_render_to(&mut app, setup, Some(Box::new(target))).expect("a device is there");
    for x in [-2.0f32, 0.0, 2.0] {
        scene::spawn_mesh(
            app.world_mut(),
            scene::unit_cube_mesh(),
            Transform::from_translation(Vec3::new(x, 0.0, 0.0)),
        );
    }
    app
}

/// Slot `slot` of the words read back: the view-projection, the viewport and the eye.
fn slot(words: &[f32], slot: u32) -> (Mat4, Vec4, Vec4) {
    let at = 4 + slot as usize * SLOT_WORDS;
    let vec = |index: usize| Vec4::from_slice(&words[at + index * 4..at + index * 4 + 4]);
    (Mat4::from_cols(vec(0), vec(1), vec(2), vec(3)), vec(4), vec(5))
}

fn viewport(width: u32, height: u32) -> Vec4 {
    Vec4::new(width as f32, height as f32, 1.0 / width as f32, 1.0 / height as f32)
}

/// Judges one frame: every window view's slot against its camera, the once-a-frame slot
/// against the main view over the whole image.
fn judge(app: &runtime::App, runs: &Runs, bytes: &[u8], frame: u64, split: bool) {
    let calls = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    let words: Vec<f32> = bytes.chunks_exact(4).map(|word| f32::from_le_bytes(word.try_into().unwrap())).collect();
    let views = app.resource::<ResolvedViews>();
    let extent = app.resource::<RenderReport>().extent;
    let ran = std::mem::take(&mut *runs.per_view.lock().unwrap());
    assert_eq!(runs.once.swap(0, Ordering::Relaxed), 1, "frame {frame}: the plain pass runs once");
    let label = format!("frame {frame}");
    let close =
        |a: Mat4, b: Mat4| a.abs_diff_eq(b, 1e-4 * b.abs().to_cols_array().iter().fold(1.0f32, |m, v| m.max(*v)));
    let main = views.main_view().expect("a main view");
    let (once, once_viewport, once_eye) = slot(&words, ONCE_SLOT);
    assert!(close(once, main.view.view_projection), "{label}: the plain pass reads the main view");
    assert_eq!(once_viewport, viewport(extent.width, extent.height), "{label}: over the whole image");
    assert_eq!(once_eye.truncate(), main.view.position);
    if !split {
        assert_eq!(calls, 2, "{label}: one view, the per-view pass ran once");
        assert_eq!(ran.len(), 1);
        assert_eq!((ran[0].index, ran[0].main, ran[0].rect), (0, true, [0, 0, extent.width, extent.height]));
        assert_eq!(slot(&words, 0), slot(&words, ONCE_SLOT), "{label}: the one view's block is the frame's");
        return;
    }
    assert_eq!(calls, 3, "{label}: two views and the plain pass");
    assert_eq!(ran.len(), 2, "{label}: the per-view pass ran per view: {ran:?}");
    for (index, view) in views.views().iter().enumerate() {
        let ViewTarget::Window(rect) = &view.target else { panic!("{label}: window views") };
        let at = ran[index];
        assert_eq!(at.index, index as u32);
        assert_eq!(at.main, views.main() == Some(view.id), "{label} view {index}");
        assert_eq!(at.rect, [rect.x, rect.y, rect.width, rect.height], "{label} view {index}: its rectangle");
        let (matrix, seen_viewport, eye) = slot(&words, index as u32);
        assert!(close(matrix, view.view.view_projection), "{label} view {index}: its camera's matrix");
        assert_eq!(seen_viewport, viewport(rect.width, rect.height), "{label} view {index}: its rectangle's size");
        assert_eq!(eye.truncate(), view.view.position, "{label} view {index}: its eye");
    }
    assert!(!close(slot(&words, 0).0, slot(&words, 1).0), "{label}: the two views differ");
}

#[test]
fn a_per_view_pass_reads_each_views_block_and_a_plain_pass_runs_once() {
    let Some(device) = gpu_test_context() else { return };
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let runs = Arc::new(Runs::default());
        let seen = ReadbackBuffer::new(&device, "seen views readback", SEEN_BYTES).expect("allocates");
        let mut app = app(&device, backend, &runs, &seen);
        let left = scene::look_at(Vec3::new(1.0, 2.0, 6.0), Vec3::ZERO);
        let right = scene::look_at(Vec3::new(-1.0, 3.0, -6.0), Vec3::ZERO);
        let first = scene::spawn_camera(app.world_mut(), Camera::default(), left);
        let second = scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, right);
        app.world_mut().insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).expect("a camera");
        app.world_mut().insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).expect("a camera");
        for frame in 0..4 {
            if frame == 2 {
                app.world_mut().despawn(second).expect("spawned");
            }
            app.run_frame();
            FrameInFlight::finish(&mut app);
            let report = app.resource::<RenderReport>();
            assert!(
                report.error.is_none() && report.dropped_passes.is_empty(),
                "{backend:?} frame {frame}: {:?} {:?}",
                report.error,
                report.dropped_passes
            );
            drop(report);
            let bytes = seen.read().expect("the frame finished");
            judge(&app, &runs, bytes, frame, frame < 2);
        }
    }
    assert_no_validation_messages(&device);
}

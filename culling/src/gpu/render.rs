//! Rendering as part of the frame: [`install_render`] adds a Render-stage system that writes
//! the changed objects into the GPU scene (by slot) and executes the render graph every frame,
//! with GPU culling or with the CPU's lists, as [`CullingBackend`] decides, and an Input-stage
//! system ([`READBACK_SYSTEM`]) that collects the GPU's answers at the start of the next frame.
//!
//! **What is drawn.** Every drawable mesh entity, as the Visibility stage placed it: its world
//! matrix, the mesh its level of detail chose (`MeshHandle(n)` draws mesh `n` of
//! [`RenderSetup::meshes`]), its `MaterialHandle` and its [`ecs::BaseColor`] (white without
//! one). The Render stage writes only what changed this frame ([`Visibility::changes`] and the
//! colours the change log names), every change in the frame it is made, however many; a
//! despawned object's slot is empty in the same frame. [`RenderReport::upload`] says what
//! went to the GPU: a moving object costs its 48-byte transform and a slot index.
//!
//! **Latency of the GPU's answer.** The statistics ([`RenderReport::gpu`]) and, when asked
//! for, the visibility bits ([`RenderReport::bits`]) are copied by each frame into its own
//! region of a ring of [`READBACK_RING`] host regions (one per frame in flight, plus the one
//! being read). At the start of frame `N + 1`, before the Visibility stage, the readback
//! system asks the fence of frame `N` whether it has signalled, without waiting
//! ([`render_graph::RenderGraph::frame_complete`]): if so, frame `N`'s values are read, one
//! frame late; if the GPU is behind, the newest finished of frames `N - 1` and
//! `N - FRAMES_IN_FLIGHT` is read instead (the latter is always finished: the graph waited
//! for it before submitting frame `N`). So [`BitsReadback::Lagged`] never stalls and is one
//! frame late whenever the GPU keeps up, at most `FRAMES_IN_FLIGHT + 1` frames.
//! [`BitsReadback::Wait`] instead waits for each frame and reads its own bits in the same
//! Render stage (a stall). The bits also feed the [`GpuFeedback`] resource, from which the
//! Visibility stage takes occlusion and the `Occluded` tags: with the lagged readback the
//! tags of frame `N + 1` come from frame `N`'s GPU answer when it finished in time.

use std::sync::{Arc, Mutex};

use render_graph::device::DeviceConfig;
use render_graph::passes::{lock_scene, GpuScene, MeshLibrary, ScenePassOptions, SharedScene, UploadReport};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use runtime::{App, Stage, System};

use super::cull::{
    visibility_bits_bytes, GpuCullSettings, GpuCullStats, SharedCullSettings, CULL_STATS, CULL_STAT_WORDS,
    VISIBILITY_BITS,
};
use super::frame::{add_gpu_culled_scene_passes, BufferReadbackPass};
use super::scene_sync::SceneSync;
use super::target::FrameTarget;
use crate::backend::{CullingBackend, CullingChoice, GpuFeedback, NoGpuCulling};
use crate::visibility::Visibility;

/// Name of the system [`install_render`] adds to [`Stage::Render`].
pub const RENDER_SYSTEM: &str = "culling::render";

/// Name of the system [`install_render`] adds to [`Stage::Input`] on the GPU backend: it
/// reads back the newest finished frame's statistics and bits without waiting (see the
/// module docs for the latency).
pub const READBACK_SYSTEM: &str = "culling::readback";

/// Host regions of each lagged readback: one per frame in flight, plus the one being read.
pub const READBACK_RING: u64 = render_graph::FRAMES_IN_FLIGHT as u64 + 1;

/// Whether and how the host gets the GPU's visibility bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BitsReadback {
    /// Not read back.
    #[default]
    None,
    /// Read without a stall at the start of the next frame: one frame late when that frame's
    /// fence has signalled by then, at most `FRAMES_IN_FLIGHT + 1` (see the module docs).
    Lagged,
    /// Each frame waits for the GPU and reads its own bits.
    Wait,
}

/// What [`install_render`] needs.
pub struct RenderSetup {
    /// The backend asked for.
    pub backend: CullingBackend,
    /// The device to draw on; `None` creates one ([`DeviceConfig::default`]).
    pub device: Option<Arc<GpuDevice>>,
    /// Size of the image.
    pub extent: vk::Extent2D,
    /// Most object slots: the most mesh entities alive at once, and the slots a frame's
    /// spawns take before the despawns of that frame free theirs (a frame past it reports an
    /// error and draws nothing).
    pub capacity: u32,
    /// The meshes objects name.
    pub meshes: MeshLibrary,
    /// What `color` is cleared to.
    pub clear_color: [f32; 4],
    /// Whether the GPU's bits come back to the host.
    pub bits: BitsReadback,
}

/// The GPU culling's switches, a resource [`install_render`] inserts on the GPU backend: the
/// host may turn frustum or occlusion culling off between frames (a game's debug key).
#[derive(Clone, Debug)]
pub struct GpuCullControl {
    /// Shared with the cull passes.
    pub settings: SharedCullSettings,
}

/// What the Render stage did last frame: a resource written by [`RENDER_SYSTEM`].
#[derive(Clone, Debug, Default)]
pub struct RenderReport {
    /// Frames rendered so far.
    pub frames: u64,
    /// GPU culling statistics of frame [`RenderReport::bits_frame`]: the newest frame found
    /// finished at the start of this frame (usually the previous one; no stall), or this
    /// frame with [`BitsReadback::Wait`]; `None` until such a frame exists or on the CPU
    /// backend.
    pub gpu: Option<GpuCullStats>,
    /// Visibility bits (u64 words, bit `i` = slot `i`) of the same frame as
    /// [`RenderReport::gpu`], when asked for; also fed back to the Visibility stage as the
    /// [`GpuFeedback`] resource, for the `Occluded` tags.
    pub bits: Vec<u64>,
    /// The frame [`RenderReport::bits`] and [`RenderReport::gpu`] come from.
    pub bits_frame: Option<u64>,
    /// Object transforms and records uploaded this frame.
    pub upload: UploadReport,
    /// Object slots the Render stage wrote into the GPU scene this frame (those the
    /// Visibility stage changed; nothing else is looked at).
    pub synced_slots: u32,
    /// Drawable objects whose mesh handle names no mesh of the library: not drawn (logged
    /// once).
    pub missing_meshes: u32,
    /// Seconds the Render stage spent writing the changed slots into the GPU scene this
    /// frame (the part of its CPU time that follows what changed; the rest is recording and
    /// submitting the graph).
    pub sync_seconds: f64,
    /// This frame's rendering error, if any (the frame was then not drawn; its changes stay
    /// marked and go with the next frame that draws). Logged once (`log::error!`) until a
    /// different error comes: a scene fuller than its capacity, host-visible memory the
    /// staging could not grow into, a device lost.
    pub error: Option<String>,
}

/// Installs the Visibility stage ([`crate::install`]) and a Render-stage system that draws
/// every frame, after deciding the culling backend (the decision is inserted as the
/// [`CullingChoice`] resource and returned; a fallback's reason is logged once). Without a
/// usable device the CPU culls and nothing is drawn. Only the GPU backend required without a
/// device is an error.
pub fn install_render(app: &mut App, setup: RenderSetup) -> Result<CullingChoice, NoGpuCulling> {
    install_render_to(app, setup, None)
}

/// [`install_render`] with a [`FrameTarget`] that adds its passes to the graph and is called
/// around every frame: a window's swapchain, a host copy of the image. A target whose
/// passes cannot be added turns rendering off like any other setup error (the reason is in
/// [`RenderReport::error`]).
pub fn install_render_to(
    app: &mut App,
    setup: RenderSetup,
    target: Option<Box<dyn FrameTarget>>,
) -> Result<CullingChoice, NoGpuCulling> {
    crate::install(app);
    let device = match setup.device.clone() {
        _ if crate::backend::cpu_culling_forced() => Err(String::from("no device looked for")),
        Some(device) => Ok(device),
        None => GpuDevice::new(&DeviceConfig::default()).map(Arc::new).map_err(|error| error.to_string()),
    };
    let choice = setup.backend.resolve(device.as_ref().map(|_| ()).map_err(Clone::clone))?;
    if let Some(reason) = &choice.reason {
        log::warn!("culling on the CPU: {reason}");
    }
    app.insert_resource(choice.clone());
    app.insert_resource(RenderReport::default());
    if choice.on_device && setup.bits != BitsReadback::None {
        app.insert_resource(GpuFeedback::default());
    }
    let Ok(device) = device else {
        return Ok(choice);
    };
    match RenderState::new(&device, setup, choice.on_device, target) {
        Ok(state) => {
            if let Some(settings) = &state.cull_settings {
                app.insert_resource(GpuCullControl { settings: Arc::clone(settings) });
            }
            let feeds_back = app.resources().contains::<GpuFeedback>();
            let on_device = state.on_device;
            let state = Arc::new(Mutex::new(state));
            if on_device {
                app.add_system(Stage::Input, readback_system(Arc::clone(&state), feeds_back));
            }
            app.add_system(Stage::Render, render_system(state, feeds_back));
        }
        Err(error) => {
            log::warn!("rendering is off: {error}");
            app.resource_mut::<RenderReport>().error = Some(error.to_string());
        }
    }
    Ok(choice)
}

/// The renderer the Render-stage system owns.
struct RenderState {
    graph: RenderGraph,
    scene: SharedScene,
    sync: SceneSync,
    on_device: bool,
    bits_mode: BitsReadback,
    stats: Option<ReadbackBuffer>,
    bits: Option<ReadbackBuffer>,
    /// Per ring region: the CPU's bits before occlusion of the frame that wrote the region
    /// (what [`GpuFeedback::in_view`] gets with that frame's GPU bits).
    in_view: Vec<Vec<u64>>,
    frames: u64,
    /// Where frames go besides `color`.
    target: Option<Box<dyn FrameTarget>>,
    /// The GPU culling's switches (GPU backend only).
    cull_settings: Option<SharedCullSettings>,
    /// The last error logged: a frame's error is logged when it differs from it, so a
    /// failure that lasts (a full scene, device memory exhausted) is logged once, not per
    /// frame.
    logged_error: Option<String>,
}

impl RenderState {
    fn new(
        device: &Arc<GpuDevice>,
        setup: RenderSetup,
        on_device: bool,
        mut target: Option<Box<dyn FrameTarget>>,
    ) -> render_graph::Result<RenderState> {
        let scene = GpuScene::new(device, setup.meshes, setup.capacity)?.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(device), setup.extent)?;
        let options =
            ScenePassOptions { clear_color: setup.clear_color, readback: false, ..ScenePassOptions::default() };
        let mut cull_settings = None;
        let (stats, bits) = if on_device {
            let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
            cull_settings = Some(Arc::clone(&settings));
            add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, false)?;
            let ring = |name: &str,
                        source: &str,
                        bytes: u64,
                        graph: &mut RenderGraph|
             -> render_graph::Result<ReadbackBuffer> {
                let buffer = ReadbackBuffer::new(device, name, bytes * READBACK_RING)?;
                graph.import_buffer(name, buffer.shared());
                graph.add_pass(BufferReadbackPass::ring(source, name, bytes));
                Ok(buffer)
            };
            let stats = ring("cull stats ring", CULL_STATS, CULL_STAT_WORDS as u64 * 4, &mut graph)?;
            let bits = if setup.bits == BitsReadback::None {
                None
            } else {
                Some(ring("visibility ring", VISIBILITY_BITS, visibility_bits_bytes(setup.capacity), &mut graph)?)
            };
            (Some(stats), bits)
        } else {
            render_graph::passes::add_scene_passes(&mut graph, &scene, &options)?;
            (None, None)
        };
        if let Some(target) = &mut target {
            target.add_passes(&mut graph)?;
        }
        let words = visibility_bits_bytes(setup.capacity) as usize / 8;
        let in_view = (0..READBACK_RING).map(|_| Vec::with_capacity(words)).collect();
        Ok(RenderState {
            graph,
            scene,
            sync: SceneSync::default(),
            on_device,
            bits_mode: setup.bits,
            stats,
            bits,
            in_view,
            frames: 0,
            target,
            cull_settings,
            logged_error: None,
        })
    }

    /// One frame: the changed slots into the GPU scene (every frame, drawn or not), then the
    /// camera and list, execute, lagged (or waited) readback.
    fn frame(
        &mut self,
        world: &runtime::hecs::World,
        changes: &runtime::changes::Changes,
        visibility: &Visibility,
        report: &mut RenderReport,
    ) -> render_graph::Result<()> {
        {
            let mut scene = {
                runtime::profile_zone!("lock wait: scene");
                lock_scene(&self.scene)
            };
            runtime::profile_zone!("lock held: scene");
            let started = std::time::Instant::now();
            let synced = self.sync.apply(world, changes, visibility, &mut scene)?;
            report.sync_seconds = started.elapsed().as_secs_f64();
            report.synced_slots = synced.slots;
            report.missing_meshes = synced.missing_meshes;
        }
        // A slot whose object appeared (a new owner, or newly drawable) has no GPU answer of
        // its own yet: the older frames' in-view bits must not make it look occluded.
        for slot in visibility.changes().appeared_slots() {
            let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
            for in_view in &mut self.in_view {
                if let Some(word) = in_view.get_mut(word) {
                    *word &= !bit;
                }
            }
        }
        report.upload = UploadReport::default();
        let Some(view) = visibility.view() else { return Ok(()) };
        if let Some(target) = &mut self.target {
            if !target.begin_frame(&mut self.graph, self.frames)? {
                return Ok(());
            }
        }
        let view_projection = self
            .target
            .as_ref()
            .and_then(|target| target.draw_view())
            .unwrap_or_else(|| (view.projection * view.view).to_cols_array_2d());
        {
            let mut scene = lock_scene(&self.scene);
            scene.set_view_projection(view_projection);
            if !self.on_device {
                scene.set_draw_list(visibility.visible())?;
            }
        }
        let frame = self.execute(visibility)?;
        report.upload = lock_scene(&self.scene).last_upload();
        report.frames = self.frames;
        if self.bits_mode == BitsReadback::Wait {
            self.graph.wait_idle()?;
            self.read_frame(frame, report)?;
        }
        if let Some(target) = &mut self.target {
            target.end_frame(&mut self.graph, frame)?;
        }
        Ok(())
    }

    /// Executes the graph once for `visibility`'s frame (what the scene holds now); returns
    /// the frame's index (its ring regions).
    fn execute(&mut self, visibility: &Visibility) -> render_graph::Result<u64> {
        let in_view = &mut self.in_view[(self.frames % READBACK_RING) as usize];
        in_view.clear();
        in_view.extend(
            visibility
                .bits
                .words()
                .iter()
                .enumerate()
                .map(|(index, word)| word | visibility.occluded.get(index).copied().unwrap_or(0)),
        );
        self.graph.execute_frame()?;
        let frame = self.frames;
        self.frames += 1;
        Ok(frame)
    }

    /// At the start of a frame: reads the newest submitted frame whose fence has signalled,
    /// asking without waiting, among the last `FRAMES_IN_FLIGHT + 1` (the oldest of them,
    /// when it exists, was waited for by the graph already). Does nothing when that frame was
    /// read before or none has finished.
    fn read_back(&mut self, report: &mut RenderReport) -> render_graph::Result<()> {
        let Some(newest) = self.frames.checked_sub(1) else { return Ok(()) };
        let oldest = newest.saturating_sub(render_graph::FRAMES_IN_FLIGHT as u64);
        for candidate in (oldest..=newest).rev() {
            if self.graph.frame_complete(candidate)? {
                if report.bits_frame.is_some_and(|read| read >= candidate) {
                    return Ok(());
                }
                return self.read_frame(candidate, report);
            }
        }
        Ok(())
    }

    /// Reads `frame`'s (finished) statistics and bits into `report`.
    fn read_frame(&self, frame: u64, report: &mut RenderReport) -> render_graph::Result<()> {
        let Some(stats) = &self.stats else { return Ok(()) };
        report.bits_frame = Some(frame);
        let region = ring_region(stats, frame)?;
        report.gpu = Some(GpuCullStats::from_counters(region, self.graph.stats()));
        if let Some(bits) = &self.bits {
            let region = ring_region(bits, frame)?;
            report.bits.clear();
            report.bits.extend(region.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("8"))));
        }
        Ok(())
    }
}

/// The bytes ring region `frame % READBACK_RING` of `buffer`, which that frame wrote and
/// whose fence has signalled (the caller checked it, or waited). The region is not
/// rewritten before frame `frame + READBACK_RING`, which cannot be submitted before the
/// caller's frame ends.
fn ring_region(buffer: &ReadbackBuffer, frame: u64) -> render_graph::Result<&[u8]> {
    let gpu = buffer.buffer();
    gpu.invalidate()?;
    let bytes = gpu.mapped().ok_or_else(|| render_graph::GraphError::Allocation(String::from("ring not mapped")))?;
    let region = bytes.len() as u64 / READBACK_RING;
    let start = (frame % READBACK_RING * region) as usize;
    Ok(&bytes[start..start + region as usize])
}

fn render_system(state: Arc<Mutex<RenderState>>, feeds_back: bool) -> System {
    let system = System::new(RENDER_SYSTEM, move |ctx| {
        runtime::profile_zone!("render");
        let (world, changes) = (ctx.world_unchecked(), ctx.changes());
        let visibility = ctx.resource::<Visibility>();
        let mut report = ctx.resource_mut::<RenderReport>();
        // Locks show in a capture: the wait for the lock, then the time it is held.
        let mut state = {
            runtime::profile_zone!("lock wait: render state");
            state.lock().unwrap_or_else(|poison| poison.into_inner())
        };
        runtime::profile_zone!("lock held: render state");
        report.error = state.frame(world, changes, &visibility, &mut report).err().map(|error| error.to_string());
        if report.error.is_some() && report.error != state.logged_error {
            log::error!("rendering frame {}: {}", report.frames, report.error.as_deref().unwrap_or_default());
        }
        if report.error.is_some() {
            state.logged_error.clone_from(&report.error);
        }
        if feeds_back {
            // The GPU's answer the Visibility stage reads until a newer frame is read back
            // (a GPU behind, or frames not drawn): a slot whose object appeared has none in it.
            let mut feedback = ctx.resource_mut::<GpuFeedback>();
            for slot in visibility.changes().appeared_slots() {
                if let Some(word) = feedback.in_view.get_mut(slot as usize / 64) {
                    *word &= !(1u64 << (slot % 64));
                }
            }
        }
    })
    .reads::<ecs::BaseColor>()
    .reads_resource::<Visibility>()
    .writes_resource::<RenderReport>();
    if feeds_back {
        system.writes_resource::<GpuFeedback>()
    } else {
        system
    }
}

/// The Input-stage half of the renderer: the lagged readback and the [`GpuFeedback`] the
/// Visibility stage reads later in the same frame.
fn readback_system(state: Arc<Mutex<RenderState>>, feeds_back: bool) -> System {
    System::new(READBACK_SYSTEM, move |ctx| {
        runtime::profile_zone!("render readback");
        let mut report = ctx.resource_mut::<RenderReport>();
        // Locks show in a capture: the wait for the lock, then the time it is held.
        let mut state = {
            runtime::profile_zone!("lock wait: render state");
            state.lock().unwrap_or_else(|poison| poison.into_inner())
        };
        runtime::profile_zone!("lock held: render state");
        if let Err(error) = state.read_back(&mut report) {
            report.error = Some(error.to_string());
        }
        if feeds_back {
            let mut feedback = ctx.resource_mut::<GpuFeedback>();
            if report.bits_frame != feedback.frame {
                feedback.frame = report.bits_frame;
                feedback.visible.clear();
                feedback.visible.extend_from_slice(&report.bits);
                feedback.in_view.clear();
                if let Some(frame) = report.bits_frame {
                    feedback.in_view.extend_from_slice(&state.in_view[(frame % READBACK_RING) as usize]);
                }
            }
        }
    })
    .writes_resource::<RenderReport>()
    .writes_resource::<GpuFeedback>()
}

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
//!
//! **Pipelined frames** ([`ecs::RenderSettings::pipelined_frames`], `pipeline.rs`). Serial
//! (the default), the Render stage of frame `N` prepares the frame (the changed slots into
//! the GPU scene, the view, the host's list: the extract) and records and submits the graph
//! before `run_frame` returns. Pipelined, it prepares frame `N` at the same point, hands the
//! recording and submitting to the render thread ([`RENDER_THREAD`]) and returns, so frame
//! `N + 1`'s Input, Transform, View and Visibility stages run while frame `N` is recorded;
//! frame `N + 1`'s Render stage waits for it first. The contract:
//!
//! - **Latency.** Input sampled in frame `N` is in frame `N`'s extract either way; pipelined,
//!   its picture reaches the screen one frame later (submitted during frame `N + 1`).
//! - **What frame `N`'s results are, and when.** Serial: its screenshots, upload report and
//!   error are in the resources when `run_frame` returns. Pipelined: they are published by
//!   frame `N + 1`'s Render stage ([`Screenshot::frame`] says which frame a picture is of,
//!   [`RenderReport::game_frame`] which frame the report is of: the whole report after frame
//!   `N + 1` is serial's after frame `N`, its statistics, upload and counts included), or by
//!   [`FrameInFlight::finish`] for a host that stops. The GPU's statistics and bits are read
//!   without a stall as before, but pipelined they are read in the Render stage, once the
//!   render thread is done: frame `N + 1`'s Visibility stage sees the answer of frame `N - 1`
//!   at best (one frame older than serial).
//! - **What a game must not do.** The render thread reads the GPU scene and the passes, never
//!   the world: a pass parameter a system writes (a clock, a tint in an `Arc`) would be read
//!   while the next frame's systems change it. Copy such values in a [`RenderExtract`] hook,
//!   which runs at the sync point for the frame being drawn. A host must not hold the render
//!   state's resources across frames (a mapped readback, a pass's shared buffer) expecting
//!   them to stay still, and must call [`FrameInFlight::finish`] before reading the last
//!   frame's results.
//! - **Failures.** A pass's panic is that frame's error, as serially. Any other panic on the
//!   render thread is raised by the next frame's Render stage as its own panic, once; the
//!   thread lives on. Dropping the `App` lets the thread finish its frame and joins it.

mod added_meshes;
mod debug_view;
mod family_slots;
mod headless;
mod image_readback;
mod image_views;
mod occluders;
mod outcome;
mod pipeline;
mod readback;
mod screenshot;
mod shadow_report;
mod state;
mod sync;
mod target;
mod window_views;

pub use shadow_report::ShadowReport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use culling::{CullingBackend, CullingChoice, GpuFeedback, NoGpuCulling, Visibility};
use render_graph::device::DeviceConfig;
use render_graph::{vk, GpuDevice};
use runtime::hecs::World;
use runtime::{App, Res, ResMut, Stage, System};

pub use added_meshes::RenderMeshes;
pub use debug_view::{debug_view_grey, DebugView, DebugViewPass};
pub use headless::{lock_capture, Capture, HeadlessTarget, SharedCapture, HEADLESS_PASS};
pub use occluders::{derive_occluders, streamed_occluder, DerivedOccluders};
pub use pipeline::{FrameInFlight, RenderExtract, RENDER_THREAD};
pub use readback::{READBACK_RING, READBACK_SYSTEM};
pub use screenshot::{
    picture, picture_on_scale, write_png, Screenshot, ScreenshotPass, ScreenshotRequest, Screenshots,
};
pub use target::{FrameTarget, TargetFrame};

use crate::passes::{GpuCullStats, SharedCullSettings};
use crate::scene::UploadReport;
use meshes::MeshLibrary;
use pipeline::RenderThread;
use state::{FrameInputs, RenderState, ShadowSetup};

/// Name of the system [`install_render`] adds to [`Stage::Render`].
pub const RENDER_SYSTEM: &str = "renderer::render";

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
    /// Size of the image at the start: the [`ecs::Viewport`] resource when the app has none
    /// yet. From then on the image follows the `Viewport` the frame is culled for (a game
    /// that resizes it resizes the image), unless a [`FrameTarget`] sets the extent (a
    /// window's swapchain); under a zero viewport (a minimised window) culling keeps its last
    /// answer and the image its last size.
    pub extent: vk::Extent2D,
    /// Object slots the GPU scene and the frame's buffers are made with at first (at least
    /// 1). Not a limit: a frame with more slots (more mesh entities alive, or a frame's spawns
    /// before its despawns free theirs) doubles it as often as needed, in the frame that
    /// needs it (the graph compiles again then; the outgrown buffers are copied on the GPU).
    /// A good guess saves those frames; only device memory bounds it (a growth that cannot
    /// allocate is reported once in [`RenderReport::error`], and the slots that fit are
    /// drawn).
    pub capacity: u32,
    /// The meshes objects name.
    pub meshes: MeshLibrary,
    /// What `color` is cleared to.
    pub clear_color: [f32; 4],
    /// Whether the GPU's bits come back to the host.
    pub bits: BitsReadback,
    /// The user's passes, each added to the frame once the engine's passes are in: place
    /// them at the frame's insertion points ([`crate::points`]) with
    /// [`RenderGraph::add_typed_pass_at`](render_graph::RenderGraph::add_typed_pass_at); a
    /// pass appended with `add_typed_pass` runs after the whole frame. They are the user's
    /// ([`render_graph::Owner::User`]): they read every engine resource but write only
    /// `color` unless they claim the write
    /// ([`Registry::claim_engine_write`](render_graph::Registry::claim_engine_write)), and the
    /// passes of one closure are one group: when one of them (or the closure) fails, the
    /// group is dropped, logged and listed in [`RenderReport::dropped_passes`], and the
    /// engine's frame is drawn without it.
    ///
    /// ```no_run
    /// # use render_graph::{GpuDevice, Registry, TypedPass};
    /// # struct Fog;
    /// # impl Fog { fn new(_: &std::sync::Arc<GpuDevice>) -> render_graph::Result<Fog> { Ok(Fog) } }
    /// # impl TypedPass for Fog {
    /// #     type Handles = ();
    /// #     fn name(&self) -> &str { "fog" }
    /// #     fn register(&mut self, _: &mut Registry) {}
    /// # }
    /// let passes: Vec<renderer::AddPasses> = vec![Box::new(|graph| {
    ///     let fog = Fog::new(graph.device())?;
    ///     graph.add_typed_pass_at(renderer::points::AFTER_GEOMETRY, fog)
    /// })];
    /// ```
    pub passes: Vec<AddPasses>,
    /// Whether the frame draws shadows: a shadow atlas of
    /// [`ecs::ShadowSettings::atlas_resolution`] texels (read when the renderer is installed)
    /// holding every light view of [`culling::ShadowViews`], and a geometry pass lit by the
    /// world's lights and shadowed by it. Off, lights and shadows are not drawn (the built-in
    /// sun shades), and nothing of shadows costs GPU time.
    pub shadows: bool,
}

/// Adds a user's passes to the engine's frame (see [`RenderSetup::passes`]).
pub type AddPasses = Box<dyn FnOnce(&mut render_graph::RenderGraph) -> render_graph::Result<()> + Send>;

/// The GPU culling's switches, a resource [`install_render`] inserts on the GPU backend: the
/// host may turn frustum or occlusion culling off between frames (a game's debug key).
#[derive(Clone, Debug)]
pub struct GpuCullControl {
    /// Shared with the cull passes.
    pub settings: SharedCullSettings,
}

/// What the Render stage did: a resource written by [`RENDER_SYSTEM`].
///
/// Its answers name the game frame they belong to by the frame's
/// [`FrameTime::frame_index`](runtime::FrameTime::frame_index) (what
/// [`App::last_frame_index`] says after `run_frame`): [`RenderReport::game_frame`] for what
/// the Render stage did with a frame, [`RenderReport::bits_frame`] for the GPU's answer read
/// back. Serial, after frame `N` the report is frame `N`'s; pipelined
/// ([`ecs::RenderSettings::pipelined_frames`]), frame `N`'s report is published by frame
/// `N + 1`'s Render stage (see the [module docs](self)), so after frame `N + 1` the report
/// is the one serial gives after frame `N`.
#[derive(Clone, Debug, Default)]
pub struct RenderReport {
    /// The game frame the fields below describe (all but those of the GPU's answer: `gpu`,
    /// `bits`, `bits_frame` and the device-culled `shadows`, which come back later; and the
    /// ones that say "so far"); `None` until a frame's report is published.
    pub game_frame: Option<u64>,
    /// Frames drawn so far (a count: frames not drawn, such as those without a view, are not
    /// in it).
    pub frames: u64,
    /// The size of the last frame drawn (see [`RenderSetup::extent`]).
    pub extent: vk::Extent2D,
    /// GPU culling statistics of frame [`RenderReport::bits_frame`]: the newest frame found
    /// finished at the start of this frame (usually the previous one; no stall), or this
    /// frame with [`BitsReadback::Wait`]; `None` until such a frame exists or on the CPU
    /// backend.
    pub gpu: Option<GpuCullStats>,
    /// Visibility bits (u64 words, bit `i` = slot `i`) of the same frame as
    /// [`RenderReport::gpu`], when asked for; also fed back to the Visibility stage as the
    /// [`GpuFeedback`] resource, for the `Occluded` tags.
    pub bits: Vec<u64>,
    /// The game frame [`RenderReport::bits`] and [`RenderReport::gpu`] come from.
    pub bits_frame: Option<u64>,
    /// A split-screen frame culled on the GPU (frame [`RenderReport::bits_frame`]): each
    /// window view's statistics, by its index among the cull's views
    /// ([`WindowView::list`](crate::WindowView::list); 0 the main view, as
    /// [`RenderReport::gpu`]). Each one's `gpu_ms` holds its own share of the early and late
    /// cull passes (its dispatch's GPU zone `view N`) under
    /// [`GpuCullSettings::per_view_dispatch`](crate::GpuCullSettings::per_view_dispatch), else
    /// `None`; the Hi-Z entry is `None`, the pyramid being one build over the whole window.
    /// Empty for a frame of one view.
    pub view_gpu: Vec<GpuCullStats>,
    /// The same frame's bits of every window view, when bits are read: view `v`'s are the
    /// `bits.len()` words from word `v * bits.len()`. Empty for a frame of one view.
    pub view_bits: Vec<u64>,
    /// The same frame's image-target views culled on the GPU: each one's counters and bits.
    pub image_views: Vec<crate::ImageViewGpu>,
    /// Object transforms and records uploaded for frame [`RenderReport::game_frame`] (none
    /// when it was not drawn).
    pub upload: UploadReport,
    /// Object slots the Render stage wrote into the GPU scene in frame
    /// [`RenderReport::game_frame`] (those the
    /// Visibility stage changed; nothing else is looked at).
    pub synced_slots: u32,
    /// Drawable objects whose mesh handle names no mesh of the library: not drawn (logged
    /// once).
    pub missing_meshes: u32,
    /// The meshes added while the game runs that are not on the GPU yet in frame
    /// [`RenderReport::game_frame`], each with the mesh its objects drew instead (a coarser
    /// level or a box of its bounds; `None`: nothing, not one byte of it had arrived); see
    /// [`GpuScene::add_mesh_levels`](crate::GpuScene::add_mesh_levels). Empty when every
    /// mesh is resident. The truth checks draw the same stand-ins.
    pub stand_ins: Vec<(u32, Option<u32>)>,
    /// The mesh memory budget in frame [`RenderReport::game_frame`]: bytes resident, the
    /// budget in force, bytes and levels loaded, levels evicted, bytes pending (see
    /// [`ecs::RenderSettings::mesh_memory_budget`]).
    pub residency: crate::ResidencyReport,
    /// The textures added while the game runs whose mips are not all on the GPU yet in frame
    /// [`RenderReport::game_frame`], each with the finest mip its materials sampled
    /// (`u32::MAX`: none yet, the colour alone); see
    /// [`GpuScene::add_texture`](crate::GpuScene::add_texture). Empty when every texture is
    /// resident. The truth checks sample the same mips.
    pub texture_mips: Vec<(u32, u32)>,
    /// Commands of the host's draw list in frame [`RenderReport::game_frame`] (CPU backend):
    /// one per batch of (mesh, level of detail, material) with a visible object when
    /// [`ecs::RenderSettings::batch_draws`] is on, else one per visible object. 0 when the
    /// GPU writes the lists: its commands are [`GpuCullStats::early_commands`] and
    /// [`GpuCullStats::late_commands`] of [`RenderReport::gpu`].
    pub host_draw_commands: u32,
    /// Seconds the Render stage spent writing the changed slots into the GPU scene in frame
    /// [`RenderReport::game_frame`] (the part of its CPU time that follows what changed; the
    /// rest is recording and submitting the graph).
    pub sync_seconds: f64,
    /// Seconds the Render stage's extract took in frame [`RenderReport::game_frame`] (the
    /// changed slots into the GPU scene, the residency, the views into the graph's
    /// parameters): its CPU time apart from recording and submitting the graph (the
    /// passes' `cpu_record_ms` in [`RenderReport::passes`]) and waiting for the device.
    pub extract_seconds: f64,
    /// The shadow views of frame [`RenderReport::game_frame`] (culled on the host) or of
    /// [`RenderReport::bits_frame`] (culled on the GPU): casters before and after culling,
    /// draws and triangles (empty without shadows).
    pub shadows: ShadowReport,
    /// The users' passes ([`RenderSetup::passes`]) that run, with their GPU and CPU
    /// milliseconds of the newest frame whose times are known (`gpu_ms` is `None` without
    /// timestamps).
    pub user_passes: Vec<render_graph::PassStats>,
    /// Every pass of the frame (the engine's and the users'), in recording order, with the
    /// same timings as [`RenderReport::user_passes`]: what a debug overlay lists per pass.
    pub passes: Vec<render_graph::PassStats>,
    /// Every user pass the graph dropped so far, with its group, where it was added and why
    /// (each also logged once): a pass that does not compile, bind or record, a misspelt
    /// insertion point, a write of an engine resource it did not claim. The engine's frame
    /// is drawn without them.
    pub dropped_passes: Vec<String>,
    /// Warnings of the users' passes so far: dispatches of zero workgroups, draws of nothing
    /// (each kind logged once per pass; see `RenderGraph::pass_warnings`).
    pub pass_warnings: u64,
    /// This frame's rendering error, if any (the frame was then not drawn; its changes stay
    /// marked and go with the next frame that draws). Logged once (`log::error!`) until a
    /// different error comes: host-visible memory the staging could not grow into, a device
    /// lost. One error comes with a frame that is drawn: a scene that could not grow
    /// (`scene growth failed: ...`, a [`SceneGrowthError`](crate::SceneGrowthError), in the
    /// frame whose growth failed); its frames draw the slots that fit.
    pub error: Option<String>,
}

/// Installs the Visibility stage ([`culling::install`]) and a Render-stage system that draws
/// every frame, after deciding the culling backend (the decision is inserted as the
/// [`CullingChoice`] resource and returned; a fallback's reason is logged once). Without a
/// usable device the CPU culls and nothing is drawn. Only the GPU backend required without a
/// device is an error.
///
/// This is the headless form: the frames go to a [`HeadlessTarget`] that draws every frame
/// (the whole frame: depth prepass, geometry, shadow atlas) and copies none; its capture is
/// the [`SharedCapture`] resource, where a game asks for the next frames' pictures
/// ([`Capture::capture`]). [`Screenshots`] work as in a window.
pub fn install_render(app: &mut App, setup: RenderSetup) -> Result<CullingChoice, NoGpuCulling> {
    let (target, capture) = HeadlessTarget::drawing();
    app.insert_resource(capture);
    install_render_to(app, setup, Some(Box::new(target)))
}

/// [`install_render`] with a [`FrameTarget`] that adds its passes to the graph and is called
/// around every frame: a window's swapchain, a host copy of the image ([`HeadlessTarget`]).
/// A target whose passes cannot be added turns rendering off like any other setup error (the
/// reason is in [`RenderReport::error`]). Without a target nothing reads `color`, so the
/// graph drops the passes that draw it as unused (a warning names each): give a target, or
/// use [`install_render`].
pub fn install_render_to(
    app: &mut App,
    setup: RenderSetup,
    target: Option<Box<dyn FrameTarget>>,
) -> Result<CullingChoice, NoGpuCulling> {
    // The image and the view it is culled for have one size: an app that sets no
    // `Viewport` gets the setup's extent, and the graph follows the `Viewport` from then on
    // (see `RenderState::prepare`).
    if !app.resources().contains::<ecs::Viewport>() {
        app.insert_resource(ecs::Viewport { width: setup.extent.width, height: setup.extent.height });
    }
    culling::install(app);
    // The levels' simplification errors, for the Visibility stage's error rule (a game's
    // own table, inserted before, is kept).
    if !app.resources().contains::<ecs::LodErrors>() {
        let library = &setup.meshes;
        app.insert_resource(ecs::LodErrors::from_fn(library.len() as u32, |mesh| library.level_error(mesh)));
    }
    if app.resource::<ecs::RenderSettings>().occluders_from_meshes {
        if !app.resources().contains::<culling::occlusion::OccluderMeshes>() {
            app.insert_resource(culling::occlusion::OccluderMeshes::new());
        }
        let found = derive_occluders(&setup.meshes, &mut app.resource_mut::<culling::occlusion::OccluderMeshes>());
        log::debug!(
            "occluders: {} derived from closed meshes, {} registered, {} open",
            found.derived,
            found.registered,
            found.open
        );
    }
    let device = match setup.device.clone() {
        _ if culling::cpu_culling_forced() => Err(String::from("no device looked for")),
        Some(device) => Ok(device),
        None => GpuDevice::new(&DeviceConfig::default()).map(Arc::new).map_err(|error| error.to_string()),
    };
    let choice = setup.backend.resolve(device.as_ref().map(|_| ()).map_err(Clone::clone))?;
    if let Some(reason) = &choice.reason {
        log::warn!("culling on the CPU: {reason}");
    }
    app.insert_resource(choice.clone());
    app.insert_resource(RenderReport::default());
    if !app.resources().contains::<Screenshots>() {
        app.insert_resource(Screenshots::default());
    }
    if !app.resources().contains::<DebugView>() {
        app.insert_resource(DebugView::default());
    }
    if !app.resources().contains::<RenderExtract>() {
        app.insert_resource(RenderExtract::default());
    }
    if choice.on_device && setup.bits != BitsReadback::None {
        app.insert_resource(GpuFeedback::default());
    }
    let Ok(device) = device else {
        return Ok(choice);
    };
    let shadow_setup = if setup.shadows {
        let settings = app.resource::<ecs::ShadowSettings>();
        let lights = (settings.max_shadowed_lights as usize).min(ecs::MAX_SHADOWED_LIGHTS);
        let views = (ecs::MAX_CASCADES + 6 * lights).min(crate::MAX_SHADOW_VIEWS) as u32;
        let pyramid = crate::shadow_pyramid_side(settings.atlas_resolution, settings.cascade_resolution);
        ShadowSetup { atlas: settings.atlas_resolution, views, pyramid }
    } else {
        ShadowSetup::default()
    };
    match RenderState::new(&device, setup, choice.on_device, target, shadow_setup) {
        Ok(state) => {
            // The GPU tests the casters: the host only places the views.
            app.resource_mut::<culling::ShadowViews>().set_device_culling(state.shadows_on_device);
            let derives_occluders = app.resource::<ecs::RenderSettings>().occluders_from_meshes;
            let occluder_changes = derives_occluders.then(|| {
                let changes = occluders::SharedOccluderChanges::default();
                app.add_system(Stage::Input, occluders::occluder_changes_system(Arc::clone(&changes)));
                changes
            });
            app.insert_resource(RenderMeshes::new(Arc::clone(&state.scene), occluder_changes));
            if let Some(settings) = &state.cull_settings {
                app.insert_resource(GpuCullControl { settings: Arc::clone(settings) });
            }
            let feeds_back = app.resources().contains::<GpuFeedback>();
            let on_device = state.on_device;
            let state = Arc::new(Mutex::new(state));
            let in_flight = Arc::new(AtomicBool::new(false));
            if on_device {
                app.add_system(Stage::Input, readback_system(Arc::clone(&state), Arc::clone(&in_flight), feeds_back));
            }
            let pipeline = FrameInFlight::default();
            app.insert_resource(pipeline.clone());
            app.add_system(Stage::Render, render_system(state, pipeline, in_flight, feeds_back));
        }
        Err(error) => {
            log::warn!("rendering is off: {error}");
            app.resource_mut::<RenderReport>().error = Some(error.to_string());
        }
    }
    Ok(choice)
}

/// The Input-stage half of the renderer: the lagged readback (`readback.rs`) and the
/// [`GpuFeedback`] the Visibility stage reads later in the same frame. While a pipelined
/// frame is with the render thread it leaves the render state alone (the Render stage reads
/// back once the thread is done).
fn readback_system(state: Arc<Mutex<RenderState>>, in_flight: Arc<AtomicBool>, feeds_back: bool) -> System {
    type Params = (ResMut<'static, RenderReport>, Option<ResMut<'static, GpuFeedback>>);
    System::with_params::<Params>(READBACK_SYSTEM, move |_, (mut report, feedback)| {
        if in_flight.load(Ordering::Acquire) {
            return;
        }
        runtime::profile_zone!("render readback");
        // Locks show in a capture: the wait for the lock, then the time it is held.
        let state = {
            runtime::profile_zone!("lock wait: render state (readback)");
            state.lock().unwrap_or_else(|poison| poison.into_inner())
        };
        runtime::profile_zone!("lock held: render state (readback)");
        let mut feedback = feedback.filter(|_| feeds_back);
        read_back(&state, &mut report, feedback.as_deref_mut());
    })
}

/// The newest finished frame's statistics and bits into `report`, and into `feedback` when
/// the Visibility stage reads them.
fn read_back(state: &RenderState, report: &mut RenderReport, feedback: Option<&mut GpuFeedback>) {
    if !state.on_device {
        return;
    }
    if let Err(error) = state.ring.read_newest(&state.graph, state.frames, report) {
        report.error = Some(error.to_string());
    }
    if let Some(feedback) = feedback {
        if report.bits_frame != feedback.frame {
            feedback.frame = report.bits_frame;
            feedback.visible.clear();
            feedback.visible.extend_from_slice(&report.bits);
            feedback.in_view.clear();
            if let Some(frame) = report.bits_frame {
                feedback.in_view.extend_from_slice(state.ring.in_view_of(frame));
            }
        }
    }
}

/// The Render stage's system: publishes the pipelined frame the render thread finished,
/// syncs the GPU scene with what changed, and submits the graph, on its own thread (serial)
/// or on the render thread ([`ecs::RenderSettings::pipelined_frames`]).
fn render_system(
    shared: Arc<Mutex<RenderState>>,
    pipeline: FrameInFlight,
    in_flight: Arc<AtomicBool>,
    feeds_back: bool,
) -> System {
    // The extract hooks read whatever a game's passes need: the system reads the whole world
    // (`&World`, declared as a read of every component, so no writer of one runs beside it).
    type Params = (
        &'static World,
        Res<'static, Visibility>,
        Option<Res<'static, culling::ShadowViews>>,
        Res<'static, ecs::RenderSettings>,
        ResMut<'static, RenderReport>,
        ResMut<'static, Screenshots>,
        Option<ResMut<'static, GpuFeedback>>,
        ResMut<'static, RenderExtract>,
        Res<'static, DebugView>,
        Option<Res<'static, animation::SkinPalette>>,
        (
            Option<Res<'static, ecs::ResolvedViews>>,
            Option<Res<'static, ecs::Viewport>>,
            Option<Res<'static, ecs::LodErrors>>,
        ),
    );
    System::with_params::<Params>(RENDER_SYSTEM, move |ctx, params| {
        runtime::profile_zone!("render");
        let (
            world,
            visibility,
            shadows,
            settings,
            mut report,
            mut shots,
            feedback,
            mut extract,
            debug_view,
            palette,
            views,
        ) = params;
        let (views, window, lod_errors) = views;
        let changes = ctx.changes();
        let pipelined = settings.pipelined_frames;
        let mut feedback = feedback.filter(|_| feeds_back);
        let mut pipeline = pipeline.0.lock().unwrap_or_else(|poison| poison.into_inner());
        // A frame not drawn uploaded nothing; cleared before the frame the render thread held
        // is published, so that its upload stands.
        report.upload = UploadReport::default();
        // The frame the render thread holds is published first, whatever this frame does.
        let mut error = pipeline.finish(&mut report, &mut shots);
        // Locks show in a capture: the wait for the lock, then the time it is held.
        let mut state = {
            runtime::profile_zone!("lock wait: render state (render)");
            shared.lock().unwrap_or_else(|poison| poison.into_inner())
        };
        runtime::profile_zone!("lock held: render state (render)");
        if pipeline.thread.is_some() {
            // The Input-stage readback skipped the frames the thread held.
            read_back(&state, &mut report, feedback.as_deref_mut());
        }
        state.show_debug_view(&debug_view);
        let game_frame = ctx.time.frame_index;
        extract.run(world, game_frame);
        let mut outcome = pipeline.spare.take().unwrap_or_default();
        outcome.game_frame = game_frame;
        let shadows = shadows.as_deref();
        let inputs = FrameInputs {
            world,
            changes,
            visibility: &visibility,
            shadows,
            batch_draws: settings.batch_draws,
            gpu_lod_selection: settings.gpu_lod_selection,
            lod_bias: settings.effective_lod_bias(),
            transfer_budget: settings.transfer_budget,
            mesh_memory_budget: settings.mesh_memory_budget,
            evict_after_frames: settings.evict_after_frames,
            palette: palette.as_deref(),
            lod_errors: lod_errors.as_deref(),
            views: views.as_deref(),
            window: window.as_deref().copied(),
        };
        let extract_started = std::time::Instant::now();
        let prepared = state.prepare(inputs, &mut outcome, &mut shots);
        outcome.report.extract_seconds = extract_started.elapsed().as_secs_f64();
        if !matches!(prepared, Ok(true)) {
            // Nothing to submit: what the extract did is this frame's whole answer.
            outcome.publish_prepared(&mut report);
        }
        match prepared {
            Ok(true) => {
                if pipelined && pipeline.thread.is_none() {
                    match RenderThread::spawn(Arc::clone(&shared), Arc::clone(&in_flight)) {
                        Ok(spawned) => pipeline.thread = Some(spawned),
                        Err(spawn) => log::warn!("no render thread ({spawn}): frames are submitted serially"),
                    }
                }
                match &mut pipeline.thread {
                    Some(thread) if pipelined => {
                        drop(state);
                        thread.start(game_frame, outcome);
                    }
                    _ => {
                        state.submit(game_frame, &mut outcome);
                        error = outcome.publish(&mut report, &mut shots);
                        pipeline.spare = Some(outcome);
                    }
                }
            }
            Ok(false) => pipeline.spare = Some(outcome),
            Err(prepare) => {
                error = Some(prepare.to_string());
                pipeline.spare = Some(outcome);
            }
        }
        pipeline.note_error(&mut report, error);
        if let Some(feedback) = feedback.as_deref_mut() {
            forget_appeared_slots(feedback, &visibility);
        }
    })
}

/// The GPU's answer the Visibility stage reads until a newer frame is read back (a GPU behind,
/// or frames not drawn): a slot whose object appeared this frame has none in it.
fn forget_appeared_slots(feedback: &mut GpuFeedback, visibility: &Visibility) {
    for slot in visibility.changes().appeared_slots() {
        if let Some(word) = feedback.in_view.get_mut(slot as usize / 64) {
            *word &= !(1u64 << (slot % 64));
        }
    }
}

//! The headless city's rendering: the device, the Render stage with the frame's passes (and
//! the overlay of `--hud`), the checker that draws the same frames with culling off (and the
//! monitor's), and the district streamer of `--stream`.

use std::sync::Arc;
use std::time::Instant;

use overlay::Overlay;
use render_graph::readback::{ImageReadback, ReadbackPass};
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{points, BitsReadback, HeadlessTarget, RenderMeshes, SharedCapture, COLOR};
use runtime::App;

use super::setup::{Choices, Scene};
use crate::city::districts::DistrictFiles;
use crate::city::monitor::{self, MonitorCheck};
use crate::city::rendering::{self, CityFrames, SKY};
use crate::city::stream::DistrictStreamer;
use crate::city::{CityOptions, CullChoice, RenderChoice, RenderError, Switch};
use crate::frame_passes::{add_frame_passes, BobClock, FramePassCheck, FramePassChoice};
use crate::mesh_render::MeshRenderer;

/// The city's rendering: the Render stage's capture and the checker that draws the same
/// frames with culling off (same device).
pub(super) struct Rendering {
    pub(super) capture: SharedCapture,
    pub(super) checker: MeshRenderer,
    /// `--monitor`: the monitor view's readback and reference.
    pub(super) monitor: Option<MonitorCheck>,
    /// The user's frame passes and their CPU check, when any is chosen.
    pub(super) frame_check: Option<FramePassCheck>,
    /// The game frame whose wave `--gpu-animate` applies.
    pub(super) clock: BobClock,
    /// Whether the GPU culls the frames.
    pub(super) on_device: bool,
    /// `--hud`: the overlay drawn into the frames.
    pub(super) hud: Option<Hud>,
}

impl Rendering {
    /// The references the streamed meshes go to: the frame's and, given `--monitor`, the
    /// monitor's (each numbers them as the game's renderer does).
    pub(super) fn checkers(&mut self) -> Vec<&mut MeshRenderer> {
        let mut checkers = vec![&mut self.checker];
        checkers.extend(self.monitor.as_mut().map(|monitor| &mut monitor.checker));
        checkers
    }
}

/// The headless `--hud`: the overlay the frames draw, and the colour before it (what the
/// checks compare with the reference; the PNGs show the overlay).
pub(super) struct Hud {
    pub(super) overlay: Overlay,
    before: ImageReadback,
}

impl Hud {
    /// The overlay open from the start, and what adds the copy of `color` before it and its
    /// pass to the frame (at `BEFORE_OUTPUT`, the copy first: passes at one point run in the
    /// order they were added).
    fn new() -> (Hud, [renderer::AddPasses; 2]) {
        let overlay = Overlay::new(true);
        let (pass, before) = ReadbackPass::following(COLOR);
        let copy: renderer::AddPasses = Box::new(move |graph| graph.add_typed_pass_at(points::BEFORE_OUTPUT, pass));
        let passes = [copy, overlay.passes()];
        (Hud { overlay, before }, passes)
    }

    /// The colour of the last frame drawn before the overlay (RGBA8), once a frame copied it.
    pub(super) fn color_before(&self) -> Option<Vec<u8>> {
        self.before.read().ok().map(|(_, texels)| texels)
    }
}

/// The streamer of `--stream` and the meshes it adds to.
pub(super) type Streaming = (DistrictStreamer, RenderMeshes);

/// Installs the Render stage and its checker when frames are drawn and a device exists;
/// `None` (said once) without a device, unless `--cull gpu` needs one.
pub(super) fn rendering(
    app: &mut App,
    options: &CityOptions,
    scene: &Scene,
    choices: Choices,
) -> Result<Option<Rendering>, String> {
    if options.render_choice() == RenderChoice::None {
        return Ok(None);
    }
    let device = match GpuDevice::new(&DeviceConfig { app_name: "city".into(), ..DeviceConfig::default() }) {
        Ok(device) => Arc::new(device),
        Err(reason) if options.cull == CullChoice::Gpu => {
            return Err(format!("city: --cull gpu needs a usable Vulkan device: {reason}"));
        }
        Err(reason) => {
            println!("render: no usable Vulkan device ({reason}); culling on the CPU path, no image drawn");
            return Ok(None);
        }
    };
    let clock = BobClock::default();
    let (target, capture) = HeadlessTarget::drawing();
    let (hud, hud_passes) = if options.hud {
        let (hud, passes) = Hud::new();
        (Some(hud), Vec::from(passes))
    } else {
        (None, Vec::new())
    };
    let installed = install_frames(app, options, scene, choices, (device, target), (&clock, hud_passes));
    let (on_device, checker, frame_check, monitor) = installed.map_err(|error| format!("city: {error}"))?;
    let frame_check = choices.passes.any().then_some(frame_check);
    Ok(Some(Rendering { capture, checker, monitor, frame_check, clock, on_device, hud }))
}

/// The Render stage with the users' passes and the monitor's readback, and the references:
/// whether the GPU culls, the checker, the users' passes' check and the monitor's.
fn install_frames(
    app: &mut App,
    options: &CityOptions,
    scene: &Scene,
    Choices { backend, passes }: Choices,
    (device, target): (Arc<GpuDevice>, HeadlessTarget),
    (clock, hud_passes): (&BobClock, Vec<renderer::AddPasses>),
) -> Result<(bool, MeshRenderer, FramePassCheck, Option<MonitorCheck>), RenderError> {
    let (width, height) = options.size;
    let capacity = rendering::capacity(app.world());
    let (frame_check, add_passes) = FramePassCheck::new(&device, passes, capacity, clock.clone())?;
    let mut frame_passes: Vec<renderer::AddPasses> = vec![Box::new(add_passes)];
    let atlas = if options.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
    let mut monitor = None;
    // The references move the objects as the frame does; the post-processes and lines are
    // checked against the CPU instead.
    let geometry = FramePassChoice { bob: passes.bob, ..FramePassChoice::default() };
    if let Some(added) = scene.monitor {
        let (add, copy) = monitor::readback();
        frame_passes.push(add);
        let library = scene.meshes.library.clone();
        let side = (monitor::MONITOR_SIDE, monitor::MONITOR_SIDE);
        let mut checker = MeshRenderer::with_shadows(device.clone(), side, capacity, library, SKY, atlas)?;
        checker.add_passes(|graph| add_frame_passes(graph, &geometry, capacity, clock))?;
        monitor = Some((MonitorCheck { checker, copy, pixels: Default::default() }, added));
    }
    // The overlay last, over the frame the other passes left.
    frame_passes.extend(hud_passes);
    let extent = vk::Extent2D { width, height };
    let frames =
        CityFrames { backend, extent, bits: BitsReadback::Wait, passes: frame_passes, shadows: options.shadows };
    let choice = rendering::install(app, &device, &scene.meshes.library, Box::new(target), frames)?;
    if let Some(control) = app.resources().get::<renderer::GpuCullControl>() {
        let mut settings = control.settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        settings.per_view_dispatch = options.view_dispatch == Switch::On;
    }
    if (passes.bob || passes.boxes) && !choice.on_device {
        return Err("--gpu-animate and --debug-boxes need GPU culling (--cull gpu)".into());
    }
    let library = scene.meshes.library.clone();
    let mut checker = MeshRenderer::with_shadows(device, (width, height), capacity, library, SKY, atlas)?;
    checker.add_passes(|graph| add_frame_passes(graph, &geometry, capacity, clock))?;
    if let Some((monitor, added)) = &monitor {
        monitor::show_on_reference(&mut checker, &monitor.pixels, added.layer)?;
    }
    Ok((choice.on_device, checker, frame_check, monitor.map(|(monitor, _)| monitor)))
}

/// `--stream`: the district streamer, with every district loaded first given `--preload`.
pub(super) fn streaming(
    app: &mut App,
    options: &CityOptions,
    districts: Option<&DistrictFiles>,
    rendering: Option<&mut Rendering>,
) -> Result<Option<Streaming>, String> {
    let Some(files) = districts else { return Ok(None) };
    let Some(rendering) = rendering else { return Err(String::from("city: --stream needs a usable Vulkan device")) };
    let mut streamer = DistrictStreamer::new(files, options.stream_radius).waiting_for_loads(options.stream_wait);
    let render_meshes = app.resource::<RenderMeshes>().clone();
    if options.preload {
        let started = Instant::now();
        streamer
            .preload(app.world_mut(), &render_meshes, &mut rendering.checkers())
            .map_err(|error| format!("stream: {error}"))?;
        println!(
            "stream: preloaded {} districts in {:.1} ms",
            streamer.spawned(),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(Some((streamer, render_meshes)))
}

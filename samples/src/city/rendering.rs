//! The city's rendering in one call: [`install`] hands the city to
//! [`renderer::install_render_to`], whose Render-stage system draws every frame through
//! the render graph (GPU or CPU culling, the library's meshes at each object's level of
//! detail) into a [`FrameTarget`]: [`HeadlessTarget`] copies chosen frames to the host for
//! PNGs and checks; a window presents them.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use culling::{CullingBackend, CullingChoice, ObjectColumns};
use ecs::{BaseColor, Mesh};
use hecs::World;
use render_graph::readback::{image_readback_buffer, ReadbackPass};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::COLOR;
use renderer::{install_render_to, BitsReadback, FrameTarget, RenderSetup};
use runtime::App;

use super::RenderError;
use renderer::MeshLibrary;

/// The sky the image is cleared to.
pub const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

/// Name of the host copy of `color` that [`HeadlessTarget`] adds.
pub const CAPTURE_READBACK: &str = "city capture";

/// Each object's colour as the Render stage draws it: the packed [`BaseColor`] of the slot's
/// entity (white without one), for the checker that draws the same frame with culling off.
#[derive(Clone, Copy, Debug, Default)]
pub struct CityColors;

impl CityColors {
    /// Colours of every slot of `columns`, read from `world`.
    pub fn of(world: &World, columns: &ObjectColumns) -> Vec<u32> {
        columns
            .entities
            .iter()
            .map(|&entity| world.get::<&BaseColor>(entity).map_or(BaseColor::WHITE, |color| *color).packed())
            .collect()
    }
}

/// How the city's frames are drawn (see [`install`]).
pub struct CityFrames {
    /// The culling backend.
    pub backend: CullingBackend,
    /// The image's size.
    pub extent: vk::Extent2D,
    /// How the GPU's visibility bits come back: headless checks use [`BitsReadback::Wait`],
    /// so a frame's GPU statistics and bits are its own (a checking demo trades the overlap
    /// for exact answers); a window lags them.
    pub bits: BitsReadback,
    /// The user's passes for the frame (`RenderSetup::passes`).
    pub passes: Vec<renderer::AddPasses>,
    /// Draw the world's lights and shadows (`RenderSetup::shadows`).
    pub shadows: bool,
}

/// The object slots the city's rendering has room for: the mesh entities of `world` plus some
/// that appear later (none do today). The users' frame passes and the check's reference
/// renderer cover as many.
pub fn capacity(world: &hecs::World) -> u32 {
    let objects = world.query::<&Mesh>().iter().count() as u32;
    objects + objects / 8 + 64
}

/// Installs the city's rendering on `device`: the Render stage draws every frame the
/// `target` lets it, as `frames` says.
pub fn install(
    app: &mut App,
    device: &Arc<GpuDevice>,
    meshes: &MeshLibrary,
    target: Box<dyn FrameTarget>,
    frames: CityFrames,
) -> Result<CullingChoice, RenderError> {
    let CityFrames { backend, extent, bits, passes, shadows } = frames;
    let setup = RenderSetup {
        shadows,
        backend,
        device: Some(Arc::clone(device)),
        extent,
        capacity: capacity(app.world()),
        meshes: meshes.clone(),
        clear_color: SKY,
        bits,
        passes,
    };
    let choice = install_render_to(app, setup, Some(target))?;
    if let Some(error) = &app.resource::<renderer::RenderReport>().error {
        return Err(format!("rendering could not be set up: {error}").into());
    }
    Ok(choice)
}

/// What the city asks of the next frame and what [`HeadlessTarget`] copied out of it.
#[derive(Debug, Default)]
pub struct Capture {
    /// Draw the next frame.
    pub draw: bool,
    /// Copy the next frame's image to [`Capture::pixels`] (waits for it).
    pub capture: bool,
    /// The last captured image (RGBA8, rows top first).
    pub pixels: Vec<u8>,
    /// Whether the last frame was captured.
    pub captured: bool,
    /// GPU milliseconds of each pass of the last captured frame, by `GraphStats` name.
    pub gpu_ms: Vec<(String, Option<f64>)>,
}

/// [`Capture`] shared between the city's frame loop and the Render stage.
pub type SharedCapture = Arc<Mutex<Capture>>;

/// Locks a [`SharedCapture`] (a panicked holder left plain data behind).
pub fn lock_capture(capture: &SharedCapture) -> MutexGuard<'_, Capture> {
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A headless [`FrameTarget`]: draws the frames [`Capture::draw`] asks for and copies
/// `color` to the host when [`Capture::capture`] asks.
pub struct HeadlessTarget {
    device: Arc<GpuDevice>,
    extent: vk::Extent2D,
    shared: SharedCapture,
    readback: Option<ReadbackBuffer>,
}

impl HeadlessTarget {
    /// A target for `extent`-sized frames on `device`, and the capture it fills.
    pub fn new(device: &Arc<GpuDevice>, extent: vk::Extent2D) -> (HeadlessTarget, SharedCapture) {
        let shared = SharedCapture::default();
        let target = HeadlessTarget { device: Arc::clone(device), extent, shared: Arc::clone(&shared), readback: None };
        (target, shared)
    }
}

impl FrameTarget for HeadlessTarget {
    fn add_passes(&mut self, graph: &mut RenderGraph) -> render_graph::Result<()> {
        let readback = image_readback_buffer(&self.device, CAPTURE_READBACK, self.extent)?;
        graph.import_buffer(CAPTURE_READBACK, readback.shared());
        graph.add_typed_pass(ReadbackPass::with_names(COLOR, CAPTURE_READBACK));
        self.readback = Some(readback);
        Ok(())
    }

    fn begin_frame(&mut self, _graph: &mut RenderGraph, _frame: u64) -> render_graph::Result<bool> {
        let mut shared = lock_capture(&self.shared);
        shared.captured = false;
        Ok(shared.draw)
    }

    fn end_frame(&mut self, graph: &mut RenderGraph, _frame: u64) -> render_graph::Result<()> {
        let mut shared = lock_capture(&self.shared);
        if !shared.capture {
            return Ok(());
        }
        let Some(readback) = &self.readback else { return Ok(()) };
        graph.wait_idle()?;
        let shared = &mut *shared;
        shared.pixels.clear();
        shared.pixels.extend_from_slice(readback.read()?);
        shared.gpu_ms.clear();
        shared.gpu_ms.extend(graph.stats().passes.iter().map(|pass| (pass.name.clone(), pass.gpu_ms)));
        shared.captured = true;
        Ok(())
    }
}

//! The headless form of rendering: [`HeadlessTarget`] draws every frame with no window and
//! keeps the image of each frame it is asked to ([`Capture::capture`]) on the host, for
//! checks and PNGs. [`crate::install_render`] installs one that draws every frame and copies
//! nothing; a game that wants the pictures installs its own with
//! [`crate::install_render_to`] and reads them from the [`SharedCapture`].
//!
//! Its pass reads `color` as a side effect, so the whole frame that writes `color` runs
//! (depth prepass, geometry, shadow atlas) even on the frames nothing is copied: without a
//! reader of `color` the graph would drop them as unused.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use render_graph::RenderGraph;

use super::screenshot::{lock_copied, picture, Copied, ScreenshotPass, SharedCopy};
use super::target::{FrameTarget, TargetFrame};
use crate::names::COLOR;

/// Name of the pass [`HeadlessTarget`] adds (it copies `color` on the frames asked for).
pub const HEADLESS_PASS: &str = "headless color";

/// What a game asks of the next frame and what [`HeadlessTarget`] copied out of it.
#[derive(Debug)]
pub struct Capture {
    /// Draw the next frame (on by default: a headless target draws every frame).
    pub draw: bool,
    /// Copy the next frame's image to [`Capture::pixels`] (waits for it; on by default for
    /// [`HeadlessTarget::new`], off for the target [`crate::install_render`] installs).
    pub capture: bool,
    /// The last captured image (RGBA8, rows top first).
    pub pixels: Vec<u8>,
    /// Its size in pixels.
    pub extent: (u32, u32),
    /// Whether the last frame was captured.
    pub captured: bool,
    /// The game frame the pixels are of ([`TargetFrame::game`]: the frame's
    /// [`FrameTime::frame_index`](runtime::FrameTime::frame_index), as in
    /// [`crate::RenderReport::game_frame`]).
    pub frame: Option<u64>,
    /// GPU milliseconds of each pass of the last captured frame, by `GraphStats` name.
    pub gpu_ms: Vec<(String, Option<f64>)>,
}

impl Default for Capture {
    fn default() -> Capture {
        Capture {
            draw: true,
            capture: true,
            pixels: Vec::new(),
            extent: (0, 0),
            captured: false,
            frame: None,
            gpu_ms: Vec::new(),
        }
    }
}

/// [`Capture`] shared between a game's frame loop and the Render stage.
pub type SharedCapture = Arc<Mutex<Capture>>;

/// Locks a [`SharedCapture`] (a panicked holder left plain data behind).
pub fn lock_capture(capture: &SharedCapture) -> MutexGuard<'_, Capture> {
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A [`FrameTarget`] without a window: draws the frames [`Capture::draw`] asks for (every
/// frame unless told otherwise) and copies `color` to the host when [`Capture::capture`]
/// asks. The image follows the [`ecs::Viewport`] the frame is culled for.
///
/// ```no_run
/// # fn setup() -> renderer::RenderSetup { unimplemented!() }
/// let mut app = runtime::App::new();
/// let (target, capture) = renderer::HeadlessTarget::new();
/// renderer::install_render_to(&mut app, setup(), Some(Box::new(target))).expect("installed");
/// app.run_frame();
/// let image = renderer::lock_capture(&capture);
/// assert!(image.captured, "the frame was drawn and copied");
/// ```
pub struct HeadlessTarget {
    shared: SharedCapture,
    copy: SharedCopy,
}

impl HeadlessTarget {
    /// A target that draws and copies every frame, and the capture it fills.
    pub fn new() -> (HeadlessTarget, SharedCapture) {
        let shared = SharedCapture::default();
        let target = HeadlessTarget { shared: Arc::clone(&shared), copy: SharedCopy::default() };
        (target, shared)
    }

    /// A target that draws every frame and copies none until its capture asks
    /// ([`Capture::capture`]): what [`crate::install_render`] installs.
    pub fn drawing() -> (HeadlessTarget, SharedCapture) {
        let (target, shared) = HeadlessTarget::new();
        lock_capture(&shared).capture = false;
        (target, shared)
    }
}

impl FrameTarget for HeadlessTarget {
    fn add_passes(&mut self, graph: &mut RenderGraph) -> render_graph::Result<()> {
        let pass = ScreenshotPass::named(HEADLESS_PASS.to_owned(), COLOR, Arc::clone(&self.copy));
        graph.add_typed_pass(pass);
        Ok(())
    }

    fn begin_frame(&mut self, _graph: &mut RenderGraph, _frame: TargetFrame) -> render_graph::Result<bool> {
        let mut shared = lock_capture(&self.shared);
        shared.captured = false;
        lock_copied(&self.copy).armed = shared.draw && shared.capture;
        Ok(shared.draw)
    }

    fn end_frame(&mut self, graph: &mut RenderGraph, frame: TargetFrame) -> render_graph::Result<()> {
        let mut shared = lock_capture(&self.shared);
        if !shared.capture {
            return Ok(());
        }
        graph.wait_idle()?;
        let copy = lock_copied(&self.copy);
        if let Some(error) = &copy.error {
            log::warn!("headless target: `{COLOR}` was not copied: {error}");
            return Ok(());
        }
        let shared = &mut *shared;
        if !read_copy(&copy, &mut shared.pixels)? {
            return Ok(());
        }
        shared.extent = (copy.extent.width, copy.extent.height);
        shared.frame = Some(frame.game);
        shared.gpu_ms.clear();
        shared.gpu_ms.extend(graph.stats().passes.iter().map(|pass| (pass.name.clone(), pass.gpu_ms)));
        shared.captured = true;
        Ok(())
    }

    fn follows_view(&self) -> bool {
        true
    }
}

/// The copied texels as RGBA8 into `pixels`; whether there was a copy.
fn read_copy(copy: &Copied, pixels: &mut Vec<u8>) -> render_graph::Result<bool> {
    let Some(buffer) = copy.host.buffer() else { return Ok(false) };
    let bytes = copy.extent.width as usize * copy.extent.height as usize * 4;
    let mapped = buffer.read()?;
    let texels = &mapped[..bytes.min(mapped.len())];
    pixels.clear();
    if copy.format == crate::COLOR_FORMAT {
        // RGBA8 already: no picture to develop (and no allocation).
        pixels.extend_from_slice(texels);
    } else {
        pixels.extend_from_slice(&picture(texels, copy.format));
    }
    Ok(true)
}

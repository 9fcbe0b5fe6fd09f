//! The window's [`FrameTarget`]: each frame acquires a swapchain image, imports it into the
//! render graph, blits `color` into it ([`BlitToSwapchainPass`]) and presents it; optionally
//! copies it back for a screenshot (`--screenshot`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use render_graph::readback::{image_readback_buffer, ReadbackPass};
use render_graph::swapchain::{AcquiredImage, BlitToSwapchainPass, Swapchain, SWAPCHAIN};
use render_graph::{vk, GpuDevice, ReadbackBuffer, RenderGraph, FRAMES_IN_FLIGHT};
use renderer::FrameTarget;
use renderer::COLOR;

use super::fly::DrawView;

/// Name of the screenshot's host copy of the swapchain image.
pub const SCREENSHOT_READBACK: &str = "swapchain screenshot";

/// What the window and its target share.
#[derive(Debug, Default)]
pub struct WindowState {
    /// The window's size in pixels, as last reported.
    pub window_extent: vk::Extent2D,
    /// Frames presented.
    pub presented: u64,
    /// Frames skipped (zero-size window, swapchain out of date).
    pub skipped: u64,
    /// The size of the last presented frame.
    pub presented_extent: vk::Extent2D,
    /// The swapchain's format.
    pub format: vk::Format,
    /// Copy the next presented frame to [`WindowState::screenshot`] (with `--screenshot`).
    pub capture_next: bool,
    /// The last captured frame: RGBA8 rows top first, and its size.
    pub screenshot: Option<(Vec<u8>, vk::Extent2D)>,
}

/// [`WindowState`] shared between the window's event loop and the Render stage.
pub type SharedWindow = Arc<Mutex<WindowState>>;

/// Locks a [`SharedWindow`].
pub fn lock_window(window: &SharedWindow) -> MutexGuard<'_, WindowState> {
    window.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Presents the Render stage's frames in a window.
pub struct SwapchainTarget {
    device: Arc<GpuDevice>,
    swapchain: Swapchain,
    shared: SharedWindow,
    draw_view: DrawView,
    acquired: Option<AcquiredImage>,
    /// The screenshot copy and the extent it was made for (`--screenshot` only).
    screenshot: Option<(ReadbackBuffer, vk::Extent2D)>,
    wants_screenshot: bool,
}

impl SwapchainTarget {
    /// A target presenting through `swapchain`; `draw_view` is the fly camera's view while
    /// the culling camera is frozen; with `screenshot` every frame's image is also copied
    /// to the host, and kept when [`WindowState::capture_next`] asks.
    pub fn new(
        device: &Arc<GpuDevice>,
        swapchain: Swapchain,
        shared: SharedWindow,
        draw_view: DrawView,
        screenshot: bool,
    ) -> SwapchainTarget {
        SwapchainTarget {
            device: Arc::clone(device),
            swapchain,
            shared,
            draw_view,
            acquired: None,
            screenshot: None,
            wants_screenshot: screenshot,
        }
    }
}

impl FrameTarget for SwapchainTarget {
    fn add_passes(&mut self, graph: &mut RenderGraph) -> render_graph::Result<()> {
        graph.add_typed_pass(BlitToSwapchainPass::new(COLOR));
        if self.wants_screenshot {
            graph.add_typed_pass(ReadbackPass::with_names(SWAPCHAIN, SCREENSHOT_READBACK));
        }
        Ok(())
    }

    fn begin_frame(&mut self, graph: &mut RenderGraph, _frame: renderer::TargetFrame) -> render_graph::Result<bool> {
        let window_extent = lock_window(&self.shared).window_extent;
        self.swapchain.resize(window_extent);
        // The slot's acquire semaphore is free once the slot's last frame has finished.
        graph.wait_for_free_slot()?;
        let slot = (graph.frame_index() % FRAMES_IN_FLIGHT as u64) as usize;
        let Some(acquired) = self.swapchain.acquire(slot)? else {
            lock_window(&self.shared).skipped += 1;
            return Ok(false);
        };
        let extent = self.swapchain.extent();
        graph.set_output_extent(extent);
        if self.wants_screenshot && self.screenshot.as_ref().is_none_or(|(_, made_for)| *made_for != extent) {
            // The old copy may still be written by a frame in flight.
            graph.wait_idle()?;
            let buffer = image_readback_buffer(&self.device, SCREENSHOT_READBACK, extent)?;
            graph.import_buffer(SCREENSHOT_READBACK, buffer.shared());
            self.screenshot = Some((buffer, extent));
        }
        graph.import_swapchain_image(SWAPCHAIN, Arc::clone(&acquired.image), acquired.acquired, acquired.rendered);
        self.acquired = Some(acquired);
        Ok(true)
    }

    fn end_frame(&mut self, graph: &mut RenderGraph, _frame: renderer::TargetFrame) -> render_graph::Result<()> {
        let Some(acquired) = self.acquired.take() else { return Ok(()) };
        self.swapchain.present(&acquired)?;
        let mut shared = lock_window(&self.shared);
        if let (true, Some((buffer, extent))) = (shared.capture_next, &self.screenshot) {
            graph.wait_idle()?;
            let mut pixels = buffer.read()?.to_vec();
            if matches!(self.swapchain.format(), vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB) {
                for pixel in pixels.chunks_exact_mut(4) {
                    pixel.swap(0, 2);
                }
            }
            shared.screenshot = Some((pixels, *extent));
            shared.capture_next = false;
        }
        shared.presented += 1;
        shared.presented_extent = self.swapchain.extent();
        shared.format = self.swapchain.format();
        Ok(())
    }

    fn draw_view(&self) -> Option<[[f32; 4]; 4]> {
        *self.draw_view.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

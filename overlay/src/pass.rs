//! The overlay's render-graph pass: draws the newest tessellated overlay over `color` at the
//! frame's `BEFORE_OUTPUT` point with `egui-ash-renderer`.
//!
//! The pass declares `color` as a colour attachment it loads, so the graph places the
//! barriers before and after it like any other pass of the frame; the renderer records only
//! draws inside the graph's rendering scope. Its vertex and index buffers are host memory,
//! one set per frame the graph may have in flight. Font textures are uploaded by the
//! renderer's own one-time submission, which waits for the queue: that happens when the
//! font atlas changes (the first frame, new glyphs), not every frame.
//!
//! Any error of the renderer drops the overlay: it is logged once, kept in
//! [`Painted::error`], and the pass records nothing from then on; the frame goes on.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use egui::epaint::{ClippedPrimitive, ImageDelta};
use egui::TextureId;
use egui_ash_renderer::{DynamicRendering, Options, Renderer};
use render_graph::{
    vk, AttachmentLoad, ExecuteContext, GpuDevice, GraphError, PrepareContext, Registry, TypedPass, FRAMES_IN_FLIGHT,
};
use renderer::{COLOR, COLOR_FORMAT};

/// Name of the overlay's pass.
pub const OVERLAY_PASS: &str = "debug overlay";

/// What the overlay hands its pass: the newest tessellated frame and the texture changes
/// not yet applied.
#[derive(Default)]
pub struct Painted {
    /// The newest tessellated overlay (empty: nothing drawn).
    pub primitives: Vec<ClippedPrimitive>,
    /// Physical pixels per egui point.
    pub pixels_per_point: f32,
    /// Texture changes in the order egui made them, not yet applied.
    pub textures: Vec<(TextureId, ImageDelta)>,
    /// Textures egui no longer uses.
    pub frees: Vec<TextureId>,
    /// Why the overlay was dropped, when it was.
    pub error: Option<String>,
    /// The device the pass draws on (set when the pass is made): the memory panel's pools.
    pub device: Option<Arc<GpuDevice>>,
    /// Whether the pass took the newest primitives (so the overlay may build the next).
    pub taken: bool,
}

/// [`Painted`] shared between the overlay and its pass.
pub type SharedPainted = Arc<Mutex<Painted>>;

/// Locks a [`SharedPainted`] (a panicked holder left plain data behind).
pub fn lock_painted(shared: &SharedPainted) -> MutexGuard<'_, Painted> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Drops the overlay with `error`, logged once.
pub(crate) fn drop_overlay(shared: &SharedPainted, error: String) {
    let mut painted = lock_painted(shared);
    if painted.error.is_none() {
        log::error!("the debug overlay is dropped: {error}");
        painted.error = Some(error);
        painted.primitives.clear();
    }
}

/// The overlay's pass (see the module docs).
pub struct OverlayPass {
    renderer: Option<Renderer<egui_ash_renderer::allocator::DefaultAllocator>>,
    shared: SharedPainted,
    primitives: Vec<ClippedPrimitive>,
    pixels_per_point: f32,
    /// Textures freed by egui, each with the frame after which no frame in flight uses it.
    frees: VecDeque<(u64, TextureId)>,
    command_pool: vk::CommandPool,
    device: Arc<GpuDevice>,
}

impl OverlayPass {
    /// The pass for `device`, drawing what `shared` holds. A renderer that cannot be made
    /// drops the overlay (see [`Painted::error`]) and is returned as the error, which the
    /// graph logs once with the group it drops.
    pub fn new(device: &Arc<GpuDevice>, shared: SharedPainted) -> render_graph::Result<OverlayPass> {
        lock_painted(&shared).device = Some(Arc::clone(device));
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(device.queue_family())
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: the device is alive; the pool is destroyed in `Drop` after the renderer.
        let command_pool = unsafe { device.raw().create_command_pool(&pool_info, None) }
            .map_err(GraphError::vulkan("vkCreateCommandPool"))?;
        let rendering = DynamicRendering {
            color_attachment_format: COLOR_FORMAT,
            depth_attachment_format: None,
            stencil_attachment_format: None,
        };
        // One set of vertex buffers per frame the graph may still be reading, and one more
        // for the frame being prepared.
        let options = Options { in_flight_frames: FRAMES_IN_FLIGHT + 1, ..Options::default() };
        let made = Renderer::with_default_allocator(
            device.instance(),
            device.physical(),
            device.raw().clone(),
            egui_ash_renderer::RenderMode::DynamicRendering(rendering),
            options,
        );
        let renderer = match made {
            Ok(renderer) => renderer,
            Err(error) => {
                // SAFETY: the pool was just made and holds no command buffer.
                unsafe { device.raw().destroy_command_pool(command_pool, None) };
                // The graph logs the group it could not add; the overlay only remembers why.
                lock_painted(&shared).error = Some(error.to_string());
                return Err(GraphError::Allocation(format!("the debug overlay's renderer: {error}")));
            }
        };
        Ok(OverlayPass {
            renderer: Some(renderer),
            shared,
            primitives: Vec::new(),
            pixels_per_point: 1.0,
            frees: VecDeque::new(),
            command_pool,
            device: Arc::clone(device),
        })
    }

    /// Applies egui's texture changes and frees; the first error drops the overlay.
    fn apply_textures(&mut self, frame: u64, sets: &[(TextureId, ImageDelta)]) -> Result<(), String> {
        let Some(renderer) = self.renderer.as_mut() else { return Ok(()) };
        while self.frees.front().is_some_and(|&(last, _)| last < frame) {
            if let Some((_, id)) = self.frees.pop_front() {
                renderer.free_texture(id).map_err(|error| error.to_string())?;
            }
        }
        if sets.is_empty() {
            return Ok(());
        }
        let queue = self.device.queue();
        for (id, delta) in sets {
            renderer.set_texture(*queue, self.command_pool, *id, delta).map_err(|error| error.to_string())?;
        }
        Ok(())
    }
}

impl TypedPass for OverlayPass {
    type Handles = ();

    fn name(&self) -> &str {
        OVERLAY_PASS
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let color = registry.image(COLOR);
        registry.color_attachment(color, AttachmentLoad::Load);
    }

    fn prepare(&mut self, _: &(), context: &mut PrepareContext<'_>) {
        let frame = context.frame_index();
        let sets = {
            let mut painted = lock_painted(&self.shared);
            if painted.error.is_some() {
                self.renderer = None;
            }
            if self.renderer.is_none() {
                self.primitives.clear();
                return;
            }
            if !painted.taken {
                std::mem::swap(&mut self.primitives, &mut painted.primitives);
                painted.taken = true;
            }
            self.pixels_per_point = painted.pixels_per_point.max(f32::MIN_POSITIVE);
            let in_use_until = frame + FRAMES_IN_FLIGHT as u64;
            self.frees.extend(painted.frees.drain(..).map(|id| (in_use_until, id)));
            std::mem::take(&mut painted.textures)
        };
        if let Err(error) = self.apply_textures(frame, &sets) {
            drop_overlay(&self.shared, error);
            self.renderer = None;
            self.primitives.clear();
        }
    }

    fn record_draw(&mut self, _: &(), context: &mut ExecuteContext<'_>) {
        let Some(renderer) = self.renderer.as_mut() else { return };
        let extent = context.output_extent();
        let drawn = renderer.cmd_draw(context.command_buffer(), extent, self.pixels_per_point, &self.primitives);
        if let Err(error) = drawn {
            drop_overlay(&self.shared, error.to_string());
            self.renderer = None;
        }
    }
}

impl Drop for OverlayPass {
    fn drop(&mut self) {
        // The renderer frees buffers and textures a frame in flight may still read.
        if let Err(error) = self.device.wait_idle() {
            log::warn!("the debug overlay's pass could not wait for the device: {error}");
        }
        self.renderer = None;
        // SAFETY: the device is idle and the renderer, the only user of the pool's command
        // buffers, is gone.
        unsafe { self.device.raw().destroy_command_pool(self.command_pool, None) };
    }
}

//! Picking: which entity owns a pixel of the main view. [`Picking::at`] draws the frame's
//! object-id image (every drawable object of the Visibility stage's answer, culling off, as
//! the truth checks draw it: `renderer::truth::ReferenceRenderer`) on the asking frame only,
//! waits for it and reads the one pixel; frames that ask nothing cost nothing. It works the
//! same whichever backend culled the frame, as it draws from the stage's columns.

use std::fmt;
use std::sync::Arc;

use culling::Visibility;
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::MeshLibrary;
use runtime::hecs::Entity;
use runtime::App;

/// Why a pick found no entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickMiss {
    /// The pixel is outside the view's image.
    OutsideView {
        /// The pixel asked for.
        pixel: (u32, u32),
        /// The view's size.
        size: (u32, u32),
    },
    /// The view has no area (a minimised window).
    ZeroSize,
    /// The last frame had no view (no camera).
    NoView,
    /// No device draws the object-id image (the CPU-only path), with the reason.
    NoDevice(String),
    /// The pixel shows the sky: no object there.
    Sky,
    /// Drawing the id image failed.
    Failed(String),
}

impl fmt::Display for PickMiss {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PickMiss::OutsideView { pixel, size } => {
                write!(formatter, "pixel {pixel:?} is outside the view of {}x{}", size.0, size.1)
            }
            PickMiss::ZeroSize => write!(formatter, "the view has no area"),
            PickMiss::NoView => write!(formatter, "the last frame had no view"),
            PickMiss::NoDevice(reason) => write!(formatter, "no device draws the object ids: {reason}"),
            PickMiss::Sky => write!(formatter, "no object at that pixel"),
            PickMiss::Failed(reason) => write!(formatter, "the object-id image failed: {reason}"),
        }
    }
}

impl std::error::Error for PickMiss {}

/// Picks entities in the main view (see the module docs).
pub struct Picking {
    device: Option<Arc<GpuDevice>>,
    meshes: MeshLibrary,
    /// The id renderer, made at the view's size on the first pick (again when it changes).
    renderer: Option<ReferenceRenderer>,
}

impl Picking {
    /// Picking on `device` (`None`: every pick says [`PickMiss::NoDevice`]) for objects
    /// drawing meshes of `meshes` (the library the frame draws).
    pub fn new(device: Option<Arc<GpuDevice>>, meshes: MeshLibrary) -> Picking {
        Picking { device, meshes, renderer: None }
    }

    /// The entity owning pixel (`x`, `y`) (rows from the top) of the main view as the last
    /// frame culled it, or why there is none. Draws and waits (one id image).
    pub fn at(&mut self, app: &App, x: u32, y: u32) -> Result<Entity, PickMiss> {
        let visibility = app.resources().get::<Visibility>().ok_or(PickMiss::NoView)?;
        let view = visibility.view().ok_or(PickMiss::NoView)?;
        let size = (view.viewport.width, view.viewport.height);
        if size.0 == 0 || size.1 == 0 {
            return Err(PickMiss::ZeroSize);
        }
        if x >= size.0 || y >= size.1 {
            return Err(PickMiss::OutsideView { pixel: (x, y), size });
        }
        let device = self.device.as_ref().ok_or_else(|| PickMiss::NoDevice("none was given".to_owned()))?;
        if self.renderer.as_ref().is_none_or(|renderer| renderer.extent() != size) {
            let capacity = visibility.objects().len().max(1) as u32;
            let made = ReferenceRenderer::with_device(
                Arc::clone(device),
                size.0,
                size.1,
                capacity,
                self.meshes.clone(),
                [0.0, 0.0, 0.0, 1.0],
            );
            self.renderer = Some(made.map_err(|error| PickMiss::Failed(error.to_string()))?);
        }
        let renderer = self.renderer.as_mut().expect("made above when missing");
        let owner =
            renderer.owner_at(app.world(), &visibility, x, y).map_err(|error| PickMiss::Failed(error.to_string()))?;
        let slot = owner.ok_or(PickMiss::Sky)?;
        visibility
            .objects()
            .entities
            .get(slot as usize)
            .copied()
            .filter(|&entity| entity != Entity::DANGLING)
            .ok_or(PickMiss::Sky)
    }
}

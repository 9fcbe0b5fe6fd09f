//! Picking: which entity owns a pixel of the main view. [`Picking::at`] draws the frame's
//! object-id image (every drawable object of the Visibility stage's answer, culling off, as
//! the truth checks draw it: `renderer::truth::ReferenceRenderer`) on the asking frame only,
//! waits for it and reads the one pixel; frames that ask nothing cost nothing. It works the
//! same whichever backend culled the frame, as it draws from the stage's columns, and draws
//! skinned meshes in the frame's pose (the app's `animation::SkinPalette`). Meshes the game
//! added while frames run (through the app's [`RenderMeshes`]) are drawn too: a pick that
//! finds the renderer's library grown since the id renderer was made copies it again, and
//! an object whose mesh is not on the GPU yet is drawn as the frame drew it (the frame's
//! [`RenderReport::stand_ins`](renderer::RenderReport::stand_ins)), so the answer is the
//! object the picture shows there.
//!
//! [`Picking::request`] submits the same id image without waiting and [`Picking::poll`]
//! reads the pixel once the fence of the id image's frame has signalled, never waiting: the
//! answer is the one [`Picking::at`] gives for the same frame and pixel, a frame or so later.
//! The id image is the reference renderer's on a graph of its own rather than a 1x1 scissored
//! draw in the frame's graph: it needs no pass in the frame (frames that ask nothing cost
//! nothing), draws every drawable object whatever the frame culled (a scissored draw of the
//! frame's own list would miss objects the frame culled wrongly), and shares its code with
//! the waiting mode, so the two answer alike by construction. One request is in flight at a
//! time, as the image has one readback buffer.

use std::fmt;
use std::sync::Arc;

use culling::Visibility;
use render_graph::GpuDevice;
use renderer::truth::ReferenceRenderer;
use renderer::{MeshLibrary, RenderMeshes, RenderReport};
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
    /// A request is in flight: poll its answer before asking again.
    Pending,
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
            PickMiss::Pending => write!(formatter, "a pick is in flight"),
        }
    }
}

impl std::error::Error for PickMiss {}

/// Picks entities in the main view (see the module docs).
pub struct Picking {
    device: Option<Arc<GpuDevice>>,
    meshes: MeshLibrary,
    /// The id renderer, made at the view's size on the first pick (again when it changes, or
    /// when the game's library grew: see [`Picking::follow_added_meshes`]).
    renderer: Option<ReferenceRenderer>,
    /// The game's [`RenderMeshes::library_extent`] when `meshes` was copied from it.
    library_extent: Option<(usize, usize)>,
    /// The request in flight: the id image's graph frame, the pixel, and the entity of
    /// each slot of the frame it was asked on.
    pending: Option<Pending>,
    /// The answer of a request that failed or missed before any drawing, for the next poll.
    early: Option<Result<Entity, PickMiss>>,
}

/// A request whose id image the GPU draws.
struct Pending {
    frame: u64,
    pixel: (u32, u32),
    entities: Vec<Entity>,
}

impl Picking {
    /// Picking on `device` (`None`: every pick says [`PickMiss::NoDevice`]) for objects
    /// drawing meshes of `meshes` (the library the frame draws).
    pub fn new(device: Option<Arc<GpuDevice>>, meshes: MeshLibrary) -> Picking {
        Picking { device, meshes, renderer: None, library_extent: None, pending: None, early: None }
    }

    /// The entity owning pixel (`x`, `y`) (rows from the top) of the main view as the last
    /// frame culled it, or why there is none. Draws and waits (one id image).
    pub fn at(&mut self, app: &App, x: u32, y: u32) -> Result<Entity, PickMiss> {
        let visibility = app.resources().get::<Visibility>().ok_or(PickMiss::NoView)?;
        self.follow_added_meshes(app);
        let renderer = self.renderer_for(&visibility, x, y)?;
        follow_frame(renderer, app, &visibility)?;
        let owner =
            renderer.owner_at(app.world(), &visibility, x, y).map_err(|error| PickMiss::Failed(error.to_string()))?;
        entity_of(&visibility.objects().entities, owner)
    }

    /// Asks which entity owns pixel (`x`, `y`) of the main view as the last frame culled it,
    /// without waiting: the id image is submitted now and [`Picking::poll`] gives the answer
    /// once the GPU has drawn it. Latency: on lavapipe the answer is there at the first poll
    /// after the next frame (one frame); a GPU still busy with the frames before may take up
    /// to `render_graph::FRAMES_IN_FLIGHT` frames. Bad input (no view, outside it, no
    /// device) is answered by the next poll. [`PickMiss::Pending`] while a request is in
    /// flight (nothing is asked then).
    pub fn request(&mut self, app: &App, x: u32, y: u32) -> Result<(), PickMiss> {
        if self.pending.is_some() || self.early.is_some() {
            return Err(PickMiss::Pending);
        }
        let Some(visibility) = app.resources().get::<Visibility>() else {
            self.early = Some(Err(PickMiss::NoView));
            return Ok(());
        };
        self.follow_added_meshes(app);
        let submitted = self.renderer_for(&visibility, x, y).and_then(|renderer| {
            follow_frame(renderer, app, &visibility)?;
            renderer.submit_owner_image(app.world(), &visibility).map_err(|error| PickMiss::Failed(error.to_string()))
        });
        match submitted {
            Ok(frame) => {
                let entities = visibility.objects().entities.clone();
                self.pending = Some(Pending { frame, pixel: (x, y), entities });
            }
            Err(miss) => self.early = Some(Err(miss)),
        }
        Ok(())
    }

    /// The answer of the request in flight once its id image is drawn, asked without waiting:
    /// `None` while the GPU draws it (or when nothing was asked).
    pub fn poll(&mut self) -> Option<Result<Entity, PickMiss>> {
        if let Some(answer) = self.early.take() {
            return Some(answer);
        }
        let pending = self.pending.as_ref()?;
        let renderer = self.renderer.as_ref().expect("a request in flight has its renderer");
        let (x, y) = pending.pixel;
        let answer = match renderer.owner_when_drawn(pending.frame, x, y) {
            Ok(None) => return None,
            Ok(Some(owner)) => entity_of(&pending.entities, owner),
            Err(error) => Err(PickMiss::Failed(error.to_string())),
        };
        self.pending = None;
        Some(answer)
    }

    /// Whether a request waits for its answer.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some() || self.early.is_some()
    }

    /// Copies the library of the app's [`RenderMeshes`] (where it draws) when it grew since
    /// the last copy, meshes added while frames run included; the id renderer is then made
    /// again with it. Picks between additions copy nothing.
    fn follow_added_meshes(&mut self, app: &App) {
        // The request in flight keeps the renderer that draws its image.
        if self.pending.is_some() {
            return;
        }
        let Some(meshes) = app.resources().get::<RenderMeshes>() else { return };
        let extent = meshes.library_extent();
        if self.library_extent != Some(extent) {
            self.meshes = meshes.library();
            self.library_extent = Some(extent);
            self.renderer = None;
        }
    }

    /// Checks the pixel against the view and makes the id renderer at the view's size.
    fn renderer_for(&mut self, visibility: &Visibility, x: u32, y: u32) -> Result<&mut ReferenceRenderer, PickMiss> {
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
        Ok(self.renderer.as_mut().expect("made above when missing"))
    }
}

/// Draws the objects as the frame drew them: an object whose mesh was not on the GPU as the
/// stand-in the frame drew (the app's [`RenderReport`]), and skinned objects in their pose
/// (the app's `animation::SkinPalette`, where it animates), so a pick finds a limb where it
/// is on screen, not where its bind pose would put it. An app without animation draws every
/// object rigid, as its frame did.
fn follow_frame(renderer: &mut ReferenceRenderer, app: &App, visibility: &Visibility) -> Result<(), PickMiss> {
    if let Some(report) = app.resources().get::<RenderReport>() {
        renderer.follow_stand_ins(&report);
    }
    if let Some(palette) = app.resources().get::<animation::SkinPalette>() {
        renderer.set_palette(&palette).map_err(|error| PickMiss::Failed(error.to_string()))?;
        renderer.follow_skins(app.world(), visibility);
    }
    Ok(())
}

/// The entity of slot `owner` (`None`: the sky) among `entities`.
fn entity_of(entities: &[Entity], owner: Option<u32>) -> Result<Entity, PickMiss> {
    let slot = owner.ok_or(PickMiss::Sky)?;
    entities.get(slot as usize).copied().filter(|&entity| entity != Entity::DANGLING).ok_or(PickMiss::Sky)
}

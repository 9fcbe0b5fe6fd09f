//! Picking: which entity owns a pixel of a view of the frame. [`Picking::at_view`] draws the
//! frame's object-id image for that view (every drawable object of the Visibility stage's
//! answer, culling off, through the view's camera at the levels it picked, as the truth checks
//! draw it: `renderer::truth::ReferenceRenderer`) on the asking frame only,
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
//!
//! **Where a view's pixels are.** A window view of a split-screen frame (several cameras
//! drawing into the window, `ecs::CameraRect`) is drawn at the window's size into its
//! rectangle, as the frame drew it, and its pixels are the window's: a pixel of another
//! view's rectangle is [`PickMiss::OutsideView`]. A frame of one window view draws that view
//! over its image (the view's size, from the corner), and an image-target view
//! (`ecs::CameraTarget::Image`) over an image of its own size: pixels are that image's.
//! [`Picking::at`] and [`Picking::request`] pick in the main view.

use std::fmt;
use std::sync::Arc;

use culling::Visibility;
use ecs::{ResolvedViews, ViewId, ViewTarget};
use render_graph::GpuDevice;
use renderer::truth::{IdView, ReferenceRenderer};
use renderer::{MeshLibrary, RenderMeshes, RenderReport};
use runtime::hecs::Entity;
use runtime::App;

/// Why a pick found no entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickMiss {
    /// The pixel is outside the view's rectangle of its image.
    OutsideView {
        /// The pixel asked for.
        pixel: (u32, u32),
        /// The view's rectangle: left, top, width, height (the whole image but for a window
        /// view of a split-screen frame).
        rect: [u32; 4],
    },
    /// The view has no area (a minimised window).
    ZeroSize,
    /// The last frame had no view (no camera).
    NoView,
    /// The last frame had no view of that id (see `ecs::ResolvedViews`), or culling did not
    /// answer it.
    UnknownView(ViewId),
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
            PickMiss::OutsideView { pixel, rect: [x, y, width, height] } => {
                write!(formatter, "pixel {pixel:?} is outside the view's {width}x{height} at ({x}, {y})")
            }
            PickMiss::ZeroSize => write!(formatter, "the view has no area"),
            PickMiss::NoView => write!(formatter, "the last frame had no view"),
            PickMiss::UnknownView(id) => write!(formatter, "the last frame had no view {}", id.0),
            PickMiss::NoDevice(reason) => write!(formatter, "no device draws the object ids: {reason}"),
            PickMiss::Sky => write!(formatter, "no object at that pixel"),
            PickMiss::Failed(reason) => write!(formatter, "the object-id image failed: {reason}"),
            PickMiss::Pending => write!(formatter, "a pick is in flight"),
        }
    }
}

impl std::error::Error for PickMiss {}

/// Picks entities in any view of the frame (see the module docs).
pub struct Picking {
    device: Option<Arc<GpuDevice>>,
    meshes: MeshLibrary,
    /// The id renderer, made at the picked image's size on the first pick (again when it changes, or
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

/// Where a pick's id image is drawn: the view and its place, the image's size, and the
/// view's rectangle of it (left, top, width, height).
#[derive(Clone, Copy, Debug)]
struct Place {
    view: IdView,
    image: (u32, u32),
    rect: [u32; 4],
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
    /// frame culled it, or why there is none. Draws and waits (one id image);
    /// [`PickMiss::Pending`] while a request is in flight (its image would be drawn over).
    pub fn at(&mut self, app: &App, x: u32, y: u32) -> Result<Entity, PickMiss> {
        self.pick_now(app, None, (x, y))
    }

    /// [`Picking::at`] in view `view` of the last frame (an id of `ecs::ResolvedViews`, as
    /// `Visibility::for_view` takes): pixel (`x`, `y`) of the window for a window view of a
    /// split-screen frame, else of the view's own image (see the module docs).
    pub fn at_view(&mut self, app: &App, view: ViewId, x: u32, y: u32) -> Result<Entity, PickMiss> {
        self.pick_now(app, Some(view), (x, y))
    }

    fn pick_now(&mut self, app: &App, view: Option<ViewId>, (x, y): (u32, u32)) -> Result<Entity, PickMiss> {
        if self.pending.is_some() {
            return Err(PickMiss::Pending);
        }
        let visibility = app.resources().get::<Visibility>().ok_or(PickMiss::NoView)?;
        let place = place_of(app, &visibility, view, (x, y))?;
        self.follow_added_meshes(app);
        let renderer = self.renderer_for(&visibility, place.image)?;
        follow_frame(renderer, app, &visibility)?;
        let owner = renderer
            .owner_at(app.world(), &visibility, place.view, (x, y))
            .map_err(|error| PickMiss::Failed(error.to_string()))?;
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
        self.request_in(app, None, (x, y))
    }

    /// [`Picking::request`] in view `view` of the last frame, its pixels as for
    /// [`Picking::at_view`].
    pub fn request_view(&mut self, app: &App, view: ViewId, x: u32, y: u32) -> Result<(), PickMiss> {
        self.request_in(app, Some(view), (x, y))
    }

    fn request_in(&mut self, app: &App, view: Option<ViewId>, (x, y): (u32, u32)) -> Result<(), PickMiss> {
        if self.pending.is_some() || self.early.is_some() {
            return Err(PickMiss::Pending);
        }
        let Some(visibility) = app.resources().get::<Visibility>() else {
            self.early = Some(Err(PickMiss::NoView));
            return Ok(());
        };
        let place = match place_of(app, &visibility, view, (x, y)) {
            Ok(place) => place,
            Err(miss) => {
                self.early = Some(Err(miss));
                return Ok(());
            }
        };
        self.follow_added_meshes(app);
        let submitted = self.renderer_for(&visibility, place.image).and_then(|renderer| {
            follow_frame(renderer, app, &visibility)?;
            renderer
                .submit_owner_image(app.world(), &visibility, place.view)
                .map_err(|error| PickMiss::Failed(error.to_string()))
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

    /// The id renderer drawing images of `size` (made again when the size changed).
    fn renderer_for(&mut self, visibility: &Visibility, size: (u32, u32)) -> Result<&mut ReferenceRenderer, PickMiss> {
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

/// The window view of the last frame whose rectangle holds window pixel (`x`, `y`): the last
/// in render order, which the window shows on top where rectangles overlap. `None` where
/// no window view covers it (or the frame has no list of views).
pub fn window_view_at(app: &App, x: u32, y: u32) -> Option<ViewId> {
    let views = app.resources().get::<ResolvedViews>()?;
    let split = is_split(&views, app);
    let inside = |view: &&ecs::FrameView| match &view.target {
        ViewTarget::Window(rect) if split => contains([rect.x, rect.y, rect.width, rect.height], (x, y)),
        ViewTarget::Window(_) => Some(view.id) == views.main() && contains(whole(view), (x, y)),
        ViewTarget::Image(_) => false,
    };
    views.views().iter().rev().find(inside).map(|view| view.id)
}

/// Where view `view` (`None`: the main one) of the last frame is drawn, for a pick of pixel
/// `pixel`: [`PickMiss::ZeroSize`] when it has no area, [`PickMiss::OutsideView`] when the
/// pixel is not in its rectangle. The frame's view list (`ecs::ResolvedViews`) tells where a
/// view is; without one (an app that does not list views), the main view fills its image.
fn place_of(app: &App, visibility: &Visibility, view: Option<ViewId>, pixel: (u32, u32)) -> Result<Place, PickMiss> {
    let views = app.resources().get::<ResolvedViews>();
    let main = views.as_deref().and_then(ResolvedViews::main);
    let place = match (views.as_deref(), view.or(main)) {
        (Some(views), Some(id)) => place_in(app, views, visibility, id)?,
        (None, Some(id)) => return Err(PickMiss::UnknownView(id)),
        (_, None) => {
            let viewport = visibility.view().ok_or(PickMiss::NoView)?.viewport;
            let image = (viewport.width, viewport.height);
            Place { view: IdView::MAIN, image, rect: [0, 0, image.0, image.1] }
        }
    };
    if place.rect[2] == 0 || place.rect[3] == 0 {
        return Err(PickMiss::ZeroSize);
    }
    if !contains(place.rect, pixel) {
        return Err(PickMiss::OutsideView { pixel, rect: place.rect });
    }
    Ok(place)
}

/// [`place_of`] for a view the frame lists.
fn place_in(app: &App, views: &ResolvedViews, visibility: &Visibility, id: ViewId) -> Result<Place, PickMiss> {
    let frame_view = views.get(id).ok_or(PickMiss::UnknownView(id))?;
    visibility.for_view(id).ok_or(PickMiss::UnknownView(id))?;
    let view = IdView { view: Some(id), rect: None };
    match &frame_view.target {
        ViewTarget::Window(rect) if is_split(views, app) => {
            let window = app.resources().get::<ecs::Viewport>().map_or((0, 0), |window| (window.width, window.height));
            let rect = [rect.x, rect.y, rect.width, rect.height];
            Ok(Place { view: IdView { rect: Some(rect), ..view }, image: window, rect })
        }
        _ => {
            let rect = whole(frame_view);
            Ok(Place { view, image: (rect[2], rect[3]), rect })
        }
    }
}

/// Whether the frame drew several window views into the window (split-screen), as the Render
/// stage decides it: two window views or more, and a window with an area.
fn is_split(views: &ResolvedViews, app: &App) -> bool {
    let window_views = views.views().iter().filter(|view| matches!(view.target, ViewTarget::Window(_))).count();
    let window = app.resources().get::<ecs::Viewport>().is_some_and(|window| window.width > 0 && window.height > 0);
    window_views >= 2 && window
}

/// The whole image of a view drawn over its own image: its viewport from the corner.
fn whole(view: &ecs::FrameView) -> [u32; 4] {
    [0, 0, view.view.viewport.width, view.view.viewport.height]
}

/// Whether rectangle `rect` (left, top, width, height) holds pixel (`x`, `y`).
fn contains([left, top, width, height]: [u32; 4], (x, y): (u32, u32)) -> bool {
    x >= left && y >= top && x - left < width && y - top < height
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

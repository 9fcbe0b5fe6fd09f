//! Every view of the frame: the main view (the one [`ResolvedView`] names, chosen by the rules
//! of [`view`](crate::view)) and one view per other active, posed camera, in render order.
//! Published as the [`ResolvedViews`] resource by the view stage, rebuilt every frame, so a
//! despawned or deactivated camera has no view from the next frame on.
//!
//! **Order.** Views are sorted by their camera's [`Camera::order`], ties broken by the lower
//! entity id (so two cameras of one order always draw in the same order). The main view
//! takes the order of the camera it is (or, for a host's view, of the camera it replaces;
//! a free host view over a scene without a camera sorts first), and on a tie sorts before a
//! camera of the same order and id.
//!
//! **Targets.** A camera renders into the window (its [`CameraRect`] of it, else the whole
//! window) unless its [`CameraTarget`] is an image. The main view is always a window view:
//! an image camera is never chosen as the main camera, and a host's view is shown in the
//! window. Its rectangle is its camera's `CameraRect`, else the whole window (or, for a camera
//! with a [`CameraViewport`](crate::CameraViewport) and no rectangle, that size at the
//! window's corner).
//!
//! **Refused views** ([`ViewError`]): an image target of zero size or without a name, and a
//! second camera rendering into an image another camera earlier in the order already renders
//! into. The view is left out, the others are kept; the error is kept in
//! [`ResolvedViews::errors`] and logged once when it appears.

use hecs::Entity;
use runtime::Columns;

use crate::camera::{Camera, Viewport};
use crate::target::{CameraRect, CameraTarget, ImageTarget, PixelRect, ViewError};
use crate::view::{camera_pose, CameraAccess, ResolvedView};

/// A view's index in this frame's [`ResolvedViews`] (render order). The index of a camera's
/// view can change when cameras come and go; the camera entity is the identity that lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ViewId(pub u32);

impl ViewId {
    /// The index as a `usize`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where one view of the frame is drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewTarget {
    /// A rectangle of the window, in pixels.
    Window(PixelRect),
    /// A named image.
    Image(ImageTarget),
}

/// One view of the frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameView {
    /// Its index in render order.
    pub id: ViewId,
    /// The camera, projection and pose; `view.viewport` is the target's size.
    pub view: ResolvedView,
    /// The order it is drawn in (its camera's [`Camera::order`]).
    pub order: i32,
    /// Where it is drawn.
    pub target: ViewTarget,
}

impl FrameView {
    /// The camera entity, `None` for a host's free view.
    #[inline]
    pub fn camera(&self) -> Option<Entity> {
        self.view.camera
    }
}

/// The frame's views in render order: a resource the view stage rewrites every frame (see
/// the [module docs](self)). Kept across frames, so a steady set of cameras allocates nothing.
///
/// ```
/// use ecs::{scene, Camera, CameraRect, ResolvedViews, Transform};
/// let mut app = runtime::App::new();
/// ecs::install(&mut app);
/// let left = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
/// let right = scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, Transform::IDENTITY);
/// app.world_mut().insert_one(left, CameraRect::new(0.0, 0.0, 0.5, 1.0)).unwrap();
/// app.world_mut().insert_one(right, CameraRect::new(0.5, 0.0, 0.5, 1.0)).unwrap();
/// app.run_frame();
/// let views = app.resource::<ResolvedViews>();
/// let cameras: Vec<_> = views.views().iter().map(|view| view.camera()).collect();
/// assert_eq!(cameras, [Some(left), Some(right)]);
/// assert_eq!(views.main_view().and_then(|view| view.camera()), Some(left));
/// assert_eq!(views.views()[1].view.viewport, ecs::Viewport::new(640, 720));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ResolvedViews {
    views: Vec<FrameView>,
    main: Option<ViewId>,
    errors: Vec<ViewError>,
    /// The cameras refused last frame, so an error is logged once when it appears.
    refused_before: Vec<Entity>,
}

impl ResolvedViews {
    /// Every view of the frame, in render order (index = [`ViewId`]).
    #[inline]
    pub fn views(&self) -> &[FrameView] {
        &self.views
    }

    /// Number of views.
    #[inline]
    pub fn len(&self) -> usize {
        self.views.len()
    }

    /// Whether the frame has no view.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.views.is_empty()
    }

    /// The main view's id: the view [`ResolvedView`] describes; `None` when the frame has none.
    #[inline]
    pub fn main(&self) -> Option<ViewId> {
        self.main
    }

    /// The main view.
    pub fn main_view(&self) -> Option<&FrameView> {
        self.main.and_then(|id| self.get(id))
    }

    /// The view of id `id`, if the frame has it.
    #[inline]
    pub fn get(&self, id: ViewId) -> Option<&FrameView> {
        self.views.get(id.index())
    }

    /// The view through camera `camera` this frame, if it has one.
    pub fn of_camera(&self, camera: Entity) -> Option<&FrameView> {
        self.views.iter().find(|view| view.view.camera == Some(camera))
    }

    /// The views refused this frame, by name (their cameras are left out of [`views`](Self::views)).
    #[inline]
    pub fn errors(&self) -> &[ViewError] {
        &self.errors
    }

    /// Rebuilds the list for this frame around `main` (the view the rules of `view.rs` chose),
    /// `replaced` being the scene camera a host's view stands in for (not listed again).
    pub(crate) fn rebuild(
        &mut self,
        world: &Columns<'_, CameraAccess>,
        main: Option<&ResolvedView>,
        replaced: Option<Entity>,
        window: Viewport,
    ) {
        self.views.clear();
        self.errors.clear();
        self.main = None;
        if let Some(main) = main {
            let order_of = |entity: Entity| world.get::<Camera>(entity).ok().map(|camera| camera.order);
            let order = replaced.or(main.camera).and_then(order_of).unwrap_or(i32::MIN);
            let rect = main.camera.and_then(|entity| world.get::<CameraRect>(entity).ok().map(|rect| *rect));
            let rect = rect
                .map_or(PixelRect { x: 0, y: 0, width: main.viewport.width, height: main.viewport.height }, |rect| {
                    rect.pixels(window)
                });
            self.views.push(FrameView { id: ViewId(0), view: *main, order, target: ViewTarget::Window(rect) });
        }
        let listed = [main.and_then(|view| view.camera), replaced];
        let mut query = world.query::<(Entity, &Camera)>();
        for (entity, camera) in query.iter() {
            if !camera.active || listed.contains(&Some(entity)) {
                continue;
            }
            if let Some(view) = self.camera_view(world, entity, camera, window) {
                self.views.push(view);
            }
        }
        // Stable: the main view, pushed first, stays before a camera of its own slot.
        self.views.sort_by_key(|view| (view.order, view.view.camera.map_or(0, Entity::id)));
        self.refuse_shared_images();
        for (index, view) in self.views.iter_mut().enumerate() {
            view.id = ViewId(index as u32);
            if main.is_some_and(|main| main.camera == view.view.camera) && self.main.is_none() {
                self.main = Some(view.id);
            }
        }
        self.report_new_errors();
    }

    /// The view through an active camera other than the main one, or `None` when it has no
    /// usable pose or its target is refused (then the error is recorded).
    fn camera_view(
        &mut self,
        world: &Columns<'_, CameraAccess>,
        entity: Entity,
        camera: &Camera,
        window: Viewport,
    ) -> Option<FrameView> {
        let (camera_value, position, rotation) = camera_pose(world, entity)?;
        let target = match world.get::<CameraTarget>(entity).ok().map(|target| (*target).clone()) {
            Some(CameraTarget::Image(image)) => {
                if image.name.is_empty() {
                    self.errors.push(ViewError::UnnamedImage { camera: entity });
                    return None;
                }
                if image.width == 0 || image.height == 0 {
                    self.errors.push(ViewError::ZeroSizeImage { camera: entity, name: image.name });
                    return None;
                }
                ViewTarget::Image(image)
            }
            Some(CameraTarget::Window) | None => ViewTarget::Window(window_rect(world, entity, window)),
        };
        let viewport = match &target {
            ViewTarget::Window(rect) => rect.viewport(),
            ViewTarget::Image(image) => image.viewport(),
        };
        let view = ResolvedView::new(&camera_value, position, rotation, viewport, Some(entity));
        Some(FrameView { id: ViewId(0), view, order: camera.order, target })
    }

    /// Leaves out every image view whose image an earlier view (in render order) renders into.
    fn refuse_shared_images(&mut self) {
        let mut index = 0;
        while index < self.views.len() {
            let shared = match &self.views[index].target {
                ViewTarget::Image(image) => self.views[..index].iter().find_map(|earlier| match &earlier.target {
                    ViewTarget::Image(other) if other.name == image.name => {
                        Some((earlier.view.camera, image.name.clone()))
                    }
                    _ => None,
                }),
                ViewTarget::Window(_) => None,
            };
            match shared {
                Some((Some(kept_by), name)) => {
                    let camera = self.views.remove(index).view.camera.unwrap_or(Entity::DANGLING);
                    self.errors.push(ViewError::SharedImage { camera, kept_by, name });
                }
                _ => index += 1,
            }
        }
    }

    /// Logs the errors of cameras that were not refused last frame.
    fn report_new_errors(&mut self) {
        for error in &self.errors {
            let camera = refused_camera(error);
            if !self.refused_before.contains(&camera) {
                log::warn!("{error}");
            }
        }
        self.refused_before.clear();
        self.refused_before.extend(self.errors.iter().map(refused_camera));
    }
}

/// The camera a refusal names.
fn refused_camera(error: &ViewError) -> Entity {
    match error {
        ViewError::ZeroSizeImage { camera, .. }
        | ViewError::UnnamedImage { camera }
        | ViewError::SharedImage { camera, .. } => *camera,
    }
}

/// The rectangle of the window a window camera draws into: its [`CameraRect`], else its
/// [`CameraViewport`](crate::CameraViewport) size at the corner, else the whole window.
pub(crate) fn window_rect(world: &Columns<'_, CameraAccess>, entity: Entity, window: Viewport) -> PixelRect {
    if let Ok(rect) = world.get::<CameraRect>(entity) {
        return rect.pixels(window);
    }
    let size = world.get::<crate::CameraViewport>(entity).map_or(window, |own| own.0);
    PixelRect { x: 0, y: 0, width: size.width, height: size.height }
}

#[cfg(test)]
mod tests;

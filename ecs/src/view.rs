//! Where the view comes from: a host's view for this frame, else the scene's active camera,
//! held rather than hinted. The answer is published as [`ResolvedView`] for the rest of the
//! frame. Every other active camera gets a view of its own beside it, listed with it in
//! render order in [`ResolvedViews`] (see [`views`](crate::views)); code that wants only the
//! main view keeps reading `ResolvedView`.
//!
//! A camera's viewport is its [`CameraRect`] of the window in pixels, else its
//! [`CameraViewport`], else the [`Viewport`] resource.
//!
//! The resolver runs in its own stage, [`VIEW_STAGE`], right after `Transform` (so a camera
//! parented to a rig sees from where the rig puts it this frame) and before `Visibility` (so
//! every cull, LOD pick and pass reads one answer, whatever order their systems were added
//! in).
//!
//! Rules, in order:
//! 1. A [`HostView`] published for this frame wins: a free view (no scene camera needed), or
//!    a scene camera to look through, active or not. It lasts one frame: the frame context is
//!    cleared when a frame ends, so the frame nobody offers one renders through the scene's
//!    camera again with nothing to clear.
//! 2. Otherwise the camera already held ([`CameraSelection`]) stays while it exists, is active
//!    and has a usable pose, even if a lower-slot camera becomes active beside it.
//! 3. Only when it is gone, deactivated or unposed, or when the world was replaced (its epoch
//!    changed, so a stranger may hold the old id), the lowest-slot active camera is looked up
//!    (slot: [`Camera::order`], then entity id). A camera rendering into an image
//!    ([`CameraTarget::Image`]) is never chosen nor held: the main view is the window's.
//! 4. No usable camera: no view is published, so nothing renders, and the reason
//!    ([`NoViewReason`]: no camera, none active, or an active camera without a finite pose) is
//!    logged once per gap and kept in [`CameraSelection::no_view_reason`].

use glam::{Mat4, Quat, Vec3};
use hecs::{Entity, World};
use runtime::{Columns, Frame, FrameContext, Publish, Res, ResMut, System};

use crate::camera::{Camera, CameraViewport, ProjectionKind, Viewport};
use crate::target::{CameraRect, CameraTarget};
use crate::transform::{Transform, WorldTransform};
use crate::views::{window_rect, ResolvedViews};

/// Name of the stage, inserted after `Transform` by [`install`](crate::install), in which the
/// view is resolved.
pub const VIEW_STAGE: &str = "View";

/// A view offered by an authoring host for one frame, published in the
/// [`FrameContext`] before the view stage (between frames with
/// [`FrameContextExt::set_host_view`], or by an `Input`-stage system declaring
/// `writes_frame::<HostView>()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostView {
    /// A free view: a camera for the projection, placed at `position` with `rotation`. It
    /// needs no scene camera.
    Free {
        /// Projection (its `active` and `order` are ignored).
        camera: Camera,
        /// Eye position in world space.
        position: Vec3,
        /// Orientation (the view looks down its -Z, +Y up).
        rotation: Quat,
    },
    /// Look through this scene camera, active or not, exactly as if it were the active one.
    /// If it is gone or has no camera or pose, the frame falls back to the active camera.
    Through(Entity),
}

/// The view the frame renders through, published by the view stage for the rest of the frame.
///
/// Everything downstream (culls, LOD, passes) reads this, so it follows the view without
/// knowing whose it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResolvedView {
    /// World to view space.
    pub view: Mat4,
    /// View to clip space (reversed-Z).
    pub projection: Mat4,
    /// `projection * view`.
    pub view_projection: Mat4,
    /// Eye position in world space.
    pub position: Vec3,
    /// Eye orientation in world space (looking down -Z).
    pub rotation: Quat,
    /// The scene camera rendered through; `None` for a host's free view.
    pub camera: Option<Entity>,
    /// Which projection family, e.g. to know whether there is a far plane.
    pub projection_kind: ProjectionKind,
    /// The viewport the projection was built for.
    pub viewport: Viewport,
    /// Distance to the near plane ([`Projection::planes`](crate::Projection::planes)).
    pub near: f32,
    /// Distance to the far plane; `f32::INFINITY` for an infinite perspective.
    pub far: f32,
}

impl ResolvedView {
    /// Builds a view from a camera's projection and a pose.
    pub fn new(
        camera: &Camera,
        position: Vec3,
        rotation: Quat,
        viewport: Viewport,
        entity: Option<Entity>,
    ) -> ResolvedView {
        let rotation = rotation.normalize();
        let view = Mat4::from_quat(rotation.conjugate()) * Mat4::from_translation(-position);
        let projection = camera.projection_matrix(viewport.aspect());
        let (near, far) = camera.projection.planes();
        ResolvedView {
            view,
            projection,
            view_projection: projection * view,
            position,
            rotation,
            camera: entity,
            projection_kind: camera.projection.kind(),
            viewport,
            near,
            far,
        }
    }
}

/// Natural access to the view values of a [`FrameContext`].
pub trait FrameContextExt {
    /// The host's view offered for this frame, if any.
    fn host_view(&self) -> Option<HostView>;
    /// Offers a host view for the current frame (or, between frames, the next one).
    fn set_host_view(&mut self, view: HostView);
    /// The view resolved this frame, if the view stage has run and found one.
    fn resolved_view(&self) -> Option<ResolvedView>;
}

impl FrameContextExt for FrameContext {
    fn host_view(&self) -> Option<HostView> {
        self.get::<HostView>().map(|view| *view)
    }

    fn set_host_view(&mut self, view: HostView) {
        self.insert(view);
    }

    fn resolved_view(&self) -> Option<ResolvedView> {
        self.get::<ResolvedView>().map(|view| *view)
    }
}

/// Why a frame has no view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoViewReason {
    /// No entity has a [`Camera`].
    NoCamera,
    /// Cameras exist, but none is active.
    NoActiveCamera,
    /// This active camera has no usable pose: a non-finite `WorldTransform`/`Transform` (a
    /// followed target's NaN position, say), or neither component.
    CameraWithoutFinitePose(Entity),
}

impl std::fmt::Display for NoViewReason {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoViewReason::NoCamera => write!(formatter, "no entity has a Camera"),
            NoViewReason::NoActiveCamera => write!(formatter, "no camera is active"),
            NoViewReason::CameraWithoutFinitePose(entity) => {
                write!(formatter, "active camera {entity:?} has no finite pose (non-finite or missing transform)")
            }
        }
    }
}

/// The scene camera in use, held across frames. A resource written by the view system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CameraSelection {
    no_view: Option<NoViewReason>,
    held: Option<Entity>,
    epoch: u64,
    in_gap: bool,
    gaps_reported: u64,
    scans: u64,
    bad_through: Option<Entity>,
}

impl CameraSelection {
    /// The camera held now, if any.
    pub fn held(&self) -> Option<Entity> {
        self.held
    }

    /// How many times a frame without a view was logged (once per gap).
    pub fn gaps_reported(&self) -> u64 {
        self.gaps_reported
    }

    /// Why the last frame had no view, or `None` when it had one (or a host view).
    pub fn no_view_reason(&self) -> Option<NoViewReason> {
        self.no_view
    }

    /// How many scans for the lowest-slot active camera ran.
    pub fn scans(&self) -> u64 {
        self.scans
    }
}

/// The view system for [`VIEW_STAGE`]: applies the rules of this module, publishes
/// [`ResolvedView`] (the main view) and rewrites [`ResolvedViews`] (every view of the frame,
/// see [`views`](crate::views)).
///
/// Reads `Camera`, [`CameraViewport`], [`CameraRect`], [`CameraTarget`], `Transform`,
/// `WorldTransform`, the [`Viewport`] resource and the [`HostView`] frame value; writes the
/// [`CameraSelection`] and `ResolvedViews` resources and the `ResolvedView` frame value. The
/// resources must be present ([`install`](crate::install) inserts them).
pub fn view_system() -> System {
    type Params = (
        Columns<'static, CameraAccess>,
        Res<'static, Viewport>,
        Option<Frame<'static, HostView>>,
        ResMut<'static, CameraSelection>,
        ResMut<'static, ResolvedViews>,
        Publish<'static, ResolvedView>,
    );
    System::with_params::<Params>("ecs::view", |ctx, (world, viewport, host, mut selection, mut views, published)| {
        runtime::profile_zone!("resolve view");
        let host = host.map(|view| *view);
        let main = resolve_in(&world, ctx.world_epoch, host, *viewport, &mut selection);
        // A host's view stands in for the camera the scene would have shown.
        let replaced = host.and_then(|_| selection.held.or_else(|| lowest_slot_active_camera(&world)));
        views.rebuild(&world, main.as_ref(), replaced, *viewport);
        if let Some(view) = main {
            published.publish(view);
        }
    })
}

/// What the view system reads of the world: the cameras, their own viewports, targets and
/// poses.
pub(crate) type CameraAccess = (
    &'static Camera,
    Option<&'static CameraViewport>,
    Option<&'static CameraRect>,
    Option<&'static CameraTarget>,
    Option<&'static Transform>,
    Option<&'static WorldTransform>,
);

/// The rules of this module, outside any system (the view system calls it each frame).
pub fn resolve(
    world: &World,
    world_epoch: u64,
    host: Option<HostView>,
    viewport: Viewport,
    selection: &mut CameraSelection,
) -> Option<ResolvedView> {
    resolve_in(&Columns::whole(world), world_epoch, host, viewport, selection)
}

/// [`resolve`] over the view system's columns.
fn resolve_in(
    world: &Columns<'_, CameraAccess>,
    world_epoch: u64,
    host: Option<HostView>,
    viewport: Viewport,
    selection: &mut CameraSelection,
) -> Option<ResolvedView> {
    if selection.epoch != world_epoch {
        // A replaced world may hand the held id to a stranger: forget it.
        selection.held = None;
        selection.epoch = world_epoch;
    }
    selection.no_view = None;
    match host {
        Some(HostView::Free { camera, position, rotation }) => {
            return Some(ResolvedView::new(&camera, position, rotation, viewport, None))
        }
        Some(HostView::Through(entity)) => match camera_pose(world, entity) {
            Some((camera, position, rotation)) => {
                selection.bad_through = None;
                let viewport = window_rect(world, entity, viewport).viewport();
                return Some(ResolvedView::new(&camera, position, rotation, viewport, Some(entity)));
            }
            None => {
                if selection.bad_through != Some(entity) {
                    log::warn!(
                        "host view looks through {entity:?}, which is not a posed camera; using the active camera"
                    );
                    selection.bad_through = Some(entity);
                }
            }
        },
        None => {}
    }
    if let Some(held) = selection.held {
        if !matches!(camera_pose(world, held), Some((camera, ..)) if camera.active) || renders_to_image(world, held) {
            selection.held = None;
        }
    }
    if selection.held.is_none() {
        selection.scans += 1;
        selection.held = lowest_slot_active_camera(world);
    }
    let Some(entity) = selection.held else {
        let reason = why_no_view(world);
        selection.no_view = Some(reason);
        if !selection.in_gap {
            log::warn!("No view this frame, nothing is rendered: {reason}");
            selection.in_gap = true;
            selection.gaps_reported += 1;
        }
        return None;
    };
    selection.in_gap = false;
    let (camera, position, rotation) =
        camera_pose(world, entity).expect("the held camera was checked to be posed above");
    let viewport = window_rect(world, entity, viewport).viewport();
    Some(ResolvedView::new(&camera, position, rotation, viewport, Some(entity)))
}

/// A camera entity's camera and finite pose (from `WorldTransform`, else `Transform`), or
/// `None` when it is gone, has no `Camera` or no usable pose.
pub(crate) fn camera_pose(world: &Columns<'_, CameraAccess>, entity: Entity) -> Option<(Camera, Vec3, Quat)> {
    let mut query = world.query_one::<(&Camera, Option<&WorldTransform>, Option<&Transform>)>(entity);
    let (camera, world_transform, local) = query.get().ok()?;
    let matrix = match (world_transform, local) {
        (Some(world_transform), _) => world_transform.0,
        (None, Some(local)) => local.to_matrix(),
        (None, None) => return None,
    };
    if !matrix.is_finite() {
        return None;
    }
    let (_, rotation, position) = matrix.to_scale_rotation_translation();
    let rotation = rotation.normalize();
    rotation.is_finite().then_some((*camera, position, rotation))
}

/// Why no camera qualifies (called only when none does).
fn why_no_view(world: &Columns<'_, CameraAccess>) -> NoViewReason {
    let mut query = world.query::<(Entity, &Camera)>();
    let mut any = false;
    for (entity, camera) in query.iter() {
        if camera.active {
            return NoViewReason::CameraWithoutFinitePose(entity);
        }
        any = true;
    }
    if any {
        NoViewReason::NoActiveCamera
    } else {
        NoViewReason::NoCamera
    }
}

/// Whether the camera renders into an image (never the main view, which is the window's).
fn renders_to_image(world: &Columns<'_, CameraAccess>, entity: Entity) -> bool {
    world.get::<CameraTarget>(entity).is_ok_and(|target| matches!(*target, CameraTarget::Image(_)))
}

/// The active, posed window camera with the lowest `(order, entity id)`.
fn lowest_slot_active_camera(world: &Columns<'_, CameraAccess>) -> Option<Entity> {
    let mut query = world.query::<(Entity, &Camera)>();
    query
        .iter()
        .filter(|(entity, camera)| camera.active && !renders_to_image(world, *entity))
        .map(|(entity, camera)| ((camera.order, entity.id()), entity))
        .filter(|(_, entity)| camera_pose(world, *entity).is_some())
        .min_by_key(|(slot, _)| *slot)
        .map(|(_, entity)| entity)
}

#[cfg(test)]
mod tests;

//! Engine components, the transform hierarchy and camera/host-view resolution.
//!
//! - Components, all plain data: [`Transform`], [`WorldTransform`], [`Parent`] and
//!   [`Children`], [`Mesh`] with [`MeshHandle`] and [`MaterialHandle`], [`Visible`],
//!   [`ShadowCaster`], [`Camera`], [`Lod`], [`SkinnedPose`], the tags [`Culled`] and
//!   [`Occluded`], and the opt-in marker [`VisibilityTagged`] (see [`VisibilityTags`]).
//! - Lights: [`DirectionalLight`], [`SpotLight`], [`PointLight`], and the frame's
//!   [`ShadowSettings`] (cascades, atlas, caster culling).
//! - [`hierarchy`]: parenting that refuses loops, and the `Transform`-stage system that
//!   writes world matrices level by level on the job system.
//! - [`view`]: a host's view for one frame, else the held active camera, published as
//!   [`ResolvedView`] in the [`VIEW_STAGE`] between `Transform` and `Visibility`;
//!   [`views`]: every active camera's view in render order ([`ResolvedViews`]), each into
//!   the window ([`CameraRect`] for split-screen) or an image ([`CameraTarget`]).
//! - [`RenderSettings`] and [`Viewport`]: resources every system reads live.
//! - [`scene`]: helpers that build scenes for tests, samples and benchmarks.
//!
//! [`install`] adds all of it to an [`App`]:
//!
//! ```
//! use ecs::{scene, Camera, FrameContextExt, Transform};
//! use glam::Vec3;
//! let mut app = runtime::App::new();
//! ecs::install(&mut app);
//! let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::Z));
//! app.add_system(
//!     runtime::Stage::Visibility,
//!     runtime::System::new("check", move |ctx| {
//!         let view = ctx.frame_value::<ecs::ResolvedView>().expect("a camera exists");
//!         assert_eq!(view.camera, Some(camera));
//!     })
//!     .reads_frame::<ecs::ResolvedView>(),
//! );
//! app.run_frame();
//! ```
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
pub mod bounds;
pub use bounds::{Aabb, Sphere};
mod bundle;
pub use bundle::{MeshBundle, SpawnMesh};

mod camera;
pub mod hierarchy;
mod light;
pub mod lod;
mod lod_errors;
mod render;
pub mod scene;
mod settings;
mod target;
mod transform;
pub mod view;
pub mod views;

pub use camera::{Camera, CameraViewport, Projection, ProjectionKind, Viewport};
pub use hierarchy::{
    hierarchy_system, Children, HierarchyCommands, HierarchyError, HierarchyReport, Parent, HIERARCHY_SYSTEM,
};
pub use light::{
    CascadeSplit, DirectionalLight, PointLight, ShadowBias, ShadowSettings, SpotLight, DEFAULT_MAX_LIGHT_VIEWS,
    MAX_CASCADES, MAX_LIGHT_VIEWS, MAX_SHADOWED_LIGHTS,
};
pub use lod::{Lod, LodLevel};
pub use lod_errors::LodErrors;
pub use render::{
    BaseColor, Culled, MaterialHandle, Mesh, MeshHandle, Occluded, ShadowCaster, SkinnedPose, VisibilityTagged, Visible,
};
pub use settings::{CpuAnswers, RenderSettings, VisibilityTags, DEFAULT_TRANSFER_BUDGET};
pub use target::{CameraRect, CameraTarget, ImageFormat, ImageTarget, PixelRect, ViewError};
pub use transform::{Transform, WorldTransform};
pub use view::{view_system, CameraSelection, FrameContextExt, HostView, NoViewReason, ResolvedView, VIEW_STAGE};
pub use views::{FrameView, ResolvedViews, ViewId, ViewTarget};

use runtime::{App, Stage};

/// Adds the engine's ECS systems and resources to `app`:
///
/// - resources [`RenderSettings`], [`ShadowSettings`] and [`Viewport`] (defaults, unless
///   already inserted),
///   [`HierarchyReport`], [`CameraSelection`] and [`ResolvedViews`];
/// - [`hierarchy_system`] in [`Stage::Transform`];
/// - the stage [`VIEW_STAGE`] right after `Transform`, holding [`view_system`].
///
/// Calling it again on the same app does nothing.
pub fn install(app: &mut App) {
    if app.resources().contains::<CameraSelection>() {
        return;
    }
    if !app.resources().contains::<RenderSettings>() {
        app.insert_resource(RenderSettings::default());
    }
    if !app.resources().contains::<Viewport>() {
        app.insert_resource(Viewport::default());
    }
    if !app.resources().contains::<ShadowSettings>() {
        app.insert_resource(ShadowSettings::default());
    }
    app.insert_resource(HierarchyReport::default());
    app.insert_resource(CameraSelection::default());
    app.insert_resource(ResolvedViews::default());
    app.add_stage_after(Stage::Transform, VIEW_STAGE)
        .expect("install runs once per app (guarded above), so the view stage is new");
    app.add_system(Stage::Transform, hierarchy_system());
    app.add_system(VIEW_STAGE, view_system());
}

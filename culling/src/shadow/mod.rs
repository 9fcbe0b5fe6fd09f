//! Shadows on the CPU side: the frame's light views (sun cascades, spot lights, point
//! lights' cube faces, each in a tile of one shadow atlas) and the casters each view draws.
//!
//! - `views.rs`: the matrices and culling volumes of each kind of light view, and the
//!   atlas's tile allocator.
//! - `system.rs`: [`ShadowViews`], the resource [`shadow_views_system`] fills in the
//!   Visibility stage: lights found, views placed, every caster culled against every view
//!   in one parallel pass.
//! - `lights.rs`: the lights as the system's columns give them: the sun, and the spot and
//!   point lights nearest the camera's frame.
//! - `cull.rs`: [`ShadowCull`], the same cull over caller-given views.

mod cull;
mod lights;
mod system;
mod views;

#[cfg(test)]
mod tests;

pub use cull::ShadowCull;
pub(crate) use system::install;
pub use system::{
    shadow_views_system, LocalLight, LocalLightKind, ShadowViewStats, ShadowViews, SunLight, MAX_LOCAL_LIGHTS,
    SHADOW_VIEWS_SYSTEM,
};
pub use views::{
    cascade_slice, cascade_view_projection, cube_face_view_projection, light_near, spot_view_projection,
    AtlasAllocator, AtlasTile, CascadeSlice, LightView, LightViewKind, CUBE_FACES, MIN_TILE,
};

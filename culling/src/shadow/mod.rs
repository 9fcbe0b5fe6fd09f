//! Shadows on the CPU side: the frame's light views (sun cascades, spot lights, point
//! lights' cube faces, each in a tile of one shadow atlas) and the casters each view draws.
//!
//! - `views.rs`: the matrices and culling volumes of each kind of light view, and the
//!   atlas's tile allocator.
//! - `system.rs`: [`ShadowViews`], the resource [`shadow_views_system`] fills in the
//!   Visibility stage: lights found, views placed, casters gathered and culled.
//! - `casters.rs`: the casters kept by slot from one Visibility answer to the next, with the
//!   union of each word's and group's boxes and each word's reach along the sun; a frame
//!   reads only the slots the answer names as changed.
//! - `view_bits.rs`: each view's caster bits by slot, kept while the view does not move and
//!   redone where casters changed; a view that moved is culled afresh, a group and a word of
//!   casters at a time where its volume misses or holds their box (`sides.rs`).
//! - `lights.rs`: the lights as the system's columns give them: the sun, and the spot and
//!   point lights nearest the camera's frame.
//! - `budget.rs`: the shadow budget: the local lights ranked by [`screen_contribution`],
//!   with hysteresis ([`KEEP_MARGIN`]), the best that fit casting.
//! - `cull.rs`: [`ShadowCull`], the same cull over caller-given views.
//! - `explain.rs`: [`ShadowViews::explain`], whether one object draws into each view
//!   ([`Casting`]), on demand.

mod budget;
mod casters;
mod cull;
mod explain;
mod frame_lights;
mod lights;
mod sides;
mod system;
mod view_bits;
mod views;

#[cfg(test)]
mod budget_tests;
#[cfg(test)]
mod incremental_tests;
#[cfg(test)]
mod tests;

pub use budget::{screen_contribution, KEEP_MARGIN};
pub use cull::ShadowCull;
pub use explain::{Casting, ShadowCasting};
pub use frame_lights::{
    LocalLight, LocalLightKind, ShadowBudget, ShadowViewStats, ShadowWork, SunLight, MAX_LOCAL_LIGHTS,
};
pub(crate) use system::install;
pub use system::{shadow_views_system, ShadowViews, SHADOW_VIEWS_SYSTEM};
pub use views::{
    cascade_slice, cascade_view_projection, cube_face_view_projection, light_near, spot_view_projection,
    AtlasAllocator, AtlasTile, CascadeSlice, LightView, LightViewKind, CUBE_FACES, MIN_TILE,
};

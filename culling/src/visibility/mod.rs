//! The Visibility stage: one cull of every mesh entity against the frame's view, and the
//! [`Visibility`] resource it fills.
//!
//! Each frame [`visibility_system`] (in [`runtime::Stage::Visibility`], after the view stage
//! published [`ResolvedView`](ecs::ResolvedView)) does, for the view:
//!
//! 1. Builds the view's cull context (frustum planes, camera position, pre-squared
//!    thresholds) from [`RenderSettings`](ecs::RenderSettings) and the [`Viewport`](ecs::Viewport) height.
//! 2. Lists the archetypes holding a [`Mesh`](ecs::Mesh) in query order and sizes the persistent
//!    per-object columns to the mesh count (no allocation once the capacity is reached).
//! 3. Runs one parallel pass over 64-object words (disjoint indices per job): skips the
//!    undrawable (`Visible(false)`, no mesh, no material, zero-size bounds, no transform),
//!    takes the world matrix from [`WorldTransform`](ecs::WorldTransform) or else the local
//!    [`Transform`](ecs::Transform), the posed box of a [`SkinnedPose`](ecs::SkinnedPose) or else the stored box, moves it to world space (Arvo),
//!    writes the object's columns for every drawable mesh, picks its level of detail, then
//!    runs the SIMD frustum kernel on the word's 64 boxes and the distance and screen-size
//!    culls on the survivors.
//! 4. (Occlusion, issue 6, hooks in here: see `system.rs`.)
//! 5. A serial gather over the words: `visible` in storage order, `scene` with the shadow
//!    casters first, and the [`Culled`](ecs::Culled) tag changes of this frame.
//!
//! **Object index.** Object `i` is the `i`-th [`Mesh`](ecs::Mesh) in this frame's query order
//! (archetypes in creation order, rows in storage order). It is stable while no entity with
//! a mesh changes archetype; inserting or removing a component (the `Culled` tag included)
//! moves an entity and may renumber objects the next frame. Index a frame's columns with
//! that frame's indices, and use [`ObjectColumns::entities`] to find an entity's object.

mod cull;
mod result;
mod system;
mod tags;

pub use result::{ObjectColumns, ObjectDraw, Visibility, VisibilityStats};
pub use system::{install, visibility_system, VISIBILITY_SYSTEM};
pub use tags::{visibility_tags_system, VISIBILITY_TAGS_SYSTEM};

#[cfg(test)]
mod tests;

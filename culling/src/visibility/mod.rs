//! The Visibility stage: one cull of every mesh entity against the frame's view, and the
//! [`Visibility`] resource it fills.
//!
//! Each frame [`visibility_system`] (in [`runtime::Stage::Visibility`], after the view stage
//! published [`ResolvedView`](ecs::ResolvedView)) does, for the view:
//!
//! 1. Builds the view's cull context (frustum planes, camera position, pre-squared
//!    thresholds) from [`RenderSettings`](ecs::RenderSettings) and the [`Viewport`](ecs::Viewport) height.
//! 2. Lists the archetypes holding a [`Mesh`](ecs::Mesh) in query order, gives every mesh
//!    entity its persistent slot (see below) and sizes the per-object columns to the slot
//!    count (no allocation once the capacity is reached).
//! 3. Runs one parallel pass over 64-object words (disjoint indices per job): skips the
//!    undrawable (`Visible(false)`, no mesh, no material, zero-size bounds, no transform),
//!    takes the world matrix from [`WorldTransform`](ecs::WorldTransform) or else the local
//!    [`Transform`](ecs::Transform), the posed box of a [`SkinnedPose`](ecs::SkinnedPose) or
//!    else the stored box; when both are bit for bit those of the slot's cached box it reuses
//!    that box, else moves the box to world space (Arvo) and writes the object's columns;
//!    picks its level of detail; then runs the SIMD frustum kernel on the word's boxes and
//!    the distance and screen-size culls on the survivors, except for static objects under
//!    an unchanged view, whose cached verdict stands (see `cache.rs`: the cache is keyed by
//!    value, so every way of moving an object is seen on the next frame).
//! 4. Occlusion of the survivors (see `crate::occlusion::stage`), or on the GPU backend the
//!    GPU's fed-back answer.
//! 5. A serial gather over the words: `visible` in slot order, `scene` with the shadow
//!    casters first, and the [`Culled`](ecs::Culled) tag changes of this frame. Under
//!    [`CpuAnswers::OnRequest`](ecs::CpuAnswers) or `None` this step is left out: the lists
//!    are emptied and refused by name, no tags are given, and `state_of` computes one
//!    entity's answer when asked (`on_request.rs`, `asked.rs`). So is step 4, and on a
//!    tracked frame the per-word part of step 3 unless a level of detail could change (the
//!    camera's position or the level rule moved): only the changed objects' columns are
//!    written, which is all the renderer needs (the GPU culls, and picks the levels of the
//!    error rule itself).
//!
//! **Object index.** An object's index is its entity's persistent *slot*: given when a mesh
//! entity is first seen, kept while it lives whatever components it gains or loses (the
//! `Culled` and `Occluded` tags included), freed when it is despawned or loses its
//! [`Mesh`](ecs::Mesh), and reused later (lowest free slot first). Free slots below the
//! highest one in use are undrawable holes owned by `Entity::DANGLING`. Anything that
//! outlives a frame (GPU object records, history bits, readback) is indexed by the slot;
//! [`ObjectColumns::entities`] names each slot's entity. The hot loop still walks the
//! archetypes in storage order and writes through the slot.
//!
//! **Where things are.** `system.rs` runs the frame over the components `reads.rs` names
//! (its `CullColumns`): `segments.rs` lists the mesh archetypes,
//! `slots.rs` gives every object its slot, `cull.rs` is the full pass (`cache.rs` the
//! per-slot box cache), `tracked/` the pass over what changed, `gather.rs` the index lists,
//! `tags.rs` the tag changes and the system applying them, `views.rs` the one pass culling
//! the frame's other views (`views_levels.rs` their lists and levels, `view_answer.rs`
//! [`Visibility::for_view`]), `explain.rs` why one entity is drawn
//! or not ([`Visibility::explain`]), `on_request.rs` the answer on request (`asked.rs` what it
//! needs kept). `answer.rs` is [`Visibility`], all a game reads (`objects.rs` its per-slot
//! [`ObjectColumns`], `changes.rs` which slots it changed); `state.rs` is the stage's working
//! memory, which nothing outside the stage sees; `holds/` what a word may skip while the
//! camera creeps. Each file imports only files below it: what several share stands in a file
//! of its own that imports none of theirs.

mod answer;
mod asked;
mod cache;
mod changes;
mod cull;
mod explain;
mod gather;
mod holds;
mod level;
mod objects;
mod on_request;
mod reads;
mod segments;
mod slots;
mod state;
mod system;
mod tags;
mod tracked;
mod view_answer;
mod views;
mod views_levels;

pub use answer::{ObjectState, Visibility, VisibilityStats};
pub use changes::SlotChanges;
pub use explain::{Explanation, FrustumPlane, Kept, LodChoice, Missing, Reason};
pub use objects::{ObjectColumns, ObjectDraw};
pub use on_request::ListsRefused;
pub use system::{install, visibility_system, VISIBILITY_SYSTEM};
pub use tags::{visibility_tags_system, VISIBILITY_TAGS_SYSTEM};
pub(crate) use tracked::GROUP_WORDS;
pub use view_answer::ViewVisibility;

#[cfg(test)]
mod cache_tests;
#[cfg(test)]
mod on_request_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tracked_tests;
#[cfg(test)]
mod views_tests;

//! The insertion points of the engine's frame: where a user's pass can run inside it
//! ([`RenderGraph::add_typed_pass_at`](render_graph::RenderGraph::add_typed_pass_at)), in
//! frame order.
//! Every frame ([`add_scene_passes`](crate::add_scene_passes),
//! [`add_gpu_culled_scene_passes`](crate::add_gpu_culled_scene_passes),
//! [`add_cluster_culled_scene_passes`](crate::add_cluster_culled_scene_passes)) has all of
//! them, in this order; passes placed at one point run in the order they were placed, and
//! what a pass writes is seen by every pass after it in the same frame. A point never moves
//! a pass: one that reads what only a later pass writes (`hiz_depth` at [`BEFORE_CULL`]) is
//! an error naming its writer, and the pass is dropped. The engine's resources are
//! read-only to the users' passes but for `color` (the pass author's guide is
//! `docs/passes.md`):
//!
//! | point | after | before | what a pass there sees and changes |
//! |---|---|---|---|
//! | [`AFTER_UPLOAD`] | object upload | anything culled or drawn | this frame's `object_transforms` and `object_records`: move objects (their boxes follow their transforms), change colours |
//! | [`BEFORE_CULL`] | [`AFTER_UPLOAD`]'s passes | the cull (GPU) or the draw list (CPU) | the same, after the passes that animate |
//! | [`BETWEEN_CULL_PHASES`] | Hi-Z build (GPU; the CPU frame: the draw list) | late cull | the early phase's `depth_prepass` and `hiz_depth` |
//! | [`AFTER_DEPTH_PREPASS`] | the last depth prepass | geometry | the whole frame's `depth_prepass` and its pyramid `hiz_depth_final` |
//! | [`AFTER_GEOMETRY`] | geometry | [`BEFORE_OUTPUT`] | `color` and `depth_prepass`: post-processes |
//! | [`BEFORE_OUTPUT`] | every pass above | readbacks, the target's passes, presenting | the final `color` |
//!
//! ```no_run
//! # use render_graph::{Registry, TypedPass};
//! # struct Animate;
//! # impl TypedPass for Animate {
//! #     type Handles = ();
//! #     fn name(&self) -> &str { "animate" }
//! #     fn register(&mut self, _: &mut Registry) {}
//! # }
//! # fn add(graph: &mut render_graph::RenderGraph) -> render_graph::Result<()> {
//! // A compute pass that moves objects: the cull and the draw see the new places this frame.
//! graph.add_typed_pass_at(renderer::points::BEFORE_CULL, Animate)?;
//! # Ok(())
//! # }
//! ```

/// After the object upload: `object_transforms` and `object_records` hold this frame's host
/// data.
pub const AFTER_UPLOAD: &str = "after upload";
/// Right before culling (the GPU's cull reset and early cull; on the CPU-list frame, the
/// draw list's upload).
pub const BEFORE_CULL: &str = "before cull";
/// Between the two culling phases: after the early depth prepass and the Hi-Z build, before
/// the late cull. On the CPU-list frame (one phase), after the draw list's upload.
pub const BETWEEN_CULL_PHASES: &str = "between cull phases";
/// After the frame's last depth prepass, before the geometry pass.
pub const AFTER_DEPTH_PREPASS: &str = "after depth prepass";
/// After the geometry pass: `color` is drawn.
pub const AFTER_GEOMETRY: &str = "after geometry";
/// The end of the engine's frame, before its readbacks and what a
/// [`FrameTarget`](crate::FrameTarget) adds (a present, a screenshot).
pub const BEFORE_OUTPUT: &str = "before output";

/// Every point, in frame order.
pub const ALL: [&str; 6] =
    [AFTER_UPLOAD, BEFORE_CULL, BETWEEN_CULL_PHASES, AFTER_DEPTH_PREPASS, AFTER_GEOMETRY, BEFORE_OUTPUT];

//! The engine's renderer, on the generic [`render_graph`]: the Render stage, the GPU scene it
//! keeps, the passes of the engine's frame and GPU culling.
//!
//! The frame, as the folders hold it:
//!
//! - `stage/`: the Render stage ([`install_render`]: a Render-stage system that writes the
//!   slots the Visibility stage changed into the GPU scene, `stage/sync.rs`, and executes the
//!   graph every frame) and its Input-stage half ([`READBACK_SYSTEM`], `stage/readback.rs`:
//!   the GPU's statistics and visibility bits of the newest finished frame, without waiting);
//!   [`FrameTarget`] (`stage/target.rs`) is where frames go (a window, a host copy).
//! - `scene/`: the GPU scene ([`GpuScene`]: one [`ObjectTransform`] and one [`ObjectRecord`]
//!   per object slot), the meshes ([`MeshLibrary`]) and the cluster tables.
//! - `passes/`: one file per pass, in frame order (see [`passes`]).
//! - `frame/`: the frames assembled from them: the host's draw list
//!   ([`add_scene_passes`]), two-phase GPU culling ([`add_gpu_culled_scene_passes`]) and
//!   meshlet culling ([`add_cluster_culled_scene_passes`]).
//! - `names.rs`: the resources' stable names (**contract**).
//!
//! A GPU-culled frame, two-phase so that nothing pops:
//!
//! 1. object upload (every transform and record that changed, scattered into its slot);
//! 2. [`CullResetPass::objects`]: `draw_count` and [`CULL_STATS`] to zero;
//! 3. [`GpuCullPass`] early: last frame's visible objects (history of [`VISIBILITY_BITS`])
//!    that pass this frame's frustum are appended to the draw list;
//! 4. depth prepass of that list; 5. [`HiZBuildPass`] from that depth;
//! 6. [`GpuCullPass`] late: every object against the frustum and the new pyramid; the bits
//!    become next frame's history, the newly visible objects are appended;
//! 7. a late depth prepass and the geometry pass draw the whole list
//!    (`vkCmdDrawIndexedIndirectCount`), then the readbacks.
//!
//! On the first frame the history is zero, so the early phase draws nothing, the pyramid is
//! empty and the late phase draws everything in view; after a camera cut the late phase
//! likewise draws whatever the early phase missed in the same frame.
//!
//! **Cluster culling** ([`add_cluster_culled_scene_passes`]) refines this per meshlet: the
//! object passes only write `visibility_bits` for the objects the [`ClusterTable`] covers
//! ([`GpuCullPass::drawing_from`]), and [`ClusterCullPass`] early (last frame's visible
//! meshlets: sphere-frustum and cone tests) and late (every meshlet of every surviving
//! object: sphere, cone, box against `hiz_depth`) append one command per meshlet, its own
//! index range with `firstInstance` = the object, which the same depth and geometry passes
//! draw. The CPU reference of every test is [`culling::cluster`]; the counters are
//! [`ClusterStats`](culling::cluster::ClusterStats).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod frame;
pub mod names;
pub mod passes;
pub mod scene;
pub mod stage;

pub use frame::*;
pub use names::*;
pub use passes::*;
pub use scene::*;
pub use stage::*;

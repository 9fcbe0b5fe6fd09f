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
//!   per object slot), the upload of the meshes and materials of a [`MeshLibrary`] (the
//!   CPU-side library lives in the crate `meshes`, re-exported here) and the cluster tables.
//! - `passes/`: one file per pass, in frame order (see [`passes`]).
//! - `frame/`: the frames assembled from them: the host's draw list
//!   ([`add_scene_passes`]), two-phase GPU culling ([`add_gpu_culled_scene_passes`]) and
//!   meshlet culling ([`add_cluster_culled_scene_passes`]).
//! - `names.rs`: the resources' stable names (**contract**).
//!
//! Every pass is a [`render_graph::TypedPass`] with read and write handles. The camera is the
//! render graph's parameter, not the scene's: the host sets the frame's [`FrameView`]
//! (`graph.set_param(view)`; the Render stage does it each frame from the View stage's
//! resolved view), and the culls, the draws and the `view` uniform read it; the shadow views
//! are a [`ShadowFrame`] parameter likewise.
//!
//! A GPU-culled frame, two-phase so that nothing pops:
//!
//! 1. object upload (every transform and record that changed, scattered into its slot);
//! 2. [`CullResetPass::objects`]: `draw_count` and [`CULL_STATS`] to zero;
//!    [`DrawBatchPass`]: the changed slots' batch ids and, batched, one template command per
//!    (mesh, level of detail, material) in each list;
//! 3. [`GpuCullPass`] early: last frame's visible objects (history of [`VISIBILITY_BITS`])
//!    that pass this frame's frustum are appended to the early list;
//! 4. depth prepass of that list; 5. [`HiZBuildPass`] from that depth;
//! 6. [`GpuCullPass`] late: every object against the frustum and the new pyramid; the bits
//!    become next frame's history, the newly visible objects are appended to the late list;
//! 7. a late depth prepass draws the late list, the geometry pass both
//!    (`vkCmdDrawIndexedIndirectCount`), then the readbacks.
//!
//! **The draw lists (contract).** `draw_commands` holds two lists of
//! `VkDrawIndexedIndirectCommand`s ([`DrawCommand`]): the early list from command 0 and the
//! late list from the middle of the buffer (command `size / 20 / 2`); `draw_count` holds
//! their command counts (two u32). The host's list (CPU culling) is the early list, the late
//! one empty. With batching on ([`ecs::RenderSettings::batch_draws`],
//! [`GpuScene::set_batch_draws`], the default) a list is *instanced*: one command per batch
//! of (mesh, level of detail, material) ([`BatchTable`]), `firstInstance` the start of its
//! run in `draw_instances` (u32 object slots) and `instanceCount` the objects drawn, so the
//! vertex shader reads the object at `draw_instances[gl_InstanceIndex]`; a GPU list keeps a
//! command for every batch id, those of no instance drawing nothing. Unbatched (and always
//! for meshlets, and for the shadow casters' lists) a command draws one object:
//! `instanceCount` 1, `firstInstance` its slot.
//!
//! On the first frame the history is zero, so the early phase draws nothing, the pyramid is
//! empty and the late phase draws everything in view; after a camera cut the late phase
//! likewise draws whatever the early phase missed in the same frame.
//!
//! **Cluster culling** ([`add_cluster_culled_scene_passes`]) refines this per meshlet: the
//! object passes only write `visibility_bits` for the objects the scene's [`ClusterTable`]
//! covers ([`GpuCullPass::drawing_after_clusters`]; the scene keeps the table and builds it
//! again for meshes added while frames run: [`GpuScene::refresh_clusters`], called by
//! [`GpuScene::follow_growth`]), and [`ClusterCullPass`] early (last frame's visible
//! meshlets: sphere-frustum and cone tests) and late (every meshlet of every surviving
//! object: sphere, cone, box against `hiz_depth`) append one command per meshlet, its own
//! index range with `firstInstance` = the object (never batched), which the same depth and
//! geometry passes draw. The CPU reference of every test is [`culling::cluster`]; the counters are
//! [`ClusterStats`](culling::cluster::ClusterStats).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod frame;
pub mod names;
pub mod passes;
pub mod scene;
pub mod stage;
pub mod truth;

// The CPU-side meshes the GPU scene uploads (crate `meshes`), re-exported so that a renderer's
// user needs no second dependency.
pub use meshes::{
    pack_normal, AssetSink, LibraryError, Material, MeshLibrary, MeshRange, MeshVertices, Meshlet, TextureLayers,
    TextureWrap, VertexSkin, DEFAULT_VIEW_TEXTURE_SIZE, MAX_TEXTURE_LAYERS, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS,
};

// The Render stage: installing it, what it reports, where frames go, screenshots and the
// debug view.
pub use stage::{
    debug_view_grey, derive_occluders, install_render, install_render_to, lock_capture, picture, picture_on_scale,
    streamed_occluder, write_png, AddPasses, BitsReadback, Capture, DebugView, DebugViewPass, DerivedOccluders,
    FrameInFlight, FrameTarget, GpuCullControl, HeadlessTarget, RenderExtract, RenderMeshes, RenderReport, RenderSetup,
    Screenshot, ScreenshotPass, ScreenshotRequest, Screenshots, ShadowReport, SharedCapture, TargetFrame,
    HEADLESS_PASS, READBACK_RING, READBACK_SYSTEM, RENDER_SYSTEM, RENDER_THREAD,
};

// The GPU scene: object slots, their records and transforms, the mesh and material uploads,
// the cluster tables and the shadow views.
pub use scene::{
    gpu_skin_weights, lock_scene, mesh_is_skinned, pack_rgba8, pack_vertex_skin, set_scene_memory_limit, world_box,
    ClusterBuffers, ClusterTable, DrawCommand, FrameView, GpuMaterial, GpuMeshlet, GpuScene, LodEntry, MaterialError,
    ObjectDesc, ObjectRecord, ObjectTransform, RemoveMeshError, ReplaceMeshError, ResidencyReport, SceneGrowthError,
    ShadowCulling, ShadowFrame, ShadowViewDraws, SharedScene, UploadReport, BUILT_CHAIN, BUILT_NONE, CLUSTER_MESHLETS,
    CLUSTER_OBJECTS, CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS, CLUSTER_REFRESH_FRAMES, DEVICE_HEAP_SHARE,
    DRAW_COMMAND_BYTES, IDENTITY, LOD_CHAINS_AT_FIRST, LOD_CHAIN_BYTES, LOD_ENTRIES_BYTES, LOD_INSTANCE_ROOM,
    LOD_RULE_DISTANCE, LOD_RULE_ERROR, LOD_RULE_RECORD, MAX_GPU_LOD_LEVELS, MAX_SHADOW_VIEWS, OBJECT_RECORD_BYTES,
    OBJECT_TRANSFORM_BYTES, PAIR_FIRST, PAIR_WHOLE, PALETTE_JOINT_BYTES, REMOVED_MATERIAL_DRAWS, SHADOW_LIGHTS_BYTES,
};
pub use scene::{BatchKey, BatchTable, NO_BATCH};
pub use scene::{
    ImageRun, ImageView, ImageViewGpu, ImageViews, OwnRun, ViewList, WindowView, WindowViews, MAX_WINDOW_VIEWS,
};

// The frames assembled from the passes, their insertion points and their readbacks.
pub use frame::{
    add_cluster_culled_scene_passes, add_gpu_culled_scene_passes, add_post_process, add_scene_passes, cluster_pass_ms,
    points, read_visibility_words, shadow_culling_on_device, shadow_pyramid_side, ClusterCulledScene, ClusterReadbacks,
    GpuCulledScene, ScenePassOptions, CLUSTER_BITS_READBACK, CLUSTER_STATS_READBACK, CLUSTER_VERDICTS_READBACK,
    CULL_STATS_READBACK, EARLY_DEPTH_READBACK, VISIBILITY_READBACK,
};

// The passes. Uploads and the host's draw list:
pub use passes::{
    color_readback_pass, DrawListPass, MeshUploadPass, ObjectUploadPass, PassView, PerView, ViewPass, ViewUploadPass,
    SCATTER_GROUP, VIEW_BLOCKS, VIEW_BLOCK_STRIDE,
};

// The two-phase cull skeleton and the form a view takes on its way to the cull shaders:
pub use passes::{
    rect_mips, CullConstants, CullInputs, CullKind, CullPhase, CullResetPass, CullView, DistanceLod, TwoPhaseCull,
    CULL_CONE, CULL_FRUSTUM, CULL_LOD, CULL_LOD_DISTANCE, CULL_LOD_EVERY_OBJECT, CULL_OCCLUSION, CULL_TWO_PHASE,
    DEPTH_MARGIN, FOOTPRINT_MARGIN,
};

// Object culling (two-phase, against the frustum and the Hi-Z pyramid):
pub use passes::{
    visibility_bits_bytes, GpuCullPass, GpuCullSettings, GpuCullStats, ObjectCull, ObjectCullHandles,
    SharedCullSettings, CULL_GROUP, CULL_STATS, CULL_STAT_WORDS, LOD_STAT_LEVELS, VISIBILITY_BITS,
};

// Meshlet culling:
pub use passes::{
    cluster_bits_bytes, cluster_dispatch_shape, ClusterCull, ClusterCullHandles, ClusterCullPass, ClusterRowWidth,
    ClusterSurvivorHandles, ClusterSurvivorPass, ClusterSurvivors, SharedClusterSettings, CLUSTER_BITS,
    CLUSTER_DISPATCH, CLUSTER_GROUP, CLUSTER_MAX_GROUPS, CLUSTER_STATS, CLUSTER_SURVIVORS, CLUSTER_VERDICTS,
    SURVIVOR_LEVEL_SHIFT,
};

// Shadow casters' culling and the shadow atlas:
pub use passes::{
    shadow_bits_words, shadow_draws_bytes, ShadowAtlasHandles, ShadowAtlasPass, ShadowCull, ShadowCullHandles,
    ShadowCullPass, SHADOW_CASTER_BITS, SHADOW_DRAWS, SHADOW_DRAWS_LATE, SHADOW_DRAWS_MAX_BYTES, SHADOW_DRAW_COUNTS,
    SHADOW_DRAW_COUNT_BYTES, SHADOW_HIZ, SHADOW_LATE_COUNTS,
};

// Image-target views:
pub use passes::{
    image_target_format, image_view_depth_name, image_view_hiz_name, image_view_list_names, ImageCullHandles,
    ImageCullNames, ImageCullPass, ImageCullSetupPass, ImageObjectCull, ImageViewInputs, ImageViewListPass,
    ImageViewPass, ViewTexturePass,
};

// Depth, the Hi-Z pyramid and colour:
pub use passes::{
    reduce_depth_pyramid, BlendedInputs, BlendedLevelsHandles, BlendedLevelsPass, BlendedPass, DepthPrepass,
    DrawBatchPass, DrawMode, GeometryInputs, GeometryPass, HiZBuildPass, HiZHandles, LodUploadPass, SceneInputs,
    BLENDED_DRAWS, BLENDED_LEVELS_GROUP, HIZ_DEPTH, HIZ_DEPTH_FINAL, HIZ_FORMAT, HIZ_GROUP,
};

// The resources' stable names and formats (a contract with users' passes and shaders).
pub use names::{
    COLOR, COLOR_FORMAT, COLOR_READBACK, DEPTH_FORMAT, DEPTH_PREPASS, DRAW_COMMANDS, DRAW_COUNT, DRAW_INSTANCES,
    LOD_ENTRIES, MATERIALS, MATERIAL_TEXTURES, MATERIAL_TEXTURES_OUTGROWN, MESH_INDICES, MESH_SKIN, MESH_UVS,
    MESH_VERTICES, OBJECT_BATCHES, OBJECT_LOD_LEVELS, OBJECT_RECORDS, OBJECT_TRANSFORMS, SHADOW_ATLAS, SHADOW_LIGHTS,
    SKIN_PALETTE, VIEW,
};

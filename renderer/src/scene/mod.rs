//! The GPU scene the passes draw and cull: one [`ObjectTransform`] and one [`ObjectRecord`]
//! per object slot ([`GpuScene`], kept on the host and uploaded as it changes), the meshes
//! of a [`meshes::MeshLibrary`] (uploaded at install, `mesh.rs`, and streamed as meshes are
//! added) and its materials and textures (`materials.rs`, likewise),
//! and the cluster tables of meshlet culling ([`ClusterTable`]).

mod batches;
mod cluster_table;
mod gpu_scene;
mod image_views;
mod materials;
mod mesh;
mod records;
mod shadows;
mod view;
mod window_views;

pub(crate) use batches::Batching;
pub use batches::{BatchKey, BatchTable, NO_BATCH};
pub use cluster_table::{
    ClusterBuffers, ClusterTable, GpuMeshlet, BUILT_CHAIN, BUILT_NONE, CLUSTER_MESHLETS, CLUSTER_OBJECTS,
    CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS, PAIR_FIRST, PAIR_WHOLE,
};
pub use gpu_scene::{
    gpu_skin_weights, lock_scene, mesh_is_skinned, pack_vertex_skin, set_scene_memory_limit, GpuScene, LodEntry,
    MaterialError, ObjectDesc, RemoveMeshError, ReplaceMeshError, ResidencyReport, SceneGrowthError, SharedScene,
    UploadReport, CLUSTER_REFRESH_FRAMES, DEVICE_HEAP_SHARE, LOD_CHAINS_AT_FIRST, LOD_CHAIN_BYTES, LOD_ENTRIES_BYTES,
    LOD_INSTANCE_ROOM, LOD_RULE_DISTANCE, LOD_RULE_ERROR, LOD_RULE_RECORD, MAX_GPU_LOD_LEVELS, PALETTE_JOINT_BYTES,
    REMOVED_MATERIAL_DRAWS,
};
pub(crate) use gpu_scene::{ClusterLayout, MeshCopy, RecordedCopy};
pub use image_views::{ImageRun, ImageView, ImageViewGpu, ImageViews, OwnRun};
pub use materials::GpuMaterial;
pub(crate) use materials::{MaterialBuffers, TEXTURE_LAYOUT};
pub(crate) use mesh::MeshBuffers;
pub(crate) use records::as_bytes;
pub use records::{
    pack_rgba8, world_box, DrawCommand, ObjectRecord, ObjectTransform, DRAW_COMMAND_BYTES, IDENTITY,
    OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES,
};
pub use shadows::{ShadowCulling, ShadowFrame, ShadowViewDraws, MAX_SHADOW_VIEWS, SHADOW_LIGHTS_BYTES};
pub use view::FrameView;
pub use window_views::{ViewList, WindowView, WindowViews, MAX_WINDOW_VIEWS};

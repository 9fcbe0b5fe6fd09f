//! The GPU scene the passes draw and cull: one [`ObjectTransform`] and one [`ObjectRecord`]
//! per object slot ([`GpuScene`], kept on the host and uploaded as it changes), the meshes
//! ([`MeshLibrary`], uploaded once) and their meshlets, and the cluster tables of meshlet
//! culling ([`ClusterTable`]).

mod cluster_table;
mod gpu_scene;
mod materials;
mod mesh;
mod meshlet;
mod records;
mod shadows;
mod view;

pub use cluster_table::{
    ClusterBuffers, ClusterTable, GpuMeshlet, CLUSTER_MESHLETS, CLUSTER_OBJECTS, CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS,
    PAIR_FIRST, PAIR_WHOLE,
};
pub use gpu_scene::{lock_scene, GpuScene, ObjectDesc, SharedScene, UploadReport};
pub(crate) use materials::{check_texture, MaterialBuffers, TEXTURE_LAYOUT};
pub use materials::{GpuMaterial, Material, TextureLayers, TextureWrap};
pub(crate) use mesh::MeshBuffers;
pub use mesh::{pack_normal, MeshLibrary, MeshRange, MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
pub use meshlet::Meshlet;
pub(crate) use records::as_bytes;
pub use records::{
    pack_rgba8, world_box, CameraConstants, DrawCommand, ObjectRecord, ObjectTransform, DRAW_COMMAND_BYTES, IDENTITY,
    OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES,
};
pub use shadows::{ShadowCulling, ShadowFrame, ShadowViewDraws, MAX_SHADOW_VIEWS, SHADOW_LIGHTS_BYTES};
pub use view::FrameView;

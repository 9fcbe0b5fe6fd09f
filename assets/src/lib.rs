//! Mesh assets: indexed triangle meshes processed once at load time by meshopt (vertex cache
//! and fetch order, an LOD chain with each level's error and hand-over distance, meshlets
//! with bounds and normal cones), the glTF 2.0 importer that turns a scene into entities, and
//! assets at run time ([`server`]): generation-checked handles and glTF loads on loader
//! threads.
//!
//! ```
//! use assets::{process_mesh, MeshData, ProcessOptions};
//! let quad = MeshData::new(
//!     vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
//!     vec![0, 1, 2, 0, 2, 3],
//! );
//! let mesh = process_mesh(&quad, &ProcessOptions::default())?;
//! assert_eq!(mesh.levels[0].triangle_count(), 2);
//! assert_eq!(mesh.levels[0].meshlets.len(), 1);
//! # Ok::<(), assets::MeshError>(())
//! ```
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod gltf_export;
pub mod gltf_import;
mod library;
mod mesh;
mod process;
pub mod server;

pub use gltf_import::{
    load_gltf, load_gltf_bytes, mip_chain, spawn_model, spawn_model_animated, AlphaMode, BaseColor, BaseColorTexture,
    GltfMaterial, GltfScene, ImportError, LoadTimings, Model, ModelAnimation, SceneNode, SpawnedModel, SpawnedScene,
    TextureImage, TextureSampler, Wrap,
};
pub use library::{add_to_library, LibraryMesh};
pub use mesh::{MeshData, MeshError};
pub use meshes::Meshlet;
pub use process::{
    hand_over_distance, meshlets_in_order, process_mesh, process_meshes, process_skinned_mesh, process_skinned_meshes,
    ProcessOptions, ProcessedLevel, ProcessedMesh, SkinnedVertices, MAX_MESHLET_TRIANGLES, MAX_MESHLET_VERTICES,
};
pub use server::{
    AssetChange, AssetServer, Assets, Handle, LoadError, LoadState, SceneHandle, ServerOptions, StaleHandle,
    StaleReason,
};

//! The CPU-side mesh library: what an importer or a game builds and the renderer uploads.
//!
//! A [`MeshLibrary`] holds every mesh of a scene: vertices appended once per mesh (position
//! and packed normal, [`pack_normal`], plus texture coordinates), one mesh id per level of
//! detail with its index range and local bounds ([`MeshRange`]) and its [`Meshlet`]s, and
//! the [`Material`]s and base-colour textures ([`TextureLayers`]) objects name by index.
//! Skinned meshes add their vertices' joints and weights ([`VertexSkin`]), a stream parallel to
//! the vertices ([`MeshLibrary::vertex_joints`], [`MeshLibrary::vertex_weights`]).
//! Every addition is checked, and nothing is added on an error ([`LibraryError`]).
//!
//! Assets added while the game runs reach the GPU in bounded slices: a [`TransferQueue`]
//! hands out each frame's copies under a byte budget ([`DEFAULT_TRANSFER_BUDGET`]), and
//! [`resident_level`] picks the level an object draws until its own has arrived.
//!
//! This crate holds data only: `assets` (meshopt processing, glTF import) fills a library
//! without depending on the GPU, and `renderer` uploads it into the GPU scene (its buffers,
//! the shaders' material table and the texture array live there).
//!
//! ```
//! use meshes::{MeshLibrary, MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
//! let mut library = MeshLibrary::with_unit_cube();
//! let normals = [[0.0, 0.0, 1.0]; 8];
//! let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
//! let lit = library.add_mesh_levels(vertices, &[(&UNIT_CUBE_INDICES, &[])])?;
//! assert_eq!(lit, 1..2);
//! assert_eq!(library.triangle_count(1), 12);
//! assert!(library.add_mesh(&UNIT_CUBE_POSITIONS, &[0, 1]).is_err(), "not a whole triangle");
//! # Ok::<(), meshes::LibraryError>(())
//! ```
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod error;
mod library;
mod material;
mod meshlet;
mod sink;
mod skin;
mod transfer;
mod vertex;

// The library and what goes into it.
pub use library::{MeshLibrary, MeshRange, DEFAULT_VIEW_TEXTURE_SIZE};
pub use meshlet::Meshlet;
pub use skin::VertexSkin;
pub use vertex::{pack_normal, MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
// Materials and their textures.
pub use material::{Material, TextureLayers, TextureWrap, MAX_TEXTURE_LAYERS};
// Where an importer puts a model's parts.
pub use sink::AssetSink;
// Bounded uploads of assets added while the game runs.
pub use transfer::{
    resident_level, FrameTransfer, TransferCopy, TransferQueue, TransferRegion, DEFAULT_TRANSFER_BUDGET,
    TRANSFER_GRANULE,
};
// Errors.
pub use error::{LibraryError, Result};

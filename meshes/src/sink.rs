//! [`AssetSink`]: where an importer puts a model's meshes, materials and textures, so that
//! one importer serves both a [`MeshLibrary`] filled before the first frame and a renderer
//! taking assets while frames run (its `RenderMeshes`, whose ids are valid at once and whose
//! bytes stream to the GPU under the transfer budget).

use std::ops::Range;

use crate::{Material, MeshLibrary, MeshVertices, Meshlet, Result, VertexSkin};

/// Takes a model's parts and numbers them: what an importer adds a loaded file to.
pub trait AssetSink {
    /// Adds a lit mesh with its levels of detail (finest first) and returns the levels' ids
    /// ([`MeshLibrary::add_mesh_levels`]).
    fn add_mesh_levels(&mut self, vertices: MeshVertices<'_>, levels: &[(&[u32], &[Meshlet])]) -> Result<Range<u32>>;

    /// Adds a skinned mesh with its levels of detail and its vertices' joints and weights
    /// ([`MeshLibrary::add_skinned_mesh_levels`]: its meshlets are dropped). A sink that
    /// does not override it refuses skinned meshes by name rather than drawing them rigid.
    fn add_skinned_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        skin: VertexSkin<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> Result<Range<u32>> {
        let _ = (vertices, skin, levels);
        Err(crate::LibraryError::InvalidMesh("this asset sink takes no skinned meshes"))
    }

    /// The side every texture added must have; 0 before the first (any power of two).
    fn texture_size(&self) -> u32;

    /// Adds a square RGBA8 sRGB texture of side `size` with its full mip chain and returns its
    /// id ([`MeshLibrary::add_texture`]).
    fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32>;

    /// Adds a material and returns its id ([`MeshLibrary::add_material`]).
    fn add_material(&mut self, material: Material) -> Result<u32>;
}

impl AssetSink for MeshLibrary {
    fn add_mesh_levels(&mut self, vertices: MeshVertices<'_>, levels: &[(&[u32], &[Meshlet])]) -> Result<Range<u32>> {
        MeshLibrary::add_mesh_levels(self, vertices, levels)
    }

    fn add_skinned_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        skin: VertexSkin<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> Result<Range<u32>> {
        MeshLibrary::add_skinned_mesh_levels(self, vertices, skin, levels)
    }

    fn texture_size(&self) -> u32 {
        self.textures().size()
    }

    fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32> {
        MeshLibrary::add_texture(self, size, mips)
    }

    fn add_material(&mut self, material: Material) -> Result<u32> {
        MeshLibrary::add_material(self, material)
    }
}

//! The library of every mesh a scene draws: vertices and 32-bit indices appended into shared
//! arrays (which the renderer uploads once as `mesh_vertices` and `mesh_indices`), one mesh
//! id per level of detail, each level with its [`Meshlet`]s, and the materials and textures
//! objects name.
//!
//! A mesh may have several levels of detail sharing its vertices: each level is a mesh id of
//! its own (its own index range), so an `ecs::Lod` level list names them. The levels of one
//! `add_mesh_levels` are one LOD chain ([`MeshLibrary::lod_chain`]); an importer that made
//! them by simplification records each level's error ([`MeshLibrary::set_level_errors`]),
//! which the GPU culls choose levels from.

use std::ops::Range;

use crate::{pack_normal, LibraryError, Material, MeshVertices, Meshlet, Result, TextureLayers};
use crate::{UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};

/// The side of a view texture's layer ([`MeshLibrary::add_view_texture`]) added before any
/// other texture.
pub const DEFAULT_VIEW_TEXTURE_SIZE: u32 = 256;

/// Where one mesh lies in the library's shared arrays, and its local bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshRange {
    /// First index in `mesh_indices`.
    pub first_index: u32,
    /// Number of indices (three per triangle).
    pub index_count: u32,
    /// First vertex in `mesh_vertices` (added to every index).
    pub vertex_offset: i32,
    /// Minimum corner of the mesh's local bounding box.
    pub bounds_min: [f32; 3],
    /// Maximum corner of the mesh's local bounding box.
    pub bounds_max: [f32; 3],
}

/// Host-side mesh data: every mesh's vertices and indices, appended into shared arrays.
#[derive(Clone, Debug, Default)]
pub struct MeshLibrary {
    positions: Vec<[f32; 4]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u32>,
    ranges: Vec<MeshRange>,
    /// Per mesh id: its range in `meshlets`.
    meshlet_ranges: Vec<Range<u32>>,
    meshlets: Vec<Meshlet>,
    /// Per mesh id: the ids of its LOD chain (its own id alone for a mesh of one level).
    chains: Vec<Range<u32>>,
    /// Per mesh id: its level's simplification error, where the importer recorded one.
    level_errors: Vec<Option<f32>>,
    /// The materials objects name by index (see `material.rs`).
    materials: Vec<Material>,
    /// Their base-colour textures.
    textures: TextureLayers,
    /// The texture layers that show a camera's image target, with the image's name.
    view_textures: Vec<(u32, std::sync::Arc<str>)>,
    /// Skinning influences, parallel to the vertices once a skinned mesh is added (skin.rs).
    pub(crate) skin: crate::skin::SkinStream,
}

impl MeshLibrary {
    /// An empty library.
    pub fn new() -> MeshLibrary {
        MeshLibrary::default()
    }

    /// A library holding only the unit cube, as mesh 0.
    pub fn with_unit_cube() -> MeshLibrary {
        let mut library = MeshLibrary::new();
        library.add_unit_cube();
        library
    }

    /// Adds a base-colour texture layer and returns its index: a square power-of-two RGBA8
    /// sRGB image of side `size` with its full mip chain (mip `k` has side `size >> k`, down
    /// to 1x1). Every layer has the first one's size (an importer resizes to one). Returns an
    /// error naming what is wrong otherwise.
    pub fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32> {
        self.textures.add(size, mips)
    }

    /// Adds a base-colour texture layer that shows the image a camera renders into
    /// (`ecs::CameraTarget::Image` named `image`) and returns its index, for a material's
    /// `texture` as any layer (a security monitor, a mirror). Every frame whose views
    /// include that camera copies its image into the layer (each mip scaled from the
    /// whole image) before the frame's geometry samples it; until then, or once no camera
    /// renders into `image`, the layer shows what it last held (first a mid grey). The layer
    /// has the library's texture size (256 texels before any texture is added). Returns an
    /// error naming what is wrong: an empty name, no layer left.
    pub fn add_view_texture(&mut self, image: &str) -> Result<u32> {
        if image.is_empty() {
            return Err(LibraryError::InvalidTexture("a view texture names the image a camera renders into"));
        }
        let size = if self.textures.is_empty() { DEFAULT_VIEW_TEXTURE_SIZE } else { self.textures.size() };
        let mips = (0..32 - size.leading_zeros())
            .map(|level| {
                let side = (size >> level).max(1) as usize;
                vec![128; side * side * 4]
            })
            .collect();
        let layer = self.textures.add(size, mips)?;
        self.view_textures.push((layer, std::sync::Arc::from(image)));
        Ok(layer)
    }

    /// The texture layers that show a camera's image target
    /// ([`MeshLibrary::add_view_texture`]), each with the image's name.
    pub fn view_textures(&self) -> &[(u32, std::sync::Arc<str>)] {
        &self.view_textures
    }

    /// Replaces texture layer `index`'s texels, checked as [`MeshLibrary::add_texture`]
    /// checks them; nothing changes on an error.
    pub fn replace_texture(&mut self, index: u32, size: u32, mips: Vec<Vec<u8>>) -> Result<()> {
        self.textures.replace(index, size, mips)
    }

    /// Adds a material and returns its index (an object's `MaterialHandle`). Its texture must
    /// have been added.
    pub fn add_material(&mut self, material: Material) -> Result<u32> {
        self.check_material(&material)?;
        self.materials.push(material);
        Ok(self.materials.len() as u32 - 1)
    }

    /// Replaces material `index` (added before) by `material`, checked as
    /// [`MeshLibrary::add_material`] checks it; nothing changes on an error.
    pub fn replace_material(&mut self, index: u32, material: Material) -> Result<()> {
        self.check_material(&material)?;
        let slot = self
            .materials
            .get_mut(index as usize)
            .ok_or(LibraryError::InvalidMaterial("no material has this index"))?;
        *slot = material;
        Ok(())
    }

    /// Whether `material` can join the table: its texture was added, its cutoff is finite.
    fn check_material(&self, material: &Material) -> Result<()> {
        if material.texture.is_some_and(|texture| texture as usize >= self.textures.len()) {
            return Err(LibraryError::InvalidMaterial("the material names a texture the library does not have"));
        }
        if material.alpha_cutoff.is_some_and(|cutoff| !cutoff.is_finite()) {
            return Err(LibraryError::InvalidMaterial("the alpha cutoff is not finite"));
        }
        Ok(())
    }

    /// The materials, by index.
    pub fn materials(&self) -> &[Material] {
        &self.materials
    }

    /// The base-colour textures.
    pub fn textures(&self) -> &TextureLayers {
        &self.textures
    }

    /// Whether material `material` lets what lies behind show (an alpha mask or blending):
    /// such objects are never occluders. An index past the table is opaque.
    pub fn material_has_holes(&self, material: u32) -> bool {
        self.materials.get(material as usize).is_some_and(Material::has_holes)
    }

    /// Whether material `material` is blended (drawn after the opaque surfaces, sorted). An
    /// index past the table is opaque.
    pub fn material_blends(&self, material: u32) -> bool {
        self.materials.get(material as usize).is_some_and(|material| material.blend)
    }

    /// Whether material `material` draws both faces. An index past the table is one-sided.
    pub fn material_is_double_sided(&self, material: u32) -> bool {
        self.materials.get(material as usize).is_some_and(|material| material.double_sided)
    }

    /// Whether any material draws both faces of opaque or masked surfaces (the scene passes
    /// then draw a second time without back-face culling).
    pub fn has_double_sided_surfaces(&self) -> bool {
        self.materials.iter().any(|material| material.double_sided && !material.blend)
    }

    /// Whether any material is blended (the renderer's frames then add a pass for them).
    pub fn has_blended_materials(&self) -> bool {
        self.materials.iter().any(|material| material.blend)
    }

    /// Adds a mesh without normals (drawn in its flat colour) and returns its id. Returns an
    /// error when it has no triangle, an index outside `positions`, or a non-finite position.
    pub fn add_mesh(&mut self, positions: &[[f32; 3]], indices: &[u32]) -> Result<u32> {
        check_indices(positions.len(), indices)?;
        check_positions(positions)?;
        let vertex_offset = self.positions.len() as i32;
        self.positions.extend(positions.iter().map(|&[x, y, z]| [x, y, z, f32::from_bits(0)]));
        self.uvs.resize(self.positions.len(), [0.0; 2]);
        self.skin.pad(self.positions.len());
        Ok(self.push_range(vertex_offset, positions, indices, &[]))
    }

    /// Adds a lit mesh with its levels of detail: the vertices once, then one mesh id per
    /// level (finest first), each with its triangle list and meshlets (whose `first_index` is
    /// relative to the level). Returns the ids, consecutive. Nothing is added on an error: no
    /// level, a level without whole triangles or with an index past the vertices, arrays of
    /// different lengths, a non-finite position or normal, or a meshlet outside its level.
    pub fn add_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> Result<Range<u32>> {
        let invalid = |reason| Err(LibraryError::InvalidMesh(reason));
        let count = vertices.positions.len();
        if levels.is_empty() {
            return invalid("a mesh needs at least one level");
        }
        if vertices.normals.len() != count || !(vertices.uvs.is_empty() || vertices.uvs.len() == count) {
            return invalid("normals and texture coordinates need one entry per position");
        }
        check_positions(vertices.positions)?;
        if vertices.normals.iter().flatten().any(|value| !value.is_finite()) {
            return invalid("a vertex normal is not finite");
        }
        for (indices, meshlets) in levels {
            check_indices(count, indices)?;
            if meshlets.iter().any(|meshlet| {
                u64::from(meshlet.first_index) + u64::from(meshlet.index_count) > indices.len() as u64
                    || meshlet.index_count % 3 != 0
            }) {
                return invalid("a meshlet lies outside its level's indices");
            }
        }
        let vertex_offset = self.positions.len() as i32;
        self.positions.extend(
            vertices
                .positions
                .iter()
                .zip(vertices.normals)
                .map(|(&[x, y, z], &normal)| [x, y, z, f32::from_bits(pack_normal(normal))]),
        );
        if vertices.uvs.is_empty() {
            self.uvs.resize(self.positions.len(), [0.0; 2]);
        } else {
            self.uvs.extend_from_slice(vertices.uvs);
        }
        self.skin.pad(self.positions.len());
        let first = self.ranges.len() as u32;
        for (indices, meshlets) in levels {
            self.push_range(vertex_offset, vertices.positions, indices, meshlets);
        }
        let chain = first..self.ranges.len() as u32;
        for mesh in chain.clone() {
            self.chains[mesh as usize] = chain.clone();
        }
        Ok(chain)
    }

    /// Records the simplification error of each level of the chain `levels` (as
    /// [`MeshLibrary::add_mesh_levels`] returned it), finest first: mesh units, as meshopt
    /// reports it, 0 for the finest. Returns an error, recording nothing, when `levels` is not
    /// one whole chain of the library, the counts differ, or an error is negative, not finite
    /// or smaller than the one before it.
    pub fn set_level_errors(&mut self, levels: Range<u32>, errors: &[f32]) -> Result<()> {
        let invalid = |reason| Err(LibraryError::InvalidMesh(reason));
        if self.chains.get(levels.start as usize) != Some(&levels) {
            return invalid("level errors need one whole LOD chain of the library");
        }
        if errors.len() != levels.len() {
            return invalid("level errors need one error per level");
        }
        if errors.iter().any(|error| !error.is_finite() || *error < 0.0) {
            return invalid("a level error is negative or not finite");
        }
        if errors.windows(2).any(|pair| pair[1] < pair[0]) {
            return invalid("level errors must not shrink from a finer level to a coarser one");
        }
        for (mesh, &error) in levels.zip(errors) {
            self.level_errors[mesh as usize] = Some(error);
        }
        Ok(())
    }

    /// The simplification error of mesh `mesh` as a level of its chain, where one was recorded
    /// ([`MeshLibrary::set_level_errors`]); `None` for hand-made levels and unknown ids.
    pub fn level_error(&self, mesh: u32) -> Option<f32> {
        self.level_errors.get(mesh as usize).copied().flatten()
    }

    /// The mesh ids of the LOD chain mesh `mesh` belongs to, finest first (its own id alone
    /// for a mesh of one level; empty for an unknown id).
    pub fn lod_chain(&self, mesh: u32) -> Range<u32> {
        self.chains.get(mesh as usize).cloned().unwrap_or(0..0)
    }

    /// Appends the range of one mesh id over vertices already appended at `vertex_offset`.
    fn push_range(&mut self, vertex_offset: i32, positions: &[[f32; 3]], indices: &[u32], meshlets: &[Meshlet]) -> u32 {
        // Bounds of the vertices this level uses: a coarse level may leave some out.
        let mut bounds_min = [f32::INFINITY; 3];
        let mut bounds_max = [f32::NEG_INFINITY; 3];
        for &index in indices {
            let position = positions[index as usize];
            for axis in 0..3 {
                bounds_min[axis] = bounds_min[axis].min(position[axis]);
                bounds_max[axis] = bounds_max[axis].max(position[axis]);
            }
        }
        self.ranges.push(MeshRange {
            first_index: self.indices.len() as u32,
            index_count: indices.len() as u32,
            vertex_offset,
            bounds_min,
            bounds_max,
        });
        self.indices.extend_from_slice(indices);
        let first_meshlet = self.meshlets.len() as u32;
        self.meshlets.extend_from_slice(meshlets);
        self.meshlet_ranges.push(first_meshlet..self.meshlets.len() as u32);
        let mesh = self.ranges.len() as u32 - 1;
        self.chains.push(mesh..mesh + 1);
        self.level_errors.push(None);
        mesh
    }

    /// The meshlets of mesh `mesh` (empty for an unknown id or a mesh without meshlets); a
    /// meshlet's `first_index` is relative to the mesh's [`MeshRange::first_index`].
    pub fn meshlets(&self, mesh: u32) -> &[Meshlet] {
        match self.meshlet_ranges.get(mesh as usize) {
            Some(range) => &self.meshlets[range.start as usize..range.end as usize],
            None => &[],
        }
    }

    /// Texture coordinates of every vertex of the library (zero where a mesh has none),
    /// indexed like the vertices (`vertex_offset + index`).
    pub fn uvs(&self) -> &[[f32; 2]] {
        &self.uvs
    }

    /// Every vertex of the library as uploaded (`xyz` the position, `w` the packed normal's
    /// bits), indexed `vertex_offset + index`.
    pub fn positions(&self) -> &[[f32; 4]] {
        &self.positions
    }

    /// Every index of the library as uploaded (`mesh_indices`); a mesh's indices start at its
    /// [`MeshRange::first_index`].
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Number of triangles of mesh `mesh` (0 for an unknown id).
    pub fn triangle_count(&self, mesh: u32) -> u32 {
        self.range(mesh).map_or(0, |range| range.index_count / 3)
    }

    /// Adds the unit cube and returns its id.
    pub fn add_unit_cube(&mut self) -> u32 {
        self.add_mesh(&UNIT_CUBE_POSITIONS, &UNIT_CUBE_INDICES).expect("the unit cube is a valid mesh")
    }

    /// Where mesh `mesh` lies, or `None` for an unknown id.
    pub fn range(&self, mesh: u32) -> Option<&MeshRange> {
        self.ranges.get(mesh as usize)
    }

    /// Number of meshes.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether the library holds no mesh.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

fn check_indices(vertex_count: usize, indices: &[u32]) -> Result<()> {
    let invalid = |reason| Err(LibraryError::InvalidMesh(reason));
    if indices.is_empty() || !indices.len().is_multiple_of(3) {
        return invalid("a mesh needs a whole, non-zero number of triangles");
    }
    if indices.iter().any(|&index| index as usize >= vertex_count) {
        return invalid("an index points past the mesh's vertices");
    }
    Ok(())
}

fn check_positions(positions: &[[f32; 3]]) -> Result<()> {
    if positions.iter().flatten().any(|value| !value.is_finite()) {
        return Err(LibraryError::InvalidMesh("a vertex position is not finite"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_texture_is_a_grey_layer_of_the_library_size_naming_its_image() {
        let mut library = MeshLibrary::new();
        let first = library.add_view_texture("monitor").expect("a layer");
        assert_eq!(library.textures().size(), DEFAULT_VIEW_TEXTURE_SIZE);
        let mips = library.textures().layer(first).expect("the layer");
        assert_eq!(mips.len(), 9, "256 down to 1");
        assert!(mips.iter().all(|mip| mip.iter().all(|&texel| texel == 128)));
        let second = library.add_view_texture("mirror").expect("a layer");
        assert_eq!(library.view_textures(), [(first, "monitor".into()), (second, "mirror".into())]);
        assert!(library.add_view_texture("").is_err(), "an empty name is refused");
        assert_eq!(library.textures().len(), 2);
    }

    #[test]
    fn meshes_append_with_offsets_and_bounds() {
        let mut library = MeshLibrary::with_unit_cube();
        let triangle = library.add_mesh(&[[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 3.0, -1.0]], &[0, 1, 2]).unwrap();
        assert_eq!(triangle, 1);
        let range = library.range(triangle).unwrap();
        assert_eq!((range.first_index, range.index_count, range.vertex_offset), (36, 3, 8));
        assert_eq!(range.bounds_min, [0.0, 0.0, -1.0]);
        assert_eq!(range.bounds_max, [2.0, 3.0, 0.0]);
        assert_eq!(library.range(0).unwrap().bounds_max, [0.5; 3]);
    }

    #[test]
    fn bad_meshes_are_errors() {
        let mut library = MeshLibrary::new();
        assert!(library.add_mesh(&[[0.0; 3]], &[]).is_err(), "no triangle");
        assert!(library.add_mesh(&[[0.0; 3]], &[0, 0, 1]).is_err(), "index past the vertices");
        assert!(library.add_mesh(&[[f32::NAN, 0.0, 0.0]], &[0, 0, 0]).is_err(), "NaN position");
        assert!(library.is_empty());
    }

    #[test]
    fn levels_share_vertices_and_keep_their_meshlets() {
        let mut library = MeshLibrary::with_unit_cube();
        let positions = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.5, 2.0, 0.0]];
        let normals = [[0.0, 0.0, 1.0]; 5];
        let fine = [0, 1, 2, 0, 2, 3, 3, 2, 4];
        let coarse = [0, 1, 2, 0, 2, 3];
        let meshlet = Meshlet { first_index: 3, index_count: 6, vertex_count: 4, ..Meshlet::default() };
        let vertices = MeshVertices { positions: &positions, normals: &normals, uvs: &[] };
        let ids = library.add_mesh_levels(vertices, &[(&fine, &[meshlet]), (&coarse, &[])]).unwrap();
        assert_eq!(ids, 1..3);
        let (first, second) = (library.range(1).unwrap(), library.range(2).unwrap());
        assert_eq!((first.vertex_offset, second.vertex_offset), (8, 8), "levels share the vertices");
        assert_eq!((first.first_index, second.first_index), (36, 45));
        assert_eq!(first.bounds_max, [1.0, 2.0, 0.0]);
        assert_eq!(second.bounds_max, [1.0, 1.0, 0.0], "a level's bounds cover the vertices it uses");
        assert_eq!(library.meshlets(1), &[meshlet]);
        assert!(library.meshlets(2).is_empty() && library.meshlets(0).is_empty());
        assert_eq!((library.triangle_count(1), library.triangle_count(2)), (3, 2));
        assert_eq!(library.uvs().len(), 13);
        let outside = Meshlet { first_index: 6, index_count: 6, ..meshlet };
        assert!(library.add_mesh_levels(vertices, &[(&fine, &[outside])]).is_err(), "meshlet past its level");
        assert!(library.add_mesh_levels(vertices, &[]).is_err(), "no level");
        let short = MeshVertices { normals: &normals[..4], ..vertices };
        assert!(library.add_mesh_levels(short, &[(&coarse, &[])]).is_err(), "a normal missing");
        assert_eq!(library.len(), 3, "failed adds add nothing");
    }

    #[test]
    fn level_errors_belong_to_whole_chains() {
        let mut library = MeshLibrary::with_unit_cube();
        let normals = [[0.0, 0.0, 1.0]; 8];
        let vertices = MeshVertices { positions: &UNIT_CUBE_POSITIONS, normals: &normals, uvs: &[] };
        let coarse = &UNIT_CUBE_INDICES[..18];
        let chain = library.add_mesh_levels(vertices, &[(&UNIT_CUBE_INDICES, &[]), (coarse, &[])]).unwrap();
        assert_eq!((library.lod_chain(1), library.lod_chain(2)), (1..3, 1..3));
        assert_eq!((library.lod_chain(0), library.lod_chain(9)), (0..1, 0..0));
        assert_eq!(library.level_error(1), None, "no error until the importer records one");
        assert!(library.set_level_errors(2..3, &[0.0]).is_err(), "part of a chain");
        assert!(library.set_level_errors(chain.clone(), &[0.0]).is_err(), "one error short");
        assert!(library.set_level_errors(chain.clone(), &[0.0, f32::NAN]).is_err(), "NaN");
        assert!(library.set_level_errors(chain.clone(), &[0.2, 0.1]).is_err(), "shrinking");
        assert_eq!(library.level_error(2), None, "refused errors record nothing");
        library.set_level_errors(chain, &[0.0, 0.05]).unwrap();
        assert_eq!((library.level_error(1), library.level_error(2)), (Some(0.0), Some(0.05)));
        assert_eq!(library.level_error(0), None, "a hand-made mesh keeps none");
    }
}

//! The cluster tables of a GPU scene: every meshlet of the mesh library with its bounds
//! ([`GpuMeshlet`], `cluster_meshlets`), one pair per meshlet of every object
//! (`cluster_pairs`), and the mesh each object's pairs were built for (`cluster_objects`).
//! Built on the host from the scene and uploaded to device-local buffers; a scene culled
//! meshlet by meshlet keeps them ([`GpuScene::refresh_clusters`] builds them again when its
//! objects name other meshes, meshes added while frames run included).
//!
//! An object whose mesh has no meshlets gets one pair that draws it whole. An object whose
//! record names a LOD chain the GPU chooses from gets the pairs of every level of the chain
//! (each distinct mesh as drawn once), so the cull draws the pairs of the level it chooses
//! (`cluster_cull.h`) and a level switch needs no new table. An object whose mesh (or chosen
//! level's mesh) is none its pairs were built for (a switch not refreshed yet, a level
//! streamed in since) is drawn whole by its first pair, so a stale table costs triangles,
//! never pixels; objects past the table's are drawn whole by the object pass
//! ([`GpuCullPass::drawing_from`](super::GpuCullPass::drawing_from)).
//!
//! A meshlet's first index counts from its mesh's first index, which the object's record
//! holds: a mesh added while frames run lies wherever the GPU buffers had room, and a level
//! evicted and loaded again may lie elsewhere, without the meshlet table changing.

use std::mem::{offset_of, size_of};
use std::sync::Arc;

use meshes::MeshLibrary;
use render_graph::MemoryLocation;
use render_graph::{vk, GpuBuffer, GpuDevice, RenderGraph, Result};

use super::{GpuScene, LodEntry, ObjectRecord, MAX_GPU_LOD_LEVELS};

use culling::cluster::ClusterBounds;

/// Name of the meshlet table (**imported**, [`GpuMeshlet`] per meshlet).
pub const CLUSTER_MESHLETS: &str = "cluster_meshlets";
/// Name of the pair table (**imported**, `uvec2(object, meshlet field)` per pair).
pub const CLUSTER_PAIRS: &str = "cluster_pairs";
/// Name of the per-object table (**imported**): per covered object the mesh id its pairs were
/// built for, or [`BUILT_CHAIN`] and the index of its block of level meshes, the blocks
/// ([`MAX_GPU_LOD_LEVELS`] words each: the mesh each level was built for) after the objects.
pub const CLUSTER_OBJECTS: &str = "cluster_objects";
/// Name of the per-object pair ranges (`[first pair, pair count]` per covered object): the
/// late cluster phase walks only the pairs of the objects the object pass kept.
pub const CLUSTER_OBJECT_PAIRS: &str = "cluster_object_pairs";

/// The meshlet field of a pair that draws the object whole (`PAIR_WHOLE` in
/// `cluster_cull.h`).
pub const PAIR_WHOLE: u32 = 0x7fff_ffff;
/// Bit of the meshlet field set on each object's first pair (`PAIR_FIRST`).
pub const PAIR_FIRST: u32 = 0x8000_0000;
/// Bit of an object's word in [`CLUSTER_OBJECTS`] whose pairs are those of every level of its
/// chain: the rest of the word is the index of its block of level meshes (`BUILT_CHAIN`).
/// A pair drawing level `k`'s mesh whole has the meshlet field `PAIR_WHOLE - k`.
pub const BUILT_CHAIN: u32 = 0x8000_0000;
/// A block's word for no level (`BUILT_NONE`).
pub const BUILT_NONE: u32 = u32::MAX;

/// One meshlet as the cluster shaders read it, mesh space.
///
/// GLSL twin: `struct GpuMeshlet` in `shaders/glsl/engine/cluster_cull.h` (std430, 80 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuMeshlet {
    /// Centre of meshopt's bounding sphere.
    pub center: [f32; 3],
    /// Its radius.
    pub radius: f32,
    /// Apex of the normal cone.
    pub cone_apex: [f32; 3],
    /// meshopt's cone cutoff (1 or more: never rejected).
    pub cone_cutoff: f32,
    /// Axis of the normal cone.
    pub cone_axis: [f32; 3],
    /// First index from the first index of its mesh (the record's: `mesh_indices` holds the
    /// meshlet at `record.first_index + first_index`).
    pub first_index: u32,
    /// Minimum corner of the box of the meshlet's vertices.
    pub box_min: [f32; 3],
    /// Indices of the meshlet.
    pub index_count: u32,
    /// Maximum corner of that box.
    pub box_max: [f32; 3],
    /// The mesh id the meshlet belongs to.
    pub mesh: u32,
}

const _: () = {
    assert!(size_of::<GpuMeshlet>() == 80, "GpuMeshlet must match the std430 size in cluster_cull.h");
    assert!(offset_of!(GpuMeshlet, cone_apex) == 16);
    assert!(offset_of!(GpuMeshlet, cone_axis) == 32);
    assert!(offset_of!(GpuMeshlet, first_index) == 44);
    assert!(offset_of!(GpuMeshlet, box_min) == 48);
    assert!(offset_of!(GpuMeshlet, box_max) == 64);
    assert!(offset_of!(GpuMeshlet, mesh) == 76);
};

impl GpuMeshlet {
    /// The bounds the CPU reference tests ([`culling::cluster`]).
    pub fn bounds(&self) -> ClusterBounds {
        ClusterBounds {
            center: self.center,
            radius: self.radius,
            cone_apex: self.cone_apex,
            cone_axis: self.cone_axis,
            cone_cutoff: self.cone_cutoff,
            box_min: self.box_min,
            box_max: self.box_max,
        }
    }
}

/// The host copy of the cluster tables of one scene.
#[derive(Clone, Debug, Default)]
pub struct ClusterTable {
    meshlets: Vec<GpuMeshlet>,
    /// By mesh id, for every mesh read so far: its first meshlet in `meshlets`.
    mesh_first: Vec<u32>,
    pairs: Vec<[u32; 2]>,
    built_mesh: Vec<u32>,
    /// The level meshes of the chained objects, [`MAX_GPU_LOD_LEVELS`] words per block.
    level_meshes: Vec<u32>,
    object_pairs: Vec<[u32; 2]>,
    meshlet_pairs: u32,
    /// Pairs the records' own levels alone would take (the table before every level had
    /// pairs): the cost of the levels is `pair_count - record_level_pairs`.
    record_level_pairs: u32,
}

impl ClusterTable {
    /// The tables of `scene`'s objects as they are now.
    pub fn build(scene: &GpuScene) -> ClusterTable {
        let mut table = ClusterTable::default();
        table.read_meshes(scene.meshes());
        table.pair_objects(scene.meshes(), scene.records(), scene.lod_entries());
        table
    }

    /// Reads the meshlets of the meshes `library` gained since the last read (the library
    /// only appends); returns whether any were read.
    pub(crate) fn read_meshes(&mut self, library: &MeshLibrary) -> bool {
        let before = self.meshlets.len();
        for mesh in self.mesh_first.len() as u32..library.len() as u32 {
            self.mesh_first.push(self.meshlets.len() as u32);
            push_meshlets(library, mesh, &mut self.meshlets);
        }
        self.meshlets.len() > before
    }

    /// Builds the pairs of `records` (one per object slot) again, from the meshes read so
    /// far and the chains' entries `entries`; returns whether they changed.
    pub(crate) fn pair_objects(
        &mut self,
        library: &MeshLibrary,
        records: &[ObjectRecord],
        entries: &[LodEntry],
    ) -> bool {
        let old_pairs = std::mem::take(&mut self.pairs);
        let old_built = std::mem::take(&mut self.built_mesh);
        let old_levels = std::mem::take(&mut self.level_meshes);
        self.object_pairs.clear();
        self.meshlet_pairs = 0;
        self.record_level_pairs = 0;
        for (object, record) in records.iter().enumerate() {
            let object = object as u32;
            let first_pair = self.pairs.len() as u32;
            let mut meshes = [BUILT_NONE; MAX_GPU_LOD_LEVELS as usize];
            let levels = chain_meshes(record, entries, &mut meshes);
            if levels == 0 {
                self.built_mesh.push(record.mesh);
                meshes[0] = record.mesh;
            } else {
                let block = (self.level_meshes.len() as u32) / MAX_GPU_LOD_LEVELS;
                self.built_mesh.push(BUILT_CHAIN | block);
                self.level_meshes.extend_from_slice(&meshes);
            }
            for level in 0..levels.max(1) {
                let mesh = meshes[level];
                // A mesh two levels draw (a stand-in) has its pairs once: the first level's.
                if meshes[..level].contains(&mesh) {
                    continue;
                }
                let pairs = self.pair_mesh(library, object, record.material, mesh, level as u32);
                if mesh == record.mesh {
                    self.record_level_pairs += pairs;
                }
            }
            self.pairs[first_pair as usize][1] |= PAIR_FIRST;
            self.object_pairs.push([first_pair, self.pairs.len() as u32 - first_pair]);
        }
        old_pairs != self.pairs || old_built != self.built_mesh || old_levels != self.level_meshes
    }

    /// Appends the pairs of `mesh`, level `level` of `object` drawn with `material`: one per
    /// meshlet, or one drawing it whole; returns how many.
    fn pair_mesh(&mut self, library: &MeshLibrary, object: u32, material: u32, mesh: u32, level: u32) -> u32 {
        // A double-sided object's back faces are drawn, so meshlet back-face (cone)
        // culling must leave it alone: it is drawn whole, culled as an object.
        let count = if library.material_is_double_sided(material) { 0 } else { library.meshlets(mesh).len() as u32 };
        let first = self.mesh_first.get(mesh as usize).copied();
        let count = if first.is_some() { count } else { 0 };
        if count == 0 {
            self.pairs.push([object, PAIR_WHOLE - level]);
            return 1;
        }
        let first = first.unwrap_or(0);
        self.pairs.extend((0..count).map(|local| [object, first + local]));
        self.meshlet_pairs += count;
        count
    }

    /// Every meshlet of the library.
    pub fn meshlets(&self) -> &[GpuMeshlet] {
        &self.meshlets
    }

    /// The pairs: `[object, meshlet field]`.
    pub fn pairs(&self) -> &[[u32; 2]] {
        &self.pairs
    }

    /// Number of pairs (threads of the cluster passes, bits of the pair visibility).
    pub fn pair_count(&self) -> u32 {
        self.pairs.len() as u32
    }

    /// Pairs that are meshlets (the others draw their object whole).
    pub fn meshlet_pair_count(&self) -> u32 {
        self.meshlet_pairs
    }

    /// Pairs of the meshes the records name (each object's own level): the table without the
    /// other levels of the chains would hold these and the chains' none.
    pub fn record_level_pair_count(&self) -> u32 {
        self.record_level_pairs
    }

    /// Objects the table covers (the scene's object count at the build).
    pub fn object_count(&self) -> u32 {
        self.built_mesh.len() as u32
    }

    /// The object and the meshlet of pair `pair` (`None` for a pair drawing its object whole
    /// or a pair out of range).
    pub fn pair(&self, pair: u32) -> Option<(u32, Option<&GpuMeshlet>)> {
        let [object, field] = *self.pairs.get(pair as usize)?;
        let meshlet = field & !PAIR_FIRST;
        let whole = meshlet > PAIR_WHOLE - MAX_GPU_LOD_LEVELS;
        Some((object, if whole { None } else { self.meshlets.get(meshlet as usize) }))
    }

    /// The mesh pair `pair` draws (a meshlet's, or the object's level's drawn whole).
    pub fn pair_mesh_id(&self, pair: u32) -> Option<u32> {
        let [object, field] = *self.pairs.get(pair as usize)?;
        let meshlet = field & !PAIR_FIRST;
        if meshlet <= PAIR_WHOLE - MAX_GPU_LOD_LEVELS {
            return self.meshlets.get(meshlet as usize).map(|meshlet| meshlet.mesh);
        }
        self.built_meshes(object)?.get((PAIR_WHOLE - meshlet) as usize).copied()
    }

    /// The meshes object `object`'s pairs were built for: its record's, or each level's of its
    /// chain ([`BUILT_NONE`] past the chain's levels).
    pub fn built_meshes(&self, object: u32) -> Option<&[u32]> {
        let word = self.built_mesh.get(object as usize)?;
        if word & BUILT_CHAIN == 0 {
            return Some(std::slice::from_ref(word));
        }
        let first = ((word & !BUILT_CHAIN) * MAX_GPU_LOD_LEVELS) as usize;
        self.level_meshes.get(first..first + MAX_GPU_LOD_LEVELS as usize)
    }

    /// The pairs of object `object`: `[first pair, pair count]` (`None` past the covered
    /// objects).
    pub fn object_pairs(&self, object: u32) -> Option<[u32; 2]> {
        self.object_pairs.get(object as usize).copied()
    }

    /// The mesh object `object`'s pairs were built for (`None` for an object whose pairs are
    /// its chain's levels': [`ClusterTable::built_meshes`]).
    pub fn built_mesh(&self, object: u32) -> Option<u32> {
        self.built_mesh.get(object as usize).copied().filter(|word| word & BUILT_CHAIN == 0)
    }
}

/// Writes the meshes of the levels of the chain `record` names, as drawn now (`entries`), into
/// `meshes`; returns the level count, 0 for a record naming no chain the GPU chooses from (the
/// record's level is drawn: `gpu_cull.h`'s test).
fn chain_meshes(record: &ObjectRecord, entries: &[LodEntry], meshes: &mut [u32; MAX_GPU_LOD_LEVELS as usize]) -> usize {
    let [first, count] = [record.reserved[0] as usize, record.reserved[1] as usize];
    let Some(chain) = entries.get(first..first + count.min(MAX_GPU_LOD_LEVELS as usize)) else { return 0 };
    if count == 0 || record.index_count == 0 || chain[0].rule == super::LOD_RULE_RECORD {
        return 0;
    }
    for (mesh, entry) in meshes.iter_mut().zip(chain) {
        *mesh = entry.mesh;
    }
    chain.len()
}

/// Appends the meshlets of mesh `mesh` of `library` to `out`, with index ranges from the
/// mesh's first index and boxes of their vertices.
fn push_meshlets(library: &MeshLibrary, mesh: u32, out: &mut Vec<GpuMeshlet>) {
    let (positions, indices) = (library.positions(), library.indices());
    let Some(range) = library.range(mesh) else { return };
    for meshlet in library.meshlets(mesh) {
        let first_index = range.first_index + meshlet.first_index;
        let mut box_min = [f32::INFINITY; 3];
        let mut box_max = [f32::NEG_INFINITY; 3];
        let slice = indices.get(first_index as usize..(first_index + meshlet.index_count) as usize).unwrap_or(&[]);
        for &index in slice {
            let vertex = (range.vertex_offset + index as i32) as usize;
            let position = positions[vertex];
            for axis in 0..3 {
                box_min[axis] = box_min[axis].min(position[axis]);
                box_max[axis] = box_max[axis].max(position[axis]);
            }
        }
        out.push(GpuMeshlet {
            center: meshlet.center,
            radius: meshlet.radius,
            cone_apex: meshlet.cone_apex,
            cone_cutoff: meshlet.cone_cutoff,
            cone_axis: meshlet.cone_axis,
            first_index: meshlet.first_index,
            box_min,
            index_count: meshlet.index_count,
            box_max,
            mesh,
        });
    }
}

/// The device copies of a [`ClusterTable`].
pub struct ClusterBuffers {
    meshlets: Arc<GpuBuffer>,
    pairs: Arc<GpuBuffer>,
    objects: Arc<GpuBuffer>,
    object_pairs: Arc<GpuBuffer>,
}

impl ClusterBuffers {
    /// Uploads `table` into device-local buffers through a staging buffer, waiting for the
    /// copy (setup work, outside the frame loop).
    pub fn upload(device: &Arc<GpuDevice>, table: &ClusterTable) -> Result<ClusterBuffers> {
        // The objects' words, then the chained objects' blocks of level meshes.
        let objects = [&table.built_mesh[..], &table.level_meshes[..]].concat();
        let parts: [(&str, &[u8]); 4] = [
            (CLUSTER_MESHLETS, as_bytes(&table.meshlets)),
            (CLUSTER_PAIRS, as_bytes(&table.pairs)),
            (CLUSTER_OBJECTS, as_bytes(&objects)),
            (CLUSTER_OBJECT_PAIRS, as_bytes(&table.object_pairs)),
        ];
        // Empty tables still get a buffer (of one word): a zero-sized buffer is invalid.
        let sizes = parts.map(|(_, bytes)| (bytes.len() as u64).max(16));
        let total: u64 = sizes.iter().sum();
        let mut staging = GpuBuffer::new(
            device,
            "cluster staging",
            total,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        {
            let mapped = staging.mapped_mut().ok_or_else(|| {
                render_graph::GraphError::Allocation(String::from("cluster staging buffer is not mapped"))
            })?;
            let mut offset = 0usize;
            for ((_, bytes), size) in parts.iter().zip(sizes) {
                mapped[offset..offset + bytes.len()].copy_from_slice(bytes);
                offset += size as usize;
            }
        }
        staging.flush()?;
        let usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER;
        let mut buffers = Vec::with_capacity(parts.len());
        for ((name, _), size) in parts.iter().zip(sizes) {
            buffers.push(GpuBuffer::new(device, name, size, usage, MemoryLocation::GpuOnly)?);
        }
        let raw = device.raw();
        device.submit_and_wait(|command_buffer| {
            let mut offset = 0u64;
            for (buffer, size) in buffers.iter().zip(sizes) {
                let region = vk::BufferCopy { src_offset: offset, dst_offset: 0, size };
                // SAFETY: recording a one-time command buffer; the region lies inside both
                // buffers, which live until the wait returns.
                unsafe { raw.cmd_copy_buffer(command_buffer, staging.raw(), buffer.raw(), &[region]) };
                offset += size;
            }
        })?;
        let mut buffers = buffers.into_iter().map(Arc::new);
        let mut next = || buffers.next().expect("four buffers were made");
        Ok(ClusterBuffers { meshlets: next(), pairs: next(), objects: next(), object_pairs: next() })
    }

    /// The four buffers (to keep them alive while frames in flight may read them).
    pub(crate) fn into_buffers(self) -> [Arc<GpuBuffer>; 4] {
        [self.meshlets, self.pairs, self.objects, self.object_pairs]
    }

    /// Imports the four tables into `graph` under their names.
    pub fn import_into(&self, graph: &mut RenderGraph) {
        graph.import_buffer(CLUSTER_MESHLETS, Arc::clone(&self.meshlets));
        graph.import_buffer(CLUSTER_PAIRS, Arc::clone(&self.pairs));
        graph.import_buffer(CLUSTER_OBJECTS, Arc::clone(&self.objects));
        graph.import_buffer(CLUSTER_OBJECT_PAIRS, Arc::clone(&self.object_pairs));
    }
}

/// The bytes of plain 4-byte data.
fn as_bytes<T: Copy>(values: &[T]) -> &[u8] {
    // SAFETY: only called with `GpuMeshlet` (repr(C), 4-byte fields, no padding), `[u32; 2]`
    // and `u32`: every byte is initialised; the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

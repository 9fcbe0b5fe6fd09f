//! The GPU scene a renderer fills each frame: per object slot an [`ObjectTransform`] and an
//! [`ObjectRecord`] (kept on the host, uploaded when they change) and the list of objects to
//! draw this frame. The camera is not the scene's: the host hands the frame's
//! [`FrameView`](crate::FrameView) to the graph as a parameter
//! ([`render_graph::RenderGraph::set_param`]), and the frame's shadow views likewise
//! ([`ShadowFrame`](crate::ShadowFrame)).
//!
//! **Every change reaches the GPU in the frame it is made.** Setting an object compares each
//! part with what the GPU holds and marks only a part that differs; the next graph frame's
//! [`ObjectUploadPass`](crate::passes::ObjectUploadPass) takes every marked part, however
//! many (the staging memory grows to fit), and scatters them into their slots. There is no
//! budget and no backlog: what the host set before a frame is what that frame draws and
//! culls. A moving object uploads its 48-byte transform and nothing else.
//!
//! **The object count follows the slots in use.** [`GpuScene::set_object_count`] shrinks or
//! grows the range the passes draw and cull over; a slot left or cleared holds
//! [`ObjectRecord::EMPTY`] (no draw, no box, no depth).
//!
//! **The capacity grows.** The capacity given to [`GpuScene::new`] is the initial size of
//! every array and buffer; [`GpuScene::reserve`] doubles it (as often as needed) when more
//! slots are wanted, and the next upload copies the old buffers into the new ones on the GPU
//! (`growth.rs`). Nothing allocates but on growth and the scratch lists, which keep their
//! capacity.
//!
//! The parts: the scene and its objects (this file), this frame's draws (`draws.rs`: the
//! host's list or the GPU's, and the blended objects' order), what waits for upload
//! (`marks.rs`: the slots marked changed, listed and staged by the upload pass), growth
//! (`growth.rs`), the meshes added while frames run (`streaming.rs`) and the cluster
//! tables of meshlet culling (`clusters.rs`).

use std::sync::{Arc, Mutex, MutexGuard};

use crate::names::{
    LOD_ENTRIES, MATERIALS, MATERIAL_TEXTURES, MATERIAL_TEXTURES_OUTGROWN, MESH_INDICES, MESH_SKIN, MESH_UVS,
    MESH_VERTICES, OBJECT_BATCHES, OBJECT_RECORDS, OBJECT_TRANSFORMS, SKIN_PALETTE,
};
use crate::scene::{Batching, MaterialBuffers, MeshBuffers, TEXTURE_LAYOUT};
use crate::scene::{DrawCommand, ObjectRecord, ObjectTransform, OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES};
use meshes::{MeshLibrary, MeshRange};
use render_graph::GpuBuffer;
use render_graph::GpuDevice;
use render_graph::RenderGraph;
use render_graph::{GraphError, Result};

mod clusters;
mod draws;
mod growth;
mod lod_table;
mod marks;
mod material_changes;
mod mesh_changes;
mod mesh_freeing;
mod mesh_growth;
mod placement;
mod residency;
mod skinning;
mod streaming;
mod texture_residency;
mod texture_streaming;
mod view_lists;

pub(crate) use clusters::ClusterLayout;
use clusters::SceneClusters;
pub use clusters::CLUSTER_REFRESH_FRAMES;
use draws::DrawSource;
pub(crate) use growth::RecordedCopy;
pub use growth::{set_scene_memory_limit, SceneGrowthError};
use growth::{GrowthCopy, Retired};
use lod_table::LodTable;
pub use lod_table::{
    LodEntry, LOD_CHAINS_AT_FIRST, LOD_CHAIN_BYTES, LOD_ENTRIES_BYTES, LOD_INSTANCE_ROOM, LOD_RULE_DISTANCE,
    LOD_RULE_ERROR, LOD_RULE_RECORD, MAX_GPU_LOD_LEVELS,
};
use marks::SlotBits;
pub use marks::UploadReport;
use material_changes::MaterialTable;
pub use material_changes::{MaterialError, REMOVED_MATERIAL_DRAWS};
pub use mesh_changes::{RemoveMeshError, ReplaceMeshError};
pub(crate) use mesh_growth::MeshCopy;
pub use residency::{ResidencyReport, DEVICE_HEAP_SHARE};
use skinning::SkinBuffers;
pub use skinning::{gpu_skin_weights, mesh_is_skinned, pack_vertex_skin, PALETTE_JOINT_BYTES};
use streaming::MeshStream;
use texture_streaming::TextureStream;

/// What a renderer says about one object; [`GpuScene`] turns it into an [`ObjectTransform`]
/// and an [`ObjectRecord`] culled with the mesh's own box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectDesc {
    /// Local-to-world matrix, column-major (`glam::Mat4::to_cols_array_2d`).
    pub world: [[f32; 4]; 4],
    /// Flat colour, RGBA8 packed ([`crate::scene::pack_rgba8`]).
    pub color: u32,
    /// Mesh id in the scene's [`MeshLibrary`].
    pub mesh: u32,
    /// Material id (carried in the record, not used by the standard passes).
    pub material: u32,
}

/// The scene the standard passes draw, shared between the renderer (which fills it) and the
/// passes (which upload and draw it); see [`GpuScene::into_shared`].
pub type SharedScene = Arc<Mutex<GpuScene>>;

/// Locks a shared scene; a poisoned lock still holds consistent plain data, so it is used.
pub fn lock_scene(scene: &SharedScene) -> MutexGuard<'_, GpuScene> {
    scene.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Host mirror of the GPU scene: what the GPU holds, and what changed since the last upload.
pub struct GpuScene {
    device: Arc<GpuDevice>,
    capacity: u32,
    /// Times the capacity grew (see [`GpuScene::generation`]).
    generation: u64,
    /// The outgrown buffers whose contents the next upload copies into the new ones, oldest
    /// first.
    growth_copies: Vec<GrowthCopy>,
    /// Outgrown buffers a frame in flight may still read.
    retired: Vec<Retired>,
    /// The meshes added while frames run, on their way to the GPU (`streaming.rs`).
    stream: MeshStream,
    /// The last graph frame an upload was prepared for.
    frames_prepared: u64,
    meshes: MeshLibrary,
    mesh_buffers: MeshBuffers,
    material_buffers: MaterialBuffers,
    /// The host's copy of the material table and what waits for upload
    /// (`material_changes.rs`).
    materials: MaterialTable,
    /// The textures added while frames run, on their way to the GPU
    /// (`texture_streaming.rs`).
    textures: TextureStream,
    /// The skin palette and the vertices' influences (`skinning.rs`).
    skin: SkinBuffers,
    transform_buffer: Arc<GpuBuffer>,
    record_buffer: Arc<GpuBuffer>,
    /// Each slot's batch id (`object_batches`), written by the GPU frame's batch pass.
    batch_buffer: Arc<GpuBuffer>,
    /// Slots the passes draw and cull over.
    count: u32,
    /// By slot, for every slot below the capacity: what the GPU holds once the marked parts
    /// are uploaded.
    transforms: Vec<ObjectTransform>,
    records: Vec<ObjectRecord>,
    transform_dirty: SlotBits,
    record_dirty: SlotBits,
    /// Scratch: the marked slots of one upload, in slot order.
    upload_slots: Vec<u32>,
    draws: Vec<DrawCommand>,
    draw_source: DrawSource,
    /// Slots whose record names a blended material.
    blended: SlotBits,
    /// The blended objects of this frame's host list (when the host draws).
    host_blended: Vec<u32>,
    /// Scratch of [`GpuScene::sort_blended_in_view`]: one window view's blended objects, and
    /// (slot, index range) of those its host list draws, by slot.
    view_blended: Vec<u32>,
    view_ranges: Vec<(u32, [u32; 3])>,
    /// Scratch of [`GpuScene::sort_blended`]: (depth key, slot), then the order and the index
    /// range each object of it draws ([`GpuScene::blended_ranges`]).
    blend_keys: Vec<(f32, u32)>,
    blend_order: Vec<u32>,
    blend_ranges: Vec<[u32; 3]>,
    last_upload: UploadReport,
    /// The instanced batches of the records and this frame's batched list.
    batching: Batching,
    /// The cluster tables, once a cluster-culled frame asked for them (`clusters.rs`).
    clusters: Option<SceneClusters>,
    /// The LOD chains the GPU cull chooses levels from (`lod_table.rs`) and their buffer.
    lod: LodTable,
    lod_buffer: Arc<GpuBuffer>,
    /// The camera's side of the level-of-detail rule and its eye, as the Visibility stage
    /// used them this frame (`None`: the GPU draws each record's own level).
    lod_view: Option<(culling::LodErrorView, glam::Vec3)>,
    lod_every_object: bool,
    /// The runs of this frame's host list, one per window view (split-screen).
    view_lists: view_lists::ViewLists,
}

fn out_of_range(reason: &'static str) -> GraphError {
    GraphError::InvalidDescription { resource: String::from(OBJECT_RECORDS), reason }
}

impl GpuScene {
    /// Creates a scene with room for `capacity` objects at first (it grows:
    /// [`GpuScene::reserve`]) drawing meshes of `meshes` (uploaded now, waiting for the
    /// copy). Returns an error for a zero capacity or an empty library.
    pub fn new(device: &Arc<GpuDevice>, meshes: MeshLibrary, capacity: u32) -> Result<GpuScene> {
        if capacity == 0 {
            return Err(out_of_range("the scene capacity is zero"));
        }
        let skin = SkinBuffers::new(device, &meshes)?;
        let mesh_buffers = MeshBuffers::upload(device, &meshes, &skin.vertex_words)?;
        let material_buffers = MaterialBuffers::upload(device, &meshes)?;
        let materials = MaterialTable::new(&meshes);
        let textures = TextureStream::new(meshes.textures());
        let buffer = |name: &str, bytes: u64| growth::object_buffer(device, name, capacity, bytes);
        Ok(GpuScene {
            device: Arc::clone(device),
            capacity,
            generation: 0,
            growth_copies: Vec::new(),
            retired: Vec::new(),
            stream: MeshStream::new(&meshes),
            frames_prepared: 0,
            meshes,
            mesh_buffers,
            material_buffers,
            materials,
            textures,
            skin,
            transform_buffer: buffer(OBJECT_TRANSFORMS, OBJECT_TRANSFORM_BYTES)?,
            record_buffer: buffer(OBJECT_RECORDS, OBJECT_RECORD_BYTES)?,
            batch_buffer: buffer(OBJECT_BATCHES, growth::BATCH_ID_BYTES)?,
            lod_buffer: growth::object_buffer(device, LOD_ENTRIES, 1, LOD_ENTRIES_BYTES)?,
            count: 0,
            transforms: vec![ObjectTransform::IDENTITY; capacity as usize],
            records: vec![ObjectRecord::EMPTY; capacity as usize],
            transform_dirty: SlotBits::new(capacity),
            record_dirty: SlotBits::new(capacity),
            upload_slots: Vec::new(),
            draws: Vec::with_capacity(capacity as usize),
            draw_source: DrawSource::Host,
            blended: SlotBits::new(capacity),
            host_blended: Vec::new(),
            view_blended: Vec::new(),
            view_ranges: Vec::new(),
            blend_keys: Vec::new(),
            blend_order: Vec::new(),
            blend_ranges: Vec::new(),
            last_upload: UploadReport::default(),
            batching: Batching::default(),
            clusters: None,
            lod: LodTable::default(),
            lod_view: None,
            lod_every_object: true,
            view_lists: view_lists::ViewLists::default(),
        })
    }

    /// Wraps the scene for sharing with the passes.
    pub fn into_shared(self) -> SharedScene {
        Arc::new(Mutex::new(self))
    }

    /// Makes the scene's buffers available to `graph` as `object_transforms`,
    /// `object_records`, `object_batches`, `lod_entries`, `mesh_vertices`, `mesh_indices`,
    /// `mesh_uvs`, `mesh_skin`, `skin_palette`, `materials`, the image array
    /// `material_textures`, and the cluster tables once kept ([`GpuScene::track_clusters`]).
    pub fn import_into(&self, graph: &mut RenderGraph) {
        graph.import_buffer(MESH_UVS, Arc::clone(&self.material_buffers.uvs));
        graph.import_buffer(MATERIALS, Arc::clone(&self.material_buffers.materials));
        let textures = Arc::clone(&self.material_buffers.textures);
        if self.textures_fresh() {
            // Made for textures added while frames run: nothing written yet.
            graph.import_image(MATERIAL_TEXTURES, textures);
        } else {
            graph.import_image_in_layout(MATERIAL_TEXTURES, textures, TEXTURE_LAYOUT);
        }
        if let Some(outgrown) = self.outgrown_textures() {
            graph.import_image_in_layout(MATERIAL_TEXTURES_OUTGROWN, Arc::clone(outgrown), TEXTURE_LAYOUT);
        }
        graph.import_buffer(OBJECT_TRANSFORMS, Arc::clone(&self.transform_buffer));
        graph.import_buffer(OBJECT_RECORDS, Arc::clone(&self.record_buffer));
        graph.import_buffer(OBJECT_BATCHES, Arc::clone(&self.batch_buffer));
        graph.import_buffer(LOD_ENTRIES, Arc::clone(&self.lod_buffer));
        graph.import_buffer(MESH_VERTICES, Arc::clone(&self.mesh_buffers.vertices));
        graph.import_buffer(MESH_INDICES, Arc::clone(&self.mesh_buffers.indices));
        graph.import_buffer(MESH_SKIN, Arc::clone(&self.mesh_buffers.skin));
        graph.import_buffer(SKIN_PALETTE, Arc::clone(&self.skin.palette));
        self.import_clusters(graph);
    }

    /// Most objects the scene holds now (it grows: [`GpuScene::reserve`]).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Slots the passes draw and cull over (one past the highest slot in use).
    pub fn object_count(&self) -> u32 {
        self.count
    }

    /// The meshes objects may use.
    pub fn meshes(&self) -> &MeshLibrary {
        &self.meshes
    }

    /// The record of object `index` (below [`GpuScene::object_count`]).
    pub fn record(&self, index: u32) -> Option<&ObjectRecord> {
        (index < self.count).then(|| &self.records[index as usize])
    }

    /// The transform of object `index` (below [`GpuScene::object_count`]).
    pub fn transform(&self, index: u32) -> Option<&ObjectTransform> {
        (index < self.count).then(|| &self.transforms[index as usize])
    }

    /// The records of the slots below the object count, as the GPU holds them after this
    /// frame's upload.
    pub fn records(&self) -> &[ObjectRecord] {
        &self.records[..self.count as usize]
    }

    /// The transforms of the slots below the object count.
    pub fn transforms(&self) -> &[ObjectTransform] {
        &self.transforms[..self.count as usize]
    }

    /// The mesh `mesh`'s range, or an error naming it as unknown.
    pub fn mesh_range(&self, mesh: u32) -> Result<&MeshRange> {
        self.meshes.range(mesh).ok_or_else(|| out_of_range("the object names an unknown mesh"))
    }

    /// The record drawing mesh `mesh`, culled with the local box `local_min..local_max`.
    pub fn record_for(
        &self,
        mesh: u32,
        local_min: [f32; 3],
        local_max: [f32; 3],
        color: u32,
        material: u32,
    ) -> Result<ObjectRecord> {
        let range = self.mesh_range(mesh)?;
        let (local_center, local_half) = ObjectRecord::center_half(local_min, local_max);
        // The mesh's GPU range (`placement.rs`); a level holding none draws nothing.
        let place = self.stream.placement.place(mesh);
        Ok(ObjectRecord {
            local_center,
            index_count: if place.placed { range.index_count } else { 0 },
            local_half,
            first_index: place.first_index,
            vertex_offset: place.vertex_offset,
            color,
            material: self.drawn_material(material),
            mesh,
            skin_first: 0,
            skin_count: 0,
            reserved: [0; 2],
        })
    }

    fn parts_of(&self, object: &ObjectDesc) -> Result<(ObjectTransform, ObjectRecord)> {
        let range = self.mesh_range(object.mesh)?;
        let record = self.record_for(object.mesh, range.bounds_min, range.bounds_max, object.color, object.material)?;
        Ok((ObjectTransform::from_cols(&object.world), record))
    }

    /// Appends an object at slot [`GpuScene::object_count`] and returns it; it is uploaded with
    /// the next frame. A full scene grows first ([`GpuScene::reserve`]: the graph drawing it
    /// must follow, [`GpuScene::follow_growth`]). Returns an error when the scene cannot grow
    /// or the mesh is unknown.
    pub fn push_object(&mut self, object: ObjectDesc) -> Result<u32> {
        if self.count >= self.capacity {
            self.reserve(self.count + 1).map_err(|error| *error.source)?;
        }
        let (transform, record) = self.parts_of(&object)?;
        let index = self.count;
        self.set_object_count(index + 1)?;
        self.set_parts(index, transform, record)?;
        Ok(index)
    }

    /// Replaces object `index` (below the object count). Only a part that actually changes is
    /// marked for upload, so a renderer may set every object every frame and still upload
    /// only what moved.
    pub fn set_object(&mut self, index: u32, object: ObjectDesc) -> Result<()> {
        if index >= self.count {
            return Err(out_of_range("object index past the last object"));
        }
        let (transform, record) = self.parts_of(&object)?;
        self.set_parts(index, transform, record)
    }

    /// Sets both parts of slot `index` (below the object count); each is marked for upload
    /// only when it differs from what the GPU holds.
    pub fn set_parts(&mut self, index: u32, transform: ObjectTransform, record: ObjectRecord) -> Result<()> {
        if index >= self.count {
            return Err(out_of_range("object index past the last object"));
        }
        self.set_transform(index, transform);
        self.set_record(index, record);
        Ok(())
    }

    /// Sets slot `index`'s transform, marking it when it changed (`index` below the count).
    pub(crate) fn set_transform(&mut self, index: u32, transform: ObjectTransform) {
        let stored = &mut self.transforms[index as usize];
        if *stored != transform {
            *stored = transform;
            self.transform_dirty.mark(index);
        }
    }

    /// Sets slot `index`'s record, marking it when it changed (`index` below the count).
    pub(crate) fn set_record(&mut self, index: u32, record: ObjectRecord) {
        let stored = &mut self.records[index as usize];
        if *stored != record {
            let paired_anew = stored.mesh != record.mesh || stored.material != record.material;
            *stored = record;
            if paired_anew {
                self.note_cluster_change();
            }
            self.record_dirty.mark(index);
            self.batching.table.set(index, &record);
            self.note_lod_chain(index, &record);
            if record.index_count > 0 && self.material_blends(record.material) {
                self.blended.mark(index);
            } else {
                self.blended.clear_range(index, index + 1);
            }
        }
    }

    /// Empties slot `index` (a despawned or undrawable object): from the next frame it is not
    /// drawn, culled, counted or in any depth.
    pub fn clear_object(&mut self, index: u32) -> Result<()> {
        self.set_parts(index, ObjectTransform::IDENTITY, ObjectRecord::EMPTY)
    }

    /// Sets the number of slots the passes draw and cull over (at most the capacity: grow it
    /// first with [`GpuScene::reserve`]). Slots
    /// past a smaller count are emptied; slots a larger count brings in hold empty records
    /// until set, and are uploaded with the next frame either way (the GPU's copy of a slot
    /// outside the count is not kept).
    pub fn set_object_count(&mut self, count: u32) -> Result<()> {
        if count > self.capacity {
            return Err(out_of_range("the object count is past the scene capacity"));
        }
        if count < self.count {
            for slot in count..self.count {
                self.transforms[slot as usize] = ObjectTransform::IDENTITY;
                self.records[slot as usize] = ObjectRecord::EMPTY;
                self.batching.table.set(slot, &ObjectRecord::EMPTY);
                self.note_lod_chain(slot, &ObjectRecord::EMPTY);
            }
            self.transform_dirty.clear_range(count, self.count);
            self.record_dirty.clear_range(count, self.count);
            self.blended.clear_range(count, self.count);
        } else {
            self.transform_dirty.mark_range(self.count, count);
            self.record_dirty.mark_range(self.count, count);
        }
        if count != self.count {
            self.note_cluster_change();
        }
        self.count = count;
        Ok(())
    }
}

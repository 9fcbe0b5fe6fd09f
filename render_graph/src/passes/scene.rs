//! The GPU scene a renderer fills each frame: one [`ObjectRecord`] per object (kept on the
//! host, uploaded once and afterwards only in dirty ranges), the list of objects to draw this
//! frame, and the camera. Nothing here allocates after [`GpuScene::new`]: every array is
//! sized to the capacity up front.

use std::sync::{Arc, Mutex, MutexGuard};

use gpu_allocator::MemoryLocation;

use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::graph::RenderGraph;
use crate::memory::GpuBuffer;
use crate::passes::mesh::{MeshBuffers, MeshLibrary};
use crate::passes::records::{
    transform_bounds, CameraConstants, DrawCommand, ObjectRecord, IDENTITY, OBJECT_RECORD_BYTES,
};
use crate::passes::{MESH_INDICES, MESH_VERTICES, OBJECT_RECORDS};
use ash::vk;

/// What a renderer says about one object; [`GpuScene`] turns it into an [`ObjectRecord`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectDesc {
    /// Local-to-world matrix, column-major (`glam::Mat4::to_cols_array_2d`).
    pub world: [[f32; 4]; 4],
    /// Flat colour, RGBA8 packed ([`crate::passes::pack_rgba8`]).
    pub color: u32,
    /// Mesh id in the scene's [`MeshLibrary`].
    pub mesh: u32,
    /// Material id (carried in the record, not used by the standard passes).
    pub material: u32,
}

/// Object-record uploads of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UploadReport {
    /// Bytes of object records copied to `object_records`.
    pub bytes: u64,
    /// Contiguous ranges copied (one copy command each).
    pub regions: u32,
    /// Dirty objects left for later frames because the per-frame budget was spent.
    pub pending_objects: u32,
    /// Bytes of draw commands and count copied to `draw_commands` and `draw_count`.
    pub draw_bytes: u64,
    /// Drawn objects whose record has never been uploaded (the budget deferred it): they are
    /// **missing from the image** this frame. Non-zero means the draw list outran the upload
    /// budget ([`GpuScene::set_upload_budget`]); counted when the standard draw-list pass runs
    /// after the object upload pass, as [`add_scene_passes`](crate::passes::add_scene_passes) adds them.
    pub drawn_missing: u32,
    /// Drawn objects whose newest record is still waiting for upload: they are drawn as they
    /// were in an earlier frame.
    pub drawn_stale: u32,
}

/// Default bytes of object records uploaded per frame (the staging ring holds 4 MiB per
/// frame for every pass together).
pub const DEFAULT_UPLOAD_BUDGET: u64 = 1 << 20;

/// The scene the standard passes draw, shared between the renderer (which fills it) and the
/// passes (which upload and draw it); see [`GpuScene::into_shared`].
pub type SharedScene = Arc<Mutex<GpuScene>>;

/// Locks a shared scene; a poisoned lock still holds consistent plain data, so it is used.
pub fn lock_scene(scene: &SharedScene) -> MutexGuard<'_, GpuScene> {
    scene.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Host mirror of the GPU scene with dirty tracking.
pub struct GpuScene {
    capacity: u32,
    meshes: MeshLibrary,
    mesh_buffers: MeshBuffers,
    object_buffer: Arc<GpuBuffer>,
    records: Vec<ObjectRecord>,
    dirty: DirtyBits,
    /// Objects whose record reached the GPU at least once.
    uploaded: DirtyBits,
    draws: Vec<DrawCommand>,
    camera: CameraConstants,
    upload_budget: u64,
    last_upload: UploadReport,
}

fn out_of_range(reason: &'static str) -> GraphError {
    GraphError::InvalidDescription { resource: String::from(OBJECT_RECORDS), reason }
}

impl GpuScene {
    /// Creates a scene for up to `capacity` objects drawing meshes of `meshes` (uploaded now,
    /// waiting for the copy). Returns an error for a zero capacity or an empty library.
    pub fn new(device: &Arc<GpuDevice>, meshes: MeshLibrary, capacity: u32) -> Result<GpuScene> {
        if capacity == 0 {
            return Err(out_of_range("the scene capacity is zero"));
        }
        let mesh_buffers = MeshBuffers::upload(device, &meshes)?;
        let object_buffer = GpuBuffer::new(
            device,
            OBJECT_RECORDS,
            u64::from(capacity) * OBJECT_RECORD_BYTES,
            vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuOnly,
        )?;
        Ok(GpuScene {
            capacity,
            meshes,
            mesh_buffers,
            object_buffer: Arc::new(object_buffer),
            records: Vec::with_capacity(capacity as usize),
            dirty: DirtyBits::new(capacity),
            uploaded: DirtyBits::new(capacity),
            draws: Vec::with_capacity(capacity as usize),
            camera: CameraConstants { view_projection: IDENTITY },
            upload_budget: DEFAULT_UPLOAD_BUDGET,
            last_upload: UploadReport::default(),
        })
    }

    /// Wraps the scene for sharing with the passes.
    pub fn into_shared(self) -> SharedScene {
        Arc::new(Mutex::new(self))
    }

    /// Makes the scene's buffers available to `graph` as `object_records`, `mesh_vertices`
    /// and `mesh_indices`.
    pub fn import_into(&self, graph: &mut RenderGraph) {
        graph.import_buffer(OBJECT_RECORDS, Arc::clone(&self.object_buffer));
        graph.import_buffer(MESH_VERTICES, Arc::clone(&self.mesh_buffers.vertices));
        graph.import_buffer(MESH_INDICES, Arc::clone(&self.mesh_buffers.indices));
    }

    /// Most objects the scene holds.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Number of objects.
    pub fn object_count(&self) -> u32 {
        self.records.len() as u32
    }

    /// The meshes objects may use.
    pub fn meshes(&self) -> &MeshLibrary {
        &self.meshes
    }

    /// The record of object `index`.
    pub fn record(&self, index: u32) -> Option<&ObjectRecord> {
        self.records.get(index as usize)
    }

    fn build_record(&self, object: &ObjectDesc) -> Result<ObjectRecord> {
        let mesh = self.meshes.range(object.mesh).ok_or_else(|| out_of_range("the object names an unknown mesh"))?;
        let (bounds_min, bounds_max) = transform_bounds(&object.world, mesh.bounds_min, mesh.bounds_max);
        Ok(ObjectRecord {
            world: object.world,
            bounds_min,
            color: object.color,
            bounds_max,
            mesh: object.mesh,
            index_count: mesh.index_count,
            first_index: mesh.first_index,
            vertex_offset: mesh.vertex_offset,
            material: object.material,
        })
    }

    /// Appends an object and returns its index; it is uploaded with the next frame.
    /// Returns an error when the scene is full or the mesh is unknown.
    pub fn push_object(&mut self, object: ObjectDesc) -> Result<u32> {
        if self.records.len() >= self.capacity as usize {
            return Err(out_of_range("the scene is full"));
        }
        let record = self.build_record(&object)?;
        let index = self.records.len() as u32;
        self.records.push(record);
        self.mark_dirty(index);
        Ok(index)
    }

    /// Replaces object `index`. Only a record that actually changes is marked for upload, so
    /// a renderer may set every object every frame and still upload only what moved.
    pub fn set_object(&mut self, index: u32, object: ObjectDesc) -> Result<()> {
        if index as usize >= self.records.len() {
            return Err(out_of_range("object index past the last object"));
        }
        let record = self.build_record(&object)?;
        if self.records[index as usize] != record {
            self.records[index as usize] = record;
            self.mark_dirty(index);
        }
        Ok(())
    }

    fn mark_dirty(&mut self, index: u32) {
        self.dirty.mark(index);
    }

    /// Number of objects whose record waits for upload.
    pub fn dirty_count(&self) -> u32 {
        self.dirty.count()
    }

    /// Sets the camera (world to clip, column-major; reversed-Z infinite by convention).
    pub fn set_view_projection(&mut self, view_projection: [[f32; 4]; 4]) {
        self.camera = CameraConstants { view_projection };
    }

    /// The camera push constants.
    pub fn camera(&self) -> &CameraConstants {
        &self.camera
    }

    /// Sets this frame's objects to draw (the visible list), in the order given; every
    /// index must name an object. Draw in storage order for results that do not depend on
    /// which objects were culled.
    pub fn set_draw_list(&mut self, objects: &[u32]) -> Result<()> {
        if objects.iter().any(|&object| object as usize >= self.records.len()) {
            return Err(out_of_range("the draw list names an object past the last object"));
        }
        if objects.len() > self.capacity as usize {
            return Err(out_of_range("the draw list is longer than the scene capacity"));
        }
        self.draws.clear();
        let records = &self.records;
        self.draws.extend(objects.iter().map(|&object| DrawCommand::for_object(object, &records[object as usize])));
        Ok(())
    }

    /// Draws every object, in storage order (culling off).
    pub fn draw_all_objects(&mut self) {
        self.draws.clear();
        let records = &self.records;
        self.draws
            .extend(records.iter().enumerate().map(|(index, record)| DrawCommand::for_object(index as u32, record)));
    }

    /// This frame's draw commands.
    pub fn draw_commands(&self) -> &[DrawCommand] {
        &self.draws
    }

    /// Sets the most bytes of object records uploaded per frame (at least one record).
    pub fn set_upload_budget(&mut self, bytes: u64) {
        self.upload_budget = bytes.max(OBJECT_RECORD_BYTES);
    }

    /// What the latest frame uploaded.
    pub fn last_upload(&self) -> UploadReport {
        self.last_upload
    }

    /// Hands every dirty run of records, up to the budget, to `upload(first object, records)`
    /// and clears its bits once `upload` succeeds; records the frame's report.
    pub(crate) fn upload_dirty(
        &mut self,
        mut upload: impl FnMut(u32, &[ObjectRecord]) -> Result<()>,
    ) -> Result<UploadReport> {
        let budget_objects = (self.upload_budget / OBJECT_RECORD_BYTES) as u32;
        let (records, uploaded) = (&self.records, &mut self.uploaded);
        let (objects, regions) = self.dirty.take_runs(records.len() as u32, budget_objects, |start, end| {
            upload(start, &records[start as usize..end as usize])?;
            (start..end).for_each(|index| uploaded.mark(index));
            Ok(())
        })?;
        let report = UploadReport {
            bytes: u64::from(objects) * OBJECT_RECORD_BYTES,
            regions,
            pending_objects: self.dirty.count(),
            ..self.last_upload
        };
        self.last_upload = report;
        Ok(report)
    }

    /// Records the draw-list bytes of this frame in the report, with the drawn objects whose
    /// record is missing or stale on the GPU.
    pub(crate) fn note_draw_upload(&mut self, bytes: u64) {
        let (mut missing, mut stale) = (0, 0);
        for draw in &self.draws {
            let object = draw.first_instance;
            if !self.uploaded.is_set(object) {
                missing += 1;
            } else if self.dirty.is_set(object) {
                stale += 1;
            }
        }
        self.last_upload.draw_bytes = bytes;
        self.last_upload.drawn_missing = missing;
        self.last_upload.drawn_stale = stale;
    }
}

/// One bit per object: set when its record changed since it was last uploaded.
struct DirtyBits {
    words: Vec<u64>,
}

impl DirtyBits {
    fn new(capacity: u32) -> DirtyBits {
        DirtyBits { words: vec![0; (capacity as usize).div_ceil(64)] }
    }

    fn mark(&mut self, index: u32) {
        self.words[index as usize / 64] |= 1 << (index % 64);
    }

    fn is_set(&self, index: u32) -> bool {
        self.words.get(index as usize / 64).is_some_and(|word| word >> (index % 64) & 1 == 1)
    }

    fn count(&self) -> u32 {
        self.words.iter().map(|word| word.count_ones()).sum()
    }

    /// Calls `take(start, end)` for each run of set bits below `length`, in order, cutting
    /// the runs so that at most `budget` bits are taken; clears a run's bits once `take`
    /// succeeds. Returns the bits taken and the number of runs.
    fn take_runs(
        &mut self,
        length: u32,
        budget: u32,
        mut take: impl FnMut(u32, u32) -> Result<()>,
    ) -> Result<(u32, u32)> {
        let (mut taken, mut runs, mut cursor) = (0, 0, 0);
        while cursor < length && taken < budget {
            let start = find_bit(&self.words, cursor, length, true);
            if start >= length {
                break;
            }
            let end = find_bit(&self.words, start, length, false).min(start + (budget - taken));
            take(start, end)?;
            for index in start..end {
                self.words[index as usize / 64] &= !(1 << (index % 64));
            }
            taken += end - start;
            runs += 1;
            cursor = end;
        }
        Ok((taken, runs))
    }
}

/// The first index in `from..length` whose bit equals `set`, or `length`.
fn find_bit(words: &[u64], from: u32, length: u32, set: bool) -> u32 {
    let mut index = from;
    while index < length {
        let word_index = index as usize / 64;
        let word = if set { words[word_index] } else { !words[word_index] };
        let remaining = word & (u64::MAX << (index % 64));
        if remaining != 0 {
            return (word_index as u32 * 64 + remaining.trailing_zeros()).min(length);
        }
        index = (word_index as u32 + 1) * 64;
    }
    length
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_bit_walks_runs_across_words() {
        let mut words = vec![0_u64; 3];
        for index in [3_u32, 4, 5, 63, 64, 65, 130] {
            words[index as usize / 64] |= 1 << (index % 64);
        }
        assert_eq!(find_bit(&words, 0, 150, true), 3);
        assert_eq!(find_bit(&words, 3, 150, false), 6);
        assert_eq!(find_bit(&words, 6, 150, true), 63);
        assert_eq!(find_bit(&words, 63, 150, false), 66, "a run continues across a word boundary");
        assert_eq!(find_bit(&words, 66, 150, true), 130);
        assert_eq!(find_bit(&words, 131, 150, true), 150, "no bit left gives the length");
        assert_eq!(find_bit(&words, 130, 131, false), 131, "a run ends at the length");
    }

    fn runs_of(bits: &mut DirtyBits, length: u32, budget: u32) -> Vec<(u32, u32)> {
        let mut runs = Vec::new();
        bits.take_runs(length, budget, |start, end| {
            runs.push((start, end));
            Ok(())
        })
        .expect("taking never fails here");
        runs
    }

    #[test]
    fn dirty_runs_coalesce_neighbours_and_respect_the_budget() {
        let mut bits = DirtyBits::new(200);
        for index in [0, 1, 2, 10, 63, 64, 150] {
            bits.mark(index);
        }
        assert_eq!(runs_of(&mut bits, 200, 4), vec![(0, 3), (10, 11)], "the budget of 4 cuts after object 10");
        assert_eq!(bits.count(), 3, "objects 63, 64 and 150 wait for the next frame");
        assert_eq!(runs_of(&mut bits, 200, 100), vec![(63, 65), (150, 151)]);
        assert_eq!(bits.count(), 0);
        assert!(runs_of(&mut bits, 200, 100).is_empty(), "nothing dirty uploads nothing");
    }

    #[test]
    fn a_failed_take_keeps_the_bits() {
        let mut bits = DirtyBits::new(8);
        bits.mark(5);
        let result = bits.take_runs(8, 8, |_, _| Err(out_of_range("test failure")));
        assert!(result.is_err());
        assert_eq!(bits.count(), 1, "the run stays dirty for a retry");
    }
}

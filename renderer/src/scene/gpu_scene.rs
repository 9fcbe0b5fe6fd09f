//! The GPU scene a renderer fills each frame: per object slot an [`ObjectTransform`] and an
//! [`ObjectRecord`] (kept on the host, uploaded when they change), the list of objects to
//! draw this frame, and the camera.
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
//! Nothing here allocates after [`GpuScene::new`] but the scratch lists, which keep their
//! capacity: every array is sized to the capacity up front.

use std::sync::{Arc, Mutex, MutexGuard};

use gpu_allocator::MemoryLocation;

use crate::names::{
    MATERIALS, MATERIAL_TEXTURES, MESH_INDICES, MESH_UVS, MESH_VERTICES, OBJECT_RECORDS, OBJECT_TRANSFORMS,
};
use crate::scene::world_box;
use crate::scene::{
    CameraConstants, DrawCommand, ObjectRecord, ObjectTransform, IDENTITY, OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES,
};
use crate::scene::{FrameView, MaterialBuffers, MeshBuffers, ShadowFrame, TEXTURE_LAYOUT};
use meshes::{MeshLibrary, MeshRange};
use render_graph::vk;
use render_graph::GpuBuffer;
use render_graph::GpuDevice;
use render_graph::RenderGraph;
use render_graph::{GraphError, Result};

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

/// Object uploads of one graph frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UploadReport {
    /// Bytes staged for the object buffers: the changed transforms and records and the slot
    /// index of each (4 bytes).
    pub bytes: u64,
    /// Transforms uploaded ([`OBJECT_TRANSFORM_BYTES`] each).
    pub transforms: u32,
    /// Records uploaded ([`OBJECT_RECORD_BYTES`] each).
    pub records: u32,
    /// Bytes of draw commands and count copied to `draw_commands` and `draw_count` (the host
    /// draw list; zero when a GPU culling pass writes them).
    pub draw_bytes: u64,
}

impl UploadReport {
    /// Adds another graph frame's uploads (a game frame that executed the graph twice).
    pub fn add(&mut self, other: &UploadReport) {
        self.bytes += other.bytes;
        self.transforms += other.transforms;
        self.records += other.records;
        self.draw_bytes += other.draw_bytes;
    }
}

/// The scene the standard passes draw, shared between the renderer (which fills it) and the
/// passes (which upload and draw it); see [`GpuScene::into_shared`].
pub type SharedScene = Arc<Mutex<GpuScene>>;

/// Locks a shared scene; a poisoned lock still holds consistent plain data, so it is used.
pub fn lock_scene(scene: &SharedScene) -> MutexGuard<'_, GpuScene> {
    scene.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where this frame's draw commands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DrawSource {
    /// The host's list ([`GpuScene::set_draw_list`], [`GpuScene::draw_all_objects`]).
    Host,
    /// A GPU pass writes at most one command per object (GPU culling).
    Gpu,
}

/// Host mirror of the GPU scene: what the GPU holds, and what changed since the last upload.
pub struct GpuScene {
    capacity: u32,
    meshes: MeshLibrary,
    mesh_buffers: MeshBuffers,
    material_buffers: MaterialBuffers,
    transform_buffer: Arc<GpuBuffer>,
    record_buffer: Arc<GpuBuffer>,
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
    camera: CameraConstants,
    /// Slots whose record names a blended material.
    blended: SlotBits,
    /// The blended objects of this frame's host list (when the host draws).
    host_blended: Vec<u32>,
    /// Scratch of [`GpuScene::sort_blended`]: (depth key, slot), then the order.
    blend_keys: Vec<(f32, u32)>,
    blend_order: Vec<u32>,
    /// The view uploaded into `view` for every pass ([`crate::ViewUploadPass`]).
    view: FrameView,
    last_upload: UploadReport,
    /// This frame's shadow views, caster draws and lights (frames with shadows).
    shadows: ShadowFrame,
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
        let material_buffers = MaterialBuffers::upload(device, &meshes)?;
        // Copy source too: tools and tests read the scene back.
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::TRANSFER_SRC;
        let buffer = |name: &str, bytes: u64| {
            GpuBuffer::new(device, name, u64::from(capacity) * bytes, usage, MemoryLocation::GpuOnly).map(Arc::new)
        };
        Ok(GpuScene {
            capacity,
            meshes,
            mesh_buffers,
            material_buffers,
            transform_buffer: buffer(OBJECT_TRANSFORMS, OBJECT_TRANSFORM_BYTES)?,
            record_buffer: buffer(OBJECT_RECORDS, OBJECT_RECORD_BYTES)?,
            count: 0,
            transforms: vec![ObjectTransform::IDENTITY; capacity as usize],
            records: vec![ObjectRecord::EMPTY; capacity as usize],
            transform_dirty: SlotBits::new(capacity),
            record_dirty: SlotBits::new(capacity),
            upload_slots: Vec::new(),
            draws: Vec::with_capacity(capacity as usize),
            draw_source: DrawSource::Host,
            camera: CameraConstants { view_projection: IDENTITY },
            blended: SlotBits::new(capacity),
            host_blended: Vec::new(),
            blend_keys: Vec::new(),
            blend_order: Vec::new(),
            view: FrameView::default(),
            last_upload: UploadReport::default(),
            shadows: ShadowFrame::default(),
        })
    }

    /// Wraps the scene for sharing with the passes.
    pub fn into_shared(self) -> SharedScene {
        Arc::new(Mutex::new(self))
    }

    /// Makes the scene's buffers available to `graph` as `object_transforms`,
    /// `object_records`, `mesh_vertices`, `mesh_indices`, `mesh_uvs`, `materials` and the
    /// image array `material_textures`.
    pub fn import_into(&self, graph: &mut RenderGraph) {
        graph.import_buffer(MESH_UVS, Arc::clone(&self.material_buffers.uvs));
        graph.import_buffer(MATERIALS, Arc::clone(&self.material_buffers.materials));
        graph.import_image_in_layout(MATERIAL_TEXTURES, Arc::clone(&self.material_buffers.textures), TEXTURE_LAYOUT);
        graph.import_buffer(OBJECT_TRANSFORMS, Arc::clone(&self.transform_buffer));
        graph.import_buffer(OBJECT_RECORDS, Arc::clone(&self.record_buffer));
        graph.import_buffer(MESH_VERTICES, Arc::clone(&self.mesh_buffers.vertices));
        graph.import_buffer(MESH_INDICES, Arc::clone(&self.mesh_buffers.indices));
    }

    /// Most objects the scene holds.
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
        Ok(ObjectRecord {
            local_center,
            index_count: range.index_count,
            local_half,
            first_index: range.first_index,
            vertex_offset: range.vertex_offset,
            color,
            material,
            mesh,
        })
    }

    fn parts_of(&self, object: &ObjectDesc) -> Result<(ObjectTransform, ObjectRecord)> {
        let range = self.mesh_range(object.mesh)?;
        let record = self.record_for(object.mesh, range.bounds_min, range.bounds_max, object.color, object.material)?;
        Ok((ObjectTransform::from_cols(&object.world), record))
    }

    /// Appends an object at slot [`GpuScene::object_count`] and returns it; it is uploaded with
    /// the next frame. Returns an error when the scene is full or the mesh is unknown.
    pub fn push_object(&mut self, object: ObjectDesc) -> Result<u32> {
        if self.count >= self.capacity {
            return Err(out_of_range("the scene is full"));
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
            *stored = record;
            self.record_dirty.mark(index);
            if record.index_count > 0 && self.meshes.material_blends(record.material) {
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

    /// Sets the number of slots the passes draw and cull over (at most the capacity). Slots
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
            }
            self.transform_dirty.clear_range(count, self.count);
            self.record_dirty.clear_range(count, self.count);
            self.blended.clear_range(count, self.count);
        } else {
            self.transform_dirty.mark_range(self.count, count);
            self.record_dirty.mark_range(self.count, count);
        }
        self.count = count;
        Ok(())
    }

    /// Number of objects whose transform or record waits for upload.
    pub fn dirty_count(&self) -> u32 {
        self.transform_dirty.count_below(self.count).max(self.record_dirty.count_below(self.count))
    }

    /// Sets the camera (world to clip, column-major; reversed-Z infinite by convention).
    /// The view's other fields stay as [`GpuScene::set_frame_view`] left them.
    pub fn set_view_projection(&mut self, view_projection: [[f32; 4]; 4]) {
        self.camera = CameraConstants { view_projection };
        self.view.set_view_projection(glam::Mat4::from_cols_array_2d(&view_projection));
    }

    /// Sets the whole view of this frame: what every pass reads in the `view` uniform
    /// ([`crate::VIEW`]), and the camera the scene is drawn and culled with.
    pub fn set_frame_view(&mut self, view: FrameView) {
        self.camera = CameraConstants { view_projection: view.view_projection };
        self.view = view;
    }

    /// This frame's view (its frame index and object count are filled in at upload).
    pub fn frame_view(&self) -> &FrameView {
        &self.view
    }

    /// The camera push constants.
    pub fn camera(&self) -> &CameraConstants {
        &self.camera
    }

    /// Sets this frame's objects to draw (the visible list), in the order given; every
    /// index must name an object. Draw in storage order for results that do not depend on
    /// which objects were culled. Empty slots in the list draw nothing.
    pub fn set_draw_list(&mut self, objects: &[u32]) -> Result<()> {
        if objects.iter().any(|&object| object >= self.count) {
            return Err(out_of_range("the draw list names an object past the last object"));
        }
        self.draw_source = DrawSource::Host;
        self.draws.clear();
        let records = &self.records;
        self.draws.extend(objects.iter().map(|&object| DrawCommand::for_object(object, &records[object as usize])));
        self.host_blended.clear();
        let blended = &self.blended;
        self.host_blended.extend(objects.iter().copied().filter(|&object| blended.is_set(object)));
        Ok(())
    }

    /// Draws every object, in slot order (culling off).
    pub fn draw_all_objects(&mut self) {
        self.draw_source = DrawSource::Host;
        self.draws.clear();
        let records = &self.records[..self.count as usize];
        self.draws
            .extend(records.iter().enumerate().map(|(index, record)| DrawCommand::for_object(index as u32, record)));
        self.host_blended.clear();
        self.blended.push_set_below(self.count, &mut self.host_blended);
    }

    /// This frame's draw commands come from a GPU pass writing at most one per object (GPU
    /// culling): the host keeps no list, and a device without `drawIndirectCount` draws
    /// [`GpuScene::object_count`] commands (the pass zeroes the unused ones).
    pub fn draw_gpu_list(&mut self) {
        self.draw_source = DrawSource::Gpu;
        self.draws.clear();
        self.host_blended.clear();
    }

    /// This frame's blended objects, farthest first, as the blended pass draws them: those
    /// of the host's list, or every blended object when a GPU pass culls (its vertex shader
    /// then leaves out the hidden ones). The key is the depth of the object's box centre
    /// (reversed-Z `z / w`, so perspective and orthographic cameras alike); centres behind
    /// the eye or not finite come first, and equal keys go in slot order, so the order (and
    /// the image) depends only on the scene and the camera.
    pub fn sort_blended(&mut self) -> &[u32] {
        if self.draw_source == DrawSource::Gpu {
            self.host_blended.clear();
            self.blended.push_set_below(self.count, &mut self.host_blended);
        }
        let view_projection = glam::Mat4::from_cols_array_2d(&self.camera.view_projection);
        self.blend_keys.clear();
        for &slot in &self.host_blended {
            let (center, _) = world_box(&self.transforms[slot as usize], &self.records[slot as usize]);
            let clip = view_projection * glam::Vec3::from_array(center).extend(1.0);
            let depth = clip.z / clip.w;
            let key = if clip.w > 0.0 && depth.is_finite() { depth } else { f32::NEG_INFINITY };
            self.blend_keys.push((key, slot));
        }
        self.blend_keys.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.blend_order.clear();
        self.blend_order.extend(self.blend_keys.iter().map(|&(_, slot)| slot));
        &self.blend_order
    }

    /// This frame's shadow views, their caster draws and the lights.
    pub fn shadows(&self) -> &ShadowFrame {
        &self.shadows
    }

    /// Takes this frame's shadow views and lights from `shadows` (the caster draws from the
    /// scene's records, by slot), with the camera at `eye` looking along `forward`.
    pub fn set_shadows(&mut self, shadows: &culling::ShadowViews, eye: glam::Vec3, forward: glam::Vec3) {
        let records = &self.records[..self.count as usize];
        self.shadows.update(shadows, records, (eye, forward));
    }

    /// Sets who culls the shadow casters (see [`ShadowFrame::culling`]).
    pub fn set_shadow_culling(&mut self, culling: crate::scene::ShadowCulling) {
        self.shadows.set_culling(culling);
    }

    /// Clears the frame's shadow views and lights.
    pub fn clear_shadows(&mut self) {
        self.shadows.clear();
    }

    /// This frame's host draw commands (empty when a GPU pass writes them).
    pub fn draw_commands(&self) -> &[DrawCommand] {
        &self.draws
    }

    /// How many commands a draw without a GPU count issues: the host list's length, or the
    /// object count when a GPU pass writes the list.
    pub(crate) fn indirect_draw_count(&self) -> u32 {
        match self.draw_source {
            DrawSource::Host => self.draws.len() as u32,
            DrawSource::Gpu => self.count,
        }
    }

    /// What the latest frame uploaded.
    pub fn last_upload(&self) -> UploadReport {
        self.last_upload
    }

    /// Lists the slots whose transform (`records` false) or record waits for upload, in slot
    /// order, into the scratch list ([`GpuScene::marked_slots`]); returns how many.
    pub(crate) fn list_marked(&mut self, records: bool) -> u32 {
        let bits = if records { &self.record_dirty } else { &self.transform_dirty };
        self.upload_slots.clear();
        bits.push_set_below(self.count, &mut self.upload_slots);
        self.upload_slots.len() as u32
    }

    /// The slots [`GpuScene::list_marked`] listed.
    pub(crate) fn marked_slots(&self) -> &[u32] {
        &self.upload_slots
    }

    /// Writes the listed items' data into `out`, in the order of the list.
    pub(crate) fn write_marked(&self, records: bool, out: &mut [u8]) {
        use crate::scene::as_bytes;
        if records {
            let size = OBJECT_RECORD_BYTES as usize;
            for (chunk, &slot) in out.chunks_exact_mut(size).zip(&self.upload_slots) {
                chunk.copy_from_slice(as_bytes(std::slice::from_ref(&self.records[slot as usize])));
            }
        } else {
            let size = OBJECT_TRANSFORM_BYTES as usize;
            for (chunk, &slot) in out.chunks_exact_mut(size).zip(&self.upload_slots) {
                chunk.copy_from_slice(as_bytes(std::slice::from_ref(&self.transforms[slot as usize])));
            }
        }
    }

    /// The marked items of one kind were staged: clears their marks.
    pub(crate) fn unmark(&mut self, records: bool) {
        let bits = if records { &mut self.record_dirty } else { &mut self.transform_dirty };
        bits.clear_range(0, self.count);
    }

    /// Records this frame's upload report (its draw bytes are filled in later).
    pub(crate) fn note_upload(&mut self, transforms: u32, records: u32) {
        let slots = u64::from(transforms + records) * 4;
        self.last_upload = UploadReport {
            bytes: u64::from(transforms) * OBJECT_TRANSFORM_BYTES + u64::from(records) * OBJECT_RECORD_BYTES + slots,
            transforms,
            records,
            draw_bytes: 0,
        };
    }

    /// Records the draw-list bytes of this frame in the report.
    pub(crate) fn note_draw_upload(&mut self, bytes: u64) {
        self.last_upload.draw_bytes = bytes;
    }
}

/// One bit per slot.
struct SlotBits {
    words: Vec<u64>,
}

impl SlotBits {
    fn new(capacity: u32) -> SlotBits {
        SlotBits { words: vec![0; (capacity as usize).div_ceil(64)] }
    }

    fn mark(&mut self, index: u32) {
        self.words[index as usize / 64] |= 1 << (index % 64);
    }

    fn mark_range(&mut self, start: u32, end: u32) {
        (start..end).for_each(|index| self.mark(index));
    }

    /// Clears the bits of `start..end`, a word at a time where it can.
    fn clear_range(&mut self, start: u32, end: u32) {
        let mut index = start;
        while index < end {
            let word = index as usize / 64;
            let offset = index % 64;
            let span = (64 - offset).min(end - index);
            let mask = if span == 64 { u64::MAX } else { ((1u64 << span) - 1) << offset };
            self.words[word] &= !mask;
            index += span;
        }
    }

    fn is_set(&self, index: u32) -> bool {
        self.words[index as usize / 64] & (1 << (index % 64)) != 0
    }

    fn count_below(&self, end: u32) -> u32 {
        let full = end as usize / 64;
        let tail = end % 64;
        let mut count: u32 = self.words[..full].iter().map(|word| word.count_ones()).sum();
        if tail != 0 {
            count += (self.words[full] & ((1u64 << tail) - 1)).count_ones();
        }
        count
    }

    /// Appends every set index below `end`, ascending.
    fn push_set_below(&self, end: u32, out: &mut Vec<u32>) {
        let words = (end as usize).div_ceil(64);
        for (word_index, &word) in self.words[..words].iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let index = word_index as u32 * 64 + word.trailing_zeros();
                if index >= end {
                    return;
                }
                out.push(index);
                word &= word - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(bits: &SlotBits, end: u32) -> Vec<u32> {
        let mut out = Vec::new();
        bits.push_set_below(end, &mut out);
        out
    }

    #[test]
    fn slot_bits_list_clear_and_count_across_words() {
        let mut bits = SlotBits::new(200);
        for index in [0, 1, 63, 64, 65, 130, 199] {
            bits.mark(index);
        }
        assert_eq!(set(&bits, 200), vec![0, 1, 63, 64, 65, 130, 199]);
        assert_eq!(set(&bits, 130), vec![0, 1, 63, 64, 65], "the end is exclusive");
        assert_eq!(bits.count_below(65), 4);
        bits.clear_range(1, 130);
        assert_eq!(set(&bits, 200), vec![0, 130, 199], "a range across word boundaries is cleared");
        bits.clear_range(0, 200);
        assert!(set(&bits, 200).is_empty());
        bits.mark_range(62, 66);
        assert_eq!(set(&bits, 200), vec![62, 63, 64, 65]);
        assert_eq!(bits.count_below(200), 4);
    }
}

//! Growth of the scene's capacity: [`GpuScene::reserve`] doubles it (amortised: a world of
//! `n` objects grows `log2(n / initial)` times), allocating the new `object_transforms` and
//! `object_records` and growing the host arrays; the outgrown buffers stay with the scene.
//! The next upload ([`ObjectUploadPass`](crate::passes::ObjectUploadPass)) copies them into
//! the new buffers on the GPU, in the frame's own command buffer before its scatter, and the
//! scene keeps them until the frame that copied them has finished. A graph drawing the scene
//! takes the new buffers and declares its passes again with [`GpuScene::follow_growth`].
//!
//! A growth that cannot allocate is a [`SceneGrowthError`]: the scene keeps its capacity and
//! what it holds, and the caller draws the slots that fit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use render_graph::{vk, GpuBuffer, GpuImage, GraphError, MemoryLocation, RenderGraph};

use super::{GpuScene, ObjectRecord, ObjectTransform};
use crate::names::{OBJECT_BATCHES, OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES};

/// Bytes of a slot's batch id in `object_batches`.
pub(super) const BATCH_ID_BYTES: u64 = 4;

/// Bytes the object buffers of one scene may take (`u64::MAX`: no limit).
static MEMORY_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets, for every scene of the process, the most bytes a scene's object buffers
/// (`object_transforms` and `object_records`, 96 bytes a slot; the 4 of `object_batches` are
/// not counted) may take, and, each on its own, its mesh buffers (`mesh_vertices`,
/// `mesh_indices`, `mesh_uvs`): a growth past it
/// fails as a device out of memory does (`VK_ERROR_OUT_OF_DEVICE_MEMORY`). `None` lifts the
/// limit (the default). Meant for tests and tools that check how a game degrades under
/// memory pressure.
pub fn set_scene_memory_limit(bytes: Option<u64>) {
    MEMORY_LIMIT.store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The limit [`set_scene_memory_limit`] set (`u64::MAX`: none).
pub(super) fn memory_limit() -> u64 {
    MEMORY_LIMIT.load(Ordering::Relaxed)
}

/// The scene could not grow: its buffers for `wanted` slots could not be allocated. The scene
/// keeps `capacity` slots and what they hold.
#[derive(Debug)]
pub struct SceneGrowthError {
    /// The capacity the scene keeps.
    pub capacity: u32,
    /// The capacity it tried to grow to.
    pub wanted: u32,
    /// Why the allocation failed.
    pub source: Box<GraphError>,
}

impl std::fmt::Display for SceneGrowthError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "scene growth failed: the GPU scene could not grow from {} to {} object slots ({}); \
             the first {} slots are drawn",
            self.capacity, self.wanted, self.source, self.capacity
        )
    }
}

impl std::error::Error for SceneGrowthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Outgrown buffers whose slots the next upload copies into the buffers that replaced them.
pub(super) struct GrowthCopy {
    transforms: Arc<GpuBuffer>,
    records: Arc<GpuBuffer>,
    /// The outgrown `object_batches`, not copied (the next batch pass writes every slot's
    /// batch again) but kept as long as the others.
    batches: Arc<GpuBuffer>,
    /// Slots whose contents are copied (the object count when the scene grew).
    slots: u32,
    /// The graph frame that recorded the copy (a frame that fails is not submitted and keeps
    /// its number: the next try records it again).
    recorded_in: Option<u64>,
}

/// An outgrown buffer or image kept until the frame that last used it has finished.
pub(super) struct Retired {
    frame: u64,
    /// Held only to keep it alive.
    _held: Held,
}

/// What a [`Retired`] keeps alive.
enum Held {
    Buffer { _buffer: Arc<GpuBuffer> },
    Image { _image: Arc<GpuImage> },
}

impl Retired {
    /// `buffer`, last used by graph frame `frame`.
    pub(super) fn new(frame: u64, buffer: Arc<GpuBuffer>) -> Retired {
        Retired { frame, _held: Held::Buffer { _buffer: buffer } }
    }

    /// `image`, last used by graph frame `frame`.
    pub(super) fn image(frame: u64, image: Arc<GpuImage>) -> Retired {
        Retired { frame, _held: Held::Image { _image: image } }
    }
}

/// One copy of outgrown buffers an upload records: the sources and the targets (kept alive
/// by the scene) and the bytes of each, `object_transforms` then `object_records`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordedCopy {
    /// The outgrown `object_transforms` and `object_records`.
    pub(crate) sources: [vk::Buffer; 2],
    /// The buffers that replaced them.
    pub(crate) targets: [vk::Buffer; 2],
    /// Bytes to copy from the start of each.
    pub(crate) bytes: [u64; 2],
}

impl GpuScene {
    /// How many times the capacity or a mesh buffer grew or the cluster tables were built
    /// again: a graph that imported the scene's buffers compares it with the generation it
    /// imported ([`GpuScene::follow_growth`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Makes room for `slots` objects: when the capacity is smaller, doubles it until it is
    /// not, with new GPU buffers (the outgrown ones are copied into them by the next upload)
    /// and longer host arrays. Returns whether it grew. A graph drawing the scene must then
    /// follow ([`GpuScene::follow_growth`]) before its next frame.
    ///
    /// On an allocation failure nothing changes and the error says so.
    pub fn reserve(&mut self, slots: u32) -> Result<bool, SceneGrowthError> {
        if slots <= self.capacity {
            return Ok(false);
        }
        let mut capacity = self.capacity.max(1);
        while capacity < slots {
            capacity = capacity.saturating_mul(2);
        }
        let fail = |source| SceneGrowthError { capacity: self.capacity, wanted: capacity, source: Box::new(source) };
        let slot_bytes = OBJECT_TRANSFORM_BYTES + OBJECT_RECORD_BYTES;
        if u64::from(capacity) * slot_bytes > MEMORY_LIMIT.load(Ordering::Relaxed) {
            let result = vk::Result::ERROR_OUT_OF_DEVICE_MEMORY;
            return Err(fail(GraphError::Vulkan { call: "vkAllocateMemory", result }));
        }
        let transforms = object_buffer(&self.device, OBJECT_TRANSFORMS, capacity, OBJECT_TRANSFORM_BYTES);
        let records = object_buffer(&self.device, OBJECT_RECORDS, capacity, OBJECT_RECORD_BYTES);
        let batches = object_buffer(&self.device, OBJECT_BATCHES, capacity, BATCH_ID_BYTES);
        let (transforms, records, batches) = match (transforms, records, batches) {
            (Ok(transforms), Ok(records), Ok(batches)) => (transforms, records, batches),
            (Err(error), _, _) | (_, Err(error), _) | (_, _, Err(error)) => return Err(fail(error)),
        };
        let transforms = std::mem::replace(&mut self.transform_buffer, transforms);
        let records = std::mem::replace(&mut self.record_buffer, records);
        let batches = std::mem::replace(&mut self.batch_buffer, batches);
        // The new `object_batches` holds nothing yet: the next batch pass writes every slot.
        self.batching.table.mark_all_changed();
        // Copies chain: a growth before the last one's copy was submitted copies through the
        // buffers between, in order, in one frame.
        self.growth_copies.push(GrowthCopy { transforms, records, batches, slots: self.count, recorded_in: None });
        self.capacity = capacity;
        self.generation += 1;
        self.transforms.resize(capacity as usize, ObjectTransform::IDENTITY);
        self.records.resize(capacity as usize, ObjectRecord::EMPTY);
        self.transform_dirty.grow(capacity);
        self.record_dirty.grow(capacity);
        self.blended.grow(capacity);
        Ok(true)
    }

    /// Brings `graph` to the scene's buffers when the scene grew since generation `seen`
    /// (updated): imports the new buffers and has the graph compile again at its next frame,
    /// so that passes sized by the capacity declare their resources again. Returns whether it
    /// did.
    ///
    /// Called between frames once the frame's records are set (the Render stage does), it
    /// first brings kept cluster tables up to date ([`GpuScene::refresh_clusters`]), so a
    /// scene culled meshlet by meshlet needs no other call; the graph compiles again only
    /// when they changed. A refresh that cannot upload keeps the old tables (the changed
    /// objects drawn whole), warns once and is tried again at the next call.
    pub fn follow_growth(&mut self, graph: &mut RenderGraph, seen: &mut u64) -> bool {
        self.refresh_clusters_or_warn();
        if *seen == self.generation {
            return false;
        }
        *seen = self.generation;
        self.import_into(graph);
        graph.invalidate();
        true
    }

    /// Lists into `out` the copies of outgrown buffers the upload of graph frame `frame`
    /// records, oldest first (none, unless the scene grew); frees the outgrown buffers no
    /// frame in flight uses any more (`frame` is prepared once the frame
    /// [`render_graph::FRAMES_IN_FLIGHT`] before it has finished).
    pub(crate) fn growth_copies_for(&mut self, frame: u64, out: &mut Vec<RecordedCopy>) {
        out.clear();
        if self.retired.is_empty() && self.growth_copies.is_empty() {
            return;
        }
        let finished = frame.checked_sub(render_graph::FRAMES_IN_FLIGHT as u64);
        self.retired.retain(|retired| finished.is_none_or(|finished| retired.frame > finished));
        // A copy recorded by an earlier frame was submitted (a frame that fails keeps its
        // number): its sources live until that frame has finished.
        let retired = &mut self.retired;
        self.growth_copies.retain_mut(|copy| match copy.recorded_in {
            Some(recorded) if recorded < frame => {
                retired.push(Retired::new(recorded, Arc::clone(&copy.transforms)));
                retired.push(Retired::new(recorded, Arc::clone(&copy.records)));
                retired.push(Retired::new(recorded, Arc::clone(&copy.batches)));
                false
            }
            _ => true,
        });
        for index in 0..self.growth_copies.len() {
            let (sources, targets) = match &self.growth_copies[index..] {
                [copy, next, ..] => {
                    ([copy.transforms.raw(), copy.records.raw()], [next.transforms.raw(), next.records.raw()])
                }
                [copy] => (
                    [copy.transforms.raw(), copy.records.raw()],
                    [self.transform_buffer.raw(), self.record_buffer.raw()],
                ),
                [] => unreachable!("index below the length"),
            };
            let copy = &mut self.growth_copies[index];
            copy.recorded_in = Some(frame);
            let slots = u64::from(copy.slots);
            out.push(RecordedCopy {
                sources,
                targets,
                bytes: [slots * OBJECT_TRANSFORM_BYTES, slots * OBJECT_RECORD_BYTES],
            });
        }
    }
}

/// One of the scene's object buffers: `capacity` items of `bytes` each, on the device.
pub(super) fn object_buffer(
    device: &Arc<render_graph::GpuDevice>,
    name: &str,
    capacity: u32,
    bytes: u64,
) -> render_graph::Result<Arc<GpuBuffer>> {
    // Copy source too: tools and tests read the scene back, and a growth copies it.
    let usage =
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
    GpuBuffer::new(device, name, u64::from(capacity) * bytes, usage, MemoryLocation::GpuOnly).map(Arc::new)
}

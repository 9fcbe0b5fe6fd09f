//! Checks that the GPU scene mirrors the world: after a frame, `object_transforms` and
//! `object_records` are read back and every slot is compared with what a from-scratch upload
//! of the same world would hold, built here from the entities' components alone (their
//! transforms, meshes, poses, visibility and colours) and the Visibility stage's slots and
//! levels of detail. Nothing of the Render stage's incremental bookkeeping is trusted.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use culling::Visibility;
use ecs::{BaseColor, Mesh, SkinnedPose, Transform, Visible, WorldTransform};
use hecs::{Entity, World};
use render_graph::readback::BufferReadbackPass;
use render_graph::{GpuDevice, ReadbackBuffer, RenderGraph};
use renderer::FrameTarget;
use renderer::{
    MeshLibrary, ObjectRecord, ObjectTransform, OBJECT_RECORDS, OBJECT_RECORD_BYTES, OBJECT_TRANSFORMS,
    OBJECT_TRANSFORM_BYTES,
};

/// Name of the host copy of `object_transforms`.
pub const TRANSFORMS_READBACK: &str = "scene check transforms";
/// Name of the host copy of `object_records`.
pub const RECORDS_READBACK: &str = "scene check records";

/// What the GPU held after a frame: the first `capacity` transforms and records.
#[derive(Clone, Debug, Default)]
pub struct GpuSceneCopy {
    /// `object_transforms`, by slot.
    pub transforms: Vec<ObjectTransform>,
    /// `object_records`, by slot.
    pub records: Vec<ObjectRecord>,
    /// Whether the copy is of the last frame (it is cleared when a frame is not read).
    pub fresh: bool,
}

/// Shared between a [`SceneCheckTarget`] and the code that compares.
pub type SharedSceneCopy = Arc<Mutex<GpuSceneCopy>>;

/// Locks a [`SharedSceneCopy`] (a panicked holder left plain data behind).
pub fn lock_copy(copy: &SharedSceneCopy) -> MutexGuard<'_, GpuSceneCopy> {
    copy.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A [`FrameTarget`] that wraps another and copies the GPU scene's buffers to the host after
/// each frame it is asked to (it waits for the frame).
pub struct SceneCheckTarget {
    inner: Option<Box<dyn FrameTarget>>,
    device: Arc<GpuDevice>,
    capacity: u32,
    readbacks: Option<(ReadbackBuffer, ReadbackBuffer)>,
    copy: SharedSceneCopy,
    /// Read back every frame (else: none; see [`SceneCheckTarget::reads`]).
    read: Arc<std::sync::atomic::AtomicBool>,
}

impl SceneCheckTarget {
    /// A target for a GPU scene of `capacity` slots on `device`, around `inner` (or none),
    /// and the copy it fills.
    pub fn new(
        device: &Arc<GpuDevice>,
        capacity: u32,
        inner: Option<Box<dyn FrameTarget>>,
    ) -> (SceneCheckTarget, SharedSceneCopy) {
        let copy = SharedSceneCopy::default();
        let target = SceneCheckTarget {
            inner,
            device: Arc::clone(device),
            capacity,
            readbacks: None,
            copy: Arc::clone(&copy),
            read: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        };
        (target, copy)
    }

    /// The switch saying whether the next frames are read back (on by default).
    pub fn reads(&self) -> Arc<std::sync::atomic::AtomicBool> {
        Arc::clone(&self.read)
    }
}

impl FrameTarget for SceneCheckTarget {
    fn add_passes(&mut self, graph: &mut RenderGraph) -> render_graph::Result<()> {
        if let Some(inner) = &mut self.inner {
            inner.add_passes(graph)?;
        }
        let slots = u64::from(self.capacity.max(1));
        let transforms = ReadbackBuffer::new(&self.device, TRANSFORMS_READBACK, slots * OBJECT_TRANSFORM_BYTES)?;
        let records = ReadbackBuffer::new(&self.device, RECORDS_READBACK, slots * OBJECT_RECORD_BYTES)?;
        graph.import_buffer(TRANSFORMS_READBACK, transforms.shared());
        graph.import_buffer(RECORDS_READBACK, records.shared());
        graph.add_typed_pass(BufferReadbackPass::new(OBJECT_TRANSFORMS, TRANSFORMS_READBACK));
        graph.add_typed_pass(BufferReadbackPass::new(OBJECT_RECORDS, RECORDS_READBACK));
        self.readbacks = Some((transforms, records));
        Ok(())
    }

    fn begin_frame(&mut self, graph: &mut RenderGraph, frame: renderer::TargetFrame) -> render_graph::Result<bool> {
        lock_copy(&self.copy).fresh = false;
        match &mut self.inner {
            Some(inner) => inner.begin_frame(graph, frame),
            None => Ok(true),
        }
    }

    fn end_frame(&mut self, graph: &mut RenderGraph, frame: renderer::TargetFrame) -> render_graph::Result<()> {
        if let Some(inner) = &mut self.inner {
            inner.end_frame(graph, frame)?;
        }
        let (Some((transforms, records)), true) =
            (&self.readbacks, self.read.load(std::sync::atomic::Ordering::Relaxed))
        else {
            return Ok(());
        };
        graph.wait_idle()?;
        let mut copy = lock_copy(&self.copy);
        copy.transforms.clear();
        copy.transforms.extend(transforms.read()?.chunks_exact(OBJECT_TRANSFORM_BYTES as usize).map(transform_of));
        copy.records.clear();
        copy.records.extend(records.read()?.chunks_exact(OBJECT_RECORD_BYTES as usize).map(record_of));
        copy.fresh = true;
        Ok(())
    }

    fn draw_view(&self) -> Option<[[f32; 4]; 4]> {
        self.inner.as_ref().and_then(|inner| inner.draw_view())
    }
}

fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|word| u32::from_le_bytes(word.try_into().expect("four bytes")))
}

fn transform_of(bytes: &[u8]) -> ObjectTransform {
    let floats: Vec<f32> = words(bytes).map(f32::from_bits).collect();
    let row = |r: usize| [floats[r * 4], floats[r * 4 + 1], floats[r * 4 + 2], floats[r * 4 + 3]];
    ObjectTransform { rows: [row(0), row(1), row(2)] }
}

fn record_of(bytes: &[u8]) -> ObjectRecord {
    let w: Vec<u32> = words(bytes).collect();
    let f = |index: usize| f32::from_bits(w[index]);
    ObjectRecord {
        local_center: [f(0), f(1), f(2)],
        index_count: w[3],
        local_half: [f(4), f(5), f(6)],
        first_index: w[7],
        vertex_offset: w[8] as i32,
        color: w[9],
        material: w[10],
        mesh: w[11],
        skin_first: w[12],
        skin_count: w[13],
        reserved: [w[14], w[15]],
    }
}

/// What a from-scratch upload of `world` puts in each slot: `None` for an empty slot (a free
/// slot, or an object that is not drawable), else the object's transform and record. The
/// level of detail is the Visibility stage's choice (`visibility.objects().draws`); the rest
/// comes from the entity's components.
pub fn expected_scene(
    world: &World,
    visibility: &Visibility,
    meshes: &MeshLibrary,
) -> Vec<Option<(ObjectTransform, ObjectRecord)>> {
    let mut slots = vec![None; visibility.len()];
    let mut query = world.query::<(
        Entity,
        &Mesh,
        Option<&WorldTransform>,
        Option<&Transform>,
        Option<&Visible>,
        Option<&SkinnedPose>,
        Option<&BaseColor>,
    )>();
    for (entity, mesh, placed, local, shown, pose, color) in query.iter() {
        let Some(slot) = visibility.slot_of(entity) else { continue };
        let slot = slot as usize;
        let model = match (placed, local) {
            (Some(placed), _) => placed.0,
            (None, Some(local)) => local.to_matrix(),
            (None, None) => continue,
        };
        if !(shown.is_none_or(|shown| shown.0) && mesh.is_drawable()) || slot >= slots.len() {
            continue;
        }
        let drawn = visibility.objects().draws[slot].mesh;
        let Some(range) = meshes.range(drawn.0) else { continue };
        let bounds = mesh.local_bounds(pose);
        let (local_center, local_half) = ObjectRecord::center_half(bounds.min.to_array(), bounds.max.to_array());
        let record = ObjectRecord {
            local_center,
            index_count: range.index_count,
            local_half,
            first_index: range.first_index,
            vertex_offset: range.vertex_offset,
            color: color.map_or(BaseColor::WHITE, |color| *color).packed(),
            material: mesh.material.0,
            mesh: drawn.0,
            ..ObjectRecord::EMPTY
        };
        // A skinned mesh carries its rig's palette slice; without a rig it is drawn rigid.
        let skin = world.get::<&animation::Skin>(entity).ok().map(|skin| (skin.skin_first(), skin.skin_count()));
        let record = match skin {
            Some((skin_first, skin_count)) if skin_count > 0 && renderer::mesh_is_skinned(meshes, drawn.0) => {
                ObjectRecord { skin_first, skin_count, ..record }
            }
            _ => record,
        };
        slots[slot] = Some((ObjectTransform::from_cols(&model.to_cols_array_2d()), record));
    }
    slots
}

/// The slots where `copy` differs from `expected` (at most `limit` described), and how many
/// differ in all. An empty slot must hold an empty record; a drawn one its exact transform
/// and record, bit for bit.
pub fn compare_scene(
    expected: &[Option<(ObjectTransform, ObjectRecord)>],
    copy: &GpuSceneCopy,
    limit: usize,
) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut described = Vec::new();
    for (slot, wanted) in expected.iter().enumerate() {
        let (Some(transform), Some(record)) = (copy.transforms.get(slot), copy.records.get(slot)) else {
            count += 1;
            continue;
        };
        let same = match wanted {
            None => record.is_empty(),
            Some((want_transform, want_record)) => {
                bits(transform) == bits(want_transform) && record_bits(record) == record_bits(want_record)
            }
        };
        if !same {
            count += 1;
            if described.len() < limit {
                described.push(format!("slot {slot}: GPU {transform:?} {record:?}, expected {wanted:?}"));
            }
        }
    }
    (count, described)
}

fn bits(transform: &ObjectTransform) -> [u32; 12] {
    let mut out = [0; 12];
    for (word, value) in out.iter_mut().zip(transform.rows.as_flattened()) {
        *word = value.to_bits();
    }
    out
}

fn record_bits(record: &ObjectRecord) -> [u32; 12] {
    let [cx, cy, cz] = record.local_center.map(f32::to_bits);
    let [hx, hy, hz] = record.local_half.map(f32::to_bits);
    [
        cx,
        cy,
        cz,
        record.index_count,
        hx,
        hy,
        hz,
        record.first_index,
        record.vertex_offset as u32,
        record.color,
        record.material,
        record.mesh,
    ]
}

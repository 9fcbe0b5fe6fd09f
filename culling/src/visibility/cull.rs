//! The parallel pass of the Visibility stage: per 64-object word, the objects' columns, the
//! SIMD frustum kernel, then the distance and screen-size culls on the survivors.
//!
//! Jobs take disjoint ranges of whole words (the grain is a multiple of 64 and ranges start
//! at 0), so each writes its own objects' entries and its own words: no locks, no atomics
//! except one statistics add per job.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs::{Aabb, Lod, Mesh, ShadowCaster, SkinnedPose, Transform, Visible, WorldTransform};
use glam::{Mat4, Vec3};
use runtime::hecs::{Archetype, ArchetypeColumn, World};

use super::result::{ObjectDraw, EMPTY_BOX};
use crate::bits::BITS_PER_WORD;
use crate::kernels::Kernel;
use crate::soa::AabbBlock;
use crate::view::ViewCullContext;

/// Objects per job: whole words, large enough that a job's work dwarfs handing it out.
pub(crate) const GRAIN: usize = 16 * BITS_PER_WORD;

/// A run of objects that live in one archetype: objects `start .. start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Position of the archetype in `World::archetypes()`.
    pub archetype: usize,
    /// Index of the archetype's first object.
    pub start: usize,
    /// Objects in the archetype.
    pub len: usize,
}

/// Fills `segments` with the archetypes holding a [`Mesh`], in query order; returns the
/// object count.
pub(crate) fn list_segments(world: &World, segments: &mut Vec<Segment>) -> usize {
    segments.clear();
    let mut start = 0;
    for (position, archetype) in world.archetypes().enumerate() {
        let len = archetype.len() as usize;
        if len == 0 || !archetype.has::<Mesh>() {
            continue;
        }
        segments.push(Segment { archetype: position, start, len });
        start += len;
    }
    start
}

/// What the pass decides per view, the same for every job.
pub(crate) struct PassInputs<'a> {
    pub world: &'a World,
    pub segments: &'a [Segment],
    pub view: &'a ViewCullContext,
    pub kernel: Kernel,
    /// Frustum culling on, and the view finite.
    pub frustum_culling: bool,
    pub lod_scale: f32,
    pub lod_bias: f32,
}

/// Where the pass writes: raw views of the result's columns and words.
///
/// Each job writes only the entries of its own objects and words; that is the whole
/// synchronisation argument, and why the pointers may be shared.
pub(crate) struct PassOutputs {
    pub models: *mut Mat4,
    pub bounds: *mut Aabb,
    pub draws: *mut ObjectDraw,
    pub entities: *mut runtime::hecs::Entity,
    pub visible: *mut u64,
    pub drawable: *mut u64,
    pub casters: *mut u64,
    pub tagged: *mut u64,
    pub objects: usize,
}

// SAFETY: the pointers are only dereferenced at indices of a job's own disjoint range (see
// `run_range`), and the columns they point into outlive the parallel call that uses them.
unsafe impl Sync for PassOutputs {}
// SAFETY: as above; the struct is only moved into the scope of one parallel call.
unsafe impl Send for PassOutputs {}

/// Statistics summed over jobs (relaxed: read only after every job joined).
#[derive(Default)]
pub(crate) struct PassTotals {
    pub drawable: AtomicUsize,
    pub visible: AtomicUsize,
    pub frustum_rejected: AtomicUsize,
    pub distance_rejected: AtomicUsize,
    pub size_rejected: AtomicUsize,
    pub non_finite: AtomicUsize,
}

#[derive(Default)]
struct LocalTotals {
    drawable: usize,
    visible: usize,
    frustum_rejected: usize,
    distance_rejected: usize,
    size_rejected: usize,
    non_finite: usize,
}

impl PassTotals {
    fn add(&self, local: &LocalTotals) {
        self.drawable.fetch_add(local.drawable, Ordering::Relaxed);
        self.visible.fetch_add(local.visible, Ordering::Relaxed);
        self.frustum_rejected.fetch_add(local.frustum_rejected, Ordering::Relaxed);
        self.distance_rejected.fetch_add(local.distance_rejected, Ordering::Relaxed);
        self.size_rejected.fetch_add(local.size_rejected, Ordering::Relaxed);
        self.non_finite.fetch_add(local.non_finite, Ordering::Relaxed);
    }
}

/// The columns of one archetype the pass reads, borrowed once per segment and job.
struct Columns<'w> {
    archetype: &'w Archetype,
    meshes: ArchetypeColumn<'w, Mesh>,
    world: Option<ArchetypeColumn<'w, WorldTransform>>,
    local: Option<ArchetypeColumn<'w, Transform>>,
    shown: Option<ArchetypeColumn<'w, Visible>>,
    poses: Option<ArchetypeColumn<'w, SkinnedPose>>,
    lods: Option<ArchetypeColumn<'w, Lod>>,
    caster: bool,
    tagged: bool,
}

impl<'w> Columns<'w> {
    fn of(world: &'w World, segment: &Segment) -> Columns<'w> {
        let archetype = world
            .archetypes()
            .nth(segment.archetype)
            .expect("segments are listed from this frame's world, which cannot change under &World");
        Columns {
            archetype,
            meshes: archetype.get::<&Mesh>().expect("segments list only archetypes holding a Mesh"),
            world: archetype.get::<&WorldTransform>(),
            local: archetype.get::<&Transform>(),
            shown: archetype.get::<&Visible>(),
            poses: archetype.get::<&SkinnedPose>(),
            lods: archetype.get::<&Lod>(),
            caster: archetype.has::<ShadowCaster>(),
            tagged: archetype.has::<ecs::Culled>(),
        }
    }
}

/// Culls the objects of `range` (whole words, starting on a word boundary).
pub(crate) fn run_range(inputs: &PassInputs<'_>, outputs: &PassOutputs, totals: &PassTotals, range: Range<usize>) {
    debug_assert_eq!(range.start % BITS_PER_WORD, 0, "jobs start on a word boundary");
    debug_assert!(range.end <= outputs.objects, "job range {range:?} past {} objects", outputs.objects);
    let segments = inputs.segments;
    // The segment holding the range's first object.
    let mut segment_index = segments.partition_point(|segment| segment.start + segment.len <= range.start);
    let mut segment = segments[segment_index];
    let mut columns = Columns::of(inputs.world, &segment);
    let mut block = AabbBlock::new();
    let mut local = LocalTotals::default();
    // With both off (the defaults), the per-survivor loop below has nothing to reject.
    let secondary_culls = inputs.view.max_distance_sq().is_finite() || inputs.view.screen_size().is_enabled();

    let mut word_start = range.start;
    while word_start < range.end {
        let word_end = (word_start + BITS_PER_WORD).min(range.end);
        block.clear();
        let (mut drawable, mut casters, mut tagged, mut forced) = (0u64, 0u64, 0u64, 0u64);
        for index in word_start..word_end {
            while index >= segment.start + segment.len {
                segment_index += 1;
                segment = segments[segment_index];
                columns = Columns::of(inputs.world, &segment);
            }
            let row = index - segment.start;
            let bit = 1u64 << (index - word_start);
            if columns.caster {
                casters |= bit;
            }
            if columns.tagged {
                tagged |= bit;
            }
            let id = columns.archetype.ids()[row];
            // SAFETY: every row of an archetype is a live entity, and the world is borrowed
            // shared for the whole pass, so none can be despawned meanwhile.
            let entity = unsafe { inputs.world.find_entity_from_id(id) };
            // SAFETY: `index` lies in this job's range, which no other job touches, and is
            // below `outputs.objects`, the length of every column.
            unsafe { outputs.entities.add(index).write(entity) };
            let Some((model, center, half, draw)) = object_of(inputs, &columns, row) else {
                // SAFETY: as above.
                unsafe {
                    outputs.models.add(index).write(Mat4::IDENTITY);
                    outputs.bounds.add(index).write(EMPTY_BOX);
                    outputs.draws.add(index).write(ObjectDraw::NONE);
                }
                block.push_center_half(Vec3::ZERO, Vec3::ZERO);
                continue;
            };
            drawable |= bit;
            let world_box = Aabb { min: center - half, max: center + half };
            if !is_finite_object(&model, center, half) {
                forced |= bit;
            }
            // SAFETY: as above.
            unsafe {
                outputs.models.add(index).write(model);
                outputs.bounds.add(index).write(world_box);
                outputs.draws.add(index).write(draw);
            }
            block.push_center_half(center, half);
        }

        // Frustum: the SIMD kernel on the word's boxes (non-finite boxes come back kept).
        let mut inside = [u64::MAX];
        if inputs.frustum_culling {
            inputs.kernel.cull_aabbs(inputs.view.frustum(), block.slices(), &mut inside);
        }
        let mut visible = (inside[0] & drawable) | forced;
        local.frustum_rejected += (drawable & !visible).count_ones() as usize;

        // Distance, then screen size, on the finite survivors only.
        let mut survivors = if secondary_culls { visible & !forced } else { 0 };
        while survivors != 0 {
            let offset = survivors.trailing_zeros() as usize;
            survivors &= survivors - 1;
            // SAFETY: written above by this job for this index.
            let world_box = unsafe { &*outputs.bounds.add(word_start + offset) };
            let center = world_box.center();
            if !crate::size::is_near_enough(inputs.view.distance_sq(center), inputs.view.max_distance_sq()) {
                visible &= !(1u64 << offset);
                local.distance_rejected += 1;
            } else if !inputs
                .view
                .screen_size()
                .keeps(world_box.half_extent().length_squared(), inputs.view.depth(center))
            {
                visible &= !(1u64 << offset);
                local.size_rejected += 1;
            }
        }

        local.drawable += drawable.count_ones() as usize;
        local.visible += visible.count_ones() as usize;
        local.non_finite += forced.count_ones() as usize;
        let word = word_start / BITS_PER_WORD;
        // SAFETY: word `word` covers objects `word_start .. word_end`, all in this job's range.
        unsafe {
            outputs.visible.add(word).write(visible);
            outputs.drawable.add(word).write(drawable);
            outputs.casters.add(word).write(casters);
            outputs.tagged.add(word).write(tagged);
        }
        word_start = word_end;
    }
    totals.add(&local);
}

/// Whether an object's matrix and world box are finite, with a few vector operations instead
/// of 22 scalar checks: a sum is finite only if every term is (infinities of opposite signs
/// give NaN), and `x * 0` is zero exactly when `x` is finite. A sum of huge finite terms that
/// overflows reads as non-finite, which only keeps the object: the conservative side.
#[inline(always)]
fn is_finite_object(model: &Mat4, center: Vec3, half: Vec3) -> bool {
    let sum = model.x_axis + model.y_axis + model.z_axis + model.w_axis + (center + half).extend(0.0);
    (sum * 0.0).cmpeq(glam::Vec4::ZERO).all()
}

/// A drawable object's world matrix, world box (centre and half extents) and draw; `None`
/// when the object is not drawable.
#[inline(always)]
fn object_of(inputs: &PassInputs<'_>, columns: &Columns<'_>, row: usize) -> Option<(Mat4, Vec3, Vec3, ObjectDraw)> {
    let mesh = &columns.meshes[row];
    let shown = columns.shown.as_ref().is_none_or(|shown| shown[row].0);
    if !(shown && mesh.is_drawable()) {
        return None;
    }
    let model = match (&columns.world, &columns.local) {
        (Some(world), _) => world[row].0,
        (None, Some(local)) => local[row].to_matrix(),
        (None, None) => return None,
    };
    let local = match &columns.poses {
        Some(poses) => mesh.local_bounds(Some(&poses[row])),
        None => mesh.bounds,
    };
    let (center, half) = local.transformed_center_half(&model);
    let mut draw = ObjectDraw { mesh: mesh.mesh, material: mesh.material };
    if let Some(lods) = &columns.lods {
        let distance = inputs.view.distance_sq(center).sqrt();
        if let Some(level) = lods[row].select(distance, inputs.lod_scale, inputs.lod_bias) {
            draw.mesh = level;
        }
    }
    Some((model, center, half, draw))
}

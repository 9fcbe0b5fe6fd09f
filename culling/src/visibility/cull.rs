//! The parallel pass of the Visibility stage: per 64-object word, the objects' columns, the
//! SIMD frustum kernel, then the distance and screen-size culls on the survivors.
//!
//! Jobs take disjoint ranges of whole words of storage order (the grain is a multiple of 64
//! and ranges start at 0) and write every per-object column entry through the object's
//! persistent slot (see `slots.rs`): slots are unique, so each job writes its own entries.
//! The answers that end up as bits are first written as one flag byte per slot (bits would
//! need atomics: two jobs may own slots of one word), then [`pack_slot_flags`] packs them
//! into the slot words, in parallel by word ranges: no locks, no atomics except one
//! statistics add per job.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs::{Aabb, Lod, Mesh, ShadowCaster, SkinnedPose, Transform, Visible, WorldTransform};
use glam::{Mat4, Vec3};
use runtime::hecs::ArchetypeColumn;

use super::answer::Visibility;
use super::cache::{CachedBounds, Verdict};
use super::changes::{ChangeRun, SlotChanges};
use super::level::LevelRule;
use super::objects::{ObjectDraw, EMPTY_BOX};
use super::reads::CullColumns;
use super::segments::Segment;
use super::slots::SlotWork;
use crate::bits::BITS_PER_WORD;
use crate::kernels::Kernel;
use crate::prefetch::prefetch_entry;
use crate::soa::AabbBlock;
use crate::view::ViewCullContext;

mod pack;

pub(crate) use pack::pack_slot_flags;

/// What the pass decides per view, the same for every job.
pub(crate) struct PassInputs<'a> {
    pub world: &'a CullColumns<'a>,
    pub segments: &'a [Segment],
    pub view: &'a ViewCullContext,
    pub kernel: Kernel,
    /// Frustum culling on, and the view finite.
    pub frustum_culling: bool,
    pub lod_scale: f32,
    pub lod_bias: f32,
    /// How a level of detail is picked (the error rule or the distances).
    pub levels: LevelRule<'a>,
    /// Changes whenever anything a verdict depends on besides the box changes (see `cache.rs`).
    pub view_epoch: u32,
}

/// Where the pass writes: raw views of the result's per-slot columns.
///
/// Each job writes only the column entries of its own objects' slots (slots are unique); that
/// is the whole synchronisation argument, and why the pointers may be shared.
pub(crate) struct PassOutputs<'a> {
    /// The slot of each object in storage order.
    pub slots: &'a [u32],
    pub models: *mut Mat4,
    pub bounds: *mut Aabb,
    pub draws: *mut ObjectDraw,
    /// What each slot's world box was computed from, and its last verdict.
    pub cache: *mut CachedBounds,
    /// One byte of [`SlotFlag`] bits per slot.
    pub flags: *mut u8,
    /// Storage-order objects.
    pub objects: usize,
    /// Where the slots whose columns change are marked.
    pub changes: &'a SlotChanges,
}

/// The bits of a slot's flag byte, in the order of the word columns [`pack_slot_flags`]
/// writes.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub(crate) enum SlotFlag {
    /// May be visible.
    Visible = 0,
    /// Drawable.
    Drawable = 1,
    /// Casts shadows.
    Caster = 2,
    /// Carried the `Culled` tag this frame.
    CulledTag = 3,
    /// Carried the `Occluded` tag this frame.
    OccludedTag = 4,
    /// Drawable, with a matrix or box that is not finite (always kept).
    NonFinite = 5,
    /// Drawable, with levels of detail (`Lod`).
    HasLod = 6,
    /// The slot's draw (mesh, material) was written with a new value this frame: a tracked
    /// frame finds its word's occluder bits again. Not packed into a word column.
    DrawChanged = 7,
}

impl<'a> PassOutputs<'a> {
    /// Raw views of `visibility`'s per-slot columns and `work`'s flag bytes, for `objects`
    /// objects of storage order (their slots are `work`'s).
    pub(crate) fn of(visibility: &'a mut Visibility, work: &'a mut SlotWork, objects: usize) -> PassOutputs<'a> {
        let Visibility { objects: columns, changes, .. } = visibility;
        let SlotWork { slots, slot_flags, .. } = work;
        PassOutputs {
            slots: slots.storage(),
            models: columns.models.as_mut_ptr(),
            bounds: columns.bounds.as_mut_ptr(),
            draws: columns.draws.as_mut_ptr(),
            cache: columns.cache.as_mut_ptr(),
            flags: slot_flags.as_mut_ptr(),
            objects,
            changes,
        }
    }
}

// SAFETY: the pointers are only dereferenced at the slots of a job's own disjoint range (see
// `run_range`), and the columns they point into outlive the parallel call that uses them.
unsafe impl Sync for PassOutputs<'_> {}
// SAFETY: as above; the struct is only moved into the scope of one parallel call.
unsafe impl Send for PassOutputs<'_> {}

/// Statistics summed over jobs (relaxed: read only after every job joined).
#[derive(Default)]
pub(crate) struct PassTotals {
    pub drawable: AtomicUsize,
    pub visible: AtomicUsize,
    pub frustum_rejected: AtomicUsize,
    pub distance_rejected: AtomicUsize,
    pub size_rejected: AtomicUsize,
    pub non_finite: AtomicUsize,
    pub bounds_computed: AtomicUsize,
}

#[derive(Default)]
struct LocalTotals {
    drawable: usize,
    visible: usize,
    frustum_rejected: usize,
    distance_rejected: usize,
    size_rejected: usize,
    non_finite: usize,
    bounds_computed: usize,
}

impl PassTotals {
    fn add(&self, local: &LocalTotals) {
        self.drawable.fetch_add(local.drawable, Ordering::Relaxed);
        self.visible.fetch_add(local.visible, Ordering::Relaxed);
        self.frustum_rejected.fetch_add(local.frustum_rejected, Ordering::Relaxed);
        self.distance_rejected.fetch_add(local.distance_rejected, Ordering::Relaxed);
        self.size_rejected.fetch_add(local.size_rejected, Ordering::Relaxed);
        self.non_finite.fetch_add(local.non_finite, Ordering::Relaxed);
        self.bounds_computed.fetch_add(local.bounds_computed, Ordering::Relaxed);
    }
}

/// The columns of one archetype the pass reads, borrowed once per segment and job.
struct SegmentColumns<'w> {
    meshes: ArchetypeColumn<'w, Mesh>,
    world: Option<ArchetypeColumn<'w, WorldTransform>>,
    local: Option<ArchetypeColumn<'w, Transform>>,
    shown: Option<ArchetypeColumn<'w, Visible>>,
    poses: Option<ArchetypeColumn<'w, SkinnedPose>>,
    lods: Option<ArchetypeColumn<'w, Lod>>,
    caster: bool,
    tagged: bool,
    occluded_tag: bool,
}

impl<'w> SegmentColumns<'w> {
    fn of(world: &CullColumns<'w>, segment: &Segment) -> SegmentColumns<'w> {
        let archetype = world
            .archetype(segment.archetype)
            .expect("segments are listed from this frame's world, which cannot change under &World");
        SegmentColumns {
            meshes: archetype.column::<Mesh>().expect("segments list only archetypes holding a Mesh"),
            world: archetype.column::<WorldTransform>(),
            local: archetype.column::<Transform>(),
            shown: archetype.column::<Visible>(),
            poses: archetype.column::<SkinnedPose>(),
            lods: archetype.column::<Lod>(),
            caster: archetype.has::<ShadowCaster>(),
            tagged: archetype.has::<ecs::Culled>(),
            occluded_tag: archetype.has::<ecs::Occluded>(),
        }
    }
}

/// Culls the objects of `range` of storage order (the full pass gives each job whole words;
/// a tracked frame gives the rows of archetypes that were written): per word of 64 objects,
/// each object's columns ([`prepare_object`]), the culls on the word's fresh boxes
/// ([`cull_word`]), then the flag bytes ([`write_word_flags`]).
pub(crate) fn run_range(inputs: &PassInputs<'_>, outputs: &PassOutputs<'_>, totals: &PassTotals, range: Range<usize>) {
    debug_assert!(range.end <= outputs.objects, "job range {range:?} past {} objects", outputs.objects);
    let mut cursor = SegmentCursor::at(inputs, range.start);
    let mut word = WordScratch::new();
    let mut local = LocalTotals::default();
    let mut changes = ChangeRun::new(outputs.changes);
    // With both off (the defaults), the per-survivor loop of `cull_word` has nothing to reject.
    let secondary_culls = inputs.view.has_secondary_culls();

    let mut word_start = range.start;
    while word_start < range.end {
        let word_end = (word_start + BITS_PER_WORD).min(range.end);
        word.begin();
        for index in word_start..word_end {
            cursor.advance_to(inputs, index);
            let object = WordObject { index, offset: index - word_start };
            prepare_object(inputs, outputs, &cursor, &mut word, &mut local, &mut changes, object);
        }
        let visible = cull_word(inputs, outputs, &mut word, &mut local, word_start, secondary_culls);
        write_word_flags(outputs, &word, visible, &mut local, word_start..word_end);
        word_start = word_end;
    }
    changes.flush();
    totals.add(&local);
}

/// The segment a job is in and its columns, moved forward object by object.
struct SegmentCursor<'w> {
    index: usize,
    segment: Segment,
    columns: SegmentColumns<'w>,
    /// The flags every object of the segment has, and those its drawable ones add.
    common_flags: u8,
    drawable_flags: u8,
}

impl<'w> SegmentCursor<'w> {
    /// At the segment holding object `first`.
    #[inline]
    fn at(inputs: &PassInputs<'w>, first: usize) -> Self {
        let segments = inputs.segments;
        let index = segments.partition_point(|segment| segment.start + segment.len <= first);
        let segment = segments[index];
        let columns = SegmentColumns::of(inputs.world, &segment);
        let (common_flags, drawable_flags) = segment_flags(&columns);
        SegmentCursor { index, segment, columns, common_flags, drawable_flags }
    }

    /// Moves to the segment holding object `index` (at or after the current one).
    #[inline(always)]
    fn advance_to(&mut self, inputs: &PassInputs<'w>, index: usize) {
        while index >= self.segment.start + self.segment.len {
            self.index += 1;
            self.segment = inputs.segments[self.index];
            self.columns = SegmentColumns::of(inputs.world, &self.segment);
            (self.common_flags, self.drawable_flags) = segment_flags(&self.columns);
        }
    }
}

/// The flags every object of a segment has, and those its drawable ones add.
#[inline]
fn segment_flags(columns: &SegmentColumns<'_>) -> (u8, u8) {
    let flag = |on: bool, kind: SlotFlag| u8::from(on) << kind as u8;
    let common = flag(columns.caster, SlotFlag::Caster)
        | flag(columns.tagged, SlotFlag::CulledTag)
        | flag(columns.occluded_tag, SlotFlag::OccludedTag);
    (common, common | flag(true, SlotFlag::Drawable) | flag(columns.lods.is_some(), SlotFlag::HasLod))
}

/// What one word of [`run_range`] gathers before its culls.
struct WordScratch {
    /// The boxes of the objects whose verdict is computed this frame, in order.
    block: AabbBlock,
    /// `pushed[k]` is the offset in the word of the k-th box of `block`.
    pushed: [u8; BITS_PER_WORD],
    /// The cache entries of the boxes of `block`, to record their verdicts.
    fresh_entries: [*mut CachedBounds; BITS_PER_WORD],
    /// Per object of the word: its flags but `Visible`, which the culls add at the end.
    flags: [u8; BITS_PER_WORD],
    drawable: u64,
    forced: u64,
    draw_changed: u64,
    /// Objects whose verdict this view already gave, and those of them that were visible.
    reused: u64,
    reused_visible: u64,
}

impl WordScratch {
    fn new() -> Self {
        WordScratch {
            block: AabbBlock::new(),
            pushed: [0; BITS_PER_WORD],
            fresh_entries: [std::ptr::null_mut(); BITS_PER_WORD],
            flags: [0; BITS_PER_WORD],
            drawable: 0,
            forced: 0,
            draw_changed: 0,
            reused: 0,
            reused_visible: 0,
        }
    }

    /// Ready for the next word (the arrays are written before they are read).
    #[inline(always)]
    fn begin(&mut self) {
        self.block.clear();
        (self.drawable, self.forced, self.draw_changed) = (0, 0, 0);
        (self.reused, self.reused_visible) = (0, 0);
    }
}

/// An object of the word being culled: its index in storage order and its offset in the word.
#[derive(Clone, Copy)]
struct WordObject {
    index: usize,
    offset: usize,
}

/// One object's columns: an undrawable object's are emptied; a static object's under the
/// same view keep its cached verdict (only its level of detail may change); any other's box
/// is recomputed if its inputs changed and pushed to the word's block for the culls.
#[inline(always)]
fn prepare_object(
    inputs: &PassInputs<'_>,
    outputs: &PassOutputs<'_>,
    cursor: &SegmentCursor<'_>,
    word: &mut WordScratch,
    local: &mut LocalTotals,
    changes: &mut ChangeRun<'_>,
    WordObject { index, offset }: WordObject,
) {
    let columns = &cursor.columns;
    let row = index - cursor.segment.start;
    let bit = 1u64 << offset;
    word.flags[offset] = cursor.common_flags;
    let slot = outputs.slots[index] as usize;
    if let Some(&ahead) = outputs.slots.get(index + PREFETCH_DISTANCE) {
        prefetch_slot(outputs, ahead as usize);
    }
    let Some((model, local_box, mesh)) = source_of(columns, row) else {
        // SAFETY: `slot` belongs to `index`, which lies in this job's range: no other
        // job writes it, and it is below the slot count, the length of every column.
        unsafe {
            if *outputs.draws.add(slot) != ObjectDraw::NONE {
                changes.mark(slot, false);
            }
            outputs.models.add(slot).write(Mat4::IDENTITY);
            outputs.bounds.add(slot).write(EMPTY_BOX);
            outputs.draws.add(slot).write(ObjectDraw::NONE);
            outputs.cache.add(slot).write(CachedBounds::EMPTY);
        }
        word.draw_changed |= bit;
        return;
    };
    word.drawable |= bit;
    word.flags[offset] = cursor.drawable_flags;
    // SAFETY: as above: this job's own slot, below every column's length.
    let (stored_model, entry, stored_draw) =
        unsafe { (&mut *outputs.models.add(slot), &mut *outputs.cache.add(slot), &mut *outputs.draws.add(slot)) };
    let appeared = *stored_draw == ObjectDraw::NONE;
    let hit = entry.lookup(stored_model, &model, &local_box);
    // A static object under the same view (see `cache.rs`): its columns hold this
    // frame's values and last frame's verdict stands; only a level of detail may change
    // (the box centre is computed for it alone, with the same operations).
    if let (Some(finite), Some(verdict)) = (hit, entry.verdict(inputs.view_epoch)) {
        let center = || model.transform_point3(local_box.center());
        let draw = draw_of(inputs, columns, row, mesh, (&model, &local_box), stored_draw.mesh, center);
        if *stored_draw != draw {
            *stored_draw = draw;
            word.draw_changed |= bit;
            changes.mark(slot, appeared);
        }
        if !finite {
            word.forced |= bit;
        }
        word.reused |= bit;
        match verdict {
            Verdict::Visible => word.reused_visible |= bit,
            Verdict::Frustum => local.frustum_rejected += 1,
            Verdict::Distance => local.distance_rejected += 1,
            Verdict::Size => local.size_rejected += 1,
        }
        return;
    }
    // The same operations as when the columns were written: the same bits.
    let (center, half) = local_box.transformed_center_half(&model);
    let draw = draw_of(inputs, columns, row, mesh, (&model, &local_box), stored_draw.mesh, || center);
    let redrawn = *stored_draw != draw;
    if redrawn {
        *stored_draw = draw;
        word.draw_changed |= bit;
    }
    if redrawn || hit.is_none() {
        changes.mark(slot, appeared);
    }
    let finite = hit.unwrap_or_else(|| {
        // New, moved or re-shaped: write the columns and a fresh entry.
        local.bounds_computed += 1;
        let finite = is_finite_object(&model, center, half);
        *stored_model = model;
        *entry = CachedBounds::new(local_box, finite);
        // SAFETY: as above.
        unsafe { outputs.bounds.add(slot).write(Aabb { min: center - half, max: center + half }) };
        finite
    });
    if !finite {
        word.forced |= bit;
    }
    word.pushed[word.block.len()] = offset as u8;
    word.fresh_entries[word.block.len()] = entry;
    word.block.push_center_half(center, half);
}

/// The culls on the word's fresh objects: the SIMD frustum kernel on their boxes (non-finite
/// boxes come back kept), then distance and screen size on the finite survivors; records
/// their verdicts and returns the word's visible bits, the reused verdicts included.
#[inline(always)]
fn cull_word(
    inputs: &PassInputs<'_>,
    outputs: &PassOutputs<'_>,
    word: &mut WordScratch,
    local: &mut LocalTotals,
    word_start: usize,
    secondary_culls: bool,
) -> u64 {
    let WordScratch { block, pushed, fresh_entries, drawable, forced, reused, reused_visible, .. } = word;
    // Frustum: the SIMD kernel on the boxes of the word's fresh objects (non-finite boxes
    // come back kept), their bits put back at the objects' offsets.
    let fresh = *drawable & !*reused;
    let inside = frustum_bits(inputs, block, pushed);
    let mut visible = (inside | *forced) & fresh;
    local.frustum_rejected += (fresh & !visible).count_ones() as usize;

    // Distance, then screen size, on the finite fresh survivors only.
    let survivors = if secondary_culls { visible & !*forced } else { 0 };
    let (too_far, too_small) = secondary_culls_of(inputs.view, survivors, |offset| {
        let slot = outputs.slots[word_start + offset] as usize;
        // SAFETY: written by this job for this object's slot (this frame or before).
        unsafe { &*outputs.bounds.add(slot) }
    });
    local.distance_rejected += too_far.count_ones() as usize;
    local.size_rejected += too_small.count_ones() as usize;
    visible &= !(too_far | too_small);
    // Record the fresh verdicts for the next frame under the same view.
    for (k, &entry) in fresh_entries[..block.len()].iter().enumerate() {
        let verdict = Verdict::of(1u64 << pushed[k], visible, too_far, too_small);
        // SAFETY: the entry of an object of this word, this job's own (taken above).
        unsafe { (*entry).set_verdict(inputs.view_epoch, verdict) };
    }
    visible | *reused_visible
}

/// The word's counts, and each object's flag byte at its slot.
#[inline(always)]
fn write_word_flags(
    outputs: &PassOutputs<'_>,
    word: &WordScratch,
    visible: u64,
    local: &mut LocalTotals,
    objects: Range<usize>,
) {
    local.drawable += word.drawable.count_ones() as usize;
    local.visible += visible.count_ones() as usize;
    local.non_finite += word.forced.count_ones() as usize;
    let non_finite = word.forced & word.drawable;
    for (offset, &slot) in outputs.slots[objects].iter().enumerate() {
        let flag = word.flags[offset]
            | ((visible >> offset & 1) as u8) << SlotFlag::Visible as u8
            | ((non_finite >> offset & 1) as u8) << SlotFlag::NonFinite as u8
            | ((word.draw_changed >> offset & 1) as u8) << SlotFlag::DrawChanged as u8;
        // SAFETY: as for the columns above: this job's object, its own slot.
        unsafe { outputs.flags.add(slot as usize).write(flag) };
    }
}

/// The frustum kernel on the boxes of `block`, the `k`-th being the object at offset
/// `pushed[k]` of its word: the bits of those inside (non-finite boxes come back kept), at
/// their offsets; every bit when the frustum cull is off.
pub(crate) fn frustum_bits(inputs: &PassInputs<'_>, block: &AabbBlock, pushed: &[u8; BITS_PER_WORD]) -> u64 {
    if !inputs.frustum_culling {
        return u64::MAX;
    }
    if block.is_empty() {
        return 0;
    }
    let mut kernel_bits = [0u64];
    inputs.kernel.cull_aabbs(inputs.view.frustum(), block.slices(), &mut kernel_bits);
    if usize::from(pushed[block.len() - 1]) == block.len() - 1 {
        // Offsets only grow, so every object up to the last was pushed, in order.
        kernel_bits[0]
    } else {
        (0..block.len()).fold(0u64, |word, k| word | (kernel_bits[0] >> k & 1) << pushed[k])
    }
}

/// The distance and screen-size culls on the `survivors` of one word (bits; `box_of(offset)`
/// is the world box of the object at that offset): the bits too far, then the bits too
/// small (of those near enough). Shared by the full pass and tracked frames, so both decide
/// alike.
pub(crate) fn secondary_culls_of<'b>(
    view: &ViewCullContext,
    mut survivors: u64,
    box_of: impl Fn(usize) -> &'b Aabb,
) -> (u64, u64) {
    let (mut too_far, mut too_small) = (0u64, 0u64);
    while survivors != 0 {
        let offset = survivors.trailing_zeros() as usize;
        survivors &= survivors - 1;
        let world_box = box_of(offset);
        let center = world_box.center();
        if !crate::size::is_near_enough(view.distance_sq(center), view.max_distance_sq()) {
            too_far |= 1u64 << offset;
        } else if !view.screen_size().keeps(world_box.half_extent().length_squared(), view.depth(center)) {
            too_small |= 1u64 << offset;
        }
    }
    (too_far, too_small)
}

/// How many objects ahead [`run_range`] asks for the cache lines of a slot's columns: once
/// tag changes have reshuffled storage order, slots are scattered and the column reads would
/// otherwise wait on each line in turn.
const PREFETCH_DISTANCE: usize = 8;

/// Asks the CPU to bring the cache lines of `slot`'s model, cache entry, box and draw closer
/// (a hint with no effect on the result; nothing on targets without one).
#[inline(always)]
fn prefetch_slot(outputs: &PassOutputs<'_>, slot: usize) {
    prefetch_entry(outputs.models, slot);
    prefetch_entry(outputs.cache, slot);
    prefetch_entry(outputs.bounds, slot);
    prefetch_entry(outputs.draws, slot);
}

/// Whether an object's matrix and world box are finite, with a few vector operations instead
/// of 22 scalar checks: a sum is finite only if every term is (infinities of opposite signs
/// give NaN), and `x * 0` is zero exactly when `x` is finite. A sum of huge finite terms that
/// overflows reads as non-finite, which only keeps the object: the conservative side.
#[inline(always)]
pub(crate) fn is_finite_object(model: &Mat4, center: Vec3, half: Vec3) -> bool {
    let sum = model.x_axis + model.y_axis + model.z_axis + model.w_axis + (center + half).extend(0.0);
    (sum * 0.0).cmpeq(glam::Vec4::ZERO).all()
}

/// A drawable object's world matrix, local box (posed for a posed skinned mesh) and mesh;
/// `None` when the object is not drawable.
#[inline(always)]
fn source_of<'c>(columns: &'c SegmentColumns<'_>, row: usize) -> Option<(Mat4, Aabb, &'c Mesh)> {
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
    Some((model, local, mesh))
}

/// A drawable object's draw for this view: its mesh's material, and the level of detail
/// [`LevelRule::pick`] picks (else the mesh itself) for the object's world matrix and local
/// box `source`, `drawn` the mesh its slot drew last frame and `center` its world centre
/// (called only for a chain of the distance rule).
#[inline(always)]
fn draw_of(
    inputs: &PassInputs<'_>,
    columns: &SegmentColumns<'_>,
    row: usize,
    mesh: &Mesh,
    (model, local_box): (&Mat4, &Aabb),
    drawn: ecs::MeshHandle,
    center: impl FnOnce() -> Vec3,
) -> ObjectDraw {
    let mut draw = ObjectDraw { mesh: mesh.mesh, material: mesh.material };
    if let Some(lods) = &columns.lods {
        let rule = &inputs.levels;
        if let Some(level) = rule.pick_with_center(inputs.view, &lods[row], model, local_box, drawn, center) {
            draw.mesh = level;
        }
    }
    draw
}

//! Which levels of the meshes added while frames run are on the GPU, under a memory budget
//! (`RenderSettings::mesh_memory_budget`, which the texture mips share:
//! `texture_residency.rs`), steered by what the views need.
//!
//! **Needs.** Every frame ([`GpuScene::plan_residency`], before the frame's slice is taken),
//! each object the Visibility stage found visible, and each shadow view's caster, names the
//! level its LOD choice picked (`Visibility::objects().draws`): that level is needed this
//! frame, at the object's distance from the eye (the nearest such object's). So does each
//! object visible in another view of the frame (a split-screen's, an image target's), at the
//! level and distance of that view's own pick and eye (`Visibility::for_view`): a view the main
//! one does not see into still has its meshes loaded, not stand-ins. Where the GPU
//! culls the shadow views the host does not know which casters each keeps: every caster
//! counts. Each level keeps the last frame it was needed.
//!
//! **Loads.** A needed level that holds no GPU range is given one and queued, nearest first,
//! behind what is queued already (each mesh's box is queued when it is added and never
//! evicted). A mesh's vertices go up with its coarsest level, the first time a view needs any
//! level of it (a finer level needs its coarsest one's vertices, so that is needed too and
//! goes first): adding meshes under a budget takes their boxes' bytes alone, so a world that
//! adds more than the budget holds is admitted as placeholders. **Eviction.** When a load
//! would take the resident bytes (every range given out, `placement.rs`, and the texture mips
//! resident or queued) past the budget, levels no view needed for `evict_after` frames are
//! evicted, least recently needed first (then the texture mips no view needed for as long).
//! A coarsest level may be evicted too, once no finer level of its mesh holds a range: the
//! mesh's vertices go with it, and its objects draw its placeholder box, culled with their
//! own box (the Visibility answer still treats them as what they are), until a view needs
//! them again and the level and vertices are loaded again, nearest first. A needed coarsest
//! level (the step from a box to the mesh) may also take the room of levels no view needs
//! this frame, however recently needed, and then of levels needed farther from the eye
//! (finer ones first), which then draw a coarser level or their box. Evicted levels' objects draw a resident level of
//! their mesh (coarser first, else the box, as stand-ins do) from this frame on, and their
//! slots are written again. When that is not enough the load waits: the frame degrades,
//! nothing fails; when a needed coarsest level waits so, the budget is below what the
//! frame's views need at the coarsest levels, and that is warned of once. Only the meshes
//! given at install and the boxes are never evicted. Without a budget every level is loaded
//! when added.
//!
//! Why whole meshes are evicted rather than each level given vertices of its own (compacted
//! per level): the placeholder box and the eviction by need were already there, so the
//! budget holds with a few rules here and no second copy of the vertices each coarse level
//! shares with the finer ones (which a per-level vertex set would upload again).
//!
//! **The device's budget.** Where the device reports its memory budget
//! (`VK_EXT_memory_budget`, [`render_graph::GpuDevice::memory_budget`]), the budget in force
//! is also at most [`DEVICE_HEAP_SHARE`] of what the device-local heap's budget leaves once the
//! rest of the engine's usage (the heap's usage less the mesh buffers) is taken off; the
//! first frame under a budget logs which applies.

use culling::{ShadowViews, Visibility};
use ecs::MeshHandle;

use super::placement::{INDEX_SLOT_BYTES, VERTEX_SLOT_BYTES};
use super::streaming::{MeshStream, BOX_INDEX_COUNT, NO_MESH, NO_PLACEHOLDER};
use super::GpuScene;

/// The share of the device-local heap's budget, less the rest of the engine's usage, that
/// mesh data and texture mips may take when the device reports its budget: a half, leaving
/// the rest to the render targets and what the heap's other users allocate meanwhile.
pub const DEVICE_HEAP_SHARE: f64 = 0.5;

/// What the mesh residency did in one frame ([`crate::RenderReport::residency`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResidencyReport {
    /// Bytes counted against the budget: [`ResidencyReport::mesh_bytes`] and
    /// [`ResidencyReport::texture_bytes`].
    pub resident_bytes: u64,
    /// Bytes of mesh data on the GPU (every range of the mesh buffers given out, the ranges
    /// freed but still read by a frame in flight included).
    pub mesh_bytes: u64,
    /// Bytes of the texture mips resident or queued (every layer's chain from its finest
    /// such mip to its 1x1).
    pub texture_bytes: u64,
    /// The budget in force (`None`: no budget).
    pub budget: Option<u64>,
    /// Bytes copied to the mesh buffers this frame.
    pub loaded_bytes: u64,
    /// Levels whose last bytes were copied this frame.
    pub levels_loaded: u32,
    /// Levels evicted this frame.
    pub levels_evicted: u32,
    /// Levels a view needed this frame that the budget kept off the GPU (their objects drew a
    /// coarser resident level).
    pub levels_deferred: u32,
    /// Bytes queued and not copied yet.
    pub pending_bytes: u64,
    /// Texture mips whose last rows were copied this frame.
    pub texture_mips_loaded: u32,
    /// Texture mips evicted this frame (their materials sample the next coarser mip).
    pub texture_mips_evicted: u32,
    /// Texture mips a view needed this frame that the budget kept off the GPU.
    pub texture_mips_deferred: u32,
}

/// The residency state of a scene's added meshes (see the module docs).
#[derive(Default)]
pub(crate) struct Residency {
    budget: Option<u64>,
    /// Frames planned.
    tick: u64,
    /// By mesh id: the last frame ([`Residency::tick`]) a view needed it (0: never).
    last_needed: Vec<u64>,
    /// By mesh id: the nearest distance it was needed at in that frame.
    nearest: Vec<f32>,
    /// Scratch: this frame's needed levels that hold no range, then the eviction candidates.
    wanted: Vec<u32>,
    candidates: Vec<u32>,
    /// The frame [`Residency::candidates`] was listed in.
    listed_in: u64,
    /// Scratch: the levels needed this frame holding a range, nearest first, and the frame
    /// they were listed in.
    needed_now: Vec<u32>,
    coarsened_in: u64,
    report: ResidencyReport,
    /// Whether the budget below the coarsest levels was warned of.
    warned_floor: bool,
    /// Whether the budget's source (the setting, or the device's cap) was logged.
    logged_source: bool,
}

impl Residency {
    /// The budget in force.
    pub(crate) fn budget(&self) -> Option<u64> {
        self.budget
    }

    /// Notes the frame's slice: `bytes` copied, `levels` levels completed.
    pub(super) fn note_slice(&mut self, bytes: u64, levels: usize) {
        self.report.loaded_bytes += bytes;
        self.report.levels_loaded += levels as u32;
    }
}

impl GpuScene {
    /// Plans the frame's residency (see the module docs) from the views' needs in
    /// `visibility` and `shadows` (the frame's shadow views, if any), under `budget` bytes (`None`: every level is loaded), evicting levels no
    /// view needed for `evict_after` frames. Call it before [`GpuScene::stream_frame`].
    pub fn plan_residency(
        &mut self,
        visibility: &Visibility,
        shadows: Option<&ShadowViews>,
        budget: Option<u64>,
        evict_after: u32,
    ) {
        let budget = budget.map(|setting| self.device_capped(setting));
        let residency = &mut self.stream.residency;
        residency.report = ResidencyReport { budget, ..ResidencyReport::default() };
        residency.tick += 1;
        let previous = std::mem::replace(&mut residency.budget, budget);
        // An unstaged slice still names the ranges it copies to: nothing is freed or given
        // until it is staged.
        if self.stream.families.is_empty() || !self.stream.staged {
            return;
        }
        let Some(budget) = budget else {
            if previous.is_some() {
                self.load_every_level();
            }
            return;
        };
        self.note_needs(visibility, shadows);
        let residency = &mut self.stream.residency;
        let nearest = &residency.nearest;
        // Nearest first; of one family's levels needed as near, the coarsest (the highest id)
        // first: it brings the vertices the finer ones index.
        residency.wanted.sort_unstable_by(|&one, &other| {
            nearest[one as usize].total_cmp(&nearest[other as usize]).then(other.cmp(&one))
        });
        let evict_after = u64::from(evict_after);
        let mut short = self.budgeted_bytes() > budget;
        for index in 0..=self.stream.residency.wanted.len() {
            // First the bytes over a lowered budget, then each load.
            let mesh = self.stream.residency.wanted.get(index).copied();
            let coarsest = mesh.is_none_or(|mesh| self.is_coarsest(mesh));
            if mesh.is_some_and(|mesh| !coarsest && self.stream.families[mesh as usize].vertices_out) {
                // Its coarsest level, with the vertices, waits for room: a later frame.
                continue;
            }
            let bytes = mesh.map_or(0, |mesh| self.load_bytes(mesh));
            while self.budgeted_bytes() + bytes > budget && self.make_room(evict_after, mesh) {}
            let Some(mesh) = mesh else { continue };
            if self.budgeted_bytes() + bytes > budget {
                self.stream.residency.report.levels_deferred += 1;
                short |= coarsest;
            } else if self.stream.families[mesh as usize].vertices_out {
                self.queue_coarsest(mesh);
            } else {
                self.queue_level(mesh, None);
            }
        }
        self.reorder_loads();
        if short && !self.stream.residency.warned_floor {
            self.stream.residency.warned_floor = true;
            let floor = self.floor_bytes();
            log::warn!(
                "the mesh memory budget of {budget} bytes is below what the views need at the meshes' coarsest \
                 levels (the meshes given at install and the placeholder boxes alone take {floor} bytes): \
                 objects whose coarsest level does not fit draw their placeholder box, the others their \
                 coarsest resident level"
            );
        }
    }

    /// Evicts one thing to make room for loading level `wanted` (`None`: for the bytes over a
    /// lowered budget); false when nothing may go. Levels and texture mips no view needed for
    /// `evict_after` frames go first; a coarsest level (or the bytes over the budget) may
    /// also take the room of levels no view needs this frame, then of levels needed farther
    /// away (finer ones first).
    fn make_room(&mut self, evict_after: u64, wanted: Option<u32>) -> bool {
        if self.evict_level(evict_after, false) || self.evict_stale_texture_mip(evict_after) {
            return true;
        }
        let coarsest = wanted.is_none_or(|mesh| self.is_coarsest(mesh));
        coarsest && (self.evict_level(evict_after, true) || self.coarsen_farther(wanted))
    }

    /// Whether `mesh` is the coarsest level of an added mesh.
    fn is_coarsest(&self, mesh: u32) -> bool {
        let family = self.stream.families[mesh as usize];
        mesh == family.first + family.levels - 1
    }

    /// Bytes loading level `mesh` takes: its indices, and its family's vertices with a
    /// coarsest level whose vertices hold no range.
    fn load_bytes(&self, mesh: u32) -> u64 {
        let family = self.stream.families[mesh as usize];
        let vertices = if family.vertices_out { u64::from(family.vertex_count) * VERTEX_SLOT_BYTES } else { 0 };
        self.level_bytes(mesh) + vertices
    }

    /// `setting` capped by the device's memory budget where it reports one (see the module
    /// docs); logs once which applies.
    fn device_capped(&mut self, setting: u64) -> u64 {
        let heap = self.device.memory_budget();
        let mesh_bytes = self.mesh_buffer_bytes();
        let cap = heap.map(|heap| {
            let others = heap.usage.saturating_sub(mesh_bytes);
            (heap.budget.saturating_sub(others) as f64 * DEVICE_HEAP_SHARE) as u64
        });
        let residency = &mut self.stream.residency;
        if !residency.logged_source {
            residency.logged_source = true;
            match cap {
                Some(cap) if cap < setting => log::info!(
                    "mesh memory budget: the device's memory budget caps the {setting} bytes set to {cap} bytes \
                     (a share of its device-local heap's budget less the engine's other usage)"
                ),
                Some(cap) => {
                    log::info!("mesh memory budget: {setting} bytes as set (the device's memory budget allows {cap})")
                }
                None => log::info!(
                    "mesh memory budget: {setting} bytes as set (the device does not report its memory budget: no \
                     VK_EXT_memory_budget)"
                ),
            }
        }
        cap.map_or(setting, |cap| setting.min(cap))
    }

    /// Orders the levels queued: every coarsest level first (a mesh in use draws it while
    /// its finer levels wait), then the levels needed this frame, nearest first, then the
    /// rest, most recently needed first.
    fn reorder_loads(&mut self) {
        let stream = &mut self.stream;
        let residency = &stream.residency;
        let families = &stream.families;
        let tick = residency.tick;
        stream.levels.reorder_by(|mesh| {
            let family = families[mesh as usize];
            if mesh == family.first + family.levels - 1 {
                return (0, 0, 0);
            }
            let last = residency.last_needed.get(mesh as usize).copied().unwrap_or(0);
            if last == tick {
                // A distance is not negative: its bits order as it does.
                (1, residency.nearest[mesh as usize].to_bits(), 0)
            } else {
                (2, 0, u64::MAX - last)
            }
        });
    }

    /// Bytes never evicted: the meshes given at install, and each added mesh's box.
    fn floor_bytes(&self) -> u64 {
        let stream = &self.stream;
        let added = stream.families.iter().enumerate().filter(|&(mesh, family)| {
            family.placeholder != NO_PLACEHOLDER && !family.removed && family.first == mesh as u32
        });
        let box_bytes = BOX_INDEX_COUNT * INDEX_SLOT_BYTES + 8 * VERTEX_SLOT_BYTES;
        stream.placement.install_bytes() + added.count() as u64 * box_bytes
    }

    /// What the residency did this frame, with the bytes resident and pending now.
    pub fn residency_report(&self) -> ResidencyReport {
        let textures = self.texture_counts();
        ResidencyReport {
            resident_bytes: self.budgeted_bytes(),
            mesh_bytes: self.stream.placement.bytes(),
            texture_bytes: textures.bytes,
            pending_bytes: self.pending_mesh_bytes(),
            texture_mips_loaded: textures.mips_loaded,
            texture_mips_evicted: textures.mips_evicted,
            texture_mips_deferred: textures.mips_deferred,
            ..self.stream.residency.report
        }
    }

    /// Evicts the least recently needed of the levels no view needed for `evict_after` frames
    /// (listed once a frame); false when there is none, or while a slice is unstaged.
    pub(super) fn evict_stale_level(&mut self, evict_after: u64) -> bool {
        self.evict_level(evict_after, false)
    }

    /// Evicts the least recently needed of the levels no view needed this frame (listed once
    /// a frame), one no view needed for `evict_after` frames unless `needed_since` allows a
    /// more recent one; false when there is none, or while a slice is unstaged. A coarsest
    /// level goes only once no finer level of its mesh holds a range: its vertices go with it.
    fn evict_level(&mut self, evict_after: u64, needed_since: bool) -> bool {
        if self.stream.families.is_empty() || !self.stream.staged {
            return false;
        }
        let residency = &mut self.stream.residency;
        if residency.listed_in != residency.tick {
            residency.listed_in = residency.tick;
            self.list_candidates();
        }
        let tick = self.stream.residency.tick;
        while let Some(&victim) = self.stream.residency.candidates.last() {
            let last = self.stream.residency.last_needed[victim as usize];
            if !needed_since && last + evict_after > tick {
                return false;
            }
            self.stream.residency.candidates.pop();
            if self.stream.placement.place(victim).placed && !self.holds_finer_level(victim) {
                self.evict(victim);
                return true;
            }
        }
        false
    }

    /// Evicts the level needed this frame farthest from the eye, farther than the level
    /// `wanted` (`None`: any), a finer one before its mesh's coarsest, so that a nearer
    /// mesh's coarsest level takes its room: the frame's needs pass the budget, and the far
    /// object draws a coarser level (or its box) rather than the near one its box. False when
    /// there is none.
    fn coarsen_farther(&mut self, wanted: Option<u32>) -> bool {
        let residency = &mut self.stream.residency;
        if residency.coarsened_in != residency.tick {
            residency.coarsened_in = residency.tick;
            let stream = &mut self.stream;
            let residency = &mut stream.residency;
            residency.needed_now.clear();
            for (mesh, family) in stream.families.iter().enumerate() {
                let live = family.placeholder != NO_PLACEHOLDER
                    && !family.removed
                    && family.current == NO_MESH
                    && family.replaces == NO_MESH;
                let needed = residency.last_needed.get(mesh).is_some_and(|&last| last == residency.tick);
                if live && needed && stream.placement.place(mesh as u32).placed {
                    residency.needed_now.push(mesh as u32);
                }
            }
            let nearest = &residency.nearest;
            // Of one mesh's levels needed as near, the coarsest (the highest id) is popped last.
            residency.needed_now.sort_unstable_by(|&one, &other| {
                nearest[one as usize].total_cmp(&nearest[other as usize]).then(other.cmp(&one))
            });
        }
        let residency = &mut self.stream.residency;
        let Some(&victim) = residency.needed_now.last() else { return false };
        let beyond =
            wanted.is_none_or(|wanted| residency.nearest[victim as usize] > residency.nearest[wanted as usize]);
        if !beyond {
            return false;
        }
        residency.needed_now.pop();
        if !self.stream.placement.place(victim).placed || self.holds_finer_level(victim) {
            return self.coarsen_farther(wanted);
        }
        self.evict(victim);
        true
    }

    /// Whether a level finer than `mesh` of its family holds a range (it indexes the
    /// vertices `mesh`, when the coarsest, brings).
    fn holds_finer_level(&self, mesh: u32) -> bool {
        let family = self.stream.families[mesh as usize];
        self.is_coarsest(mesh) && (family.first..mesh).any(|level| self.stream.placement.place(level).placed)
    }

    /// Marks the levels the objects of every view name as needed now, at their distance
    /// from the eye: the camera's visible objects (when the view answers on request, its
    /// bits: what the GPU drew in the fed-back frame and what appeared since), the other
    /// views' visible objects at their own levels and eyes, and each
    /// shadow view's casters (every caster when the GPU culls the shadow views: the host does
    /// not know which it keeps).
    /// Lists those holding no range in `wanted`.
    fn note_needs(&mut self, visibility: &Visibility, shadows: Option<&ShadowViews>) {
        let stream = &mut self.stream;
        let residency = &mut stream.residency;
        residency.wanted.clear();
        if residency.last_needed.len() < stream.families.len() {
            residency.last_needed.resize(stream.families.len(), 0);
            residency.nearest.resize(stream.families.len(), f32::INFINITY);
        }
        let Some(eye) = visibility.view().map(|view| view.position) else { return };
        let mut needs = Needs { stream, visibility, eye };
        if visibility.lists_refused().is_none() {
            visibility.visible().iter().for_each(|&slot| needs.note(slot));
        } else {
            // Answers on request build no list: the bits name what the GPU drew in the
            // fed-back frame and the objects that appeared this frame (`Visibility::bits`).
            for_each_set_bit(visibility.bits().words(), |slot| needs.note(slot));
        }
        // The other views' lists are made whatever the answers' policy (their renderers draw
        // them), each object at the level that view picked for it.
        for other in visibility.other_views().filter_map(|id| visibility.for_view(id)) {
            let eye = other.view().position;
            for (index, &slot) in other.visible().iter().enumerate() {
                needs.note_draw(slot, other.draw(index), eye);
            }
        }
        let Some(shadows) = shadows.filter(|shadows| !shadows.views().is_empty()) else { return };
        if shadows.device_culling() || !shadows.caster_culling() {
            shadows.casters().iter().for_each(|&slot| needs.note(slot));
        } else {
            for view in 0..shadows.views().len() {
                shadows.caster_slots(view).for_each(|slot| needs.note(slot));
            }
        }
    }

    /// Lists in `candidates` the levels that may be evicted (placed levels of meshes neither
    /// removed nor replaced, not needed this frame), least recently needed last (popped
    /// first); of one mesh, its coarsest level (needed whenever a finer one is) after the
    /// finer ones.
    fn list_candidates(&mut self) {
        let stream = &mut self.stream;
        let residency = &mut stream.residency;
        let tick = residency.tick;
        residency.candidates.clear();
        for (mesh, family) in stream.families.iter().enumerate() {
            let evictable = family.placeholder != NO_PLACEHOLDER
                && !family.removed
                && family.current == NO_MESH
                && family.replaces == NO_MESH
                && stream.placement.place(mesh as u32).placed;
            let last = residency.last_needed.get(mesh).copied().unwrap_or(0);
            if evictable && last < tick {
                residency.candidates.push(mesh as u32);
            }
        }
        let last_needed = &residency.last_needed;
        let last = |mesh: u32| last_needed.get(mesh as usize).copied().unwrap_or(0);
        residency.candidates.sort_unstable_by_key(|&mesh| (std::cmp::Reverse(last(mesh)), std::cmp::Reverse(mesh)));
    }

    /// Evicts level `mesh`: its bytes leave the queue, its range is freed (with its family's
    /// vertices when it is the coarsest level), and its objects' slots are written again
    /// this frame.
    fn evict(&mut self, mesh: u32) {
        let count = self.meshes.range(mesh).expect("a level of an added mesh").index_count;
        let last_reader = self.last_reader();
        let coarsest = self.is_coarsest(mesh);
        let stream = &mut self.stream;
        stream.levels.cancel(mesh);
        let family = stream.families[mesh as usize];
        if coarsest && !family.vertices_out {
            let first_vertex = stream.placement.place(mesh).vertex_offset;
            stream.placement.free_vertices(first_vertex, family.vertex_count, last_reader);
            for level in family.first..family.first + family.levels {
                stream.families[level as usize].vertices_out = true;
            }
        }
        stream.placement.free_indices(mesh, count, last_reader);
        if std::mem::replace(&mut stream.resident[mesh as usize], false) {
            stream.missing += 1;
        }
        stream.changed_since.push(stream.families[mesh as usize].owner);
        stream.residency.report.levels_evicted += 1;
    }

    /// Bytes of level `mesh`'s indices.
    fn level_bytes(&self, mesh: u32) -> u64 {
        self.meshes.range(mesh).map_or(0, |range| u64::from(range.index_count) * INDEX_SLOT_BYTES)
    }

    /// Queues every level holding no range (the budget was lifted): each mesh's coarsest
    /// level with its vertices first.
    fn load_every_level(&mut self) {
        for coarsest_pass in [true, false] {
            for mesh in 0..self.stream.families.len() as u32 {
                let family = self.stream.families[mesh as usize];
                let live = family.placeholder != NO_PLACEHOLDER && !family.removed && family.current == NO_MESH;
                if !live || self.stream.placement.place(mesh).placed || self.is_coarsest(mesh) != coarsest_pass {
                    continue;
                }
                if family.vertices_out {
                    self.queue_coarsest(mesh);
                } else {
                    self.queue_level(mesh, None);
                }
            }
        }
    }
}

/// One frame's marking of needed levels ([`GpuScene::plan_residency`]).
/// Calls `visit` with the index of every set bit of `words`, ascending.
#[inline]
pub(super) fn for_each_set_bit(words: &[u64], mut visit: impl FnMut(u32)) {
    for (at, &word) in words.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            visit(at as u32 * 64 + rest.trailing_zeros());
            rest &= rest - 1;
        }
    }
}

struct Needs<'a> {
    stream: &'a mut MeshStream,
    visibility: &'a Visibility,
    eye: glam::Vec3,
}

impl Needs<'_> {
    /// Marks the level object `slot` draws in the main view (or a shadow view) as needed
    /// now (see the module docs).
    #[inline]
    fn note(&mut self, slot: u32) {
        let Some(draw) = self.visibility.objects().draws.get(slot as usize) else { return };
        self.note_draw(slot, draw.mesh, self.eye);
    }

    /// Marks level `mesh`, which object `slot` draws in a view whose eye is at `eye`, as
    /// needed now, at the object's distance from that eye.
    #[inline]
    fn note_draw(&mut self, slot: u32, mesh: MeshHandle, eye: glam::Vec3) {
        if mesh == MeshHandle::NONE {
            return;
        }
        let objects = self.visibility.objects();
        let Some(model) = objects.models.get(slot as usize) else { return };
        let mesh = mesh.0;
        let Some(&family) = self.stream.families.get(mesh as usize) else { return };
        // Replaced meshes' levels stand for the old ids and are all loaded.
        if family.placeholder == NO_PLACEHOLDER || family.removed || family.current != NO_MESH {
            return;
        }
        let distance = (model.w_axis.truncate() - eye).length();
        self.note_level(mesh, distance);
        // A finer level indexes the vertices its coarsest level brings: that is needed too.
        let coarsest = family.first + family.levels - 1;
        if mesh != coarsest {
            self.note_level(coarsest, distance);
        }
    }

    /// Marks level `mesh` as needed now at `distance`, listed as wanted when it holds no range.
    #[inline]
    fn note_level(&mut self, mesh: u32, distance: f32) {
        let stream = &mut *self.stream;
        let residency = &mut stream.residency;
        let index = mesh as usize;
        if residency.last_needed[index] == residency.tick {
            residency.nearest[index] = residency.nearest[index].min(distance);
            return;
        }
        residency.last_needed[index] = residency.tick;
        residency.nearest[index] = distance;
        if !stream.placement.place(mesh).placed {
            residency.wanted.push(mesh);
        }
    }
}

//! Which levels of the meshes added while frames run are on the GPU, under a memory budget
//! (`RenderSettings::mesh_memory_budget`, which the texture mips share:
//! `texture_residency.rs`), steered by what the views need.
//!
//! **Needs.** Every frame ([`GpuScene::plan_residency`], before the frame's slice is taken),
//! each object the Visibility stage found visible, and each shadow view's caster, names the
//! level its LOD choice picked (`Visibility::objects().draws`): that level is needed this
//! frame, at the object's distance from the eye (the nearest such object's). Where the GPU
//! culls the shadow views the host does not know which casters each keeps: every caster
//! counts. Each level keeps the last frame it was needed.
//!
//! **Loads.** A needed level that holds no GPU range is given one and queued, nearest first,
//! behind what is queued already (each mesh's box and coarsest level are queued when it is
//! added, so they go first). **Eviction.** When a load would take the resident bytes (every
//! range given out, `placement.rs`, and the texture mips resident or queued) past the budget,
//! levels no view needed for `evict_after` frames are evicted, least recently needed first
//! (then the texture mips no view needed for as long): their range is freed, the
//! objects naming them draw a resident level of their mesh (coarser first, as stand-ins do)
//! from this frame on, and their slots are written again. When that is not enough the load
//! waits: the frame degrades, nothing fails. A mesh's coarsest level, its vertices and its box
//! are never evicted while the mesh is in the library; a budget below what they take is
//! warned of once, and they are kept. Without a budget every level is loaded when added.
//!
//! **The device's budget.** Where the device reports its memory budget
//! (`VK_EXT_memory_budget`, [`render_graph::GpuDevice::memory_budget`]), the budget in force
//! is also at most [`DEVICE_HEAP_SHARE`] of what the device-local heap's budget leaves once the
//! rest of the engine's usage (the heap's usage less the mesh buffers) is taken off; the
//! first frame under a budget logs which applies.

use culling::{ShadowViews, Visibility};
use ecs::MeshHandle;

use super::streaming::{MeshStream, NO_MESH, NO_PLACEHOLDER};
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
        residency.wanted.sort_unstable_by(|&one, &other| nearest[one as usize].total_cmp(&nearest[other as usize]));
        let evict_after = u64::from(evict_after);
        let mut over = self.budgeted_bytes() > budget;
        for index in 0..=self.stream.residency.wanted.len() {
            // First the bytes over a lowered budget, then each load.
            let mesh = self.stream.residency.wanted.get(index).copied();
            let bytes = mesh.map_or(0, |mesh| self.level_bytes(mesh));
            while self.budgeted_bytes() + bytes > budget {
                if !self.evict_stale_level(evict_after) && !self.evict_stale_texture_mip(evict_after) {
                    break;
                }
            }
            let Some(mesh) = mesh else { continue };
            if self.budgeted_bytes() + bytes <= budget {
                self.queue_level(mesh, None);
            } else {
                self.stream.residency.report.levels_deferred += 1;
                over = true;
            }
        }
        self.reorder_loads();
        if over && !self.stream.residency.warned_floor {
            let floor = self.floor_bytes();
            if floor > budget {
                self.stream.residency.warned_floor = true;
                log::warn!(
                    "the mesh memory budget of {budget} bytes is below the {floor} bytes the meshes take at their \
                     coarsest levels (with their vertices, boxes and the meshes given at install): those are kept, \
                     and the objects draw them"
                );
            }
        }
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

    /// Bytes never evicted: the meshes given at install, and each added mesh's vertices, box
    /// and coarsest level.
    fn floor_bytes(&self) -> u64 {
        use super::placement::{INDEX_SLOT_BYTES, VERTEX_SLOT_BYTES};
        let stream = &self.stream;
        let indices = |mesh: u32| self.meshes.range(mesh).map_or(0, |range| u64::from(range.index_count));
        let added = stream.families.iter().enumerate().filter(|&(mesh, family)| {
            family.placeholder != NO_PLACEHOLDER && !family.removed && family.first == mesh as u32
        });
        let added: u64 = added
            .map(|(_, family)| {
                let coarsest = indices(family.first + family.levels - 1) + indices(family.placeholder);
                coarsest * INDEX_SLOT_BYTES + u64::from(family.vertex_count + 8) * VERTEX_SLOT_BYTES
            })
            .sum();
        stream.placement.install_bytes() + added
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
        if self.stream.families.is_empty() || !self.stream.staged {
            return false;
        }
        let residency = &mut self.stream.residency;
        if residency.listed_in != residency.tick {
            residency.listed_in = residency.tick;
            self.list_candidates(evict_after);
        }
        let Some(victim) = self.stream.residency.candidates.pop() else { return false };
        self.evict(victim);
        true
    }

    /// Marks the levels the objects of every view name as needed now, at their distance
    /// from the eye: the camera's visible objects (when the view answers on request, its
    /// bits: what the GPU drew in the fed-back frame and what appeared since), and each
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
        let Some(shadows) = shadows.filter(|shadows| !shadows.views().is_empty()) else { return };
        if shadows.device_culling() || !shadows.caster_culling() {
            shadows.casters().iter().for_each(|&slot| needs.note(slot));
        } else {
            for view in 0..shadows.views().len() {
                shadows.caster_slots(view).for_each(|slot| needs.note(slot));
            }
        }
    }

    /// Lists in `candidates` the levels that may be evicted (placed finer levels of meshes
    /// neither removed nor replaced, needed last `evict_after` frames ago or earlier), least
    /// recently needed last (popped first).
    fn list_candidates(&mut self, evict_after: u64) {
        let stream = &mut self.stream;
        let residency = &mut stream.residency;
        let tick = residency.tick;
        residency.candidates.clear();
        for (mesh, family) in stream.families.iter().enumerate() {
            let coarsest = family.first + family.levels - 1;
            let evictable = family.placeholder != NO_PLACEHOLDER
                && !family.removed
                && family.current == NO_MESH
                && family.replaces == NO_MESH
                && mesh as u32 != coarsest
                && stream.placement.place(mesh as u32).placed;
            let last = residency.last_needed.get(mesh).copied().unwrap_or(0);
            if evictable && last + evict_after <= tick {
                residency.candidates.push(mesh as u32);
            }
        }
        let last_needed = &residency.last_needed;
        let last = |mesh: u32| last_needed.get(mesh as usize).copied().unwrap_or(0);
        residency.candidates.sort_unstable_by_key(|&mesh| std::cmp::Reverse(last(mesh)));
    }

    /// Evicts level `mesh`: its bytes leave the queue, its range is freed, and its objects'
    /// slots are written again this frame.
    fn evict(&mut self, mesh: u32) {
        let count = self.meshes.range(mesh).expect("a level of an added mesh").index_count;
        let last_reader = self.last_reader();
        let stream = &mut self.stream;
        stream.levels.cancel(mesh);
        stream.placement.free_indices(mesh, count, last_reader);
        if std::mem::replace(&mut stream.resident[mesh as usize], false) {
            stream.missing += 1;
        }
        stream.changed_since.push(stream.families[mesh as usize].owner);
        stream.residency.report.levels_evicted += 1;
    }

    /// Bytes of level `mesh`'s indices.
    fn level_bytes(&self, mesh: u32) -> u64 {
        self.meshes.range(mesh).map_or(0, |range| u64::from(range.index_count) * super::placement::INDEX_SLOT_BYTES)
    }

    /// Queues every level holding no range (the budget was lifted).
    fn load_every_level(&mut self) {
        for mesh in 0..self.stream.families.len() as u32 {
            let family = self.stream.families[mesh as usize];
            if family.placeholder != NO_PLACEHOLDER && !family.removed && !self.stream.placement.place(mesh).placed {
                self.queue_level(mesh, None);
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
    /// Marks the level object `slot` draws as needed now (see the module docs).
    #[inline]
    fn note(&mut self, slot: u32) {
        let objects = self.visibility.objects();
        let Some(draw) = objects.draws.get(slot as usize) else { return };
        if draw.mesh == MeshHandle::NONE {
            return;
        }
        let mesh = draw.mesh.0;
        let stream = &mut *self.stream;
        let Some(family) = stream.families.get(mesh as usize) else { return };
        // Replaced meshes' levels stand for the old ids and are all loaded.
        if family.placeholder == NO_PLACEHOLDER || family.removed || family.current != NO_MESH {
            return;
        }
        let residency = &mut stream.residency;
        let distance = (objects.models[slot as usize].w_axis.truncate() - self.eye).length();
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

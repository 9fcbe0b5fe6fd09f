//! Which mips of the base-colour textures count as on the GPU, under the memory budget the
//! meshes share (`RenderSettings::mesh_memory_budget`: meshes and texture mips together),
//! steered by what the views need.
//!
//! **Needs.** Every frame ([`GpuScene::plan_texture_residency`], after the meshes' plan and
//! before the frame's slice is taken) each object the Visibility stage found visible, and each
//! shadow view's caster (the objects the meshes' plan reads), names its material's texture
//! with a wanted finest mip: the mip whose side is at least the object's size on screen, in
//! pixels (its world box's diameter over its nearest distance from the eye, through the
//! camera's projection and viewport height). A texture mapped once over each face of the
//! object needs no finer mip than that; rounding down keeps the choice on the finer side.
//! Textures repeated over a face need finer mips than this gives: they draw slightly blurred,
//! never wrong. Each mip keeps the last frame it was needed (a finer mip needed needs every
//! coarser one: the shaders clamp sampling to a contiguous chain).
//!
//! **Loads.** A texture needed finer than its mips queued or resident gets the missing mips
//! queued, coarser first (a layer's resident mips stay one chain from its finest resident mip
//! to its 1x1), textures largest on screen first, behind what is queued already; the queued
//! bytes count against the budget from then on. **Eviction.** When a load would take the
//! resident bytes (the meshes' ranges and the texture mips resident or queued) past the
//! budget, the finest resident mip of a texture no view needed for `evict_after` frames (or
//! ever: the textures given at install start resident) goes, least recently needed first,
//! then the meshes' stale levels; when that is not enough the
//! load waits (the objects sample coarser mips: the frame degrades, nothing fails). An evicted
//! mip's materials clamp to the next coarser mip from the frame that evicts it (their entries
//! go up with that frame's upload). A texture's coarsest mip is never evicted, nor a mip of a
//! texture with mips still queued.
//!
//! **Memory.** The image array holds every layer's full mip chain (a layer of an array cannot
//! hold fewer mips than the others), so an evicted mip's memory stays with its layer and only
//! that layer's own texels are ever written into it again; no frame in flight can sample
//! another texture's texels through it. The budget counts the mips resident, what a
//! per-texture or sparse allocation would hold.
//!
//! Without a budget every mip is loaded when added, as before.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use culling::{ShadowViews, Visibility};
use ecs::{MeshHandle, ProjectionKind};

use super::texture_streaming::{TextureStream, NOT_RESIDENT, TEXEL_BYTES};
use super::GpuScene;

/// Mip slots kept per layer for the last frame each was needed (a 32768-texel side has 16).
const MIP_SLOTS: usize = 16;

/// A layer not needed this frame.
const NOT_NEEDED: u32 = u32::MAX;

/// The texture half of the residency state (see the module docs).
#[derive(Default)]
pub(super) struct TextureResidency {
    /// By layer: the finest mip resident or queued ([`NOT_RESIDENT`]: none).
    reserved_from: Vec<u32>,
    /// Bytes of the mips resident or queued, every layer.
    bytes: u64,
    /// Frames planned.
    tick: u64,
    /// By layer and mip (`layer * MIP_SLOTS + mip`): the last frame a view needed it.
    last_needed: Vec<u64>,
    /// By layer: the finest mip needed this frame ([`NOT_NEEDED`]: none), and the largest
    /// size on screen, in pixels, it was needed at.
    wanted: Vec<u32>,
    pixels: Vec<f32>,
    /// Layers needed this frame.
    touched: Vec<u32>,
    /// Eviction candidates: (last needed, layer), least recently needed on top.
    candidates: BinaryHeap<(Reverse<u64>, u32)>,
    /// The frame [`TextureResidency::candidates`] was listed in.
    listed_in: u64,
    /// Whether a budget was in force in the last plan.
    budgeted: bool,
    /// This frame's counts.
    pub(super) mips_loaded: u32,
    mips_evicted: u32,
    mips_deferred: u32,
}

/// Bytes of mips `from..` of a layer of side `size` (every mip from `from` to the 1x1).
fn chain_bytes(size: u32, from: u32) -> u64 {
    let levels = mip_levels(size);
    (from.min(levels)..levels).map(|level| u64::from((size >> level).max(1)).pow(2) * TEXEL_BYTES).sum()
}

/// Mips of a layer of side `size`.
fn mip_levels(size: u32) -> u32 {
    32 - size.leading_zeros()
}

impl TextureResidency {
    /// The residency of `layers` layers of side `size`, every mip resident (install time).
    pub(super) fn new(layers: usize, size: u32) -> TextureResidency {
        TextureResidency {
            reserved_from: vec![0; layers],
            bytes: layers as u64 * chain_bytes(size, 0),
            ..TextureResidency::default()
        }
    }

    /// Sets layer `layer`'s finest mip resident or queued (of a side `size`), keeping the byte
    /// count.
    pub(super) fn reserve(&mut self, layer: u32, from: u32, size: u32) {
        let index = layer as usize;
        if self.reserved_from.len() <= index {
            self.reserved_from.resize(index + 1, NOT_RESIDENT);
        }
        let before = std::mem::replace(&mut self.reserved_from[index], from);
        self.bytes = self.bytes - chain_bytes(size, before) + chain_bytes(size, from);
    }

    /// The finest mip a texture added or replaced now queues: its coarsest under a budget
    /// (the views ask for finer), else its finest.
    pub(super) fn first_load(&self, size: u32) -> u32 {
        if self.budgeted {
            mip_levels(size) - 1
        } else {
            0
        }
    }

    /// Bytes of the texture mips resident or queued.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// What the texture residency did in one frame, for [`crate::ResidencyReport`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TextureCounts {
    pub(super) bytes: u64,
    pub(super) mips_loaded: u32,
    pub(super) mips_evicted: u32,
    pub(super) mips_deferred: u32,
}

impl GpuScene {
    /// Plans the frame's texture residency (see the module docs) from the views' needs in
    /// `visibility` and `shadows` under the budget [`GpuScene::plan_residency`] put in force
    /// this frame (it runs first), evicting mips no view needed for `evict_after` frames. Call
    /// it before [`GpuScene::stream_frame`].
    pub fn plan_texture_residency(&mut self, visibility: &Visibility, shadows: Option<&ShadowViews>, evict_after: u32) {
        let budget = self.stream.residency.budget();
        let residency = &mut self.textures.residency;
        residency.tick += 1;
        residency.mips_loaded = 0;
        residency.mips_evicted = 0;
        residency.mips_deferred = 0;
        let was_budgeted = std::mem::replace(&mut residency.budgeted, budget.is_some());
        let Some(budget) = budget else {
            if was_budgeted {
                self.load_every_mip();
            }
            return;
        };
        if self.meshes.textures().is_empty() {
            return;
        }
        self.note_texture_needs(visibility, shadows);
        let size = self.texture_size();
        let levels = mip_levels(size);
        let residency = &mut self.textures.residency;
        let pixels = &residency.pixels;
        residency.touched.sort_unstable_by(|&one, &other| pixels[other as usize].total_cmp(&pixels[one as usize]));
        let evict_after = u64::from(evict_after).max(1);
        // Every need is noted before anything is evicted.
        let tick = residency.tick;
        for &layer in &residency.touched {
            let row = layer as usize * MIP_SLOTS;
            for mip in residency.wanted[layer as usize].min(levels - 1)..levels.min(MIP_SLOTS as u32) {
                residency.last_needed[row + mip as usize] = tick;
            }
        }
        for index in 0..self.textures.residency.touched.len() {
            let layer = self.textures.residency.touched[index];
            let residency = &mut self.textures.residency;
            let wanted = residency.wanted[layer as usize].min(levels - 1);
            residency.wanted[layer as usize] = NOT_NEEDED;
            if self.textures.is_removed(layer) {
                continue;
            }
            let residency = &mut self.textures.residency;
            let reserved = residency.reserved_from[layer as usize].min(levels);
            // Coarser first: each mip joins the chain its layer samples.
            for mip in (wanted..reserved).rev() {
                let bytes = u64::from((size >> mip).max(1)).pow(2) * TEXEL_BYTES;
                while self.budgeted_bytes() + bytes > budget {
                    if !self.evict_stale_texture_mip(evict_after) && !self.evict_stale_level(evict_after) {
                        break;
                    }
                }
                if self.budgeted_bytes() + bytes > budget {
                    self.textures.residency.mips_deferred += mip - wanted + 1;
                    break;
                }
                self.textures.residency.reserve(layer, mip, size);
                self.textures.queue_mips(layer, mip, mip);
            }
        }
        // Bytes over a lowered budget.
        while self.budgeted_bytes() > budget {
            if !self.evict_stale_texture_mip(evict_after) {
                break;
            }
        }
    }

    /// Bytes counted against the memory budget: the meshes' ranges and the texture mips
    /// resident or queued.
    pub(super) fn budgeted_bytes(&self) -> u64 {
        self.stream.placement.bytes() + self.textures.residency.bytes()
    }

    /// This frame's texture counts and bytes.
    pub(super) fn texture_counts(&self) -> TextureCounts {
        let residency = &self.textures.residency;
        TextureCounts {
            bytes: residency.bytes(),
            mips_loaded: residency.mips_loaded,
            mips_evicted: residency.mips_evicted,
            mips_deferred: residency.mips_deferred,
        }
    }

    /// Evicts the finest resident mip of the texture least recently needed among those no
    /// view needed for `evict_after` frames (listed once a frame); false when there is none.
    pub(super) fn evict_stale_texture_mip(&mut self, evict_after: u64) -> bool {
        let size = self.texture_size();
        let levels = mip_levels(size);
        let tick = self.textures.residency.tick;
        if self.textures.residency.listed_in != tick {
            self.textures.residency.listed_in = tick;
            self.textures.residency.candidates.clear();
            for layer in 0..self.textures.resident_from.len() as u32 {
                if let Some(last) = self.textures.stale_mip(layer, levels, evict_after) {
                    self.textures.residency.candidates.push((Reverse(last), layer));
                }
            }
        }
        while let Some((Reverse(last), layer)) = self.textures.residency.candidates.pop() {
            // The layer may have changed since it was listed (a load queued, a mip evicted).
            if self.textures.stale_mip(layer, levels, evict_after) != Some(last) {
                continue;
            }
            let textures = &mut self.textures;
            let evicted = textures.resident_from[layer as usize];
            textures.resident_from[layer as usize] = evicted + 1;
            textures.residency.reserve(layer, evicted + 1, size);
            textures.residency.mips_evicted += 1;
            textures.changed.push(layer);
            if let Some(next) = textures.stale_mip(layer, levels, evict_after) {
                textures.residency.candidates.push((Reverse(next), layer));
            }
            return true;
        }
        false
    }

    /// Notes the textures the objects of every view need now (see the module docs): the
    /// camera's visible objects (when the view answers on request, its bits: what the GPU
    /// drew in the fed-back frame and what appeared since) and each shadow view's casters
    /// (every caster when the GPU culls the shadow views).
    fn note_texture_needs(&mut self, visibility: &Visibility, shadows: Option<&ShadowViews>) {
        let layers = self.meshes.textures().len();
        let size = self.texture_size();
        let residency = &mut self.textures.residency;
        residency.touched.clear();
        if residency.wanted.len() < layers {
            residency.wanted.resize(layers, NOT_NEEDED);
            residency.pixels.resize(layers, 0.0);
            residency.last_needed.resize(layers * MIP_SLOTS, 0);
        }
        let Some(view) = visibility.view() else { return };
        let scale = view.projection.y_axis.y.abs() * view.viewport.height as f32 * 0.5;
        let mut needs = TextureNeeds {
            residency,
            materials: self.meshes.materials(),
            visibility,
            eye: view.position,
            near: view.near.max(f32::EPSILON),
            scale,
            perspective: view.projection_kind != ProjectionKind::Orthographic,
            size: size as f32,
            levels: mip_levels(size),
        };
        if visibility.lists_refused().is_none() {
            visibility.visible().iter().for_each(|&slot| needs.note(slot));
        } else {
            super::residency::for_each_set_bit(visibility.bits().words(), |slot| needs.note(slot));
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

    /// Queues every mip not resident nor queued (the budget was lifted).
    fn load_every_mip(&mut self) {
        let size = self.texture_size();
        for layer in 0..self.textures.resident_from.len() as u32 {
            let textures = &mut self.textures;
            let reserved = textures.residency.reserved_from.get(layer as usize).copied().unwrap_or(NOT_RESIDENT);
            if textures.is_removed(layer) || reserved == 0 || reserved == NOT_RESIDENT {
                continue;
            }
            textures.queue_mips(layer, 0, reserved - 1);
            textures.residency.reserve(layer, 0, size);
        }
    }
}

impl TextureStream {
    /// The last frame layer `layer`'s finest resident mip was needed, when it may be evicted:
    /// not its coarsest, no mip of the layer queued, not needed for `evict_after` frames or
    /// never needed (a texture given at install that no view asked for yet).
    fn stale_mip(&self, layer: u32, levels: u32, evict_after: u64) -> Option<u64> {
        let finest = *self.resident_from.get(layer as usize)?;
        let reserved = self.residency.reserved_from.get(layer as usize).copied().unwrap_or(NOT_RESIDENT);
        if finest >= levels.saturating_sub(1) || reserved != finest || self.is_removed(layer) {
            return None;
        }
        let slot = layer as usize * MIP_SLOTS + finest as usize;
        let last = self.residency.last_needed.get(slot).copied().unwrap_or(0);
        (last == 0 || last + evict_after <= self.residency.tick).then_some(last)
    }
}

/// One frame's marking of needed texture mips ([`GpuScene::plan_texture_residency`]).
struct TextureNeeds<'a> {
    residency: &'a mut TextureResidency,
    materials: &'a [meshes::Material],
    visibility: &'a Visibility,
    eye: glam::Vec3,
    near: f32,
    /// Pixels per world unit at distance 1 (perspective) or at any distance (orthographic).
    scale: f32,
    perspective: bool,
    /// The layers' side, and their mip count.
    size: f32,
    levels: u32,
}

impl TextureNeeds<'_> {
    /// Notes the texture object `slot`'s material samples as needed now, at the finest mip
    /// its size on screen asks for (see the module docs).
    #[inline]
    fn note(&mut self, slot: u32) {
        let objects = self.visibility.objects();
        let Some(draw) = objects.draws.get(slot as usize) else { return };
        if draw.mesh == MeshHandle::NONE {
            return;
        }
        let Some(layer) = self.materials.get(draw.material.0 as usize).and_then(|material| material.texture) else {
            return;
        };
        let bounds = objects.bounds[slot as usize];
        let (center, extent) = ((bounds.min + bounds.max) * 0.5, bounds.max - bounds.min);
        let radius = extent.length() * 0.5;
        let mut pixels = 2.0 * radius * self.scale;
        if self.perspective {
            pixels /= ((center - self.eye).length() - radius).max(self.near);
        }
        // The mip whose side is at least `pixels`: rounded down, finer.
        let mip = if pixels >= self.size {
            0
        } else if pixels > 0.0 {
            ((self.size / pixels).log2().floor() as u32).min(self.levels - 1)
        } else {
            self.levels - 1
        };
        let residency = &mut *self.residency;
        let index = layer as usize;
        if index >= residency.wanted.len() {
            return;
        }
        if residency.wanted[index] == NOT_NEEDED {
            residency.touched.push(layer);
            residency.pixels[index] = pixels;
            residency.wanted[index] = mip;
        } else {
            residency.pixels[index] = residency.pixels[index].max(pixels);
            residency.wanted[index] = residency.wanted[index].min(mip);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_bytes_count_every_mip_from_the_first_to_the_one_texel() {
        assert_eq!(chain_bytes(4, 0), (16 + 4 + 1) * TEXEL_BYTES);
        assert_eq!(chain_bytes(4, 2), TEXEL_BYTES);
        assert_eq!(chain_bytes(4, NOT_RESIDENT), 0);
        let mut residency = TextureResidency::new(2, 4);
        assert_eq!(residency.bytes(), 2 * 21 * TEXEL_BYTES);
        residency.reserve(1, 2, 4);
        assert_eq!(residency.bytes(), 22 * TEXEL_BYTES);
        residency.reserve(2, NOT_RESIDENT, 4);
        residency.reserve(2, 1, 4);
        assert_eq!(residency.bytes(), 27 * TEXEL_BYTES);
    }
}

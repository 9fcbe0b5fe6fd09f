//! Textures added, replaced and removed while frames run ([`GpuScene::add_texture`]): the
//! host library takes the texels at once (the id is valid from the call: a material may name
//! it), the GPU gets them in slices of the per-frame transfer budget, smallest mips first,
//! and until a layer's finest mip is on the GPU its materials sample the finest mips that are
//! (the material entry's `min_lod`, which the shaders clamp the sampled level to), or the
//! object's colour alone before any is. Nothing unwritten is ever sampled.
//!
//! **Slices.** A mip is sent in whole rows (a buffer-to-image copy is a rectangle): each
//! frame takes whole mips while they fit in its share of the budget, then as many rows of the
//! next as fit (one row at least, so every texture arrives). The frame's
//! [`MeshUploadPass`](crate::passes::MeshUploadPass) stages the rows and copies them into
//! `material_textures` before any pass of the frame samples it, so the frame that takes a
//! mip's last rows may sample it. A frame that does not stage its slice keeps it.
//!
//! **Growth.** The image array holds a power-of-two number of layers; when the library
//! outgrows it, [`GpuScene::stream_frame`] (between frames) replaces it by one with twice
//! the layers, and the next upload copies every mip of the old layers into it on the GPU
//! before that frame's texels; the outgrown image is kept until the frame that copied it has
//! finished. A scene made without textures has a 1x1 white placeholder: the first texture
//! added sets the array's size, and nothing is copied.
//!
//! **Layout transitions** are the render graph's: the upload pass declares a transfer write
//! of `material_textures` (and a transfer read of the outgrown array) only while texels or a
//! copy wait, so a frame with nothing to send transitions nothing; the declaration changes
//! by a graph recompile ([`GpuScene::follow_growth`]) when streaming starts and ends.
//!
//! **Replacement** streams the new texels into the same layer, smallest mips first; its
//! materials draw the colour alone until the new smallest mip is there, then finer mips as
//! they arrive. **Removal** drops what is left to send; materials naming the layer draw the
//! colour alone, and the id is refused until its layer is given again.
//!
//! **Reuse.** A removed texture's layer goes to a free list with the last graph frame that
//! may read it; [`GpuScene::add_texture`] gives it (id and layer are one) to the next texture
//! once that frame has finished and no material names it any more, so a game that adds and
//! removes textures keeps the array at its largest live count. Until then the id stays
//! refused and a new texture takes a new layer.

use std::collections::VecDeque;
use std::sync::Arc;

use meshes::{Material, MAX_TEXTURE_LAYERS};
use render_graph::{vk, GpuImage, ImageInfo};

use super::growth::Retired;
use super::material_changes::MaterialError;
use super::texture_residency::TextureResidency;
use super::GpuScene;
use crate::names::MATERIAL_TEXTURES;
use crate::scene::GpuMaterial;

/// Bytes of one texel (RGBA8).
pub(super) const TEXEL_BYTES: u64 = 4;

/// A layer none of whose mips is on the GPU.
pub(super) const NOT_RESIDENT: u32 = u32::MAX;

/// Part of one mip of one layer: rows `first_row..first_row + rows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TexelCopy {
    layer: u32,
    level: u32,
    first_row: u32,
    rows: u32,
}

/// A mip waiting for the GPU, and how many of its rows went out.
#[derive(Clone, Copy, Debug)]
struct PendingMip {
    layer: u32,
    level: u32,
    rows_sent: u32,
}

/// An outgrown image array whose layers the next upload copies into its replacement.
struct OutgrownImage {
    image: Arc<GpuImage>,
    /// Layers to copy (the ones it held textures in).
    layers: u32,
    /// The graph frame that recorded the copy (a failed frame keeps its number).
    recorded_in: Option<u64>,
}

/// The streaming state of a scene's textures (see the module docs).
pub(super) struct TextureStream {
    /// By layer: the finest mip on the GPU once this frame's slice is ([`NOT_RESIDENT`]:
    /// none).
    pub(super) resident_from: Vec<u32>,
    /// By layer: whether the game removed it. Empty until a texture is removed.
    removed: Vec<bool>,
    /// Removed layers with the last graph frame that may read them, to be given again.
    free_layers: Vec<(u32, u64)>,
    /// Mips waiting, each texture's smallest first.
    pending: VecDeque<PendingMip>,
    /// This frame's slice.
    frame: Vec<TexelCopy>,
    /// Its bytes.
    frame_bytes: u64,
    /// Whether the slice was staged by a frame (a new one may be taken).
    staged: bool,
    /// Layers the image array holds, and the side of each.
    image_layers: u32,
    image_size: u32,
    /// Whether the image array was made since the last frame that wrote it: the graph imports
    /// it with undefined contents (its first write transitions it from there).
    fresh: bool,
    outgrown: Option<OutgrownImage>,
    /// Whether the upload pass declares the texture writes (texels or a copy wait).
    declared: bool,
    /// Layers whose residency changed this frame (their materials' entries follow).
    pub(super) changed: Vec<u32>,
    /// The mips counted against the memory budget (`texture_residency.rs`).
    pub(super) residency: TextureResidency,
    /// Layers sampled from a coarser mip than resident, as another renderer's frame did
    /// ([`GpuScene::follow_texture_mips`]: a truth reference).
    followed: Vec<(u32, u32)>,
}

impl TextureStream {
    /// The stream of a scene whose library holds `textures`, all on the GPU (in an image array
    /// of `textures.len()` layers, or the 1x1 placeholder without any).
    pub(super) fn new(textures: &meshes::TextureLayers) -> TextureStream {
        TextureStream {
            resident_from: vec![0; textures.len()],
            removed: Vec::new(),
            free_layers: Vec::new(),
            pending: VecDeque::new(),
            frame: Vec::new(),
            frame_bytes: 0,
            staged: true,
            image_layers: textures.len().max(1) as u32,
            image_size: textures.size().max(1),
            fresh: false,
            outgrown: None,
            declared: false,
            changed: Vec::new(),
            followed: Vec::new(),
            residency: TextureResidency::new(textures.len(), textures.size()),
        }
    }

    pub(super) fn is_removed(&self, layer: u32) -> bool {
        self.removed.get(layer as usize).copied().unwrap_or(false)
    }

    /// Queues mips `finest..=coarsest` of layer `layer`, smallest first, after what waits.
    pub(super) fn queue_mips(&mut self, layer: u32, finest: u32, coarsest: u32) {
        self.pending.extend((finest..=coarsest).rev().map(|level| PendingMip { layer, level, rows_sent: 0 }));
    }

    /// Drops what waits of layer `layer` (copies already handed to a frame still land).
    fn cancel(&mut self, layer: u32) {
        self.pending.retain(|mip| mip.layer != layer);
    }

    /// Fills this frame's slice from the pending mips, at most `budget` bytes (one row at
    /// least), for layers of side `size`; notes the mips it completes.
    fn take_slice(&mut self, budget: u64, size: u32) {
        self.frame.clear();
        self.frame_bytes = 0;
        while let Some(mip) = self.pending.front_mut() {
            let side = (size >> mip.level).max(1);
            let row_bytes = u64::from(side) * TEXEL_BYTES;
            let room = budget.saturating_sub(self.frame_bytes);
            let mut rows = (room / row_bytes).min(u64::from(side - mip.rows_sent)) as u32;
            if rows == 0 && self.frame.is_empty() {
                rows = 1;
            }
            if rows == 0 {
                break;
            }
            self.frame.push(TexelCopy { layer: mip.layer, level: mip.level, first_row: mip.rows_sent, rows });
            self.frame_bytes += u64::from(rows) * row_bytes;
            mip.rows_sent += rows;
            if mip.rows_sent < side {
                break;
            }
            let (layer, level) = (mip.layer, mip.level);
            self.pending.pop_front();
            if !self.is_removed(layer) {
                self.resident_from[layer as usize] = level;
                self.changed.push(layer);
                self.residency.mips_loaded += 1;
            }
        }
    }
}

impl GpuScene {
    /// Adds a base-colour texture while frames run and returns its layer id, valid at once (a
    /// material added next may name it): a square power-of-two RGBA8 sRGB image with its full
    /// mip chain, of the size of the scene's textures ([`GpuScene::texture_size`]; any size
    /// when it has none yet: importers resize to it). Its texels reach the GPU over the next
    /// frames under the transfer budget, smallest mips first, and its materials sample what
    /// arrived (see the module docs). A removed texture's layer and id are given again once
    /// no frame in flight and no material reads them (see the module docs). Nothing is added
    /// on an error.
    pub fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32, MaterialError> {
        let id = match self.reusable_layer() {
            Some(layer) => {
                self.meshes.replace_texture(layer, size, mips).map_err(MaterialError::Invalid)?;
                let textures = &mut self.textures;
                textures.free_layers.retain(|&(free, _)| free != layer);
                textures.removed[layer as usize] = false;
                layer
            }
            None => self.meshes.add_texture(size, mips).map_err(MaterialError::Invalid)?,
        };
        let levels = 32 - size.leading_zeros();
        let textures = &mut self.textures;
        textures.resident_from.resize(textures.resident_from.len().max(id as usize + 1), NOT_RESIDENT);
        textures.resident_from[id as usize] = NOT_RESIDENT;
        let first = textures.residency.first_load(size);
        textures.residency.reserve(id, first, size);
        textures.queue_mips(id, first, levels - 1);
        Ok(id)
    }

    /// Replaces texture `id`'s texels, keeping the id: its materials draw the colour alone
    /// until the new smallest mip is on the GPU, then the new mips as they arrive. An unknown
    /// or removed id, or texels the library refuses, is an error, and nothing changes.
    pub fn replace_texture(&mut self, id: u32, size: u32, mips: Vec<Vec<u8>>) -> Result<(), MaterialError> {
        self.check_texture_id(id)?;
        self.meshes.replace_texture(id, size, mips).map_err(MaterialError::Invalid)?;
        let textures = &mut self.textures;
        textures.cancel(id);
        let first = textures.residency.first_load(size);
        textures.residency.reserve(id, NOT_RESIDENT, size);
        textures.residency.reserve(id, first, size);
        textures.queue_mips(id, first, 31 - size.leading_zeros());
        textures.resident_from[id as usize] = NOT_RESIDENT;
        self.refresh_texture_materials(id);
        Ok(())
    }

    /// Removes texture `id`: what is left to send is dropped, its materials draw the colour
    /// alone from the next frame, and the id is refused until [`GpuScene::add_texture`] gives
    /// its layer again (once no frame in flight and no material reads it). An unknown id or
    /// one removed already is an error.
    pub fn remove_texture(&mut self, id: u32) -> Result<(), MaterialError> {
        self.check_texture_id(id)?;
        let count = self.meshes.textures().len();
        let textures = &mut self.textures;
        textures.removed.resize(count.max(textures.removed.len()), false);
        textures.removed[id as usize] = true;
        textures.free_layers.push((id, self.frames_prepared + 1));
        textures.cancel(id);
        textures.resident_from[id as usize] = NOT_RESIDENT;
        let size = self.texture_size();
        self.textures.residency.reserve(id, NOT_RESIDENT, size);
        self.refresh_texture_materials(id);
        Ok(())
    }

    /// The side of every texture layer (0 before the first texture): what
    /// [`GpuScene::add_texture`] takes.
    pub fn texture_size(&self) -> u32 {
        self.meshes.textures().size()
    }

    /// Whether every mip of texture `id` is on the GPU (false for an unknown or removed id).
    pub fn is_texture_resident(&self, id: u32) -> bool {
        self.textures.resident_from.get(id as usize) == Some(&0) && !self.textures.is_removed(id)
    }

    /// Bytes of added textures not yet handed to a frame.
    pub fn pending_texture_bytes(&self) -> u64 {
        let size = self.texture_size();
        let textures = &self.textures;
        textures
            .pending
            .iter()
            .map(|mip| {
                let side = (size >> mip.level).max(1);
                u64::from(side - mip.rows_sent) * u64::from(side) * TEXEL_BYTES
            })
            .sum()
    }

    /// Whether texture `id` was removed.
    pub fn is_texture_removed(&self, id: u32) -> bool {
        self.textures.is_removed(id)
    }

    /// Lists into `out` (cleared first) every texture not wholly on the GPU, with the finest
    /// mip its materials sample (`u32::MAX`: none yet), ascending.
    pub fn texture_stand_ins(&self, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let textures = &self.textures;
        let waiting = textures
            .resident_from
            .iter()
            .enumerate()
            .filter(|&(layer, &finest)| finest != 0 && !textures.is_removed(layer as u32));
        out.extend(waiting.map(|(layer, &finest)| (layer as u32, finest)));
    }

    /// Samples each texture of `mips` (layer, finest mip; `u32::MAX`: none) from no
    /// finer a mip than that, as another renderer's frame did
    /// ([`GpuScene::texture_stand_ins`]); the rest from their finest resident mip. A truth
    /// reference follows the frame it checks so.
    pub fn follow_texture_mips(&mut self, mips: &[(u32, u32)]) {
        if mips.is_empty() && self.textures.followed.is_empty() {
            return;
        }
        let before = std::mem::replace(&mut self.textures.followed, mips.to_vec());
        for &(layer, _) in before.iter().chain(mips) {
            self.refresh_texture_materials(layer);
        }
    }

    /// A removed layer no frame in flight reads (the last that could has finished) and no
    /// material names, the oldest first.
    fn reusable_layer(&self) -> Option<u32> {
        let finished = self.frames_prepared.checked_sub(render_graph::FRAMES_IN_FLIGHT as u64)?;
        let materials = self.meshes.materials();
        let free = self.textures.free_layers.iter();
        free.filter(|&&(_, last_reader)| last_reader <= finished)
            .map(|&(layer, _)| layer)
            .find(|&layer| materials.iter().all(|material| material.texture != Some(layer)))
    }

    /// Known and not removed.
    fn check_texture_id(&self, id: u32) -> Result<(), MaterialError> {
        if id as usize >= self.meshes.textures().len() {
            return Err(MaterialError::Unknown(id));
        }
        if self.textures.is_removed(id) {
            return Err(MaterialError::Removed(id));
        }
        Ok(())
    }

    /// The texture and finest sampled mip of a material's entry: its layer and the finest
    /// resident mip, or no texture while none is (or the layer was removed).
    pub(super) fn texture_entry(&self, material: &Material) -> (u32, u32) {
        let Some(layer) = material.texture else { return (GpuMaterial::NO_TEXTURE, 0) };
        let followed = self.textures.followed.iter().find(|&&(followed, _)| followed == layer);
        let floor = followed.map_or(0, |&(_, finest)| finest);
        match self.textures.resident_from.get(layer as usize) {
            Some(&finest) if finest.max(floor) != NOT_RESIDENT && !self.textures.is_removed(layer) => {
                (layer, finest.max(floor))
            }
            _ => (GpuMaterial::NO_TEXTURE, 0),
        }
    }

    /// Writes again the entries of the materials naming texture layer `layer`.
    fn refresh_texture_materials(&mut self, layer: u32) {
        for id in 0..self.meshes.materials().len() as u32 {
            let material = self.meshes.materials()[id as usize];
            if material.texture == Some(layer) {
                self.refresh_material_entry(id, &material);
            }
        }
    }

    /// The texture half of a frame's start ([`GpuScene::stream_frame`]): grows the image
    /// array when the library outgrew it, takes this frame's slice of texels (at most
    /// `budget` bytes) once the last one was staged, points the materials of the layers it
    /// completes at their new finest mip, and has a graph drawing the scene follow when the
    /// upload pass's declarations change. Returns the slice's bytes.
    pub(super) fn texture_frame(&mut self, budget: u64) -> render_graph::Result<u64> {
        let library = self.meshes.textures();
        let (wanted_layers, size) = (library.len() as u32, library.size());
        if wanted_layers > self.textures.image_layers || (size != 0 && size != self.textures.image_size) {
            self.grow_texture_array(wanted_layers, size)?;
        }
        let textures = &mut self.textures;
        // A copy an earlier frame recorded: its source lives until that frame has finished.
        if let Some(recorded) = textures.outgrown.as_ref().and_then(|old| old.recorded_in) {
            let done = textures.outgrown.take().expect("matched above");
            self.retired.push(Retired::image(recorded, done.image));
        }
        if textures.staged && !textures.pending.is_empty() {
            textures.take_slice(budget, size);
            textures.staged = textures.frame.is_empty();
        }
        let changed = std::mem::take(&mut self.textures.changed);
        for &layer in &changed {
            self.refresh_texture_materials(layer);
        }
        self.textures.changed = changed;
        self.textures.changed.clear();
        let textures = &mut self.textures;
        let declare = !textures.staged || textures.outgrown.as_ref().is_some_and(|old| old.recorded_in.is_none());
        if declare != textures.declared {
            textures.declared = declare;
            self.generation += 1;
        }
        Ok(if textures.staged { 0 } else { textures.frame_bytes })
    }

    /// Replaces the image array by one of `layers` layers or more (twice the old count at
    /// least) of side `size`; the next upload copies the old layers when they are of that size.
    fn grow_texture_array(&mut self, layers: u32, size: u32) -> render_graph::Result<()> {
        let textures = &mut self.textures;
        let resized = size != textures.image_size;
        let count = if resized {
            layers.next_power_of_two()
        } else {
            layers.next_power_of_two().max(textures.image_layers.saturating_mul(2))
        }
        .min(MAX_TEXTURE_LAYERS);
        let info = ImageInfo {
            format: vk::Format::R8G8B8A8_SRGB,
            extent: vk::Extent2D { width: size, height: size },
            mip_levels: 32 - size.leading_zeros(),
            usage: vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC,
        };
        let image = Arc::new(GpuImage::new_array(&self.device, MATERIAL_TEXTURES, info, count)?);
        let old = std::mem::replace(&mut self.material_buffers.textures, image);
        let old_layers = std::mem::replace(&mut textures.image_layers, count);
        textures.image_size = size;
        textures.fresh = true;
        let frame = self.frames_prepared;
        match textures.outgrown.take() {
            // Not copied yet: the oldest array still holds the texels; the one between is
            // dropped once no frame can hold it.
            Some(waiting) if waiting.recorded_in.is_none() && !resized => {
                self.retired.push(Retired::image(frame, old));
                textures.outgrown = Some(waiting);
            }
            waiting => {
                if let Some(done) = waiting {
                    self.retired.push(Retired::image(done.recorded_in.unwrap_or(frame), done.image));
                }
                if resized {
                    // The placeholder (or an array of another size) holds nothing to keep.
                    self.retired.push(Retired::image(frame, old));
                } else {
                    textures.outgrown = Some(OutgrownImage { image: old, layers: old_layers, recorded_in: None });
                }
            }
        }
        self.generation += 1;
        Ok(())
    }

    /// Whether the upload pass declares the texture writes (texels or a layer copy wait, or
    /// the library has view textures: the array's first version of the frame is then the
    /// upload's, which the image views sample before their pictures are copied into it), and
    /// whether it reads an outgrown array; asked when the graph compiles.
    pub(crate) fn texture_declarations(&self) -> (bool, bool) {
        let textures = &self.textures;
        (
            textures.declared || !self.meshes.view_textures().is_empty(),
            textures.declared && textures.outgrown.as_ref().is_some_and(|old| old.recorded_in.is_none()),
        )
    }

    /// The outgrown array the upload reads, while a copy waits.
    pub(crate) fn outgrown_textures(&self) -> Option<&Arc<GpuImage>> {
        self.textures.outgrown.as_ref().filter(|old| old.recorded_in.is_none()).map(|old| &old.image)
    }

    /// Whether the image array was made since the last frame that wrote it.
    pub(crate) fn textures_fresh(&self) -> bool {
        self.textures.fresh
    }

    /// The layers graph frame `frame` copies from the outgrown array (none: `None`), noting
    /// the copy recorded; retires an outgrown array an earlier frame copied.
    pub(crate) fn texture_copy_for(&mut self, frame: u64) -> Option<u32> {
        let textures = &mut self.textures;
        let old = textures.outgrown.as_mut()?;
        match old.recorded_in {
            Some(recorded) if recorded < frame => {
                let done = textures.outgrown.take().expect("matched above");
                self.retired.push(Retired::image(recorded, done.image));
                None
            }
            _ => {
                old.recorded_in = Some(frame);
                Some(old.layers)
            }
        }
    }

    /// Writes this frame's texels into `out` (exactly [`GpuScene::texture_slice_bytes`]
    /// bytes) back to back and lists the copy region of each into `regions` (offsets from the
    /// start of `out`).
    pub(crate) fn write_texture_slice(&self, out: &mut [u8], regions: &mut Vec<vk::BufferImageCopy>) {
        regions.clear();
        let textures = &self.textures;
        if textures.staged {
            return;
        }
        let size = self.texture_size();
        let mut at = 0usize;
        for copy in &textures.frame {
            let side = (size >> copy.level).max(1);
            let row_bytes = side as usize * TEXEL_BYTES as usize;
            let mips = self.meshes.textures().layer(copy.layer).expect("a layer the library holds");
            let start = copy.first_row as usize * row_bytes;
            let bytes = copy.rows as usize * row_bytes;
            out[at..at + bytes].copy_from_slice(&mips[copy.level as usize][start..start + bytes]);
            regions.push(
                vk::BufferImageCopy::default()
                    .buffer_offset(at as u64)
                    .image_subresource(vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: copy.level,
                        base_array_layer: copy.layer,
                        layer_count: 1,
                    })
                    .image_offset(vk::Offset3D { x: 0, y: copy.first_row as i32, z: 0 })
                    .image_extent(vk::Extent3D { width: side, height: copy.rows, depth: 1 }),
            );
            at += bytes;
        }
    }

    /// Bytes of this frame's texels waiting to be staged (0 once staged).
    pub(crate) fn texture_slice_bytes(&self) -> u64 {
        if self.textures.staged {
            0
        } else {
            self.textures.frame_bytes
        }
    }

    /// Notes that this frame's texels (and the layer copy, if any) were recorded.
    pub(crate) fn note_texture_slice_staged(&mut self) {
        let textures = &mut self.textures;
        self.last_upload.texture_bytes = if textures.staged { 0 } else { textures.frame_bytes };
        textures.staged = true;
        textures.fresh = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_send_whole_rows_smallest_mips_first_under_the_budget() {
        let mut stream = TextureStream::new(&meshes::TextureLayers::default());
        stream.resident_from.push(NOT_RESIDENT);
        // A 16x16 layer: mips of 1, 2, 4, 8 and 16 texels a side.
        stream.queue_mips(0, 0, 4);
        let mut frames = Vec::new();
        while !stream.pending.is_empty() {
            stream.take_slice(256, 16);
            assert!(stream.frame_bytes <= 256, "{:?}", stream.frame);
            frames.push((stream.frame.clone(), stream.resident_from[0]));
        }
        assert_eq!(frames[0].0[0], TexelCopy { layer: 0, level: 4, first_row: 0, rows: 1 }, "1x1 first");
        let finest: Vec<u32> = frames.iter().map(|&(_, finest)| finest).collect();
        assert!(finest.windows(2).all(|pair| pair[1] <= pair[0]), "ever finer: {finest:?}");
        assert_eq!(finest.last(), Some(&0));
        let rows_of_mip0: u32 =
            frames.iter().flat_map(|(copies, _)| copies).filter(|copy| copy.level == 0).map(|copy| copy.rows).sum();
        assert_eq!(rows_of_mip0, 16, "every row once");
        // A budget under one row still moves one.
        stream.queue_mips(0, 0, 4);
        stream.take_slice(1, 16);
        assert_eq!(stream.frame.len(), 1);
    }
}

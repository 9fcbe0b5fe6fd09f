//! Materials added, replaced and removed while frames run.
//!
//! **Ids.** [`GpuScene::add_material`] appends to the library's table: the id is valid at
//! once (an object may name it in the same frame) and is never given out again. The host
//! keeps the table as the shaders read it ([`GpuMaterial`], 16 bytes an entry) and marks the
//! entries that changed; the frame's [`MeshUploadPass`](crate::passes::MeshUploadPass)
//! copies the marked range into `materials` with the frame, outside the transfer budget (a
//! material is 16 bytes: a thousand changed in one frame are 16 KiB).
//!
//! **Growth.** The `materials` buffer holds a power-of-two number of entries; when the
//! library outgrows it, the next [`GpuScene::stream_frame`] (between frames, never while one
//! is being prepared) replaces it by one of twice the entries, and the whole table is
//! uploaded into the new buffer by that frame (no GPU copy: the table is small, and its tail
//! must be written anyway). The outgrown buffer is kept until the frames that read it have
//! finished, as an outgrown object buffer is (`growth.rs`). Entries past the library's
//! materials hold the default material (the object's colour alone, opaque, one-sided), as
//! the shaders draw an index past the table.
//!
//! **Removal.** [`GpuScene::remove_material`] marks the id removed: from the next frame an
//! object naming it draws with the default material ([`ecs::MaterialHandle::PLAIN`]), and the
//! first frame that meets such an object logs one warning naming the material, as for a
//! removed mesh. A removed id is refused by every later call ([`MaterialError::Removed`]).
//!
//! **Replacement** keeps the id: the new entry is uploaded with the next frame, and the
//! objects naming it follow (their blended or opaque pass too).
//!
//! **Blending.** Every frame has a blended pass, which runs only while the scene draws blended
//! objects: from the start when the library given at install has a blended material, else
//! from the first blended material added or replaced while frames run. That material moves
//! the scene's generation, so the graph follows ([`GpuScene::follow_growth`]) and compiles
//! again with the pass in, before the frame whose records name the material.

use std::ops::Range;
use std::sync::Arc;

use meshes::Material;
use render_graph::{vk, GpuBuffer, MemoryLocation};

use super::growth::Retired;
use super::GpuScene;
use crate::names::MATERIALS;
use crate::scene::GpuMaterial;

/// Bytes of one entry of `materials`.
const ENTRY_BYTES: u64 = size_of::<GpuMaterial>() as u64;

/// The material an object naming a removed one draws with: the plain material (its colour
/// alone), past every table.
pub const REMOVED_MATERIAL_DRAWS: u32 = ecs::MaterialHandle::PLAIN.0;

/// Why a material or texture change was refused; nothing changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MaterialError {
    /// No material (or texture, for a texture call) has this id.
    Unknown(u32),
    /// The material or texture was removed: its id is never used again (a material naming
    /// a removed texture is refused with the texture's id).
    Removed(u32),
    /// The library refused the material or texture (a texture it does not have, a
    /// non-finite cutoff; texels of another size or without their full mip chain).
    Invalid(meshes::LibraryError),
}

impl std::fmt::Display for MaterialError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaterialError::Unknown(id) => write!(formatter, "no material or texture has id {id}"),
            MaterialError::Removed(id) => write!(formatter, "material or texture {id} was removed"),
            MaterialError::Invalid(error) => write!(formatter, "invalid material or texture: {error}"),
        }
    }
}

impl std::error::Error for MaterialError {}

/// For an importer adding through [`meshes::AssetSink`]: the library's error, or one naming
/// the refused id's fault.
impl From<MaterialError> for meshes::LibraryError {
    fn from(error: MaterialError) -> meshes::LibraryError {
        match error {
            MaterialError::Invalid(error) => error,
            MaterialError::Unknown(_) => meshes::LibraryError::InvalidMaterial("no material or texture has this id"),
            MaterialError::Removed(_) => meshes::LibraryError::InvalidMaterial("the material or texture was removed"),
        }
    }
}

/// The host's copy of `materials` and what waits for upload (see the module docs).
pub(super) struct MaterialTable {
    /// By id, what the GPU holds once uploaded; at least as long as the buffer, the tail
    /// holding the default material.
    entries: Vec<GpuMaterial>,
    /// Entries the `materials` buffer holds.
    buffer_entries: u32,
    /// Entries waiting for upload (empty: none).
    dirty: Range<u32>,
    /// By id: whether the game removed it. Empty until a material is removed.
    removed: Vec<bool>,
    /// Removed materials whose objects were warned of (each once).
    warned: Vec<u32>,
    /// Whether a material was removed or replaced since the last frame (the records naming
    /// it are written again).
    changed_since: bool,
    /// Whether the frames' blended pass runs (the library had a blended material when the
    /// scene was made, or one was added or replaced since).
    blend_pass: bool,
}

impl MaterialTable {
    /// The table of `library`'s materials, as [`crate::scene::MaterialBuffers::upload`]
    /// uploads it (one default entry when it has none).
    pub(super) fn new(library: &meshes::MeshLibrary) -> MaterialTable {
        let mut entries: Vec<GpuMaterial> = library.materials().iter().map(GpuMaterial::of).collect();
        if entries.is_empty() {
            entries.push(GpuMaterial::of(&Material::default()));
        }
        MaterialTable {
            buffer_entries: entries.len() as u32,
            entries,
            dirty: 0..0,
            removed: Vec::new(),
            warned: Vec::new(),
            changed_since: false,
            blend_pass: library.has_blended_materials(),
        }
    }

    /// Marks entry `index` for upload.
    fn mark(&mut self, index: u32) {
        self.dirty = if self.dirty.is_empty() {
            index..index + 1
        } else {
            self.dirty.start.min(index)..self.dirty.end.max(index + 1)
        };
    }

    /// Sets entry `index` (growing the host copy) and marks it.
    fn set(&mut self, index: u32, entry: GpuMaterial) {
        let slot = index as usize;
        if slot >= self.entries.len() {
            self.entries.resize(slot + 1, GpuMaterial::of(&Material::default()));
        }
        self.entries[slot] = entry;
        self.mark(index);
    }

    /// Whether material `material` was removed.
    #[inline]
    pub(super) fn is_removed(&self, material: u32) -> bool {
        self.removed.get(material as usize).copied().unwrap_or(false)
    }
}

impl GpuScene {
    /// The shaders' form of `material`, its texture sampled from the finest resident mip
    /// (none while no mip is resident). The first blended material of a scene without one
    /// turns the frames' blended pass on (see the module docs).
    fn gpu_material(&mut self, material: &Material) -> GpuMaterial {
        let mut entry = GpuMaterial::of(material);
        (entry.texture, entry.min_lod) = self.texture_entry(material);
        if material.blend && !self.materials.blend_pass {
            self.materials.blend_pass = true;
            self.generation += 1;
        }
        entry
    }

    /// Whether the frames' blended pass runs: the scene has had a blended material.
    pub(crate) fn draws_blended(&self) -> bool {
        self.materials.blend_pass
    }

    /// Writes material `id`'s entry again from `material` (its texture's residency changed).
    pub(super) fn refresh_material_entry(&mut self, id: u32, material: &Material) {
        let entry = self.gpu_material(material);
        if self.materials.entries.get(id as usize) != Some(&entry) {
            self.materials.set(id, entry);
        }
    }

    /// Whether objects of material `material` are drawn by the blended pass.
    #[inline]
    pub(super) fn material_blends(&self, material: u32) -> bool {
        self.materials.blend_pass && self.meshes.material_blends(material)
    }

    /// Adds a material while frames run and returns its id, valid at once (an object may
    /// name it in the same frame: its entry is uploaded with the next frame). Nothing is
    /// added on an error (a texture the library does not have, a non-finite cutoff).
    pub fn add_material(&mut self, material: Material) -> Result<u32, MaterialError> {
        if let Some(texture) = material.texture.filter(|&texture| self.is_texture_removed(texture)) {
            return Err(MaterialError::Removed(texture));
        }
        let id = self.meshes.add_material(material).map_err(MaterialError::Invalid)?;
        let entry = self.gpu_material(&material);
        self.materials.set(id, entry);
        Ok(id)
    }

    /// Replaces material `id` by `material`, keeping the id: the objects naming it draw the
    /// new one from the next frame. An unknown or removed id, or a material the library
    /// refuses, is an error, and nothing changes.
    pub fn replace_material(&mut self, id: u32, material: Material) -> Result<(), MaterialError> {
        self.check_material_id(id)?;
        if let Some(texture) = material.texture.filter(|&texture| self.is_texture_removed(texture)) {
            return Err(MaterialError::Removed(texture));
        }
        let before = self.meshes.materials()[id as usize];
        self.meshes.replace_material(id, material).map_err(MaterialError::Invalid)?;
        let entry = self.gpu_material(&material);
        self.materials.set(id, entry);
        if before.blend != material.blend {
            self.refresh_blended(id);
        }
        self.materials.changed_since = true;
        Ok(())
    }

    /// Removes material `id`: objects still naming it draw with the default material (their
    /// colour alone) from the next frame, with one warning naming it, and the id is refused
    /// from now on. An unknown id or one removed already is an error.
    pub fn remove_material(&mut self, id: u32) -> Result<(), MaterialError> {
        self.check_material_id(id)?;
        let count = self.meshes.materials().len();
        let table = &mut self.materials;
        table.removed.resize(count.max(table.removed.len()), false);
        table.removed[id as usize] = true;
        table.changed_since = true;
        Ok(())
    }

    /// Whether material `id` was removed.
    pub fn is_material_removed(&self, id: u32) -> bool {
        self.materials.is_removed(id)
    }

    /// The material an object naming `material` draws with: itself, or the default
    /// ([`REMOVED_MATERIAL_DRAWS`]) once it was removed.
    #[inline]
    pub fn drawn_material(&self, material: u32) -> u32 {
        if self.materials.is_removed(material) {
            REMOVED_MATERIAL_DRAWS
        } else {
            material
        }
    }

    /// Known and not removed.
    fn check_material_id(&self, id: u32) -> Result<(), MaterialError> {
        if id as usize >= self.meshes.materials().len() {
            return Err(MaterialError::Unknown(id));
        }
        if self.materials.is_removed(id) {
            return Err(MaterialError::Removed(id));
        }
        Ok(())
    }

    /// Sets again the blended mark of every slot naming `material` (its blending changed).
    fn refresh_blended(&mut self, material: u32) {
        for slot in 0..self.count {
            let record = &self.records[slot as usize];
            if record.material != material || record.is_empty() {
                continue;
            }
            if self.material_blends(material) {
                self.blended.mark(slot);
            } else {
                self.blended.clear_range(slot, slot + 1);
            }
        }
    }

    /// Logs, once per removed material, that an object still names `material` (the Render
    /// stage calls it for each such object it writes).
    pub(crate) fn warn_removed_material_once(&mut self, material: u32) {
        let warned = &mut self.materials.warned;
        if !warned.contains(&material) {
            warned.push(material);
            log::warn!("an object names material {material}, which was removed: it draws with the default material");
        }
    }

    /// The material half of a frame's start ([`GpuScene::stream_frame`]): grows `materials`
    /// when the library outgrew it (a graph drawing the scene must follow,
    /// [`GpuScene::follow_growth`]). Returns whether a material was removed or replaced since
    /// the last frame (the records naming it are written again). On an allocation error the
    /// buffer keeps its size, the new entries wait, and the next frame tries again.
    pub(super) fn material_frame(&mut self) -> render_graph::Result<bool> {
        let wanted = self.meshes.materials().len().max(1) as u32;
        let table = &mut self.materials;
        if wanted > table.buffer_entries {
            let entries = wanted.next_power_of_two().max(table.buffer_entries.saturating_mul(2));
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
            let bytes = u64::from(entries) * ENTRY_BYTES;
            let buffer = Arc::new(GpuBuffer::new(&self.device, MATERIALS, bytes, usage, MemoryLocation::GpuOnly)?);
            let outgrown = std::mem::replace(&mut self.material_buffers.materials, buffer);
            self.retired.push(Retired::new(self.frames_prepared, outgrown));
            table.entries.resize(entries as usize, GpuMaterial::of(&Material::default()));
            table.buffer_entries = entries;
            table.dirty = 0..entries;
            self.generation += 1;
        }
        Ok(std::mem::take(&mut table.changed_since))
    }

    /// The entries waiting for upload that the buffer holds: the byte offset in `materials`
    /// and the bytes, or `None`.
    pub(crate) fn material_slice(&self) -> Option<(u64, &[u8])> {
        let table = &self.materials;
        let end = table.dirty.end.min(table.buffer_entries);
        if table.dirty.start >= end {
            return None;
        }
        let entries = &table.entries[table.dirty.start as usize..end as usize];
        Some((u64::from(table.dirty.start) * ENTRY_BYTES, crate::scene::as_bytes(entries)))
    }

    /// Notes that [`GpuScene::material_slice`] was staged.
    pub(crate) fn note_material_slice_staged(&mut self) {
        let table = &mut self.materials;
        let end = table.dirty.end.min(table.buffer_entries);
        let sent = end.saturating_sub(table.dirty.start);
        self.last_upload.material_bytes = u64::from(sent) * ENTRY_BYTES;
        table.dirty = if end >= table.dirty.end { 0..0 } else { table.buffer_entries..table.dirty.end };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dirty_range_covers_every_marked_entry() {
        let mut table = MaterialTable::new(&meshes::MeshLibrary::with_unit_cube());
        assert!(table.dirty.is_empty(), "the install-time table is uploaded with the scene");
        table.mark(5);
        table.mark(2);
        assert_eq!(table.dirty, 2..6);
        table.set(9, GpuMaterial::of(&Material { double_sided: true, ..Material::default() }));
        assert_eq!(table.dirty, 2..10);
        assert_eq!(table.entries.len(), 10, "the host copy grows with the ids");
        assert_eq!(table.entries[7].texture, GpuMaterial::NO_TEXTURE, "the gap holds the default");
    }
}

//! Skinning on the GPU: the skin palette (`skin_palette`) and the vertices' influences
//! (`mesh_skin`), which the scene passes' vertex shaders blend (`skinning.h`).
//!
//! **The palette.** Each frame the Render stage hands the scene the animation system's
//! [`SkinPalette`] ([`GpuScene::sync_palette`]); every rig's skin matrices are compared with
//! the host's copy of what the GPU holds, byte for byte, and each rig whose matrices changed
//! is copied into it as it is and marked, so the frame's
//! [`MeshUploadPass`](crate::passes::MeshUploadPass) copies only the rigs the animation moved:
//! [`PALETTE_JOINT_BYTES`] times their joints (a still or paused rig uploads nothing). An
//! entry is an [`animation::SkinMatrix`], three rows of an affine matrix, 48 bytes, laid out
//! like an [`ObjectTransform`]: a skin matrix (joint world times inverse bind) is affine, so
//! the fourth row of a `mat4` would be a quarter of the upload for nothing, and the shaders
//! move a vertex with the same `precise` `object_point` as an object. The animation system
//! writes that layout, so nothing is converted on the way. The buffer grows without a
//! cap when the palette outgrows it (to twice its size, or more): the new one is written
//! whole from the host's copy by the next upload, and the outgrown one is kept until the
//! frames that may read it have finished.
//!
//! **The influences.** Each vertex of the library has 16 bytes in `mesh_skin`, parallel to
//! `mesh_vertices` ([`pack_vertex_skin`]: four u16 joints, four unorm16 weights). The scene
//! keeps the packed stream on the host from the library's [`meshes::VertexSkin`] data, and
//! the buffer is uploaded at install and, for skinned meshes added while frames run
//! ([`GpuScene::add_skinned_mesh_levels`]), with their vertices by the mesh streaming (a
//! transfer target of its own). While no mesh is skinned the buffer holds one entry: a rigid
//! record never reads it.

use std::sync::Arc;

use animation::{SkinMatrix, SkinPalette};
use meshes::MeshLibrary;
use render_graph::{vk, GpuBuffer, GpuDevice, MemoryLocation, Result};

use super::growth::Retired;
use super::GpuScene;
use crate::names::SKIN_PALETTE;
use crate::scene::ObjectTransform;

/// Bytes of one joint in `skin_palette` (three rows of four floats, an [`ObjectTransform`]).
pub const PALETTE_JOINT_BYTES: u64 = std::mem::size_of::<ObjectTransform>() as u64;

const _: () = assert!(
    PALETTE_JOINT_BYTES == animation::PALETTE_ENTRY_BYTES as u64,
    "the animation system writes palette entries as the GPU reads them"
);

/// Bytes of one vertex's influences in `mesh_skin`.
pub(super) const SKIN_BYTES: u64 = 16;

/// Entries the palette buffer holds at first.
const FIRST_PALETTE_ENTRIES: u64 = 64;

/// One vertex's influences as `mesh_skin` holds them: joints 0 and 1 in word 0 (low half
/// first), 2 and 3 in word 1, the weights as unorm16 pairs in words 2 and 3 (GLSL's
/// `unpackUnorm2x16`). A rigid vertex (all weights 0) packs to zeros.
pub fn pack_vertex_skin(joints: [u16; 4], weights: [f32; 4]) -> [u32; 4] {
    let unorm = |weight: f32| (weight.clamp(0.0, 1.0) * 65535.0).round() as u32;
    let pair = |low: u32, high: u32| low | (high << 16);
    [
        pair(u32::from(joints[0]), u32::from(joints[1])),
        pair(u32::from(joints[2]), u32::from(joints[3])),
        pair(unorm(weights[0]), unorm(weights[1])),
        pair(unorm(weights[2]), unorm(weights[3])),
    ]
}

/// The weights the GPU blends with for `weights` (what [`pack_vertex_skin`] keeps of them).
pub fn gpu_skin_weights(weights: [f32; 4]) -> [f32; 4] {
    weights.map(|weight| (weight.clamp(0.0, 1.0) * 65535.0).round() / 65535.0)
}

/// Whether mesh `mesh` of `library` is skinned: its vertices have influences (a rigid mesh's
/// weights are all 0, a skinned one's sum to 1).
pub fn mesh_is_skinned(library: &MeshLibrary, mesh: u32) -> bool {
    let Some(range) = library.range(mesh) else { return false };
    library.vertex_weights().get(range.vertex_offset as usize).is_some_and(|weights| weights.iter().sum::<f32>() > 0.5)
}

/// The scene's skinning state: the palette buffer with the host's copy and what waits for
/// upload, and the packed influences of the library's vertices.
pub(super) struct SkinBuffers {
    /// `skin_palette`.
    pub(super) palette: Arc<GpuBuffer>,
    /// What the GPU holds (once the marked ranges are uploaded), one entry per palette entry.
    rows: Vec<SkinMatrix>,
    /// Entry ranges changed since the last upload: disjoint runs in address order once a
    /// sync is done (`merge_ranges`).
    pending: Vec<(u32, u32)>,
    /// The packed influences of every vertex of the library (empty while no mesh is skinned).
    pub(super) vertex_words: Vec<[u32; 4]>,
    /// Bytes of palette entries the last staged upload sent.
    pub(super) last_bytes: u64,
}

impl SkinBuffers {
    /// The state of a scene made with `library`: a palette buffer of a few entries, and the
    /// library's influences packed.
    pub(super) fn new(device: &Arc<GpuDevice>, library: &MeshLibrary) -> Result<SkinBuffers> {
        let mut skin = SkinBuffers {
            palette: Arc::new(palette_buffer(device, FIRST_PALETTE_ENTRIES * PALETTE_JOINT_BYTES)?),
            rows: Vec::new(),
            pending: Vec::new(),
            vertex_words: Vec::new(),
            last_bytes: 0,
        };
        skin.pack_new_vertices(library);
        Ok(skin)
    }

    /// Packs the influences of the vertices the library gained since the last call.
    pub(super) fn pack_new_vertices(&mut self, library: &MeshLibrary) {
        let (joints, weights) = (library.vertex_joints(), library.vertex_weights());
        let start = self.vertex_words.len();
        self.vertex_words.extend((start..joints.len()).map(|vertex| pack_vertex_skin(joints[vertex], weights[vertex])));
    }

    /// Marks entries `first .. first + count` for upload, merged with the last range when they
    /// touch it.
    fn mark(&mut self, first: u32, count: u32) {
        match self.pending.last_mut() {
            Some((start, len)) if *start + *len == first => *len += count,
            _ => self.pending.push((first, count)),
        }
    }
}

/// Sorts the marked ranges `(first, count)` and merges those that overlap or touch: each
/// entry is copied once (two copies of one entry in a pass would race), in as few regions as
/// there are runs. The rigs come nearly in address order, so the sort is close to linear.
fn merge_ranges(pending: &mut Vec<(u32, u32)>) {
    if pending.len() < 2 {
        return;
    }
    pending.sort_unstable_by_key(|&(first, _)| first);
    let mut kept = 0;
    for index in 1..pending.len() {
        let (first, count) = pending[index];
        let (kept_first, kept_count) = &mut pending[kept];
        if first <= *kept_first + *kept_count {
            *kept_count = (*kept_count).max(first + count - *kept_first);
        } else {
            kept += 1;
            pending[kept] = (first, count);
        }
    }
    pending.truncate(kept + 1);
}

/// A device-local palette buffer of `bytes`.
fn palette_buffer(device: &Arc<GpuDevice>, bytes: u64) -> Result<GpuBuffer> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    GpuBuffer::new(device, SKIN_PALETTE, bytes, usage, MemoryLocation::GpuOnly)
}

impl GpuScene {
    /// Brings the host's copy of `skin_palette` to `palette` and marks each rig whose skin
    /// matrices changed for the next upload (see the module docs). Grows the buffer when the
    /// palette outgrew it (a graph drawing the scene must then follow,
    /// [`GpuScene::follow_growth`]); returns an error when it cannot grow (nothing is marked).
    pub fn sync_palette(&mut self, palette: &SkinPalette) -> Result<()> {
        runtime::profile_zone!("skin palette sync");
        let entries = palette.matrices().len();
        let capacity = self.skin.palette.size() / PALETTE_JOINT_BYTES;
        if entries as u64 > capacity {
            let bytes = (entries as u64).max(capacity.saturating_mul(2)) * PALETTE_JOINT_BYTES;
            let buffer = Arc::new(palette_buffer(&self.device, bytes)?);
            let outgrown = std::mem::replace(&mut self.skin.palette, buffer);
            self.retired.push(Retired::new(self.last_reader(), outgrown));
            self.generation += 1;
            log::info!("the skin palette buffer grew to {} entries", bytes / PALETTE_JOINT_BYTES);
            // The new buffer holds nothing yet: every entry goes up with the next upload.
            self.skin.rows.resize(entries, SkinMatrix::IDENTITY);
            self.skin.pending.clear();
            self.skin.mark(0, entries as u32);
        }
        if self.skin.rows.len() < entries {
            // New entries: the buffer holds nothing there yet, so they go up once whatever
            // their rig's first pose is.
            let start = self.skin.rows.len() as u32;
            self.skin.rows.resize(entries, SkinMatrix::IDENTITY);
            self.skin.mark(start, entries as u32 - start);
        }
        let matrices = palette.matrices();
        for rig in palette.rigs() {
            let range = rig.first as usize..(rig.first + rig.count) as usize;
            let (stored, posed) = (&mut self.skin.rows[range.clone()], &matrices[range]);
            // Bytes, not floats: what the GPU would read differently is what changed.
            if SkinMatrix::as_bytes(stored) != SkinMatrix::as_bytes(posed) {
                stored.copy_from_slice(posed);
                self.skin.mark(rig.first, rig.count);
            }
        }
        merge_ranges(&mut self.skin.pending);
        Ok(())
    }

    /// This frame's palette upload: each marked range's byte offset in `skin_palette` and
    /// its bytes.
    pub(crate) fn palette_slice(&self) -> impl Iterator<Item = (u64, &[u8])> + '_ {
        self.skin.pending.iter().map(|&(first, count)| {
            let rows = &self.skin.rows[first as usize..(first + count) as usize];
            (u64::from(first) * PALETTE_JOINT_BYTES, SkinMatrix::as_bytes(rows))
        })
    }

    /// Notes that this frame's palette ranges were staged.
    pub(crate) fn note_palette_staged(&mut self) {
        let joints: u64 = self.skin.pending.iter().map(|&(_, count)| u64::from(count)).sum();
        self.skin.last_bytes = joints * PALETTE_JOINT_BYTES;
        self.last_upload.palette_bytes = self.skin.last_bytes;
        self.skin.pending.clear();
    }

    /// The palette's entries as the GPU holds them once this frame's upload is done (three
    /// rows each), for tests and tools.
    pub fn palette_rows(&self) -> &[SkinMatrix] {
        &self.skin.rows
    }

    /// Entries `skin_palette` holds now (it grows: [`GpuScene::sync_palette`]).
    pub fn palette_capacity(&self) -> u64 {
        self.skin.palette.size() / PALETTE_JOINT_BYTES
    }

    /// Whether any mesh of the library is skinned (then `mesh_skin` holds an entry per
    /// vertex slot).
    pub(crate) fn has_skinned_meshes(&self) -> bool {
        !self.skin.vertex_words.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn influences_pack_joints_low_half_first_and_weights_as_unorm16() {
        let words = pack_vertex_skin([1, 2, 3, 300], [0.5, 0.25, 0.25, 0.0]);
        assert_eq!(words[0], 1 | (2 << 16));
        assert_eq!(words[1], 3 | (300 << 16));
        assert_eq!(words[2] & 0xffff, 32768, "0.5 rounds to 32768 of 65535");
        assert_eq!(words[3] >> 16, 0);
        assert_eq!(pack_vertex_skin([0; 4], [0.0; 4]), [0; 4], "a rigid vertex packs to zeros");
        assert_eq!(gpu_skin_weights([1.0, 0.0, 0.0, 0.0]), [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn marked_ranges_merge_into_disjoint_runs() {
        let mut pending = vec![(8, 4), (0, 4), (2, 2), (20, 2), (12, 1)];
        merge_ranges(&mut pending);
        assert_eq!(pending, [(0, 4), (8, 5), (20, 2)]);
    }
}

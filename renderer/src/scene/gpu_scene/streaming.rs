//! Meshes added while frames run ([`GpuScene::add_mesh_levels`]): the host library takes them
//! at once (their ids are valid from the call), the GPU gets their bytes in slices of at most
//! a per-frame budget ([`meshes::TransferQueue`]), and until a level is on the GPU an object
//! naming it draws another one ([`GpuScene::drawn_mesh`]).
//!
//! **What is queued.** Each added mesh gets a placeholder: a box of its bounds (8 vertices,
//! 36 indices, a mesh id of its own after its levels). The boxes go out before anything else
//! (a queue of their own, drained first each frame); then the mesh's vertices and texture
//! coordinates with its coarsest level's indices, then each finer level, coarsest first. So
//! an object of a new mesh draws its box in the first frame, then its coarsest level, then
//! its own. Each of them gets its GPU range when queued (`placement.rs`). Under a mesh
//! memory budget only the box is queued when the mesh is added: the vertices with the
//! coarsest level, and the finer levels, are queued when a view needs them, and may be
//! evicted again (`residency.rs`).
//!
//! **When a level is drawn.** [`GpuScene::stream_frame`] (the Render stage calls it before it
//! writes the frame's records) takes the frame's slice from the queues and marks the levels
//! whose last bytes are in it resident: the frame's upload pass
//! ([`MeshUploadPass`](crate::passes::MeshUploadPass)) copies the slice before any pass of
//! the frame draws, so the records of that same frame may name them. A frame that does not
//! stage its slice (it fails, or draws nothing) keeps it: the next frame stages it again
//! before a new slice is taken.
//!
//! A skinned mesh's vertices carry their influences into `mesh_skin` the same way (a region
//! of their own beside the texture coordinates, `skinning.rs`).
//!
//! **Growth** (`mesh_growth.rs`). The buffers (`mesh_vertices`, `mesh_indices`, `mesh_uvs`,
//! `mesh_skin`)
//! double when the ranges given out outgrow them (no free range fitted), in [`GpuScene::stream_frame`] (between frames, never while a frame
//! is being prepared); the next frame's object upload copies the outgrown buffers into the
//! new ones on the GPU before that frame's slice is copied, and the outgrown ones are kept until the frame that copied them has finished, as
//! the object buffers are (`growth.rs`).

use std::ops::Range;

use meshes::{FrameTransfer, MeshVertices, Meshlet, TransferQueue, TransferRegion, VertexSkin, TRANSFER_GRANULE};

use super::mesh_growth::MeshGrowth;
use super::placement::MeshPlacement;
use super::residency::Residency;
use super::GpuScene;

/// Bytes of one vertex in `mesh_vertices`.
pub(super) const VERTEX_BYTES: u64 = 16;
/// Bytes of one index in `mesh_indices`.
pub(super) const INDEX_BYTES: u64 = 4;
/// Bytes of one vertex's texture coordinates in `mesh_uvs`.
pub(super) const UV_BYTES: u64 = 8;

/// The transfer targets, as the queue numbers them.
pub(crate) const TARGET_VERTICES: u32 = 0;
/// See [`TARGET_VERTICES`].
pub(crate) const TARGET_INDICES: u32 = 1;
/// See [`TARGET_VERTICES`].
pub(crate) const TARGET_UVS: u32 = 2;
/// See [`TARGET_VERTICES`]: `mesh_skin`, the influences of skinned meshes' vertices.
pub(crate) const TARGET_SKIN: u32 = 3;

/// Indices of a placeholder box.
pub(super) const BOX_INDEX_COUNT: u64 = 36;

/// The twelve triangles of a box over the corners [`box_corners`] lists, outward.
const BOX_INDICES: [u32; BOX_INDEX_COUNT as usize] = [
    0, 2, 1, 0, 3, 2, // -z
    4, 5, 6, 4, 6, 7, // +z
    0, 1, 5, 0, 5, 4, // -y
    3, 7, 6, 3, 6, 2, // +y
    0, 4, 7, 0, 7, 3, // -x
    1, 2, 6, 1, 6, 5, // +x
];

/// The corners of the box `min..max`: bit 0 of the corner index picks x, bit 1 y (with the
/// first two swapped so the faces wind in order), the upper four the +z face.
fn box_corners(min: [f32; 3], max: [f32; 3]) -> [[f32; 3]; 8] {
    let corner = |x: bool, y: bool, z: bool| {
        [if x { max[0] } else { min[0] }, if y { max[1] } else { min[1] }, if z { max[2] } else { min[2] }]
    };
    [
        corner(false, false, false),
        corner(true, false, false),
        corner(true, true, false),
        corner(false, true, false),
        corner(false, false, true),
        corner(true, false, true),
        corner(true, true, true),
        corner(false, true, true),
    ]
}

/// The levels of detail a mesh id belongs to, and its placeholder.
#[derive(Clone, Copy, Debug)]
pub(super) struct Family {
    /// The finest level's id.
    pub(super) first: u32,
    /// Number of levels (consecutive ids from `first`).
    pub(super) levels: u32,
    /// The id of the box drawn while no level is resident ([`NO_PLACEHOLDER`]: none).
    pub(super) placeholder: u32,
    /// Whether the game removed the mesh: its objects draw nothing.
    pub(super) removed: bool,
    /// This id's own: the id whose data an object naming it draws once that id replaced its
    /// data ([`NO_MESH`]: its own, or a stand-in while it is not resident).
    pub(super) current: u32,
    /// This id's own: the id whose data this one replaces once resident ([`NO_MESH`]: none).
    pub(super) replaces: u32,
    /// The family whose objects draw this id (its finest level's id): `first`, but for a
    /// placeholder box, the mesh it stands in for.
    pub(super) owner: u32,
    /// Vertices the levels share (freed with the mesh).
    pub(super) vertex_count: u32,
    /// Whether the shared vertices hold no GPU range: under a memory budget a mesh's
    /// vertices go up with its coarsest level when a view first needs it, and leave with it
    /// when that level is evicted (`residency.rs`).
    pub(super) vertices_out: bool,
}

impl Family {
    /// The family of levels `first..first + levels` with `placeholder`, neither removed nor
    /// replaced.
    pub(super) const fn new(first: u32, levels: u32, placeholder: u32) -> Family {
        Family {
            first,
            levels,
            placeholder,
            removed: false,
            current: NO_MESH,
            replaces: NO_MESH,
            owner: first,
            vertex_count: 0,
            vertices_out: false,
        }
    }
}

/// No mesh id (see [`Family::current`]).
pub(super) const NO_MESH: u32 = u32::MAX;

/// A mesh with no placeholder (one of the library the scene was made with, or a box).
pub(super) const NO_PLACEHOLDER: u32 = u32::MAX;

/// The streaming state of a scene's meshes (see the module docs).
pub(super) struct MeshStream {
    /// The placeholder boxes, sent first.
    pub(super) boxes: TransferQueue<u32>,
    /// The meshes' levels.
    pub(super) levels: TransferQueue<u32>,
    /// This frame's slices of both queues.
    box_frame: FrameTransfer<u32>,
    level_frame: FrameTransfer<u32>,
    /// Whether the slices were staged by a frame (a new pair may be taken).
    pub(super) staged: bool,
    /// By mesh id: whether its indices (and the vertices they use) are on the GPU once this
    /// frame's slice is.
    pub(super) resident: Vec<bool>,
    /// Mesh ids not resident.
    pub(super) missing: usize,
    /// By mesh id: its family. Empty while every mesh is the scene's first library's.
    pub(super) families: Vec<Family>,
    /// Removed meshes whose objects were warned of (each once).
    pub(super) warned: Vec<u32>,
    /// Families (finest level's id) removed since the last frame: the records naming them
    /// change.
    pub(super) changed_since: Vec<u32>,
    /// Families whose drawn level changed in this frame's [`GpuScene::stream_frame`] (a
    /// level arrived or the family was removed), each once.
    pub(super) changed: Vec<u32>,
    /// Whether a material was removed or replaced before this frame's
    /// [`GpuScene::stream_frame`]: no slot list per material is kept, so every record is
    /// written again (a rare event, unlike a level's arrival).
    materials_changed: bool,
    /// By target: an outgrown buffer waiting to be copied.
    pub(super) growth: [Option<MeshGrowth>; 4],
    /// Where each mesh lies in the GPU buffers (`placement.rs`).
    pub(super) placement: MeshPlacement,
    /// What the views need and the memory budget (`residency.rs`).
    pub(super) residency: Residency,
    /// Scratch of [`GpuScene::stream_frame`]: (replaced level, its replacement) of the
    /// replacements' levels this frame completes.
    pub(super) superseded: Vec<(u32, u32)>,
}

impl MeshStream {
    /// The stream of a scene made with `library` (every mesh of it resident, in buffers just
    /// its size).
    pub(super) fn new(library: &meshes::MeshLibrary) -> MeshStream {
        let meshes = library.len();
        let (vertices, indices) = (library.positions().len() as u32, library.indices().len() as u32);
        MeshStream {
            boxes: TransferQueue::new(),
            levels: TransferQueue::new(),
            box_frame: FrameTransfer::default(),
            level_frame: FrameTransfer::default(),
            staged: true,
            resident: vec![true; meshes],
            missing: 0,
            families: Vec::new(),
            warned: Vec::new(),
            changed_since: Vec::new(),
            changed: Vec::new(),
            materials_changed: false,
            growth: [None, None, None, None],
            placement: MeshPlacement::new(library, vertices, indices),
            residency: Residency::default(),
            superseded: Vec::new(),
        }
    }
}

/// A queue region of `count` items of `item` bytes from item `first` of `target`.
fn region(target: u32, first: u64, count: u64, item: u64) -> TransferRegion {
    TransferRegion { target, offset: first * item, bytes: count * item }
}

impl GpuScene {
    /// Adds a lit mesh with its levels of detail (finest first, as
    /// [`meshes::MeshLibrary::add_mesh_levels`] takes them) while frames run, and returns the
    /// levels' ids. An object may name them at once: until a level is on the GPU the object
    /// draws the nearest resident level, coarser first, or a box of the mesh's bounds (see
    /// [`GpuScene::drawn_mesh`]); its culling box is its own either way. The bytes reach the
    /// GPU over the next frames, at most the frame's budget each ([`GpuScene::stream_frame`]);
    /// under a mesh memory budget the finer levels wait until a view needs them
    /// ([`GpuScene::plan_residency`]).
    /// Nothing is added on an error (see `add_mesh_levels`).
    pub fn add_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        self.add_levels(vertices, None, levels)
    }

    /// Adds a skinned mesh with its levels of detail while frames run, as
    /// [`GpuScene::add_mesh_levels`], with its vertices' joints and weights (checked as
    /// [`meshes::MeshLibrary::add_skinned_mesh_levels`] checks them): the influences go to
    /// `mesh_skin` with the vertices, so an object drawing it with a rig (its record's
    /// `skin_count`) is skinned from the frame its level arrives. Its placeholder box is
    /// drawn rigid.
    pub fn add_skinned_mesh_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        skin: VertexSkin<'_>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        self.add_levels(vertices, Some(skin), levels)
    }

    /// [`GpuScene::add_mesh_levels`], skinned when `skin` is given.
    fn add_levels(
        &mut self,
        vertices: MeshVertices<'_>,
        skin: Option<VertexSkin<'_>>,
        levels: &[(&[u32], &[Meshlet])],
    ) -> meshes::Result<Range<u32>> {
        let ids = match skin {
            Some(skin) => self.meshes.add_skinned_mesh_levels(vertices, skin, levels)?,
            None => self.meshes.add_mesh_levels(vertices, levels)?,
        };
        let vertex_count = vertices.positions.len() as u32;
        let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for id in ids.clone() {
            let range = self.meshes.range(id).expect("an id just added");
            for axis in 0..3 {
                min[axis] = min[axis].min(range.bounds_min[axis]);
                max[axis] = max[axis].max(range.bounds_max[axis]);
            }
        }
        // The levels' positions were found finite, so are their bounds: the box is valid, and
        // nothing can fail once the levels are in.
        let placeholder =
            self.meshes.add_mesh(&box_corners(min, max), &BOX_INDICES).expect("a box of finite bounds is a valid mesh");
        self.skin.pack_new_vertices(&self.meshes);
        let stream = &mut self.stream;
        if stream.families.is_empty() {
            stream.families = (0..stream.resident.len() as u32).map(|id| Family::new(id, 1, NO_PLACEHOLDER)).collect();
        }
        let family = Family { vertex_count, ..Family::new(ids.start, ids.len() as u32, placeholder) };
        stream.families.extend(ids.clone().map(|_| family));
        stream.families.push(Family {
            owner: ids.start,
            vertex_count: 8,
            ..Family::new(placeholder, 1, NO_PLACEHOLDER)
        });
        stream.resident.resize(self.meshes.len(), false);
        stream.missing += ids.len() + 1;
        let box_block = stream.placement.take_vertices(8);
        self.queue_level(placeholder, Some(box_block.start));
        // Every level at once without a memory budget; under one, the box alone: the
        // coarsest level with the vertices, then the finer levels, when a view needs them
        // (`residency.rs`), so adding meshes never takes the resident bytes past it.
        for id in ids.clone() {
            self.stream.families[id as usize].vertices_out = true;
        }
        if self.stream.residency.budget().is_none() {
            self.queue_coarsest(ids.end - 1);
            for id in ids.clone().rev().skip(1) {
                self.queue_level(id, None);
            }
        }
        Ok(ids)
    }

    /// Gives the vertices of the family of `coarsest` (its coarsest level) a GPU range and
    /// queues them with that level's indices.
    pub(super) fn queue_coarsest(&mut self, coarsest: u32) {
        let family = self.stream.families[coarsest as usize];
        let block = self.stream.placement.take_vertices(family.vertex_count);
        for id in family.first..family.first + family.levels {
            self.stream.families[id as usize].vertices_out = false;
        }
        self.queue_level(coarsest, Some(block.start));
    }

    /// Gives level `mesh` its GPU indices and queues its bytes: with its family's vertices
    /// from slot `vertices` when given (the coarsest level and a box), else at the vertex
    /// slots the family's coarsest level has.
    pub(super) fn queue_level(&mut self, mesh: u32, vertices: Option<u32>) {
        let range = *self.meshes.range(mesh).expect("a level of an added mesh");
        let family = self.stream.families[mesh as usize];
        let coarsest = family.first + family.levels - 1;
        let vertex_offset = match vertices {
            Some(first) => first as i32,
            None => self.stream.placement.place(coarsest).vertex_offset,
        };
        let stream = &mut self.stream;
        let place = stream.placement.place_indices(mesh, range.index_count, vertex_offset);
        let indices = region(TARGET_INDICES, u64::from(place.first_index), u64::from(range.index_count), INDEX_BYTES);
        let queue = if family.placeholder == NO_PLACEHOLDER { &mut stream.boxes } else { &mut stream.levels };
        match vertices {
            Some(first) => {
                let count = u64::from(family.vertex_count);
                let first = u64::from(first);
                let vertex_regions = [
                    region(TARGET_VERTICES, first, count, VERTEX_BYTES),
                    region(TARGET_UVS, first, count, UV_BYTES),
                    indices,
                ];
                if super::skinning::mesh_is_skinned(&self.meshes, mesh) {
                    let influences = region(TARGET_SKIN, first, count, super::skinning::SKIN_BYTES);
                    let [positions, uvs, indices] = vertex_regions;
                    queue.push(mesh, &[positions, uvs, influences, indices]);
                } else {
                    queue.push(mesh, &vertex_regions);
                }
            }
            None => queue.push(mesh, &[indices]),
        }
    }

    /// The families (named by their finest level's id) whose objects draw another mesh since
    /// the last [`GpuScene::stream_frame`]: a level arrived, was replaced or the mesh was
    /// removed. Each once.
    pub(crate) fn changed_families(&self) -> &[u32] {
        &self.stream.changed
    }

    /// Whether a material was removed or replaced before the last
    /// [`GpuScene::stream_frame`]: every record is then written again.
    pub(crate) fn materials_changed(&self) -> bool {
        self.stream.materials_changed
    }

    /// The family an object naming `mesh` is listed under (its finest level's id) when `mesh`
    /// is a level of a mesh added while frames run; `None` for the meshes given at install
    /// (they never change) and unknown ids.
    #[inline]
    pub(crate) fn family_key(&self, mesh: u32) -> Option<u32> {
        let family = self.stream.families.get(mesh as usize)?;
        (family.placeholder != NO_PLACEHOLDER).then_some(family.first)
    }

    /// Whether mesh `mesh`'s own indices are drawn (false for an unknown id).
    pub fn is_resident(&self, mesh: u32) -> bool {
        self.stream.resident.get(mesh as usize).copied().unwrap_or(false)
    }

    /// The mesh an object naming `mesh` draws this frame: `mesh` itself when it is resident,
    /// else the nearest resident level of its family ([`meshes::resident_level`]: coarser
    /// first), else its placeholder box when that is resident, else `None` (its bytes have
    /// not started: the frame's budget went to earlier meshes) or an unknown id.
    #[inline]
    pub fn drawn_mesh(&self, mesh: u32) -> Option<u32> {
        if self.is_resident(mesh) {
            return Some(mesh);
        }
        self.stand_in(mesh)
    }

    /// [`GpuScene::drawn_mesh`] of a mesh that is not resident.
    fn stand_in(&self, mesh: u32) -> Option<u32> {
        let family = *self.stream.families.get(mesh as usize)?;
        if family.removed {
            return None;
        }
        if family.current != NO_MESH {
            return Some(family.current);
        }
        let resident = |level: usize| self.is_resident(family.first + level as u32);
        meshes::resident_level(family.levels as usize, (mesh - family.first) as usize, resident)
            .map(|level| family.first + level as u32)
            .or_else(|| self.is_resident(family.placeholder).then_some(family.placeholder))
    }

    /// Lists into `out` (cleared first) every mesh that is not resident, with what an object
    /// naming it draws ([`GpuScene::drawn_mesh`]), ascending.
    pub fn stand_ins(&self, out: &mut Vec<(u32, Option<u32>)>) {
        out.clear();
        if self.stream.missing == 0 {
            return;
        }
        let missing = self.stream.resident.iter().enumerate().filter(|(_, &resident)| !resident);
        out.extend(missing.map(|(mesh, _)| (mesh as u32, self.stand_in(mesh as u32))));
    }

    /// Bytes of the GPU mesh buffers (`mesh_vertices`, `mesh_indices`, `mesh_uvs` and
    /// `mesh_skin`).
    pub fn mesh_buffer_bytes(&self) -> u64 {
        self.mesh_buffers.vertices.size()
            + self.mesh_buffers.indices.size()
            + self.material_buffers.uvs.size()
            + self.mesh_buffers.skin.size()
    }

    /// Bytes of added meshes not yet handed to a frame.
    pub fn pending_mesh_bytes(&self) -> u64 {
        self.stream.boxes.pending_bytes() + self.stream.levels.pending_bytes()
    }

    /// Starts a frame's streaming, before its records are written: grows the material table,
    /// the texture array and the mesh buffers when the library outgrew them (a graph drawing
    /// the scene must then follow, [`GpuScene::follow_growth`]), takes the textures' share of
    /// `budget`, and, once the last frame's slice was staged, takes this frame's meshes (the
    /// rest of `budget` bytes) and marks the meshes it completes resident. Returns whether a
    /// mesh became resident or was removed (the records naming its family draw another mesh
    /// now).
    /// Returns an error when a buffer cannot grow: nothing new is taken then (the objects
    /// keep their stand-ins), and the growth is tried again by the next call.
    pub fn stream_frame(&mut self, budget: u64) -> render_graph::Result<bool> {
        // Materials and textures first: the table grows, a removed or replaced material
        // rewrites every record (`materials_changed`), and textures take their share of the
        // budget (half while meshes wait too).
        self.stream.materials_changed = self.material_frame()?;
        let texture_share = if self.pending_mesh_bytes() > 0 { budget / 2 } else { budget };
        let budget = budget.saturating_sub(self.texture_frame(texture_share)?);
        let stream = &mut self.stream;
        stream.changed.clear();
        stream.changed.append(&mut stream.changed_since);
        let removed = !stream.changed.is_empty();
        if stream.boxes.is_empty() && stream.levels.is_empty() && stream.staged {
            return Ok(removed);
        }
        self.grow_mesh_buffers()?;
        let stream = &mut self.stream;
        if !stream.staged {
            return Ok(removed);
        }
        stream.boxes.next_frame(budget, &mut stream.box_frame);
        let left = budget.saturating_sub(stream.box_frame.bytes);
        if left >= TRANSFER_GRANULE {
            stream.levels.next_frame(left, &mut stream.level_frame);
        } else {
            stream.level_frame.copies.clear();
            stream.level_frame.completed.clear();
            stream.level_frame.bytes = 0;
        }
        stream.staged = stream.box_frame.copies.is_empty() && stream.level_frame.copies.is_empty();
        let last_reader = self.last_reader();
        let stream = &mut self.stream;
        let completed = stream.box_frame.completed.iter().chain(&stream.level_frame.completed);
        let mut changed = removed;
        stream
            .residency
            .note_slice(stream.box_frame.bytes + stream.level_frame.bytes, stream.level_frame.completed.len());
        for &mesh in completed {
            // A removed mesh's bytes still in the queue arrive unused.
            if stream.families.get(mesh as usize).is_some_and(|family| family.removed) {
                continue;
            }
            stream.resident[mesh as usize] = true;
            stream.missing -= 1;
            changed = true;
            if let Some(family) = stream.families.get(mesh as usize) {
                stream.changed.push(family.owner);
            }
            // A replacement's level, once resident, is what the level it replaces draws
            // (`mesh_freeing.rs`).
            let replaced = stream.families[mesh as usize].replaces;
            if replaced != NO_MESH {
                stream.superseded.push((replaced, mesh));
            }
        }
        self.supersede_replaced(last_reader);
        let stream = &mut self.stream;
        // Each family's slots are written once however many of its levels arrived.
        stream.changed.sort_unstable();
        stream.changed.dedup();
        Ok(changed)
    }

    /// This frame's slice of added meshes, waiting to be staged: every copy with its target
    /// and its bytes, boxes first.
    pub(crate) fn mesh_slice(&self) -> impl Iterator<Item = (u32, u64, &[u8])> + '_ {
        let stream = &self.stream;
        let copies = if stream.staged { &[][..] } else { &stream.box_frame.copies[..] };
        let levels = if stream.staged { &[][..] } else { &stream.level_frame.copies[..] };
        copies.iter().chain(levels).map(move |copy| {
            // The copy's offset is the GPU's: its bytes lie as far into the mesh's library
            // range as into its GPU range.
            let range = self.meshes.range(copy.key).expect("a queued mesh is in the library");
            let place = stream.placement.place(copy.key);
            let (source, host, gpu, item) = match copy.target {
                TARGET_VERTICES => (
                    crate::scene::as_bytes(self.meshes.positions()),
                    range.vertex_offset as u64,
                    place.vertex_offset as u64,
                    VERTEX_BYTES,
                ),
                TARGET_INDICES => (
                    crate::scene::as_bytes(self.meshes.indices()),
                    u64::from(range.first_index),
                    u64::from(place.first_index),
                    INDEX_BYTES,
                ),
                TARGET_SKIN => (
                    crate::scene::as_bytes(&self.skin.vertex_words),
                    range.vertex_offset as u64,
                    place.vertex_offset as u64,
                    super::skinning::SKIN_BYTES,
                ),
                _ => (
                    crate::scene::as_bytes(self.meshes.uvs()),
                    range.vertex_offset as u64,
                    place.vertex_offset as u64,
                    UV_BYTES,
                ),
            };
            let start = (copy.offset - gpu * item + host * item) as usize;
            (copy.target, copy.offset, &source[start..start + copy.bytes as usize])
        })
    }

    /// Notes that this frame's slice was staged: its bytes are sent.
    pub(crate) fn note_mesh_slice_staged(&mut self) {
        let stream = &mut self.stream;
        if stream.staged {
            self.last_upload.mesh_bytes = 0;
            return;
        }
        self.last_upload.mesh_bytes = stream.box_frame.bytes + stream.level_frame.bytes;
        stream.staged = true;
    }
}

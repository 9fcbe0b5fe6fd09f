//! Where each mesh lies in the GPU mesh buffers: the ranges of `mesh_vertices` (and, at the
//! same vertex slots, `mesh_uvs`) and of `mesh_indices` a mesh added while frames run was
//! given, by a range allocator over each buffer ([`range_alloc::RangeAllocator`]), so that
//! the range of an evicted or removed level is given again to a later one.
//!
//! The host library appends every mesh and never frees, so a mesh's GPU range is not its
//! library range: a record names the GPU one ([`Place`]), and each copy of the transfer queue
//! (whose offsets are the GPU's) reads its bytes from the library range of its mesh.
//!
//! **Reuse waits for the frames in flight.** A freed range may still be read by a frame that
//! was prepared before it was freed, and, with pipelined frames, by the next one: it goes
//! back to its allocator once every such frame has finished (the rule `growth.rs` keeps
//! outgrown buffers by). **Growth.** A request the
//! allocator cannot fit doubles its range (or more); the buffers follow at the next
//! [`GpuScene::stream_frame`](super::GpuScene::stream_frame).

use std::ops::Range;

use meshes::MeshLibrary;
use range_alloc::RangeAllocator;

/// Where one mesh lies on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    /// First index in `mesh_indices`.
    pub(crate) first_index: u32,
    /// First vertex in `mesh_vertices` and `mesh_uvs` (added to every index).
    pub(crate) vertex_offset: i32,
    /// Whether the mesh's indices hold a range (a level evicted or never loaded holds none).
    pub(crate) placed: bool,
}

impl Place {
    /// A mesh with no range yet.
    const NONE: Place = Place { first_index: 0, vertex_offset: 0, placed: false };
}

/// A range freed while frames in flight may read it.
struct Freed {
    /// The last graph frame prepared when it was freed.
    frame: u64,
    /// Vertex slots, or indices.
    vertices: bool,
    range: Range<u32>,
}

/// The allocators over the mesh buffers and each mesh's place (see the module docs).
pub(crate) struct MeshPlacement {
    vertices: RangeAllocator<u32>,
    indices: RangeAllocator<u32>,
    /// By mesh id.
    places: Vec<Place>,
    /// Ranges waiting for the frames that may read them.
    freed: Vec<Freed>,
    /// Bytes of every range given out (vertices, texture coordinates and indices).
    bytes: u64,
    /// Bytes of the meshes the scene was made with.
    install_bytes: u64,
}

/// Bytes of one vertex slot: its position and normal (16) and its texture coordinates (8).
pub(crate) const VERTEX_SLOT_BYTES: u64 = 24;
/// Bytes of one index.
pub(crate) const INDEX_SLOT_BYTES: u64 = 4;

impl MeshPlacement {
    /// The placement of a scene made with `library`: its meshes lie where the library has
    /// them, at the start of each buffer (`vertex_slots` and `index_slots` long).
    pub(crate) fn new(library: &MeshLibrary, vertex_slots: u32, index_slots: u32) -> MeshPlacement {
        let (vertex_count, index_count) = (library.positions().len() as u32, library.indices().len() as u32);
        let mut vertices = RangeAllocator::new(0..vertex_slots.max(vertex_count).max(1));
        let mut indices = RangeAllocator::new(0..index_slots.max(index_count).max(1));
        if vertex_count > 0 {
            vertices.allocate_range(vertex_count).expect("the buffer holds the library");
        }
        if index_count > 0 {
            indices.allocate_range(index_count).expect("the buffer holds the library");
        }
        let places = (0..library.len() as u32)
            .map(|mesh| {
                let range = library.range(mesh).expect("an id below the length");
                Place { first_index: range.first_index, vertex_offset: range.vertex_offset, placed: true }
            })
            .collect();
        let bytes = u64::from(vertex_count) * VERTEX_SLOT_BYTES + u64::from(index_count) * INDEX_SLOT_BYTES;
        MeshPlacement { vertices, indices, places, freed: Vec::new(), bytes, install_bytes: bytes }
    }

    /// Bytes of the meshes the scene was made with (never freed).
    pub(crate) fn install_bytes(&self) -> u64 {
        self.install_bytes
    }

    /// Mesh `mesh`'s place (not placed for an unknown id).
    #[inline]
    pub(crate) fn place(&self, mesh: u32) -> Place {
        self.places.get(mesh as usize).copied().unwrap_or(Place::NONE)
    }

    /// Bytes of every range given out, freed ranges waiting for their frames included.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes + self.freed.iter().map(|freed| freed.bytes()).sum::<u64>()
    }

    /// Slots each allocator spans now: what the vertex (and texture coordinate) and index
    /// buffers must hold.
    pub(crate) fn extents(&self) -> (u32, u32) {
        (self.vertices.initial_range().end, self.indices.initial_range().end)
    }

    /// Gives `count` vertex slots, growing the range when no free one fits.
    pub(crate) fn take_vertices(&mut self, count: u32) -> Range<u32> {
        self.bytes += u64::from(count) * VERTEX_SLOT_BYTES;
        take(&mut self.vertices, count)
    }

    /// Gives mesh `mesh` `count` indices and vertex offset `vertex_offset`; returns its place.
    pub(crate) fn place_indices(&mut self, mesh: u32, count: u32, vertex_offset: i32) -> Place {
        if self.places.len() <= mesh as usize {
            self.places.resize(mesh as usize + 1, Place::NONE);
        }
        debug_assert!(!self.places[mesh as usize].placed, "mesh {mesh} is placed already");
        self.bytes += u64::from(count) * INDEX_SLOT_BYTES;
        let range = take(&mut self.indices, count);
        let place = Place { first_index: range.start, vertex_offset, placed: true };
        self.places[mesh as usize] = place;
        place
    }

    /// Frees mesh `mesh`'s indices (`count` of them) once the frames prepared up to `frame`
    /// have finished; the mesh is no longer placed.
    pub(crate) fn free_indices(&mut self, mesh: u32, count: u32, frame: u64) {
        let Some(place) = self.places.get_mut(mesh as usize).filter(|place| place.placed) else { return };
        place.placed = false;
        let range = place.first_index..place.first_index + count;
        self.bytes -= u64::from(count) * INDEX_SLOT_BYTES;
        if count > 0 {
            self.freed.push(Freed { frame, vertices: false, range });
        }
    }

    /// Frees `count` vertex slots from `first` once the frames prepared up to `frame` have
    /// finished.
    pub(crate) fn free_vertices(&mut self, first: i32, count: u32, frame: u64) {
        self.bytes -= u64::from(count) * VERTEX_SLOT_BYTES;
        if count > 0 {
            let first = first as u32;
            self.freed.push(Freed { frame, vertices: true, range: first..first + count });
        }
    }

    /// Gives back to the allocators the ranges no frame in flight may read: those freed when
    /// `finished` or an earlier frame was the last prepared (`None`: no frame finished yet).
    pub(crate) fn release(&mut self, finished: Option<u64>) {
        let Some(finished) = finished else { return };
        let (vertices, indices) = (&mut self.vertices, &mut self.indices);
        self.freed.retain(|freed| {
            if freed.frame > finished {
                return true;
            }
            let allocator = if freed.vertices { &mut *vertices } else { &mut *indices };
            allocator.free_range(freed.range.clone());
            false
        });
    }
}

impl Freed {
    fn bytes(&self) -> u64 {
        let item = if self.vertices { VERTEX_SLOT_BYTES } else { INDEX_SLOT_BYTES };
        u64::from(self.range.end - self.range.start) * item
    }
}

/// `count` slots of `allocator` (an empty range at 0 for none), its range doubled (or more)
/// when no free range fits.
fn take(allocator: &mut RangeAllocator<u32>, count: u32) -> Range<u32> {
    if count == 0 {
        return 0..0;
    }
    if let Ok(range) = allocator.allocate_range(count) {
        return range;
    }
    let end = allocator.initial_range().end;
    allocator.grow_to(end.saturating_add(end.max(count)));
    allocator.allocate_range(count).expect("the range grew by the request at least")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_range_is_reused_once_its_frames_have_finished_and_growth_doubles() {
        let library = MeshLibrary::with_unit_cube();
        let (cube_vertices, cube_indices) = (library.positions().len() as u32, library.indices().len() as u32);
        let mut placement = MeshPlacement::new(&library, cube_vertices, cube_indices);
        assert_eq!(placement.place(0).first_index, 0, "the library's meshes lie where it has them");
        let block = placement.take_vertices(100);
        assert_eq!(block.start, cube_vertices, "after the cube");
        assert_eq!(placement.extents().0, cube_vertices + 100.max(cube_vertices), "grown by the request");
        let first = placement.place_indices(7, 300, block.start as i32);
        let (_, grown) = placement.extents();
        placement.free_indices(7, 300, 5);
        assert!(!placement.place(7).placed);
        placement.release(Some(4));
        let again = placement.place_indices(8, 300, block.start as i32);
        assert_ne!(again.first_index, first.first_index, "frame 5 may still read the freed range");
        placement.release(Some(5));
        let reused = placement.place_indices(9, 300, block.start as i32);
        assert_eq!(reused.first_index, first.first_index, "reused once frame 5 finished");
        assert!(placement.extents().1 >= grown);
        let bytes = u64::from(cube_vertices + 100) * VERTEX_SLOT_BYTES + u64::from(cube_indices + 600) * 4;
        assert_eq!(placement.bytes(), bytes);
    }
}

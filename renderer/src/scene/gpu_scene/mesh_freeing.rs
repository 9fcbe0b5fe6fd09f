//! The GPU ranges of meshes no object draws any more, given back: a removed mesh's (with the
//! replacements it had), and a replaced mesh's once its replacement stands for it.
//!
//! **Replacement.** When a replacement's level becomes resident it stands for the level it
//! replaces: that level's indices are freed, and so are those of an earlier replacement's
//! level that stood for it (a mesh replaced many times keeps one copy on the GPU, not one
//! per replacement). Once every level of a family is superseded so, no index reads its
//! shared vertices: they are freed with its placeholder box. A superseded level names the
//! level that stands for it ([`Family::current`]), so the residency never loads it again.
//!
//! Every range freed waits for the frames in flight that may read it (`placement.rs`).

use super::streaming::{Family, NO_MESH, NO_PLACEHOLDER};
use super::GpuScene;

impl GpuScene {
    /// Makes each `(replaced, replacement)` level pair noted by this frame's
    /// [`GpuScene::stream_frame`] stand the replacement for the replaced level, and frees
    /// what no object draws any more (see the module docs).
    pub(super) fn supersede_replaced(&mut self, last_reader: u64) {
        let mut pairs = std::mem::take(&mut self.stream.superseded);
        for &(replaced, replacement) in &pairs {
            if self.stream.families[replaced as usize].removed {
                continue;
            }
            let previous = self.stream.families[replaced as usize].current;
            self.retire_level(replaced, replacement, last_reader);
            let first = self.stream.families[replaced as usize].first;
            self.stream.changed.push(first);
            if previous != NO_MESH && previous != replacement {
                self.retire_level(previous, replacement, last_reader);
            }
        }
        pairs.clear();
        self.stream.superseded = pairs;
    }

    /// Level `level` draws `by` from now on: not resident, its indices freed, and its
    /// family's shared vertices and box once every level of it is superseded.
    fn retire_level(&mut self, level: u32, by: u32, last_reader: u64) {
        let stream = &mut self.stream;
        stream.families[level as usize].current = by;
        if std::mem::replace(&mut stream.resident[level as usize], false) {
            stream.missing += 1;
        }
        stream.levels.cancel(level);
        let count = self.meshes.range(level).expect("a level of an added mesh").index_count;
        stream.placement.free_indices(level, count, last_reader);
        let family = stream.families[level as usize];
        let superseded = (family.first..family.first + family.levels)
            .all(|id| stream.families[id as usize].current != NO_MESH && !stream.placement.place(id).placed);
        if superseded {
            self.free_shared_vertices(family, last_reader);
        }
    }

    /// Frees the vertices `family`'s levels share and its placeholder box, once.
    fn free_shared_vertices(&mut self, family: Family, last_reader: u64) {
        let stream = &mut self.stream;
        if family.vertex_count > 0 && !family.vertices_out {
            let coarsest = family.first + family.levels - 1;
            let first_vertex = stream.placement.place(coarsest).vertex_offset;
            stream.placement.free_vertices(first_vertex, family.vertex_count, last_reader);
            for id in family.first..coarsest + 1 {
                stream.families[id as usize].vertex_count = 0;
            }
        }
        let placeholder = family.placeholder;
        if placeholder == NO_PLACEHOLDER || stream.families[placeholder as usize].vertex_count == 0 {
            return;
        }
        let boxed = &mut stream.families[placeholder as usize];
        boxed.removed = true;
        let box_vertices = std::mem::replace(&mut boxed.vertex_count, 0);
        if std::mem::replace(&mut stream.resident[placeholder as usize], false) {
            stream.missing += 1;
        }
        stream.boxes.cancel(placeholder);
        let count = self.meshes.range(placeholder).expect("a placeholder box").index_count;
        let first_vertex = stream.placement.place(placeholder).vertex_offset;
        stream.placement.free_indices(placeholder, count, last_reader);
        stream.placement.free_vertices(first_vertex, box_vertices, last_reader);
    }

    /// Removes the family of levels from `first` with its box: drawn no more, nothing of it
    /// queued, every GPU range of it freed.
    pub(super) fn free_family(&mut self, first: u32, last_reader: u64) {
        let family = self.stream.families[first as usize];
        for id in family.first..family.first + family.levels {
            let stream = &mut self.stream;
            stream.families[id as usize].removed = true;
            if std::mem::replace(&mut stream.resident[id as usize], false) {
                stream.missing += 1;
            }
            stream.levels.cancel(id);
            let count = self.meshes.range(id).expect("a level of an added mesh").index_count;
            stream.placement.free_indices(id, count, last_reader);
        }
        self.free_shared_vertices(family, last_reader);
    }
}

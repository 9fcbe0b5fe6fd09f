//! The host lists of a split-screen frame's other window views: each view's visible objects,
//! at that view's level of detail, appended after the main view's list in `draw_commands`
//! and `draw_instances` as one run per view ([`GpuScene::view_lists`]).
//!
//! A run is always instanced: its commands group the view's objects by the index range they
//! draw (the level of detail the view picked), one command per range, the slots of its
//! objects in `draw_instances` from the command's `firstInstance`. The material and colour
//! come from each object's record, as in the main list.

use crate::scene::window_views::{ViewList, MAX_WINDOW_VIEWS};
use crate::scene::{DrawCommand, ObjectRecord, OwnRun};
use render_graph::{vk, GraphError, Result};

use super::draws::DrawSource;
use super::{mesh_is_skinned, out_of_range, GpuScene};
use crate::names::DRAW_COMMANDS;

/// The runs of this frame's host list, one per window view (empty: one view, the whole list).
#[derive(Debug, Default)]
pub(crate) struct ViewLists {
    pub(super) lists: Vec<ViewList>,
    /// Scratch of [`GpuScene::push_view_list`]: (index range, slot), sorted into commands.
    keyed: Vec<([u32; 3], u32)>,
    /// Views the GPU's object cull has room for (0 read as 1).
    gpu_room: u32,
    /// Where this frame's run counts lie in staged memory the device reads as indirect
    /// arguments (a u32 per run, [`GpuScene::set_staged_run_counts`]).
    staged_counts: Option<(vk::Buffer, u64)>,
}

impl GpuScene {
    /// The runs of this frame's host list, one per window view: the first is the list
    /// [`GpuScene::set_draw_list`] set (the main view's), the others those
    /// [`GpuScene::push_view_list`] appended. Empty while the frame has one list.
    pub fn view_lists(&self) -> &[ViewList] {
        &self.view_lists.lists
    }

    /// Run `index` of this frame's host list: of [`GpuScene::view_lists`], or, while it is
    /// empty, the whole list as run 0. `None` past the runs, or when a GPU pass writes the list.
    pub fn view_list(&self, index: usize) -> Option<ViewList> {
        if self.draw_source != DrawSource::Host {
            return None;
        }
        if self.view_lists.lists.is_empty() && index == 0 {
            let count = self.draws.len() as u32;
            return Some(ViewList { first: 0, count, instanced: self.batching.list_instanced });
        }
        self.view_lists.lists.get(index).copied()
    }

    /// The command count of each run of this frame's host list, in run order (the whole list
    /// as run 0 while there is one run), written as u32s into `out` (4 bytes per run, at most
    /// [`MAX_WINDOW_VIEWS`]); returns the bytes written (0 when a GPU pass writes the list).
    pub(crate) fn write_run_counts(&self, out: &mut [u8]) -> usize {
        let runs = (0..MAX_WINDOW_VIEWS).map_while(|index| self.view_list(index));
        let mut written = 0;
        for (bytes, run) in out.chunks_exact_mut(4).zip(runs) {
            bytes.copy_from_slice(&run.count.to_ne_bytes());
            written += 4;
        }
        written
    }

    /// Says where this frame's run counts ([`GpuScene::write_run_counts`]) lie in staged
    /// memory: the split-screen draws of an [`IndirectCount`](crate::DrawMode::IndirectCount)
    /// frame take each run's count from there. `None` draws the runs with the host's counts.
    pub(crate) fn set_staged_run_counts(&mut self, counts: Option<(vk::Buffer, u64)>) {
        self.view_lists.staged_counts = counts;
    }

    /// Where this frame's run counts were staged, if they were.
    pub(crate) fn staged_run_counts(&self) -> Option<(vk::Buffer, u64)> {
        self.view_lists.staged_counts
    }

    /// Appends another window view's list after this frame's host list: `objects` the
    /// slots the view may see, `mesh_of(index)` the mesh `objects[index]` draws in it (its
    /// level of detail for that view's eye). A skinned object, or one whose level is not on
    /// the GPU, draws its record's mesh (the main view's level). Returns the run's index in
    /// [`GpuScene::view_lists`].
    ///
    /// Errors, the list left as it was: a GPU pass writes this frame's list, a slot past the
    /// object count, or no room for another view ([`MAX_WINDOW_VIEWS`] lists of the
    /// capacity's commands and instances).
    pub fn push_view_list(&mut self, objects: &[u32], mesh_of: impl Fn(usize) -> u32) -> Result<usize> {
        if self.draw_source != DrawSource::Host {
            return Err(no_room("a GPU pass writes this frame's draw list"));
        }
        if objects.iter().any(|&object| object >= self.count) {
            return Err(out_of_range("the draw list names an object past the last object"));
        }
        if self.view_lists.lists.is_empty() {
            let main = ViewList { first: 0, count: self.draws.len() as u32, instanced: self.batching.list_instanced };
            self.view_lists.lists.push(main);
        }
        if self.view_lists.lists.len() >= MAX_WINDOW_VIEWS {
            return Err(no_room("more window views than the draw lists have room for"));
        }
        let mut keyed = std::mem::take(&mut self.view_lists.keyed);
        keyed.clear();
        for (index, &slot) in objects.iter().enumerate() {
            let record = &self.records[slot as usize];
            if !record.is_empty() {
                let range = self.view_range(record, mesh_of(index));
                if range[1] > 0 {
                    keyed.push((range, slot));
                }
            }
        }
        keyed.sort_unstable();
        let room = MAX_WINDOW_VIEWS * self.capacity as usize;
        let fits = self.batching.instances.len() + keyed.len() <= room && self.draws.len() + keyed.len() <= room;
        let result = if fits {
            let first = self.draws.len() as u32;
            for run in keyed.chunk_by(|a, b| a.0 == b.0) {
                let [first_index, index_count, vertex_offset] = run[0].0;
                self.draws.push(DrawCommand {
                    index_count,
                    instance_count: run.len() as u32,
                    first_index,
                    vertex_offset: vertex_offset as i32,
                    first_instance: self.batching.instances.len() as u32,
                });
                self.batching.instances.extend(run.iter().map(|&(_, slot)| slot));
            }
            let count = self.draws.len() as u32 - first;
            self.view_lists.lists.push(ViewList { first, count, instanced: true });
            Ok(self.view_lists.lists.len() - 1)
        } else {
            Err(no_room("the window views' lists outgrew the draw buffers"))
        };
        self.view_lists.keyed = keyed;
        result
    }

    /// The commands and instances of a view drawn apart from the host list (an image-target
    /// view while the GPU writes the lists): `objects` the slots it may see, `mesh_of(index)`
    /// the mesh `objects[index]` draws in it, as [`GpuScene::push_view_list`] takes them. The
    /// commands are instanced, one per index range, `firstInstance` counting from the start
    /// of `run.instances`; slots past the object count or empty draw nothing.
    pub(crate) fn build_view_run(&mut self, objects: &[u32], mesh_of: impl Fn(usize) -> u32, run: &mut OwnRun) {
        let mut keyed = std::mem::take(&mut self.view_lists.keyed);
        keyed.clear();
        for (index, &slot) in objects.iter().enumerate() {
            let Some(record) = self.records.get(slot as usize).filter(|_| slot < self.count) else { continue };
            if !record.is_empty() {
                let range = self.view_range(record, mesh_of(index));
                if range[1] > 0 {
                    keyed.push((range, slot));
                }
            }
        }
        keyed.sort_unstable();
        for batch in keyed.chunk_by(|a, b| a.0 == b.0) {
            let [first_index, index_count, vertex_offset] = batch[0].0;
            run.commands.push(DrawCommand {
                index_count,
                instance_count: batch.len() as u32,
                first_index,
                vertex_offset: vertex_offset as i32,
                first_instance: run.instances.len() as u32,
            });
            run.instances.extend(batch.iter().map(|&(_, slot)| slot));
        }
        self.view_lists.keyed = keyed;
    }

    /// Views the GPU's object cull has room for: its lists in `draw_commands`, their counts in
    /// `draw_count`, its counters and its bits are sized for this many views (at least one)
    /// when the graph compiles. It grows to the window views of the first split-screen frame
    /// culled on the GPU (the Render stage makes the room) and never shrinks.
    pub fn gpu_view_room(&self) -> u32 {
        self.view_lists.gpu_room.max(1)
    }

    /// Makes room for `views` GPU-culled window views (at most [`MAX_WINDOW_VIEWS`]); true when
    /// the room grew: the graph must compile again ([`render_graph::RenderGraph::invalidate`]),
    /// its culls and draws declaring the buffers for the new room.
    pub(crate) fn reserve_gpu_views(&mut self, views: u32) -> bool {
        let views = views.min(MAX_WINDOW_VIEWS as u32);
        if views <= self.gpu_view_room() {
            return false;
        }
        self.view_lists.gpu_room = views;
        true
    }

    /// The index range (first index, count, vertex offset) `record`'s object draws with mesh
    /// `mesh`: the record's own unless `mesh` is another level on the GPU drawn by a mesh as
    /// skinned as the record's (each level's vertices read their own influences, but a
    /// skinned record must not skin a rigid placeholder box, nor a rigid one draw a skinned
    /// level in its bind pose).
    fn view_range(&self, record: &ObjectRecord, mesh: u32) -> [u32; 3] {
        let own = [record.first_index, record.index_count, record.vertex_offset as u32];
        if mesh == record.mesh {
            return own;
        }
        let Some(drawn) = self.drawn_mesh(mesh) else { return own };
        if self.has_skinned_meshes()
            && mesh_is_skinned(&self.meshes, drawn) != mesh_is_skinned(&self.meshes, record.mesh)
        {
            return own;
        }
        let (Some(range), place) = (self.meshes.range(drawn), self.stream.placement.place(drawn)) else { return own };
        if !place.placed {
            return own;
        }
        [place.first_index, range.index_count, place.vertex_offset as u32]
    }
}

fn no_room(reason: &'static str) -> GraphError {
    GraphError::InvalidDescription { resource: String::from(DRAW_COMMANDS), reason }
}

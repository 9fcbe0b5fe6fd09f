//! This frame's draws: the host's list of objects ([`GpuScene::set_draw_list`],
//! [`GpuScene::draw_all_objects`]) or a GPU pass's ([`GpuScene::draw_gpu_list`]), and the
//! blended objects' order, farthest first ([`GpuScene::sort_blended`]). With batching on
//! ([`GpuScene::set_batch_draws`], the default) the host's list is grouped by (mesh, level,
//! material): one instanced command per batch with a listed object, the slots in
//! [`GpuScene::draw_instances`].

use crate::scene::{world_box, BatchTable, DrawCommand};
use render_graph::Result;

use super::{out_of_range, GpuScene};

/// Where this frame's draw commands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DrawSource {
    /// The host's list ([`GpuScene::set_draw_list`], [`GpuScene::draw_all_objects`]).
    Host,
    /// A GPU pass writes at most one command per object (GPU culling).
    Gpu,
}

impl GpuScene {
    /// Sets this frame's objects to draw (the visible list), in the order given; every
    /// index must name an object. Draw in storage order for results that do not depend on
    /// which objects were culled. Empty slots in the list draw nothing.
    pub fn set_draw_list(&mut self, objects: &[u32]) -> Result<()> {
        if objects.iter().any(|&object| object >= self.count) {
            return Err(out_of_range("the draw list names an object past the last object"));
        }
        self.draw_source = DrawSource::Host;
        self.draws.clear();
        self.view_lists.lists.clear();
        self.set_staged_run_counts(None);
        self.batching.instances.clear();
        self.batching.list_instanced = self.batching.enabled;
        if self.batching.enabled {
            self.batching.table.group(objects.iter().copied(), &mut self.draws, &mut self.batching.instances);
        } else {
            let records = &self.records;
            self.draws.extend(objects.iter().map(|&object| DrawCommand::for_object(object, &records[object as usize])));
        }
        self.host_blended.clear();
        let blended = &self.blended;
        self.host_blended.extend(objects.iter().copied().filter(|&object| blended.is_set(object)));
        Ok(())
    }

    /// Draws every object, in slot order (culling off).
    pub fn draw_all_objects(&mut self) {
        self.draw_source = DrawSource::Host;
        self.draws.clear();
        self.view_lists.lists.clear();
        self.set_staged_run_counts(None);
        self.batching.instances.clear();
        self.batching.list_instanced = self.batching.enabled;
        if self.batching.enabled {
            self.batching.table.group(0..self.count, &mut self.draws, &mut self.batching.instances);
        } else {
            let records = &self.records[..self.count as usize];
            self.draws.extend(
                records.iter().enumerate().map(|(index, record)| DrawCommand::for_object(index as u32, record)),
            );
        }
        self.host_blended.clear();
        self.blended.push_set_below(self.count, &mut self.host_blended);
    }

    /// This frame's draw commands come from a GPU pass writing at most one per object (GPU
    /// culling): the host keeps no list, and a device without `drawIndirectCount` draws
    /// [`GpuScene::object_count`] commands (the pass zeroes the unused ones).
    pub fn draw_gpu_list(&mut self) {
        self.draw_source = DrawSource::Gpu;
        self.draws.clear();
        self.view_lists.lists.clear();
        self.set_staged_run_counts(None);
        self.host_blended.clear();
        self.batching.instances.clear();
        self.batching.list_instanced = false;
    }

    /// Whether frames batch their draws: objects of one (mesh, level of detail, material)
    /// drawn by one instanced command (on by default). Takes effect with the next list the
    /// host sets, or the next GPU-culled frame; cluster-culled frames draw one command per
    /// meshlet or object whatever it says. Batched and unbatched frames draw the same image.
    pub fn set_batch_draws(&mut self, batch: bool) {
        self.batching.enabled = batch;
    }

    /// Whether frames batch their draws (see [`GpuScene::set_batch_draws`]).
    pub fn batch_draws(&self) -> bool {
        self.batching.enabled
    }

    /// Whether this frame's list is instanced: each command's instances are object slots read
    /// from `draw_instances` at `firstInstance + i` (else `firstInstance` is the object's slot
    /// and `instanceCount` 1).
    pub fn draws_instanced(&self) -> bool {
        self.batching.list_instanced
    }

    /// The instances of this frame's host list when it is instanced: object slots, each
    /// command's from its `firstInstance` (empty when a GPU pass writes the list).
    pub fn draw_instances(&self) -> &[u32] {
        &self.batching.instances
    }

    /// The batches of the scene's objects.
    pub fn batches(&self) -> &BatchTable {
        &self.batching.table
    }

    /// The batches, for the GPU frame's batch pass (which lays out the runs and takes the
    /// changed slots).
    pub(crate) fn batches_mut(&mut self) -> &mut BatchTable {
        &mut self.batching.table
    }

    /// The GPU frame's batch pass says whether this frame's GPU list is instanced.
    /// Whether a GPU pass writes the draw lists ([`GpuScene::draw_gpu_list`]).
    pub(crate) fn draws_gpu_list(&self) -> bool {
        self.draw_source == DrawSource::Gpu
    }

    pub(crate) fn set_gpu_list_instanced(&mut self, instanced: bool) {
        self.batching.list_instanced = instanced;
    }

    /// This frame's blended objects, farthest first, as the blended pass draws them: those
    /// of the host's list, or every blended object when a GPU pass culls (its vertex shader
    /// then leaves out the hidden ones). The key is the depth of the object's box centre
    /// (reversed-Z `z / w`, so perspective and orthographic cameras alike); centres behind
    /// the eye or not finite come first, and equal keys go in slot order, so the order (and
    /// the image) depends only on the scene and the camera (`view_projection`, world to
    /// clip, the frame's [`FrameView`](crate::FrameView)'s).
    pub fn sort_blended(&mut self, view_projection: glam::Mat4) -> &[u32] {
        if self.draw_source == DrawSource::Gpu {
            self.host_blended.clear();
            self.blended.push_set_below(self.count, &mut self.host_blended);
        }
        let slots = std::mem::take(&mut self.host_blended);
        self.sort_back_to_front(view_projection, &slots);
        self.host_blended = slots;
        self.view_ranges.clear();
        self.follow_blend_order();
        &self.blend_order
    }

    /// The index range (first index, count, vertex offset) each object of the last sort's order
    /// ([`GpuScene::sort_blended`], [`GpuScene::sort_blended_in_view`]) draws with, in that
    /// order: the range its view's host list draws (that view's level of detail), else its
    /// record's.
    pub fn blended_ranges(&self) -> &[[u32; 3]] {
        &self.blend_ranges
    }

    /// [`GpuScene::sort_blended`] for window view `list` of a split-screen frame: the blended
    /// objects of run `list` of the host list ([`GpuScene::view_lists`]: that view's answer,
    /// each at the level the run draws it, [`GpuScene::blended_ranges`]),
    /// or, when a GPU pass writes the lists, every blended object (its vertex shader then
    /// leaves out those the view's bits say are hidden), sorted for that view's
    /// `view_projection`.
    pub fn sort_blended_in_view(&mut self, view_projection: glam::Mat4, list: usize) -> &[u32] {
        let mut slots = std::mem::take(&mut self.view_blended);
        slots.clear();
        self.view_ranges.clear();
        match self.view_list(list) {
            Some(run) => {
                let commands = self.draws.get(run.first as usize..(run.first + run.count) as usize).unwrap_or(&[]);
                for command in commands {
                    let first = command.first_instance as usize;
                    // The run's command draws each of its objects with its range.
                    let range = [command.first_index, command.index_count, command.vertex_offset as u32];
                    let start = slots.len();
                    if run.instanced {
                        let instances = self.batching.instances.get(first..first + command.instance_count as usize);
                        slots
                            .extend(instances.unwrap_or(&[]).iter().copied().filter(|&slot| self.blended.is_set(slot)));
                    } else if self.blended.is_set(command.first_instance) {
                        slots.push(command.first_instance);
                    }
                    self.view_ranges.extend(slots[start..].iter().map(|&slot| (slot, range)));
                }
            }
            None if self.draw_source == DrawSource::Gpu => self.blended.push_set_below(self.count, &mut slots),
            None => {}
        }
        self.sort_back_to_front(view_projection, &slots);
        self.view_blended = slots;
        self.follow_blend_order();
        &self.blend_order
    }

    /// Fills `blend_ranges` for `blend_order`: each slot's range of `view_ranges`, else its
    /// record's.
    fn follow_blend_order(&mut self) {
        self.view_ranges.sort_unstable_by_key(|&(slot, _)| slot);
        self.blend_ranges.clear();
        for &slot in &self.blend_order {
            let listed = self.view_ranges.binary_search_by_key(&slot, |&(slot, _)| slot).ok();
            let range = listed.map(|at| self.view_ranges[at].1).unwrap_or_else(|| {
                let record = &self.records[slot as usize];
                [record.first_index, record.index_count, record.vertex_offset as u32]
            });
            self.blend_ranges.push(range);
        }
    }

    /// Sorts `slots` into `blend_order` by their boxes' depths for `view_projection`, farthest
    /// first (see [`GpuScene::sort_blended`]).
    fn sort_back_to_front(&mut self, view_projection: glam::Mat4, slots: &[u32]) {
        self.blend_keys.clear();
        for &slot in slots {
            let (center, _) = world_box(&self.transforms[slot as usize], &self.records[slot as usize]);
            let clip = view_projection * glam::Vec3::from_array(center).extend(1.0);
            let depth = clip.z / clip.w;
            let key = if clip.w > 0.0 && depth.is_finite() { depth } else { f32::NEG_INFINITY };
            self.blend_keys.push((key, slot));
        }
        self.blend_keys.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.blend_order.clear();
        self.blend_order.extend(self.blend_keys.iter().map(|&(_, slot)| slot));
    }

    /// This frame's host draw commands (empty when a GPU pass writes them): every window
    /// view's run ([`GpuScene::view_lists`]) one after the other.
    pub fn draw_commands(&self) -> &[DrawCommand] {
        &self.draws
    }

    /// How many commands a draw without a GPU count issues from the early and the late list:
    /// the host list's length (and no late list), or, when a GPU pass writes the lists, the
    /// batches (instanced) or the object count.
    pub(crate) fn indirect_draw_counts(&self) -> [u32; 2] {
        match self.draw_source {
            DrawSource::Host => [self.view_lists.lists.first().map_or(self.draws.len() as u32, |main| main.count), 0],
            DrawSource::Gpu if self.batching.list_instanced => [self.batching.table.len(); 2],
            DrawSource::Gpu => [self.count; 2],
        }
    }
}

//! This frame's draws: the host's list of objects ([`GpuScene::set_draw_list`],
//! [`GpuScene::draw_all_objects`]) or a GPU pass's ([`GpuScene::draw_gpu_list`]), and the
//! blended objects' order, farthest first ([`GpuScene::sort_blended`]).

use crate::scene::{world_box, DrawCommand};
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
        let records = &self.records;
        self.draws.extend(objects.iter().map(|&object| DrawCommand::for_object(object, &records[object as usize])));
        self.host_blended.clear();
        let blended = &self.blended;
        self.host_blended.extend(objects.iter().copied().filter(|&object| blended.is_set(object)));
        Ok(())
    }

    /// Draws every object, in slot order (culling off).
    pub fn draw_all_objects(&mut self) {
        self.draw_source = DrawSource::Host;
        self.draws.clear();
        let records = &self.records[..self.count as usize];
        self.draws
            .extend(records.iter().enumerate().map(|(index, record)| DrawCommand::for_object(index as u32, record)));
        self.host_blended.clear();
        self.blended.push_set_below(self.count, &mut self.host_blended);
    }

    /// This frame's draw commands come from a GPU pass writing at most one per object (GPU
    /// culling): the host keeps no list, and a device without `drawIndirectCount` draws
    /// [`GpuScene::object_count`] commands (the pass zeroes the unused ones).
    pub fn draw_gpu_list(&mut self) {
        self.draw_source = DrawSource::Gpu;
        self.draws.clear();
        self.host_blended.clear();
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
        self.blend_keys.clear();
        for &slot in &self.host_blended {
            let (center, _) = world_box(&self.transforms[slot as usize], &self.records[slot as usize]);
            let clip = view_projection * glam::Vec3::from_array(center).extend(1.0);
            let depth = clip.z / clip.w;
            let key = if clip.w > 0.0 && depth.is_finite() { depth } else { f32::NEG_INFINITY };
            self.blend_keys.push((key, slot));
        }
        self.blend_keys.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.blend_order.clear();
        self.blend_order.extend(self.blend_keys.iter().map(|&(_, slot)| slot));
        &self.blend_order
    }

    /// This frame's host draw commands (empty when a GPU pass writes them).
    pub fn draw_commands(&self) -> &[DrawCommand] {
        &self.draws
    }

    /// How many commands a draw without a GPU count issues: the host list's length, or the
    /// object count when a GPU pass writes the list.
    pub(crate) fn indirect_draw_count(&self) -> u32 {
        match self.draw_source {
            DrawSource::Host => self.draws.len() as u32,
            DrawSource::Gpu => self.count,
        }
    }
}

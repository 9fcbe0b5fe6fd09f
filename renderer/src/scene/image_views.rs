//! The image-target views of a frame: every camera rendering into a named image
//! ([`ecs::CameraTarget::Image`]) gets its own run of the host's draw commands (its own
//! answer, [`culling::Visibility::for_view`]) and its own view-projection, listed in the
//! graph's [`ImageViews`] parameter; the image-view passes
//! ([`ImageViewPass`](crate::ImageViewPass)) draw each into its image, which later passes of
//! the same frame sample by its name.
//!
//! On the CPU culling backend a view's run is a run of the host list
//! ([`ImageRun::HostList`]); with GPU culling, whose lists the GPU writes, the view's own
//! commands and instances ([`ImageRun::Own`], [`OwnRun`]) go to buffers of its own.

use std::sync::Arc;

use crate::scene::DrawCommand;

/// Where an image view's draw commands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageRun {
    /// A run of the host list: its index in [`GpuScene::view_lists`](crate::GpuScene::view_lists).
    HostList(u32),
    /// The view's own commands: its index among [`ImageViews::own_run`]'s.
    Own(u32),
}

/// An image view's own commands (instanced: one per index range, `firstInstance` counting in
/// `instances`) and the slots of their instances.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnRun {
    /// The commands.
    pub commands: Vec<DrawCommand>,
    /// The object slots the commands' instances read.
    pub instances: Vec<u32>,
}

/// One view drawn into a named image.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageView {
    /// The image's name (the graph resource the view's passes write).
    pub name: Arc<str>,
    /// World to clip space of the view's camera (column-major, reversed-Z).
    pub view_projection: [[f32; 4]; 4],
    /// The commands it draws.
    pub run: ImageRun,
}

/// A graph parameter: this frame's image-target views. A view's passes look their view up
/// by the image's name; a name missing this frame (its camera gone or refused, its list
/// without room) draws nothing into a cleared image.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImageViews {
    views: Vec<ImageView>,
    /// The views' own runs; the first `own_used` are this frame's (the others keep their room).
    own: Vec<OwnRun>,
    own_used: usize,
}

impl ImageViews {
    /// The views, in render order.
    #[inline]
    pub fn views(&self) -> &[ImageView] {
        &self.views
    }

    /// The view drawn into the image `name`, if the frame has one.
    pub fn get(&self, name: &str) -> Option<&ImageView> {
        self.views.iter().find(|view| &*view.name == name)
    }

    /// This frame's own run `index` ([`ImageRun::Own`]).
    pub fn own_run(&self, index: u32) -> Option<&OwnRun> {
        self.own[..self.own_used].get(index as usize)
    }

    /// A cleared own run for a view of this frame, and its index.
    pub fn next_own_run(&mut self) -> (u32, &mut OwnRun) {
        if self.own_used == self.own.len() {
            self.own.push(OwnRun::default());
        }
        let index = self.own_used;
        self.own_used += 1;
        let run = &mut self.own[index];
        run.commands.clear();
        run.instances.clear();
        (index as u32, run)
    }

    /// Forgets the views, keeping the room.
    pub fn clear(&mut self) {
        self.views.clear();
        self.own_used = 0;
    }

    /// Appends a view.
    pub fn push(&mut self, view: ImageView) {
        self.views.push(view);
    }
}

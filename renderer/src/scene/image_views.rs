//! The image-target views of a frame: every camera rendering into a named image
//! ([`ecs::CameraTarget::Image`]) gets its own run of the host's draw commands (its own
//! answer, [`culling::Visibility::for_view`]) and its own view-projection, listed in the
//! graph's [`ImageViews`] parameter; the image-view passes
//! ([`ImageViewPass`](crate::ImageViewPass)) draw each into its image, which later passes of
//! the same frame sample by its name.
//!
//! On the CPU culling backend a view's run is a run of the host list
//! ([`ImageRun::HostList`]); with GPU culling the view is culled on the GPU by its own
//! two-phase cull into lists of its own ([`ImageRun::Gpu`]), or, where that cull cannot serve,
//! draws its own commands and instances made by the host from its answer ([`ImageRun::Own`],
//! [`OwnRun`]).

use std::sync::Arc;

use crate::scene::DrawCommand;

/// Where an image view's draw commands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageRun {
    /// A run of the host list: its index in [`GpuScene::view_lists`](crate::GpuScene::view_lists).
    HostList(u32),
    /// The view's own commands made by the host from its answer: its index among
    /// [`ImageViews::own_run`]'s (the GPU culling backend's fallback).
    Own(u32),
    /// The lists its own two-phase cull on the GPU writes
    /// ([`ImageCullPass`](crate::ImageCullPass)).
    Gpu,
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
    /// The image's size in pixels (its pyramid's, with [`ImageRun::Gpu`]).
    pub size: (u32, u32),
    /// With [`ImageRun::Gpu`]: the view's side of the error rule of levels of detail and its
    /// eye (the CPU's bits for this view), if the Visibility stage chose levels for it.
    pub lod: Option<(culling::LodErrorView, glam::Vec3)>,
    /// With [`ImageRun::Gpu`]: the view's side of the distance rule.
    pub lod_distance: Option<crate::DistanceLod>,
    /// With [`ImageRun::Gpu`]: where the slots left out of the view (their material samples
    /// the view's own image: a cycle) lie in [`ImageViews::excluded`]'s list.
    pub excluded: std::ops::Range<u32>,
}

/// An image-target view culled on the GPU, as the Render stage read it back with the window's
/// answer (frame [`RenderReport::bits_frame`](crate::RenderReport::bits_frame)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImageViewGpu {
    /// The image's name.
    pub name: Arc<str>,
    /// Its cull's counters; `gpu_ms` its own early cull, pyramid and late cull.
    pub stats: crate::GpuCullStats,
    /// Its visibility bits (u64 words, bit `i` slot `i`), when bits are read back.
    pub bits: Vec<u64>,
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
    /// Every view's excluded slots, one range each ([`ImageView::excluded`]).
    excluded: Vec<u32>,
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
        self.excluded.clear();
    }

    /// The slots `view` leaves out (its material samples the view's own image), ascending.
    pub fn excluded(&self, view: &ImageView) -> &[u32] {
        self.excluded.get(view.excluded.start as usize..view.excluded.end as usize).unwrap_or(&[])
    }

    /// Appends `slots` to the excluded list and returns their range, for the next view pushed.
    pub fn push_excluded(&mut self, slots: impl Iterator<Item = u32>) -> std::ops::Range<u32> {
        let start = self.excluded.len() as u32;
        self.excluded.extend(slots);
        start..self.excluded.len() as u32
    }

    /// Appends a view.
    pub fn push(&mut self, view: ImageView) {
        self.views.push(view);
    }
}

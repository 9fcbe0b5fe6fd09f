//! The extract of a frame's image-target views: every view of the frame's
//! [`ResolvedViews`] drawn into a named image gets its run of the host list (its own answer,
//! [`Visibility::for_view`]) and its view-projection, listed in the graph's [`ImageViews`]
//! parameter; the graph holds a pair of [`ImageViewPass`]es per image, added at the
//! `after depth prepass` point when a target appears (or changes size or format) and removed
//! when its camera goes, so a steady set of cameras compiles the graph once.
//!
//! The CPU backend draws them; with GPU culling they are not drawn yet (said once).

use std::sync::Arc;

use culling::Visibility;
use ecs::{ImageTarget, ResolvedViews, ViewTarget};
use render_graph::{RenderGraph, Result};

use crate::frame::points;
use crate::passes::{DrawMode, ImageViewPass};
use crate::scene::{GpuScene, ImageView, ImageViews, SharedScene};

/// The image views' passes the graph holds, and what the extract said once.
#[derive(Debug, Default)]
pub(super) struct ImageViewPasses {
    /// The targets whose passes the graph holds, in render order.
    drawn: Vec<ImageTarget>,
    /// Scratch: this frame's targets.
    wanted: Vec<ImageTarget>,
    /// What the image views' colour is cleared to (the frame's clear colour).
    clear_color: [f32; 4],
    /// Whether the frame has shadows (the views are lit with the frame's atlas).
    shadowed: bool,
    warned_gpu: bool,
    warned_refused: bool,
}

impl ImageViewPasses {
    /// No passes yet; the views will be cleared to `clear_color`, and lit with the frame's
    /// shadow atlas when `shadowed`.
    pub(super) fn new(clear_color: [f32; 4], shadowed: bool) -> ImageViewPasses {
        ImageViewPasses { clear_color, shadowed, ..ImageViewPasses::default() }
    }

    /// Lists the frame's image views into `out`, appending each one's run to `scene` (whose
    /// host list is the main view's, and the split-screen views' runs, already); with GPU
    /// culling lists none and says so once.
    pub(super) fn list(
        &mut self,
        views: Option<&ResolvedViews>,
        visibility: &Visibility,
        scene: &mut GpuScene,
        on_device: bool,
        out: &mut ImageViews,
    ) {
        out.clear();
        self.wanted.clear();
        let Some(views) = views else { return };
        for view in views.views() {
            let ViewTarget::Image(target) = &view.target else { continue };
            if on_device {
                if !self.warned_gpu {
                    self.warned_gpu = true;
                    log::warn!(
                        "image view {:?}: image-target views are drawn on the CPU culling backend only; not drawn",
                        target.name
                    );
                }
                continue;
            }
            let Some(answer) = visibility.for_view(view.id) else { continue };
            match scene.push_view_list(answer.visible(), |index| answer.draw(index).0) {
                Ok(list) => {
                    let view_projection = answer.view().view_projection.to_cols_array_2d();
                    out.push(ImageView { name: Arc::clone(&target.name), view_projection, list: list as u32 });
                    self.wanted.push(target.clone());
                }
                Err(error) => {
                    if !self.warned_refused {
                        self.warned_refused = true;
                        log::warn!("image view {:?} is not drawn: {error}", target.name);
                    }
                }
            }
        }
    }

    /// Makes the graph's image-view passes those of this frame's listed targets: removes the
    /// passes of targets gone or changed, adds those of new ones (the graph compiles again).
    pub(super) fn follow(&mut self, graph: &mut RenderGraph, scene: &SharedScene) -> Result<()> {
        if self.wanted == self.drawn {
            return Ok(());
        }
        for target in &self.drawn {
            graph.remove_pass(&format!("image view {} depth", target.name));
            graph.remove_pass(&format!("image view {}", target.name));
        }
        self.drawn.clear();
        let device = Arc::clone(graph.device());
        let mode = DrawMode::best(device.capabilities());
        for target in &self.wanted {
            let depth = ImageViewPass::depth(&device, Arc::clone(scene), target.clone(), mode)?;
            let shading = (self.clear_color, self.shadowed);
            let color = ImageViewPass::color(&device, Arc::clone(scene), target.clone(), mode, shading)?;
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, depth)?;
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, color)?;
            self.drawn.push(target.clone());
        }
        Ok(())
    }
}

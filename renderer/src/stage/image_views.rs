//! The extract of a frame's image-target views: every view of the frame's
//! [`ResolvedViews`] drawn into a named image gets its run of the host list (its own answer,
//! [`Visibility::for_view`]) and its view-projection, listed in the graph's [`ImageViews`]
//! parameter; the graph holds a pair of [`ImageViewPass`]es per image, added at the
//! `after depth prepass` point when a target appears (or changes size or format) and removed
//! when its camera goes, so a steady set of cameras compiles the graph once.
//!
//! An object whose material samples a view's own image (a screen its own monitor camera
//! sees: [`MeshLibrary::add_view_texture`](meshes::MeshLibrary::add_view_texture)) would
//! be a cycle: such objects are left out of that view, said once by the image's name.
//!
//! On the CPU culling backend a view draws a run of the host list; with GPU culling (the GPU
//! writes the lists) it draws its own commands and instances, made from the same answer and
//! uploaded by its [`ImageViewListPass`]: culled on the CPU (frustum, distance and size, as
//! every view but the main one), not by the GPU's two-phase occlusion.

use std::sync::Arc;

use culling::Visibility;
use ecs::{ImageTarget, ResolvedViews, ViewTarget};
use render_graph::{RenderGraph, Result};

use crate::frame::points;
use crate::passes::{DrawMode, ImageViewListPass, ImageViewPass, ViewTexturePass};
use crate::scene::{lock_scene, GpuScene, ImageRun, ImageView, ImageViews, SharedScene};

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
    /// Whether the GPU culls (the views then draw their own lists).
    on_device: bool,
    warned_refused: bool,
    /// The images whose views were found sampling themselves (said once each).
    cycles: Vec<Arc<str>>,
    /// Scratch: a view's visible slots kept, each with its index in the view's answer.
    kept: Vec<(u32, u32)>,
    /// Scratch: the kept slots.
    slots: Vec<u32>,
}

impl ImageViewPasses {
    /// No passes yet; the views will be cleared to `clear_color`, and lit with the frame's
    /// shadow atlas when `shadowed`;
    /// `on_device`: the GPU culls, so the views draw their own lists.
    pub(super) fn new(clear_color: [f32; 4], shadowed: bool, on_device: bool) -> ImageViewPasses {
        ImageViewPasses { clear_color, shadowed, on_device, ..ImageViewPasses::default() }
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
            let Some(answer) = visibility.for_view(view.id) else { continue };
            // An object whose material samples this view's own image is left out of it.
            self.kept.clear();
            let draws = &visibility.objects().draws;
            let meshes = scene.meshes();
            let samples_own = |slot: u32| {
                let material =
                    draws.get(slot as usize).and_then(|draw| meshes.materials().get(draw.material.0 as usize));
                let layer = material.and_then(|material| material.texture);
                layer.is_some_and(|layer| {
                    meshes.view_textures().iter().any(|(shown, image)| *shown == layer && *image == target.name)
                })
            };
            for (index, &slot) in answer.visible().iter().enumerate() {
                if !samples_own(slot) {
                    self.kept.push((slot, index as u32));
                } else if !self.cycles.contains(&target.name) {
                    self.cycles.push(Arc::clone(&target.name));
                    let material = draws[slot as usize].material.0;
                    log::warn!(
                        "image view {:?}: material {material} (object slot {slot}) samples the view's own image, a cycle: such objects are left out of that view",
                        target.name
                    );
                }
            }
            self.slots.clear();
            self.slots.extend(self.kept.iter().map(|&(slot, _)| slot));
            let kept = &self.kept;
            let view_projection = answer.view().view_projection.to_cols_array_2d();
            if on_device {
                // The GPU writes the lists: the view draws its own commands and instances.
                let (index, run) = out.next_own_run();
                scene.build_view_run(&self.slots, |index| answer.draw(kept[index].1 as usize).0, run);
                let run = ImageRun::Own(index);
                out.push(ImageView { name: Arc::clone(&target.name), view_projection, run });
                self.wanted.push(target.clone());
                continue;
            }
            match scene.push_view_list(&self.slots, |index| answer.draw(kept[index].1 as usize).0) {
                Ok(list) => {
                    let run = ImageRun::HostList(list as u32);
                    out.push(ImageView { name: Arc::clone(&target.name), view_projection, run });
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
    /// passes of targets gone or changed, adds those of new ones (the graph compiles again),
    /// each followed by the copies into the texture layers that show it
    /// ([`MeshLibrary::add_view_texture`](meshes::MeshLibrary::add_view_texture)). A view
    /// texture naming an image no camera renders is said once per change of the targets.
    pub(super) fn follow(&mut self, graph: &mut RenderGraph, scene: &SharedScene) -> Result<()> {
        if self.wanted == self.drawn {
            return Ok(());
        }
        let view_textures = lock_scene(scene).meshes().view_textures().to_vec();
        for target in &self.drawn {
            graph.remove_pass(&format!("image view {} lists", target.name));
            graph.remove_pass(&format!("image view {} depth", target.name));
            graph.remove_pass(&format!("image view {}", target.name));
            for (layer, _) in view_textures.iter().filter(|(_, image)| *image == target.name) {
                graph.remove_pass(&format!("view texture {layer} from {}", target.name));
            }
        }
        self.drawn.clear();
        let device = Arc::clone(graph.device());
        let mode = DrawMode::best(device.capabilities());
        for target in &self.wanted {
            let mut depth = ImageViewPass::depth(&device, Arc::clone(scene), target.clone(), mode)?;
            let shading = (self.clear_color, self.shadowed);
            let mut color = ImageViewPass::color(&device, Arc::clone(scene), target.clone(), mode, shading)?;
            if self.on_device {
                let lists = ImageViewListPass::new(Arc::clone(scene), Arc::clone(&target.name));
                graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, lists)?;
                (depth, color) = (depth.with_own_lists(), color.with_own_lists());
            }
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, depth)?;
            graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, color)?;
            for (layer, image) in view_textures.iter().filter(|(_, image)| *image == target.name) {
                graph
                    .add_typed_pass_at(points::AFTER_DEPTH_PREPASS, ViewTexturePass::new(Arc::clone(image), *layer))?;
            }
            self.drawn.push(target.clone());
        }
        for (layer, image) in &view_textures {
            if !self.wanted.iter().any(|target| target.name == *image) {
                log::warn!(
                    "texture layer {layer} shows image {image:?}, which no camera renders into: it keeps its last picture"
                );
            }
        }
        Ok(())
    }
}

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
//! On the CPU culling backend a view draws a run of the host list. With GPU culling each view
//! is culled on the GPU by passes of its own ([`ImageCullPass`] early, its depth prepass of
//! that list, its pyramid, [`ImageCullPass`] late, its late depth prepass, then its geometry
//! of both lists): its own two-phase occlusion, history, pyramid and lists, with the objects
//! that would be a cycle left out by their slots. Where that cull cannot serve (the view's
//! lists would pass [`IMAGE_CULL_MAX_BYTES`], or the scene has a chain of levels the GPU was
//! not given, [`GpuScene::lod_chains_refused`], whose objects the GPU can only draw at the
//! main view's level) it draws its own commands and instances made from its CPU answer,
//! uploaded by its [`ImageViewListPass`] (frustum, distance and size, no occlusion).

use std::sync::Arc;

use culling::Visibility;
use ecs::{ImageTarget, ResolvedViews, ViewTarget};
use render_graph::{RenderGraph, Result};

use super::readback::ReadbackRing;
use crate::frame::points;
use crate::passes::{CullPhase, DrawMode, HiZBuildPass, ImageCullPass, ImageCullSetupPass, ImageViewListPass};
use crate::passes::{ImageViewPass, SharedCullSettings, ViewTexturePass};
use crate::scene::{lock_scene, GpuScene, ImageRun, ImageView, ImageViews, SharedScene, DRAW_COMMAND_BYTES};
use crate::DistanceLod;

/// Most bytes an image view's GPU lists may take (its early and late lists, the capacity's
/// commands each); a view that would need more draws its CPU answer's lists.
pub const IMAGE_CULL_MAX_BYTES: u64 = 512 << 20;

/// Whether an image view of a scene of `capacity` slots is culled on the GPU (on that
/// backend): its two lists fit in [`IMAGE_CULL_MAX_BYTES`].
fn gpu_cull_fits(capacity: u32) -> bool {
    2 * u64::from(capacity.max(1)) * DRAW_COMMAND_BYTES <= IMAGE_CULL_MAX_BYTES
}

/// The image views' passes the graph holds, and what the extract said once.
#[derive(Debug, Default)]
pub(super) struct ImageViewPasses {
    /// The targets whose passes the graph holds, in render order, each with whether the GPU
    /// culls it.
    drawn: Vec<(ImageTarget, bool)>,
    /// Scratch: this frame's targets.
    wanted: Vec<(ImageTarget, bool)>,
    /// What the image views' colour is cleared to (the frame's clear colour).
    clear_color: [f32; 4],
    /// Whether the frame has shadows (the views are lit with the frame's atlas).
    shadowed: bool,
    /// The GPU's cull settings when the GPU culls (the views then draw their own lists).
    on_device: Option<SharedCullSettings>,
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
    /// `on_device`: the GPU culls with these settings, so the views draw their own lists.
    pub(super) fn new(clear_color: [f32; 4], shadowed: bool, on_device: Option<SharedCullSettings>) -> ImageViewPasses {
        ImageViewPasses { clear_color, shadowed, on_device, ..ImageViewPasses::default() }
    }

    /// Lists the frame's image views into `out`, appending each one's run to `scene` (whose
    /// host list is the main view's, and the split-screen views' runs, already), or with GPU
    /// culling its levels' rules (`lod_bias` the global bias) and the slots it leaves out.
    pub(super) fn list(
        &mut self,
        (views, visibility): (Option<&ResolvedViews>, &Visibility),
        scene: &mut GpuScene,
        (on_device, lod_bias): (bool, f32),
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
            let size = (target.width, target.height);
            let mut view = ImageView {
                name: Arc::clone(&target.name),
                view_projection,
                run: ImageRun::Gpu,
                size,
                lod: None,
                lod_distance: None,
                excluded: 0..0,
            };
            if on_device && gpu_cull_fits(scene.capacity()) && !scene.lod_chains_refused() {
                // Its own cull on the GPU: the CPU's levels' rules for this view, and every
                // slot whose material samples the view's own image left out.
                view.lod = answer.lod_error_view();
                view.lod_distance =
                    answer.lod_distance_view().map(|(eye, scale)| DistanceLod { eye, scale, bias: lod_bias });
                // Most frames have no such material: the slots are scanned only when one is.
                let shows_own = |material: &meshes::Material| {
                    material.texture.is_some_and(|layer| {
                        meshes.view_textures().iter().any(|(shown, image)| *shown == layer && *image == target.name)
                    })
                };
                if meshes.materials().iter().any(shows_own) {
                    view.excluded = out.push_excluded((0..draws.len() as u32).filter(|&slot| samples_own(slot)));
                }
                out.push(view);
                self.wanted.push((target.clone(), true));
                continue;
            }
            if on_device {
                // The GPU writes the lists: the view draws its own commands and instances.
                let (index, run) = out.next_own_run();
                scene.build_view_run(&self.slots, |index| answer.draw(kept[index].1 as usize).0, run);
                out.push(ImageView { run: ImageRun::Own(index), ..view });
                self.wanted.push((target.clone(), false));
                continue;
            }
            match scene.push_view_list(&self.slots, |index| answer.draw(kept[index].1 as usize).0) {
                Ok(list) => {
                    out.push(ImageView { run: ImageRun::HostList(list as u32), ..view });
                    self.wanted.push((target.clone(), false));
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
    /// ([`MeshLibrary::add_view_texture`](meshes::MeshLibrary::add_view_texture)), and the
    /// rings reading back a GPU-culled view's counters and bits (written from drawn frame
    /// `frame` on, into `ring`). A view texture naming an image no camera renders is said once
    /// per change of the targets.
    pub(super) fn follow(
        &mut self,
        graph: &mut RenderGraph,
        scene: &SharedScene,
        (ring, frame): (&mut ReadbackRing, u64),
    ) -> Result<()> {
        if self.wanted == self.drawn {
            return Ok(());
        }
        let (view_textures, capacity) = {
            let scene = lock_scene(scene);
            (scene.meshes().view_textures().to_vec(), scene.capacity())
        };
        for (target, _) in &self.drawn {
            let name = &target.name;
            let passes = ["image view {} lists", "image view {} depth", "image view {}", "image view {} depth late"];
            for pass in passes {
                graph.remove_pass(&pass.replace("{}", name));
            }
            let culls = crate::passes::ImageCullNames::new(name);
            for pass in [&culls.setup, &culls.early, &culls.late] {
                graph.remove_pass(pass);
            }
            graph.remove_pass(&format!("{name} {}", HiZBuildPass::IMAGE_VIEW_SUFFIX));
            ring.remove_image_view(graph, name);
            for (layer, _) in view_textures.iter().filter(|(_, image)| *image == target.name) {
                graph.remove_pass(&format!("view texture {layer} from {}", target.name));
            }
        }
        self.drawn.clear();
        let device = Arc::clone(graph.device());
        let mode = DrawMode::best(device.capabilities());
        for (target, gpu) in &self.wanted {
            self.add_view(graph, scene, (target, *gpu), mode)?;
            if *gpu {
                ring.add_image_view(graph, &target.name, capacity, frame)?;
            }
            for (layer, image) in view_textures.iter().filter(|(_, image)| *image == target.name) {
                graph
                    .add_typed_pass_at(points::AFTER_DEPTH_PREPASS, ViewTexturePass::new(Arc::clone(image), *layer))?;
            }
            self.drawn.push((target.clone(), *gpu));
        }
        for (layer, image) in &view_textures {
            if !self.wanted.iter().any(|(target, _)| target.name == *image) {
                log::warn!(
                    "texture layer {layer} shows image {image:?}, which no camera renders into: it keeps its last picture"
                );
            }
        }
        Ok(())
    }

    /// Adds the passes of the view drawn into `target` at the `after depth prepass` point: with
    /// `gpu`, its own two-phase cull (setup, early cull, depth prepass of the early list,
    /// pyramid, late cull, late depth prepass) and its geometry of both lists; else its depth
    /// prepass and geometry of the run the host made (uploaded first on the GPU backend).
    fn add_view(
        &self,
        graph: &mut RenderGraph,
        scene: &SharedScene,
        (target, gpu): (&ImageTarget, bool),
        mode: DrawMode,
    ) -> Result<()> {
        let device = Arc::clone(graph.device());
        let at = points::AFTER_DEPTH_PREPASS;
        let mut depth = ImageViewPass::depth(&device, Arc::clone(scene), target.clone(), mode)?;
        let shading = (self.clear_color, self.shadowed);
        let mut color = ImageViewPass::color(&device, Arc::clone(scene), target.clone(), mode, shading)?;
        match (&self.on_device, gpu) {
            (Some(settings), true) => {
                let name = &target.name;
                let zero_commands = mode != DrawMode::IndirectCount;
                graph.add_typed_pass_at(
                    at,
                    ImageCullSetupPass::new(Arc::clone(scene), Arc::clone(name), zero_commands),
                )?;
                let cull = |phase| {
                    ImageCullPass::image_view(&device, Arc::clone(scene), Arc::clone(settings), Arc::clone(name), phase)
                };
                graph.add_typed_pass_at(at, cull(CullPhase::Early)?)?;
                graph.add_typed_pass_at(at, depth.with_gpu_lists())?;
                graph.add_typed_pass_at(at, HiZBuildPass::image_view(&device, name, (target.width, target.height))?)?;
                graph.add_typed_pass_at(at, cull(CullPhase::Late)?)?;
                graph.add_typed_pass_at(
                    at,
                    ImageViewPass::depth_late(&device, Arc::clone(scene), target.clone(), mode)?,
                )?;
                color = color.with_gpu_lists();
            }
            (Some(_), false) => {
                graph.add_typed_pass_at(at, ImageViewListPass::new(Arc::clone(scene), Arc::clone(&target.name)))?;
                (depth, color) = (depth.with_own_lists(), color.with_own_lists());
                graph.add_typed_pass_at(at, depth)?;
            }
            (None, _) => graph.add_typed_pass_at(at, depth)?,
        }
        graph.add_typed_pass_at(at, color)
    }
}

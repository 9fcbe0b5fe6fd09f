//! The frame of the standard passes, drawing the host's draw list (CPU culling, or none), in
//! graph order:
//!
//! 1. [`ObjectUploadPass`] uploads the object transforms and records that changed since the
//!    last frame (all of them in the first frame, then only what changed, however much) and
//!    scatters them into `object_transforms` and `object_records` (see
//!    [`GpuScene::last_upload`]).
//! 2. [`DrawListPass`] writes this frame's draw list into `draw_commands`, `draw_count` and
//!    `draw_instances`. A GPU culling pass that writes them itself replaces it.
//! 3. [`DepthPrepass`] draws the list into `depth_prepass` (D32, reversed-Z).
//! 4. [`GeometryPass`] draws it again into `color` (RGBA8, flat per-object colour), testing
//!    against the prepass's depth without writing it.
//! 5. [`color_readback_pass`] copies `color` into a host-visible buffer (optional).
//!
//! **Draw commands.** The host's list is the early list of `draw_commands` (from command 0;
//! the late list, from the buffer's middle, is empty) and `draw_count` holds its length and
//! a zero (two u32). Batched ([`GpuScene::set_batch_draws`], the default), it holds one
//! `VkDrawIndexedIndirectCommand` ([`DrawCommand`]) per (mesh, level of detail, material)
//! with a listed object: the mesh's index range, `instanceCount` the listed objects of that
//! batch and `firstInstance` the start of their slots in `draw_instances`, which the vertex
//! shader reads at `gl_InstanceIndex` to fetch each object's [`ObjectTransform`] and
//! [`ObjectRecord`]. Unbatched, one command per listed object: `instanceCount` 1 and
//! `firstInstance` = the object's index (`gl_InstanceIndex`). [`DrawMode`] picks
//! `vkCmdDrawIndexedIndirectCount` where the device has it and falls back to plain indirect
//! or direct draws with the host's count.
//!
//! Every frame draws from the camera the host hands the graph, the frame's [`FrameView`](crate::FrameView)
//! parameter ([`RenderGraph::set_param`]; the Render stage sets it from the View stage's
//! resolved view):
//!
//! ```no_run
//! use renderer::{add_scene_passes, pack_rgba8, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, IDENTITY};
//! use render_graph::{vk, RenderGraph};
//! # fn main() -> render_graph::Result<()> {
//! let device = render_graph::testing::gpu_test_context().expect("a Vulkan device");
//! let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), 1024)?;
//! scene.push_object(ObjectDesc { world: IDENTITY, color: pack_rgba8(255, 0, 0, 255), mesh: 0, material: 0 })?;
//! scene.draw_all_objects();
//! let scene = scene.into_shared();
//! let mut graph = RenderGraph::new(device.clone(), vk::Extent2D { width: 64, height: 64 })?;
//! let readback = add_scene_passes(&mut graph, &scene, &ScenePassOptions::default())?;
//! let eye = glam::Vec3::new(0.0, 0.0, 4.0);
//! let view = glam::Mat4::look_at_rh(eye, glam::Vec3::ZERO, glam::Vec3::Y);
//! let projection = glam::Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1);
//! graph.set_param(FrameView::new(view, projection, eye, (64, 64), 0.1, f32::INFINITY));
//! graph.execute_frame()?;
//! graph.wait_idle()?;
//! let readback = readback.expect("asked for a readback");
//! let pixels: &[u8] = readback.read()?; // RGBA8 rows, top row first
//! assert_eq!(pixels.len(), 64 * 64 * 4);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use render_graph::readback::image_readback_buffer;
use render_graph::{GraphError, ReadbackBuffer, RenderGraph, Result};

use crate::frame::points;
use crate::names::{COLOR, COLOR_READBACK};
use crate::passes::{
    color_readback_pass, BlendedPass, DepthPrepass, DrawListPass, DrawMode, GeometryPass, HiZBuildPass, MeshUploadPass,
    ObjectUploadPass, ShadowAtlasPass, ViewUploadPass,
};
use crate::scene::{lock_scene, ShadowCulling, ShadowFrame, SharedScene};
#[cfg(doc)]
use crate::scene::{DrawCommand, GpuScene, ObjectRecord, ObjectTransform};

/// Choices of [`add_scene_passes`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScenePassOptions {
    /// What `color` is cleared to.
    pub clear_color: [f32; 4],
    /// How to draw; `None` picks [`DrawMode::best`] for the device.
    pub draw_mode: Option<DrawMode>,
    /// Add a readback of `color` ([`color_readback_pass`]) and return its buffer.
    pub readback: bool,
    /// Side of the shadow atlas in texels, or 0 for a frame without shadows (the default).
    /// Above 0 the frame draws the graph's [`ShadowFrame`](crate::ShadowFrame) parameter
    /// (which the frame sets, empty, for the host to update each frame) with a
    /// [`ShadowAtlasPass`] before the `after depth prepass` point and the geometry pass
    /// lights and shadows with it ([`GeometryPass::shadowed`]).
    pub shadow_atlas: u32,
    /// Most shadow views a frame draws (at most
    /// [`MAX_SHADOW_VIEWS`](crate::MAX_SHADOW_VIEWS)): on a GPU-culled frame the GPU's caster
    /// lists have room for as many ([`ShadowCullPass`](crate::ShadowCullPass)).
    pub shadow_views: u32,
    /// Side of the square at the atlas's top-left corner that holds the sun's cascades (see
    /// [`shadow_pyramid_side`](crate::shadow_pyramid_side)): on a GPU-culled frame their
    /// occlusion reads a pyramid of it. 0: the whole atlas.
    pub shadow_pyramid: u32,
}

impl Default for ScenePassOptions {
    fn default() -> Self {
        ScenePassOptions {
            clear_color: [0.0, 0.0, 0.0, 1.0],
            draw_mode: None,
            readback: true,
            shadow_atlas: 0,
            shadow_views: crate::MAX_SHADOW_VIEWS as u32,
            shadow_pyramid: 0,
        }
    }
}

/// Imports the scene's buffers into `graph` and adds the standard passes (upload, draw list,
/// depth prepass, geometry, and a readback of `color` when asked). Returns the readback
/// buffer, sized for the graph's output extent.
///
/// Returns an error when the output extent is zero or the draw mode is not supported.
pub fn add_scene_passes(
    graph: &mut RenderGraph,
    scene: &SharedScene,
    options: &ScenePassOptions,
) -> Result<Option<ReadbackBuffer>> {
    let extent = graph.output_extent();
    if extent.width == 0 || extent.height == 0 {
        return Err(GraphError::InvalidDescription {
            resource: String::from(COLOR),
            reason: "the output extent is zero; give the graph a non-zero extent",
        });
    }
    let device = Arc::clone(graph.device());
    let mode = options.draw_mode.unwrap_or_else(|| DrawMode::best(device.capabilities()));
    let depth_prepass = DepthPrepass::with_mode(&device, Arc::clone(scene), mode)?;
    let geometry = if options.shadow_atlas > 0 {
        GeometryPass::shadowed(&device, Arc::clone(scene), options.clear_color, mode)?
    } else {
        GeometryPass::with_mode(&device, Arc::clone(scene), options.clear_color, mode)?
    };
    let readback = if options.readback { Some(image_readback_buffer(&device, COLOR_READBACK, extent)?) } else { None };
    lock_scene(scene).import_into(graph);
    // Post-processes rewrite the colour in place; every other engine resource is read-only
    // to the users' passes (see `render_graph::Owner`).
    graph.share_resource(COLOR);
    graph.add_typed_pass(ObjectUploadPass::new(&device, Arc::clone(scene))?);
    graph.add_typed_pass(MeshUploadPass::new(Arc::clone(scene)));
    graph.add_typed_pass(ViewUploadPass::new(Arc::clone(scene)));
    graph.add_insertion_point(points::AFTER_UPLOAD)?;
    graph.add_insertion_point(points::BEFORE_CULL)?;
    graph.add_typed_pass(DrawListPass::new(Arc::clone(scene)));
    graph.add_insertion_point(points::BETWEEN_CULL_PHASES)?;
    graph.add_typed_pass(depth_prepass);
    graph.add_typed_pass(HiZBuildPass::final_depth(&device)?);
    if options.shadow_atlas > 0 {
        graph.set_param(ShadowFrame::with_culling(ShadowCulling::Host));
        graph.add_typed_pass(ShadowAtlasPass::new(&device, Arc::clone(scene), options.shadow_atlas, mode)?);
    }
    graph.add_insertion_point(points::AFTER_DEPTH_PREPASS)?;
    graph.add_typed_pass(geometry);
    graph.add_typed_pass(BlendedPass::new(&device, Arc::clone(scene))?);
    graph.add_insertion_point(points::AFTER_GEOMETRY)?;
    graph.add_insertion_point(points::BEFORE_OUTPUT)?;
    if let Some(readback) = &readback {
        graph.import_buffer(COLOR_READBACK, readback.shared());
        graph.add_typed_pass(color_readback_pass());
    }
    Ok(readback)
}

//! The standard passes: a GPU scene of object records and the passes that draw it.
//!
//! A frame of the standard passes, in graph order:
//!
//! 1. [`ObjectUploadPass`] uploads the object transforms and records that changed since the
//!    last frame (all of them in the first frame, then only what changed, however much) and
//!    scatters them into `object_transforms` and `object_records` (see
//!    [`GpuScene::last_upload`]).
//! 2. [`DrawListPass`] writes this frame's draw list into `draw_commands` and `draw_count`.
//!    A GPU culling pass that writes both itself replaces it.
//! 3. [`DepthPrepass`] draws the list into `depth_prepass` (D32, reversed-Z).
//! 4. [`GeometryPass`] draws it again into `color` (RGBA8, flat per-object colour), testing
//!    against the prepass's depth without writing it.
//! 5. [`ReadbackPass`] copies `color` into a host-visible buffer (optional).
//!
//! **Draw commands.** `draw_commands` holds one `VkDrawIndexedIndirectCommand`
//! ([`DrawCommand`]) per drawn object: the mesh's index range, `instanceCount` 1 and
//! `firstInstance` = the object's index, which the vertex shader reads as
//! `gl_InstanceIndex` to fetch its [`ObjectTransform`] and [`ObjectRecord`]. `draw_count` holds the number of
//! commands as one u32. [`DrawMode`] picks `vkCmdDrawIndexedIndirectCount` where the device
//! has it and falls back to plain indirect or direct draws with the host's count.
//!
//! ```no_run
//! use render_graph::passes::{self, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions};
//! use render_graph::{vk, RenderGraph};
//! # fn main() -> render_graph::Result<()> {
//! let device = render_graph::testing::gpu_test_context().expect("a Vulkan device");
//! let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), 1024)?;
//! let world = passes::IDENTITY;
//! scene.push_object(ObjectDesc { world, color: passes::pack_rgba8(255, 0, 0, 255), mesh: 0, material: 0 })?;
//! scene.draw_all_objects();
//! let scene = scene.into_shared();
//! let mut graph = RenderGraph::new(device.clone(), vk::Extent2D { width: 64, height: 64 })?;
//! let readback = passes::add_scene_passes(&mut graph, &scene, &ScenePassOptions::default())?;
//! graph.execute_frame()?;
//! graph.wait_idle()?;
//! let readback = readback.expect("asked for a readback");
//! let pixels: &[u8] = readback.read()?; // RGBA8 rows, top row first
//! assert_eq!(pixels.len(), 64 * 64 * 4);
//! # Ok(())
//! # }
//! ```

mod depth_prepass;
mod draw;
mod geometry;
mod mesh;
mod meshlet;
mod readback;
mod records;
mod scene;
mod upload;

use ash::vk;

use crate::error::{GraphError, Result};
use crate::graph::RenderGraph;
use crate::memory::ReadbackBuffer;

pub use depth_prepass::DepthPrepass;
pub use draw::DrawMode;
pub use geometry::GeometryPass;
pub use mesh::{pack_normal, MeshLibrary, MeshRange, MeshVertices, UNIT_CUBE_INDICES, UNIT_CUBE_POSITIONS};
pub use meshlet::Meshlet;
pub use readback::{has_four_byte_texels, image_readback_buffer, ReadbackPass, READBACK_TEXEL_BYTES};
pub use records::{
    pack_rgba8, world_box, CameraConstants, DrawCommand, ObjectRecord, ObjectTransform, DRAW_COMMAND_BYTES, IDENTITY,
    OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES,
};
pub use scene::{lock_scene, GpuScene, ObjectDesc, SharedScene, UploadReport};
pub use upload::{DrawListPass, ObjectUploadPass, SCATTER_GROUP};

/// The depth image the prepass writes (**contract** name).
pub const DEPTH_PREPASS: &str = "depth_prepass";
/// The object records buffer (**contract** name): one [`ObjectRecord`] per slot.
pub const OBJECT_RECORDS: &str = "object_records";
/// The object transforms buffer: one [`ObjectTransform`] per slot, what a moving object
/// uploads.
pub const OBJECT_TRANSFORMS: &str = "object_transforms";
/// The indirect draw commands buffer (**contract** name).
pub const DRAW_COMMANDS: &str = "draw_commands";
/// The draw count buffer, one u32 (**contract** name).
pub const DRAW_COUNT: &str = "draw_count";
/// The colour image the geometry pass writes (**contract** name).
pub const COLOR: &str = "color";
/// Mesh positions (vec4 per vertex), pulled by the vertex shader.
pub const MESH_VERTICES: &str = "mesh_vertices";
/// Mesh indices (u32), the index buffer of every scene draw.
pub const MESH_INDICES: &str = "mesh_indices";
/// The host-visible buffer [`ReadbackPass::new`] copies `color` into.
pub const COLOR_READBACK: &str = "color_readback";

/// Format of `depth_prepass`.
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// Format of `color`.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Choices of [`add_scene_passes`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScenePassOptions {
    /// What `color` is cleared to.
    pub clear_color: [f32; 4],
    /// How to draw; `None` picks [`DrawMode::best`] for the device.
    pub draw_mode: Option<DrawMode>,
    /// Add a [`ReadbackPass`] of `color` and return its buffer.
    pub readback: bool,
}

impl Default for ScenePassOptions {
    fn default() -> Self {
        ScenePassOptions { clear_color: [0.0, 0.0, 0.0, 1.0], draw_mode: None, readback: true }
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
    let device = std::sync::Arc::clone(graph.device());
    let mode = options.draw_mode.unwrap_or_else(|| DrawMode::best(device.capabilities()));
    let depth_prepass = DepthPrepass::with_mode(&device, std::sync::Arc::clone(scene), mode)?;
    let geometry = GeometryPass::with_mode(&device, std::sync::Arc::clone(scene), options.clear_color, mode)?;
    let readback = if options.readback { Some(image_readback_buffer(&device, COLOR_READBACK, extent)?) } else { None };
    lock_scene(scene).import_into(graph);
    graph.add_pass(ObjectUploadPass::new(&device, std::sync::Arc::clone(scene))?);
    graph.add_pass(DrawListPass::new(std::sync::Arc::clone(scene)));
    graph.add_pass(depth_prepass);
    graph.add_pass(geometry);
    if let Some(readback) = &readback {
        graph.import_buffer(COLOR_READBACK, readback.shared());
        graph.add_pass(ReadbackPass::new());
    }
    Ok(readback)
}

//! What the depth prepass and the geometry pass share: the scene inputs they declare, the
//! pipeline layout of the scene shaders, and how the draw commands are issued on the device
//! at hand.

use std::sync::Arc;

use render_graph::vk;

use crate::names::{
    DRAW_COMMANDS, DRAW_COUNT, MATERIALS, MATERIAL_TEXTURES, MESH_INDICES, MESH_UVS, MESH_VERTICES, OBJECT_RECORDS,
    OBJECT_TRANSFORMS,
};
use crate::scene::{lock_scene, SharedScene};
use crate::scene::{CameraConstants, DRAW_COMMAND_BYTES};
use render_graph::{Access, ShaderStage};
use render_graph::{Binding, ExecuteContext};
use render_graph::{BindingKind, GraphicsPipeline, GraphicsPipelineDesc};
use render_graph::{BufferHandle, ImageHandle, Registry};
use render_graph::{DeviceCapabilities, GpuDevice};
use render_graph::{GraphError, Result};

/// Set-0 bindings of the scene shaders (`scene_common.h`, `material.h`): 0
/// `object_transforms`, 1 `object_records`, 2 `mesh_vertices`, 3 `mesh_uvs`, 4 `materials`,
/// 5 `material_textures`.
pub(crate) const SCENE_BINDINGS: [BindingKind; 6] = [
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::StorageBuffer,
    BindingKind::TextureImage,
];

/// How the scene passes issue their draws.
///
/// Every mode draws the same commands in the same order, so the image does not depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawMode {
    /// One `vkCmdDrawIndexedIndirectCount`: the count comes from `draw_count` on the GPU, so
    /// a GPU culling pass may write both buffers. Needs `drawIndirectCount`,
    /// `multiDrawIndirect` and `drawIndirectFirstInstance`.
    IndirectCount,
    /// `vkCmdDrawIndexedIndirect` over `draw_commands` with the count of the host's draw list
    /// (one call, or one per command without `multiDrawIndirect`). Needs
    /// `drawIndirectFirstInstance`.
    Indirect,
    /// One `vkCmdDrawIndexed` per command of the host's draw list (any device).
    Direct,
}

impl DrawMode {
    /// The best mode the device supports.
    pub fn best(capabilities: &DeviceCapabilities) -> DrawMode {
        if !capabilities.draw_indirect_first_instance {
            DrawMode::Direct
        } else if capabilities.draw_indirect_count && capabilities.multi_draw_indirect {
            DrawMode::IndirectCount
        } else {
            DrawMode::Indirect
        }
    }

    /// Whether the device can draw in this mode.
    pub fn is_supported(self, capabilities: &DeviceCapabilities) -> bool {
        match self {
            DrawMode::IndirectCount => {
                capabilities.draw_indirect_count
                    && capabilities.multi_draw_indirect
                    && capabilities.draw_indirect_first_instance
            }
            DrawMode::Indirect => capabilities.draw_indirect_first_instance,
            DrawMode::Direct => true,
        }
    }
}

/// Checks that `mode` works on `device`.
pub(crate) fn check_mode(device: &GpuDevice, mode: DrawMode) -> Result<()> {
    if mode.is_supported(device.capabilities()) {
        Ok(())
    } else {
        Err(GraphError::InvalidDescription {
            resource: String::from(DRAW_COMMANDS),
            reason: "the device lacks a feature this draw mode needs",
        })
    }
}

/// Builds a pipeline of the scene shaders (both vertex shaders share the layout of
/// `scene_common.h`).
pub(crate) fn scene_pipeline(
    device: &Arc<GpuDevice>,
    name: &str,
    vertex: &[u32],
    fragment: &[u32],
    color_formats: &[vk::Format],
    depth: (vk::Format, vk::CompareOp, bool),
) -> Result<GraphicsPipeline> {
    GraphicsPipeline::new(
        device,
        name,
        &GraphicsPipelineDesc {
            vertex,
            fragment,
            bindings: &SCENE_BINDINGS,
            push_constant_bytes: CameraConstants::BYTES,
            color_formats,
            depth: Some(depth),
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::BACK,
        },
    )
}

/// The scene buffers a drawing pass reads, declared in its `register`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SceneInputs {
    transforms: BufferHandle,
    objects: BufferHandle,
    vertices: BufferHandle,
    indices: BufferHandle,
    commands: BufferHandle,
    count: BufferHandle,
    uvs: BufferHandle,
    materials: BufferHandle,
    textures: ImageHandle,
}

impl SceneInputs {
    /// Declares the reads of `object_transforms`, `object_records`, `mesh_vertices` (vertex
    /// shader), `mesh_indices` (index buffer), `draw_commands` and `draw_count` (indirect
    /// arguments).
    pub(crate) fn register(registry: &mut Registry<'_>) -> SceneInputs {
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        let objects = registry.buffer(OBJECT_RECORDS);
        let vertices = registry.buffer(MESH_VERTICES);
        let indices = registry.buffer(MESH_INDICES);
        let commands = registry.buffer(DRAW_COMMANDS);
        let count = registry.buffer(DRAW_COUNT);
        let (uvs, materials) = (registry.buffer(MESH_UVS), registry.buffer(MATERIALS));
        let textures = registry.image(MATERIAL_TEXTURES);
        SceneInputs {
            uvs: registry.read_storage_buffer(uvs, ShaderStage::Vertex),
            materials: registry.read_storage_buffer(materials, ShaderStage::Fragment),
            textures: registry.sample(textures, ShaderStage::Fragment),
            transforms: registry.read_storage_buffer(transforms, ShaderStage::Vertex),
            objects: registry.read_storage_buffer(objects, ShaderStage::Vertex),
            vertices: registry.read_storage_buffer(vertices, ShaderStage::Vertex),
            indices: registry.access_buffer(indices, Access::IndexBuffer),
            commands: registry.access_buffer(commands, Access::IndirectArgument),
            count: registry.access_buffer(count, Access::IndirectArgument),
        }
    }

    /// Binds `pipeline` with the scene buffers and camera, then draws the scene's commands in
    /// `mode` (inside the pass's rendering scope). Without a GPU count the host's list is
    /// drawn, or every object's command when a GPU pass writes the list.
    pub(crate) fn draw(
        &self,
        context: &mut ExecuteContext<'_>,
        pipeline: &GraphicsPipeline,
        scene: &SharedScene,
        mode: DrawMode,
    ) {
        let scene = lock_scene(scene);
        let bindings = [
            Binding::Buffer(self.transforms),
            Binding::Buffer(self.objects),
            Binding::Buffer(self.vertices),
            Binding::Buffer(self.uvs),
            Binding::Buffer(self.materials),
            Binding::Image(self.textures),
        ];
        context.bind_graphics(pipeline, &bindings);
        context.push_constants(&scene.camera().words());
        if context.failed() {
            return;
        }
        let indices = context.buffer(self.indices);
        let commands = context.buffer(self.commands);
        let max_draws = (commands.size / DRAW_COMMAND_BYTES) as u32;
        let host_draws = scene.draw_commands();
        let host_count = scene.indirect_draw_count().min(max_draws);
        let stride = DRAW_COMMAND_BYTES as u32;
        let command_buffer = context.command_buffer();
        let multi_draw = context.gpu().capabilities().multi_draw_indirect;
        let raw = context.device();
        // SAFETY: recording inside the pass's rendering scope; `mesh_indices` was declared as
        // an index buffer and holds u32 indices.
        unsafe { raw.cmd_bind_index_buffer(command_buffer, indices.buffer, 0, vk::IndexType::UINT32) };
        match mode {
            DrawMode::IndirectCount => {
                let count = context.buffer(self.count);
                // SAFETY: recording with the scene pipeline bound; both buffers were declared
                // as indirect arguments; `max_draws` commands fit in `draw_commands`, and the
                // mode's features were checked when the pass was built.
                unsafe {
                    raw.cmd_draw_indexed_indirect_count(
                        command_buffer,
                        commands.buffer,
                        0,
                        count.buffer,
                        0,
                        max_draws,
                        stride,
                    )
                };
            }
            DrawMode::Indirect if multi_draw => {
                if host_count > 0 {
                    // SAFETY: as above; `host_count` commands fit in the buffer.
                    unsafe { raw.cmd_draw_indexed_indirect(command_buffer, commands.buffer, 0, host_count, stride) };
                }
            }
            DrawMode::Indirect => {
                for draw in 0..u64::from(host_count) {
                    // SAFETY: as above; one command at a time without multiDrawIndirect.
                    unsafe {
                        raw.cmd_draw_indexed_indirect(
                            command_buffer,
                            commands.buffer,
                            draw * DRAW_COMMAND_BYTES,
                            1,
                            stride,
                        )
                    };
                }
            }
            DrawMode::Direct => {
                for draw in host_draws.iter().take(host_count as usize) {
                    // SAFETY: recording with the scene pipeline bound and the index buffer set;
                    // direct draws may use any first instance.
                    unsafe {
                        raw.cmd_draw_indexed(
                            command_buffer,
                            draw.index_count,
                            draw.instance_count,
                            draw.first_index,
                            draw.vertex_offset,
                            draw.first_instance,
                        )
                    };
                }
            }
        }
    }
}

/// Reports a zero output extent as the frame's error; returns whether the extent is usable.
pub(crate) fn check_output_extent(context: &mut ExecuteContext<'_>, resource: &str) -> bool {
    let extent = context.output_extent();
    if extent.width == 0 || extent.height == 0 {
        context.fail(GraphError::InvalidDescription {
            resource: resource.to_owned(),
            reason: "the output extent is zero; give the graph a non-zero extent",
        });
        return false;
    }
    true
}

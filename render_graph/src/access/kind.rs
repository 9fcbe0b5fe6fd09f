//! Access kinds a pass declares, and what each means for synchronization2: pipeline stages,
//! access flags, image layout and resource usage.

use ash::vk;

/// The shader stage that performs a shader access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShaderStage {
    /// Compute shader.
    Compute,
    /// Vertex shader.
    Vertex,
    /// Fragment shader.
    Fragment,
    /// Vertex and fragment shaders.
    Graphics,
}

impl ShaderStage {
    fn flags(self) -> vk::PipelineStageFlags2 {
        match self {
            ShaderStage::Compute => vk::PipelineStageFlags2::COMPUTE_SHADER,
            ShaderStage::Vertex => vk::PipelineStageFlags2::VERTEX_SHADER,
            ShaderStage::Fragment => vk::PipelineStageFlags2::FRAGMENT_SHADER,
            ShaderStage::Graphics => vk::PipelineStageFlags2::VERTEX_SHADER | vk::PipelineStageFlags2::FRAGMENT_SHADER,
        }
    }
}

/// How a pass uses an image or a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Image read through a sampler (layout read-only).
    Sampled(ShaderStage),
    /// Storage image or buffer read.
    StorageRead(ShaderStage),
    /// Storage image or buffer write; previous contents are not read.
    StorageWrite(ShaderStage),
    /// Storage image or buffer read and write.
    StorageReadWrite(ShaderStage),
    /// Uniform buffer read.
    UniformRead(ShaderStage),
    /// Color attachment of a dynamic-rendering pass.
    ColorAttachment,
    /// Depth attachment with depth test and write.
    DepthAttachment,
    /// Depth attachment with depth test only (read-only layout).
    DepthRead,
    /// Copy or blit source.
    TransferRead,
    /// Copy, blit or clear destination.
    TransferWrite,
    /// Indirect draw or dispatch arguments (buffers).
    IndirectArgument,
    /// Vertex buffer (buffers).
    VertexBuffer,
    /// Index buffer (buffers).
    IndexBuffer,
}

/// Which kind of resource an access applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Applies {
    ImagesOnly,
    BuffersOnly,
    Both,
}

impl Access {
    /// Whether the access writes the resource.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Access::StorageWrite(_)
                | Access::StorageReadWrite(_)
                | Access::ColorAttachment
                | Access::DepthAttachment
                | Access::TransferWrite
        )
    }

    /// Whether the access is an attachment of the pass's rendering (which covers the whole
    /// image).
    pub(crate) fn is_attachment(self) -> bool {
        matches!(self, Access::ColorAttachment | Access::DepthAttachment | Access::DepthRead)
    }

    /// Whether the access reads the resource's previous contents.
    pub fn is_read(self) -> bool {
        !matches!(self, Access::StorageWrite(_) | Access::TransferWrite | Access::ColorAttachment)
    }

    pub(crate) fn applies_to(self) -> Applies {
        match self {
            Access::Sampled(_) | Access::ColorAttachment | Access::DepthAttachment | Access::DepthRead => {
                Applies::ImagesOnly
            }
            Access::UniformRead(_) | Access::IndirectArgument | Access::VertexBuffer | Access::IndexBuffer => {
                Applies::BuffersOnly
            }
            _ => Applies::Both,
        }
    }

    /// Pipeline stages that perform the access.
    pub fn stages(self) -> vk::PipelineStageFlags2 {
        match self {
            Access::Sampled(stage)
            | Access::StorageRead(stage)
            | Access::StorageWrite(stage)
            | Access::StorageReadWrite(stage)
            | Access::UniformRead(stage) => stage.flags(),
            Access::ColorAttachment => vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT,
            Access::DepthAttachment | Access::DepthRead => {
                vk::PipelineStageFlags2::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags2::LATE_FRAGMENT_TESTS
            }
            Access::TransferRead | Access::TransferWrite => vk::PipelineStageFlags2::ALL_TRANSFER,
            Access::IndirectArgument => vk::PipelineStageFlags2::DRAW_INDIRECT,
            Access::VertexBuffer => vk::PipelineStageFlags2::VERTEX_ATTRIBUTE_INPUT,
            Access::IndexBuffer => vk::PipelineStageFlags2::INDEX_INPUT,
        }
    }

    /// Memory access flags of the access.
    pub fn access_flags(self) -> vk::AccessFlags2 {
        match self {
            Access::Sampled(_) => vk::AccessFlags2::SHADER_SAMPLED_READ,
            Access::StorageRead(_) => vk::AccessFlags2::SHADER_STORAGE_READ,
            Access::StorageWrite(_) => vk::AccessFlags2::SHADER_STORAGE_WRITE,
            Access::StorageReadWrite(_) => {
                vk::AccessFlags2::SHADER_STORAGE_READ | vk::AccessFlags2::SHADER_STORAGE_WRITE
            }
            Access::UniformRead(_) => vk::AccessFlags2::UNIFORM_READ,
            Access::ColorAttachment => {
                vk::AccessFlags2::COLOR_ATTACHMENT_READ | vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
            }
            Access::DepthAttachment => {
                vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE
            }
            Access::DepthRead => vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_READ,
            Access::TransferRead => vk::AccessFlags2::TRANSFER_READ,
            Access::TransferWrite => vk::AccessFlags2::TRANSFER_WRITE,
            Access::IndirectArgument => vk::AccessFlags2::INDIRECT_COMMAND_READ,
            Access::VertexBuffer => vk::AccessFlags2::VERTEX_ATTRIBUTE_READ,
            Access::IndexBuffer => vk::AccessFlags2::INDEX_READ,
        }
    }

    /// The write part of [`Access::access_flags`] (what a later barrier must make available).
    pub fn write_flags(self) -> vk::AccessFlags2 {
        let writes = vk::AccessFlags2::SHADER_STORAGE_WRITE
            | vk::AccessFlags2::COLOR_ATTACHMENT_WRITE
            | vk::AccessFlags2::DEPTH_STENCIL_ATTACHMENT_WRITE
            | vk::AccessFlags2::TRANSFER_WRITE;
        self.access_flags() & writes
    }

    /// The image layout during the access.
    pub fn image_layout(self) -> vk::ImageLayout {
        match self {
            Access::Sampled(_) | Access::DepthRead => vk::ImageLayout::READ_ONLY_OPTIMAL,
            Access::ColorAttachment | Access::DepthAttachment => vk::ImageLayout::ATTACHMENT_OPTIMAL,
            Access::TransferRead => vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            Access::TransferWrite => vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            _ => vk::ImageLayout::GENERAL,
        }
    }

    /// Image usage the access needs.
    pub fn image_usage(self) -> vk::ImageUsageFlags {
        match self {
            Access::Sampled(_) => vk::ImageUsageFlags::SAMPLED,
            Access::StorageRead(_) | Access::StorageWrite(_) | Access::StorageReadWrite(_) => {
                vk::ImageUsageFlags::STORAGE
            }
            Access::ColorAttachment => vk::ImageUsageFlags::COLOR_ATTACHMENT,
            Access::DepthAttachment | Access::DepthRead => vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            Access::TransferRead => vk::ImageUsageFlags::TRANSFER_SRC,
            Access::TransferWrite => vk::ImageUsageFlags::TRANSFER_DST,
            _ => vk::ImageUsageFlags::empty(),
        }
    }

    /// Buffer usage the access needs.
    pub fn buffer_usage(self) -> vk::BufferUsageFlags {
        match self {
            Access::StorageRead(_) | Access::StorageWrite(_) | Access::StorageReadWrite(_) => {
                vk::BufferUsageFlags::STORAGE_BUFFER
            }
            Access::UniformRead(_) => vk::BufferUsageFlags::UNIFORM_BUFFER,
            Access::TransferRead => vk::BufferUsageFlags::TRANSFER_SRC,
            Access::TransferWrite => vk::BufferUsageFlags::TRANSFER_DST,
            Access::IndirectArgument => vk::BufferUsageFlags::INDIRECT_BUFFER,
            Access::VertexBuffer => vk::BufferUsageFlags::VERTEX_BUFFER,
            Access::IndexBuffer => vk::BufferUsageFlags::INDEX_BUFFER,
            _ => vk::BufferUsageFlags::empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Access; 13] = [
        Access::Sampled(ShaderStage::Fragment),
        Access::StorageRead(ShaderStage::Compute),
        Access::StorageWrite(ShaderStage::Compute),
        Access::StorageReadWrite(ShaderStage::Compute),
        Access::UniformRead(ShaderStage::Vertex),
        Access::ColorAttachment,
        Access::DepthAttachment,
        Access::DepthRead,
        Access::TransferRead,
        Access::TransferWrite,
        Access::IndirectArgument,
        Access::VertexBuffer,
        Access::IndexBuffer,
    ];

    #[test]
    fn writes_carry_write_flags_and_reads_do_not() {
        for access in ALL {
            assert_eq!(access.is_write(), !access.write_flags().is_empty(), "{access:?}");
            assert!(!access.stages().is_empty(), "{access:?} has no stage");
        }
    }

    #[test]
    fn every_access_needs_some_usage() {
        for access in ALL {
            let usage = match access.applies_to() {
                Applies::ImagesOnly => !access.image_usage().is_empty(),
                Applies::BuffersOnly => !access.buffer_usage().is_empty(),
                Applies::Both => !access.image_usage().is_empty() && !access.buffer_usage().is_empty(),
            };
            assert!(usage, "{access:?} names no usage flag");
        }
    }
}

//! What a pipeline's set-0 binding holds, and which declared access binds as which kind: what
//! the pipelines, the bind checks and the shader reflection share.

use ash::vk;

use crate::access::Access;

/// What a binding of set 0 holds; binding `i` is the `i`-th kind given to the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `buffer` block (storage buffer).
    StorageBuffer,
    /// `uniform` block.
    UniformBuffer,
    /// `image2D` and friends (storage image).
    StorageImage,
    /// `sampler2D` and friends, with the device's nearest sampler.
    SampledImage,
    /// `sampler2D`, `sampler2DArray` and friends for textures: the device's trilinear,
    /// repeating sampler ([`crate::GpuDevice::texture_sampler`]). Declared as a sampled read.
    TextureImage,
}

impl BindingKind {
    /// The binding kind a declared access binds as, for an image or a buffer; `None` for
    /// accesses that are not descriptors (attachments, transfers, indirect arguments, …).
    /// The graph checks every bind against it, so the pipeline's kinds, the declared accesses
    /// and the bindings cannot silently disagree.
    pub fn for_access(access: Access, is_image: bool) -> Option<BindingKind> {
        match (access, is_image) {
            (Access::Sampled(_), true) => Some(BindingKind::SampledImage),
            (Access::StorageRead(_) | Access::StorageWrite(_) | Access::StorageReadWrite(_), true) => {
                Some(BindingKind::StorageImage)
            }
            (Access::StorageRead(_) | Access::StorageWrite(_) | Access::StorageReadWrite(_), false) => {
                Some(BindingKind::StorageBuffer)
            }
            (Access::UniformRead(_), false) => Some(BindingKind::UniformBuffer),
            _ => None,
        }
    }

    pub(crate) fn descriptor_type(self) -> vk::DescriptorType {
        match self {
            BindingKind::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
            BindingKind::UniformBuffer => vk::DescriptorType::UNIFORM_BUFFER,
            BindingKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
            BindingKind::SampledImage | BindingKind::TextureImage => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        }
    }

    /// Whether a binding of this kind binds what a declared access of kind `declared` gives
    /// (a texture is a sampled image with another sampler).
    pub(crate) fn serves(self, declared: BindingKind) -> bool {
        self == declared || (self == BindingKind::TextureImage && declared == BindingKind::SampledImage)
    }
}

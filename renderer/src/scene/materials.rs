//! Materials of the GPU scene: a table indexed by each object's `material` (what its texture
//! is, how it is addressed, whether its alpha cuts holes) and the base-colour textures, one
//! layer each of one sRGB image array with full mips. Both live in the [`MeshLibrary`] and are
//! uploaded once with the meshes, beside the texture coordinates (`mesh_uvs`).
//!
//! An object's colour (its record's `color`, a game's `BaseColor` or a glTF material's
//! factor) multiplies the texture. A material index past the table, or the table's absent
//! texture, draws the colour alone: the engine's procedural meshes keep their colours.

use std::sync::Arc;

use gpu_allocator::MemoryLocation;
use render_graph::{vk, GpuBuffer, GpuDevice, GpuImage, GraphError, ImageInfo, Result, MAX_ARRAY_LAYERS};

use crate::scene::{as_bytes, MeshLibrary};

/// How a texture is addressed outside [0, 1] on one axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextureWrap {
    /// Repeats.
    #[default]
    Repeat,
    /// Repeats, mirrored every other time.
    MirroredRepeat,
    /// Clamps to the edge.
    ClampToEdge,
}

impl TextureWrap {
    fn bits(self) -> u32 {
        match self {
            TextureWrap::Repeat => 0,
            TextureWrap::MirroredRepeat => 1,
            TextureWrap::ClampToEdge => 2,
        }
    }
}

/// A material as a game or an importer describes it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Material {
    /// Its base-colour texture: a layer added with [`MeshLibrary::add_texture`].
    pub texture: Option<u32>,
    /// `Some(cutoff)`: texels whose alpha is below it are holes (alpha-masked foliage, fences);
    /// the depth prepass and the geometry pass both discard them. `None`: opaque.
    pub alpha_cutoff: Option<f32>,
    /// Addressing along u and v.
    pub wrap: [TextureWrap; 2],
    /// Translucent: blended "over" what lies behind by its alpha, drawn after every opaque
    /// and masked surface, farthest first, writing no depth (so it never occludes anything,
    /// on the GPU or the CPU, and is culled as an occludee only).
    pub blend: bool,
    /// Both faces are drawn (leaves, cards, cloth); back faces are lit with the normal
    /// flipped, and meshlet back-face culling leaves the object alone.
    pub double_sided: bool,
    /// Samples the nearest texel of the nearest mip instead of trilinear filtering (pixel
    /// art; glTF's `magFilter` NEAREST).
    pub nearest: bool,
}

impl Material {
    /// Whether the surface can show what lies behind it (it is then never an occluder).
    pub fn has_holes(&self) -> bool {
        self.alpha_cutoff.is_some() || self.blend
    }
}

/// One material as the shaders read it (std430, 16 bytes); GLSL twin `Material` in
/// `shaders/glsl/engine/material.h`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuMaterial {
    /// The texture layer, or [`GpuMaterial::NO_TEXTURE`].
    pub texture: u32,
    /// Bit 0: alpha-masked; bits 1-2 and 3-4: the u and v wrap (0 repeat, 1 mirrored, 2
    /// clamp); bit 5 blended, bit 6 double-sided, bit 7 nearest sampling.
    pub flags: u32,
    /// The alpha cutoff of a masked material.
    pub cutoff: f32,
    /// Padding to 16 bytes.
    pub pad: u32,
}

impl GpuMaterial {
    /// No texture: the object's colour alone.
    pub const NO_TEXTURE: u32 = u32::MAX;
    /// The bit of an alpha-masked material.
    pub const MASKED: u32 = 1;
    /// The bit of a blended material.
    pub const BLENDED: u32 = 1 << 5;
    /// The bit of a double-sided material.
    pub const DOUBLE_SIDED: u32 = 1 << 6;
    /// The bit of a material sampled nearest.
    pub const NEAREST: u32 = 1 << 7;

    /// The shaders' form of `material`.
    pub fn of(material: &Material) -> GpuMaterial {
        let bit = |set: bool, bit: u32| if set { bit } else { 0 };
        let flags = bit(material.alpha_cutoff.is_some(), GpuMaterial::MASKED)
            | bit(material.blend, GpuMaterial::BLENDED)
            | bit(material.double_sided, GpuMaterial::DOUBLE_SIDED)
            | bit(material.nearest, GpuMaterial::NEAREST)
            | material.wrap[0].bits() << 1
            | material.wrap[1].bits() << 3;
        GpuMaterial {
            texture: material.texture.unwrap_or(GpuMaterial::NO_TEXTURE),
            flags,
            cutoff: material.alpha_cutoff.unwrap_or(0.0),
            pad: 0,
        }
    }
}

const _: () = assert!(size_of::<GpuMaterial>() == 16, "std430: four 4-byte fields");

/// The base-colour textures: square layers of one size, RGBA8 sRGB, each with its full mip
/// chain (mip `k` is `size >> k` texels a side).
#[derive(Clone, Debug, Default)]
pub struct TextureLayers {
    pub(crate) size: u32,
    pub(crate) layers: Vec<Arc<Vec<Vec<u8>>>>,
}

impl TextureLayers {
    /// The side of every layer, or 0 without any.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Bytes of every layer and mip.
    pub fn bytes(&self) -> usize {
        self.layers.iter().flat_map(|layer| layer.iter()).map(Vec::len).sum()
    }
}

/// Checks a texture for [`MeshLibrary::add_texture`].
pub(crate) fn check_texture(layers: &TextureLayers, size: u32, mips: &[Vec<u8>]) -> Result<()> {
    let invalid = |reason| Err(GraphError::InvalidDescription { resource: String::from("texture"), reason });
    if size == 0 || !size.is_power_of_two() {
        return invalid("a texture layer is square with a power-of-two side");
    }
    if layers.size != 0 && layers.size != size {
        return invalid("every texture layer has the size of the first (resize it on import)");
    }
    if layers.layers.len() as u32 >= MAX_ARRAY_LAYERS {
        return invalid("more texture layers than an image array holds (MAX_ARRAY_LAYERS)");
    }
    let chain = 32 - size.leading_zeros();
    if mips.len() != chain as usize {
        return invalid("a texture needs its full mip chain, down to 1x1");
    }
    for (level, mip) in mips.iter().enumerate() {
        let side = (size >> level) as usize;
        if mip.len() != side * side * 4 {
            return invalid("a mip's size does not match its level (RGBA8, side >> level)");
        }
    }
    Ok(())
}

/// The device copies of the library's materials, texture coordinates and textures.
pub(crate) struct MaterialBuffers {
    pub(crate) materials: Arc<GpuBuffer>,
    pub(crate) uvs: Arc<GpuBuffer>,
    pub(crate) textures: Arc<GpuImage>,
}

/// The layout the texture array is left in after its upload, as the graph is told.
pub(crate) const TEXTURE_LAYOUT: vk::ImageLayout = vk::ImageLayout::READ_ONLY_OPTIMAL;

impl MaterialBuffers {
    /// Uploads the table (one default material when the library has none), the coordinates
    /// and the textures (one white 1x1 layer when the library has none), waiting for the copy.
    pub(crate) fn upload(device: &Arc<GpuDevice>, library: &MeshLibrary) -> Result<MaterialBuffers> {
        let mut table: Vec<GpuMaterial> = library.materials().iter().map(GpuMaterial::of).collect();
        if table.is_empty() {
            table.push(GpuMaterial::of(&Material::default()));
        }
        let white = TextureLayers { size: 1, layers: vec![Arc::new(vec![vec![255; 4]])] };
        let textures = if library.textures().is_empty() { &white } else { library.textures() };
        let mip_levels = 32 - textures.size.leading_zeros();
        let info = ImageInfo {
            format: vk::Format::R8G8B8A8_SRGB,
            extent: vk::Extent2D { width: textures.size, height: textures.size },
            mip_levels,
            usage: vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
        };
        let image = GpuImage::new_array(device, "material_textures", info, textures.layers.len() as u32)?;
        let table_bytes = as_bytes(&table);
        let uv_bytes = as_bytes(library.uvs());
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let materials =
            GpuBuffer::new(device, "materials", table_bytes.len() as u64, storage, MemoryLocation::GpuOnly)?;
        let uvs = GpuBuffer::new(device, "mesh_uvs", uv_bytes.len().max(8) as u64, storage, MemoryLocation::GpuOnly)?;
        let texel_bytes = textures.bytes();
        let total = table_bytes.len() + uv_bytes.len() + texel_bytes;
        let mut staging = GpuBuffer::new(
            device,
            "material staging",
            total as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        let mut regions = Vec::new();
        {
            let mapped = staging
                .mapped_mut()
                .ok_or_else(|| GraphError::Allocation(String::from("material staging buffer is not mapped")))?;
            mapped[..table_bytes.len()].copy_from_slice(table_bytes);
            let mut at = table_bytes.len();
            mapped[at..at + uv_bytes.len()].copy_from_slice(uv_bytes);
            at += uv_bytes.len();
            for (layer, mips) in textures.layers.iter().enumerate() {
                for (level, mip) in mips.iter().enumerate() {
                    mapped[at..at + mip.len()].copy_from_slice(mip);
                    let side = (textures.size >> level).max(1);
                    regions.push(
                        vk::BufferImageCopy::default()
                            .buffer_offset(at as u64)
                            .image_subresource(vk::ImageSubresourceLayers {
                                aspect_mask: vk::ImageAspectFlags::COLOR,
                                mip_level: level as u32,
                                base_array_layer: layer as u32,
                                layer_count: 1,
                            })
                            .image_extent(vk::Extent3D { width: side, height: side, depth: 1 }),
                    );
                    at += mip.len();
                }
            }
        }
        staging.flush()?;
        let raw = device.raw();
        let range = vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: mip_levels,
            base_array_layer: 0,
            layer_count: vk::REMAINING_ARRAY_LAYERS,
        };
        device.submit_and_wait(|command_buffer| {
            let to_transfer = vk::ImageMemoryBarrier2::default()
                .dst_stage_mask(vk::PipelineStageFlags2::COPY)
                .dst_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                .image(image.raw())
                .subresource_range(range);
            let barriers = [to_transfer];
            // SAFETY: recording a one-time command buffer; the barrier names a live image.
            unsafe {
                raw.cmd_pipeline_barrier2(
                    command_buffer,
                    &vk::DependencyInfo::default().image_memory_barriers(&barriers),
                )
            };
            let table_copy = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: table_bytes.len() as u64 };
            // SAFETY: recording; the regions lie inside the buffers, which live until the wait returns.
            unsafe { raw.cmd_copy_buffer(command_buffer, staging.raw(), materials.raw(), &[table_copy]) };
            if !uv_bytes.is_empty() {
                let uv_copy =
                    vk::BufferCopy { src_offset: table_bytes.len() as u64, dst_offset: 0, size: uv_bytes.len() as u64 };
                // SAFETY: as above.
                unsafe { raw.cmd_copy_buffer(command_buffer, staging.raw(), uvs.raw(), &[uv_copy]) };
            }
            // SAFETY: as above; the image is in TRANSFER_DST_OPTIMAL and every region lies in it.
            unsafe {
                raw.cmd_copy_buffer_to_image(
                    command_buffer,
                    staging.raw(),
                    image.raw(),
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &regions,
                )
            };
            let to_read = vk::ImageMemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COPY)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                .new_layout(TEXTURE_LAYOUT)
                .image(image.raw())
                .subresource_range(range);
            let barriers = [to_read];
            // SAFETY: as above.
            unsafe {
                raw.cmd_pipeline_barrier2(
                    command_buffer,
                    &vk::DependencyInfo::default().image_memory_barriers(&barriers),
                )
            };
        })?;
        Ok(MaterialBuffers { materials: Arc::new(materials), uvs: Arc::new(uvs), textures: Arc::new(image) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn materials_pack_their_texture_mask_and_wraps() {
        let material = Material {
            texture: Some(3),
            alpha_cutoff: Some(0.25),
            wrap: [TextureWrap::ClampToEdge, TextureWrap::MirroredRepeat],
            ..Material::default()
        };
        let packed = GpuMaterial::of(&material);
        assert_eq!((packed.texture, packed.flags, packed.cutoff), (3, 1 | 2 << 1 | 1 << 3, 0.25));
        let other = Material { blend: true, double_sided: true, nearest: true, ..Material::default() };
        assert_eq!(
            GpuMaterial::of(&other).flags,
            GpuMaterial::BLENDED | GpuMaterial::DOUBLE_SIDED | GpuMaterial::NEAREST
        );
        assert_eq!(GpuMaterial::of(&Material::default()).texture, GpuMaterial::NO_TEXTURE);
    }

    #[test]
    fn textures_are_square_powers_of_two_of_one_size_with_full_chains() {
        let layers = TextureLayers::default();
        let chain = |size: u32| {
            (0..=size.trailing_zeros()).map(|level| vec![0; ((size >> level).pow(2) * 4) as usize]).collect::<Vec<_>>()
        };
        assert!(check_texture(&layers, 4, &chain(4)).is_ok());
        assert!(check_texture(&layers, 3, &chain(4)).is_err(), "not a power of two");
        assert!(check_texture(&layers, 4, &chain(4)[..2]).is_err(), "a short chain");
        let one = TextureLayers { size: 8, layers: vec![Arc::new(chain(8))] };
        assert!(check_texture(&one, 4, &chain(4)).is_err(), "another size");
    }
}

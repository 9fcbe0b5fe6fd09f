//! Materials of the GPU scene: the [`MeshLibrary`]'s material table as the shaders read it
//! ([`GpuMaterial`], indexed by each object's `material`) and its base-colour textures, one
//! layer each of one sRGB image array with full mips, beside the texture coordinates
//! (`mesh_uvs`). What the library holds at install is uploaded here, waiting for the copy;
//! materials and textures added, replaced or removed while frames run go up with the frames
//! (`gpu_scene/material_changes.rs`, `gpu_scene/texture_streaming.rs`), the table and the
//! array growing as they fill.
//!
//! An object's colour (its record's `color`, a game's `BaseColor` or a glTF material's
//! factor) multiplies the texture. A material index past the table, or the table's absent
//! texture, draws the colour alone: the engine's procedural meshes keep their colours.

use std::sync::Arc;

use meshes::{Material, MeshLibrary, TextureLayers, TextureWrap, MAX_TEXTURE_LAYERS};
use render_graph::MemoryLocation;
use render_graph::{vk, GpuBuffer, GpuDevice, GpuImage, GraphError, ImageInfo, Result, MAX_ARRAY_LAYERS};

use crate::scene::as_bytes;

const _: () = assert!(MAX_TEXTURE_LAYERS <= MAX_ARRAY_LAYERS, "the library's layers fit one image array");

/// The shaders' bits of a wrap mode (`material.h`).
fn wrap_bits(wrap: TextureWrap) -> u32 {
    match wrap {
        TextureWrap::Repeat => 0,
        TextureWrap::MirroredRepeat => 1,
        TextureWrap::ClampToEdge => 2,
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
    /// The finest mip of the texture the shaders sample: 0 once every mip is on the GPU;
    /// while a texture added at run time streams in, the finest mip that arrived (the
    /// sampled level is clamped to it, so no mip without texels is read).
    pub min_lod: u32,
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
            | wrap_bits(material.wrap[0]) << 1
            | wrap_bits(material.wrap[1]) << 3;
        GpuMaterial {
            texture: material.texture.unwrap_or(GpuMaterial::NO_TEXTURE),
            flags,
            cutoff: material.alpha_cutoff.unwrap_or(0.0),
            min_lod: 0,
        }
    }
}

const _: () = assert!(size_of::<GpuMaterial>() == 16, "std430: four 4-byte fields");

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
        let mut white = TextureLayers::default();
        white.add(1, vec![vec![255; 4]]).expect("one white texel is a whole 1x1 texture");
        let textures = if library.textures().is_empty() { &white } else { library.textures() };
        let mip_levels = 32 - textures.size().leading_zeros();
        let info = ImageInfo {
            format: vk::Format::R8G8B8A8_SRGB,
            extent: vk::Extent2D { width: textures.size(), height: textures.size() },
            mip_levels,
            // A copy source too: an array outgrown by textures added at run time is copied.
            usage: vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::TRANSFER_SRC,
        };
        let image = GpuImage::new_array(device, "material_textures", info, textures.len() as u32)?;
        let table_bytes = as_bytes(&table);
        let uv_bytes = as_bytes(library.uvs());
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let materials =
            GpuBuffer::new(device, "materials", table_bytes.len() as u64, storage, MemoryLocation::GpuOnly)?;
        // A copy source too: meshes added while frames run may outgrow it.
        let uv_usage = storage | vk::BufferUsageFlags::TRANSFER_SRC;
        let uvs = GpuBuffer::new(device, "mesh_uvs", uv_bytes.len().max(8) as u64, uv_usage, MemoryLocation::GpuOnly)?;
        let texel_bytes = textures.bytes();
        let total = table_bytes.len() + uv_bytes.len() + texel_bytes;
        let mut staging = GpuBuffer::new(
            device,
            "material staging",
            total as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        let regions;
        {
            let mapped = staging
                .mapped_mut()
                .ok_or_else(|| GraphError::Allocation(String::from("material staging buffer is not mapped")))?;
            mapped[..table_bytes.len()].copy_from_slice(table_bytes);
            let mut at = table_bytes.len();
            mapped[at..at + uv_bytes.len()].copy_from_slice(uv_bytes);
            at += uv_bytes.len();
            regions = stage_texels(textures, &mut mapped[at..], at as u64);
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

/// Copies every mip of every layer of `textures` into `staging` (which starts at byte `offset`
/// of its buffer), back to back, and returns the copy region of each into the image array.
fn stage_texels(textures: &TextureLayers, staging: &mut [u8], offset: u64) -> Vec<vk::BufferImageCopy> {
    let mut regions = Vec::new();
    let mut at = 0;
    for (layer, mips) in textures.iter().enumerate() {
        for (level, mip) in mips.iter().enumerate() {
            staging[at..at + mip.len()].copy_from_slice(mip);
            let side = (textures.size() >> level).max(1);
            regions.push(
                vk::BufferImageCopy::default()
                    .buffer_offset(offset + at as u64)
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
    regions
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
}

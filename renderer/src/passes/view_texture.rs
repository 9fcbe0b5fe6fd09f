//! The copy of an image-target view into a material's texture layer: a material samples
//! what a camera renders (a monitor's screen) through a layer added with
//! [`MeshLibrary::add_view_texture`](meshes::MeshLibrary::add_view_texture); after the
//! image-view passes drew the image, this pass blits it into every mip of that layer of
//! `material_textures` (each mip scaled from the whole image, linear filtering, converting
//! the image's format to the array's sRGB), so the frame's geometry samples this frame's
//! picture.

use std::sync::Arc;

use render_graph::{vk, Access, ExecuteContext, ImageRead, ImageWrite, Registry, TypedPass};

use crate::names::MATERIAL_TEXTURES;

/// Blits the image named `image` into layer `layer` of `material_textures`, every mip.
pub struct ViewTexturePass {
    image: Arc<str>,
    layer: u32,
    name: String,
}

impl ViewTexturePass {
    /// The copy of the image `image` into texture layer `layer`, named
    /// `view texture <layer> from <image>`.
    pub fn new(image: Arc<str>, layer: u32) -> ViewTexturePass {
        let name = format!("view texture {layer} from {image}");
        ViewTexturePass { image, layer, name }
    }
}

impl TypedPass for ViewTexturePass {
    /// The image read, the texture array written.
    type Handles = (ImageRead, ImageWrite);

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> (ImageRead, ImageWrite) {
        let source = registry.image(&self.image);
        let textures = registry.image(MATERIAL_TEXTURES);
        (registry.read_image(source, Access::TransferRead), registry.write_image(textures, Access::TransferWrite))
    }

    fn execute(&mut self, (source_handle, target_handle): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let source = context.image(*source_handle);
        let target = context.image(target_handle);
        let (source_layout, target_layout) =
            (context.image_layout(*source_handle), context.image_layout(target_handle));
        let corner = |extent: vk::Extent2D| vk::Offset3D { x: extent.width as i32, y: extent.height as i32, z: 1 };
        let color = vk::ImageAspectFlags::COLOR;
        for mip in 0..target.mip_levels {
            let region = vk::ImageBlit::default()
                .src_subresource(vk::ImageSubresourceLayers::default().aspect_mask(color).layer_count(1))
                .src_offsets([vk::Offset3D::default(), corner(source.extent)])
                .dst_subresource(
                    vk::ImageSubresourceLayers::default()
                        .aspect_mask(color)
                        .mip_level(mip)
                        .base_array_layer(self.layer)
                        .layer_count(1),
                )
                .dst_offsets([vk::Offset3D::default(), corner(target.mip_extent(mip))]);
            // SAFETY: recording outside a rendering scope; the graph put the image in
            // TRANSFER_SRC_OPTIMAL and the array in TRANSFER_DST_OPTIMAL (both declared);
            // the regions are the image's whole extent and one mip of one layer the library
            // holds (the array has a layer per library texture).
            unsafe {
                context.device().cmd_blit_image(
                    context.command_buffer(),
                    source.image,
                    source_layout,
                    target.image,
                    target_layout,
                    &[region],
                    vk::Filter::LINEAR,
                )
            };
        }
    }
}

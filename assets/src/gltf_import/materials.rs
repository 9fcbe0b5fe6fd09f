//! Materials as the importer reads them: base colour (factor and texture, with the texture's
//! sampler), alpha mode and cutoff, double-sidedness; and the base-colour images, decoded
//! from PNG or JPEG (in parallel on the job system) into RGBA8 sRGB with a full mip chain.
//!
//! A texture whose image cannot be decoded here (no `source`: an extension such as
//! `KHR_texture_basisu` or `EXT_texture_webp` supplies it; another format; a broken file) is
//! left out with one warning, and its material falls back to its factor.

use std::path::Path;

use super::buffers::{decode_base64, percent_decode};
use super::views::ViewBytes;

/// How a material's alpha is used (glTF `alphaMode`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AlphaMode {
    /// Alpha is ignored: the surface is solid.
    Opaque,
    /// A texel is drawn where its alpha is at least `cutoff`, else it is a hole.
    Mask {
        /// The alpha below which a texel is a hole (glTF `alphaCutoff`, 0.5 by default).
        cutoff: f32,
    },
    /// The surface is blended over what lies behind it by its alpha.
    Blend,
}

impl AlphaMode {
    /// Whether the surface can let what lies behind it show (a mask's holes, blending): such
    /// a surface is never an occluder.
    pub fn lets_light_through(self) -> bool {
        self != AlphaMode::Opaque
    }
}

/// How a texture is addressed outside [0, 1] on one axis (glTF sampler `wrapS`, `wrapT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// Repeats (the glTF default).
    Repeat,
    /// Repeats, mirrored every other time.
    MirroredRepeat,
    /// Clamps to the edge texel.
    ClampToEdge,
}

/// How a texture is sampled (glTF `sampler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureSampler {
    /// Addressing along u.
    pub wrap_u: Wrap,
    /// Addressing along v.
    pub wrap_v: Wrap,
    /// Linear magnification (else nearest).
    pub linear_mag: bool,
    /// Linear minification within a mip (else nearest).
    pub linear_min: bool,
    /// Whether the mips are used (a minification filter without mipmaps samples mip 0).
    pub mipmaps: bool,
}

impl Default for TextureSampler {
    /// glTF leaves filters to the application: trilinear, repeating.
    fn default() -> Self {
        TextureSampler { wrap_u: Wrap::Repeat, wrap_v: Wrap::Repeat, linear_mag: true, linear_min: true, mipmaps: true }
    }
}

/// A material's base-colour texture: an image of [`super::GltfScene::images`] and its sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseColorTexture {
    /// Index into [`super::GltfScene::images`].
    pub image: usize,
    /// How it is sampled.
    pub sampler: TextureSampler,
}

/// One material.
#[derive(Clone, Debug, PartialEq)]
pub struct GltfMaterial {
    /// Its name, if any.
    pub name: Option<String>,
    /// The base colour factor (linear RGBA), multiplied with the texture.
    pub base_color: [f32; 4],
    /// The base colour texture, when it has one the importer decoded.
    pub base_color_texture: Option<BaseColorTexture>,
    /// How its alpha is used.
    pub alpha: AlphaMode,
    /// Whether its back faces are drawn (else they are culled).
    pub double_sided: bool,
}

impl Default for GltfMaterial {
    /// glTF's default material: opaque white, single-sided.
    fn default() -> Self {
        GltfMaterial {
            name: None,
            base_color: [1.0; 4],
            base_color_texture: None,
            alpha: AlphaMode::Opaque,
            double_sided: false,
        }
    }
}

/// A decoded base-colour image: RGBA8 in sRGB, with every mip down to 1x1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureImage {
    /// The glTF image index.
    pub image: usize,
    /// Its name (or URI), for messages.
    pub name: String,
    /// Width of mip 0 in texels.
    pub width: u32,
    /// Height of mip 0 in texels.
    pub height: u32,
    /// Mip 0 first; mip `k` is `max(1, width >> k)` x `max(1, height >> k)` texels, RGBA8
    /// rows tightly packed, each texel the average of the 2x2 texels below it in linear
    /// light (alpha averaged as it is).
    pub mips: Vec<Vec<u8>>,
}

impl TextureImage {
    /// The bytes of every mip together.
    pub fn bytes(&self) -> usize {
        self.mips.iter().map(Vec::len).sum()
    }
}

/// The materials of `document` (glTF's default material appended last, for primitives that
/// name none) and the images their base-colour textures use, decoded.
pub(crate) fn read_materials(
    document: &gltf::Document,
    views: &[ViewBytes<'_>],
    base: Option<&Path>,
) -> (Vec<GltfMaterial>, Vec<TextureImage>) {
    // The images some base-colour texture uses, each decoded once.
    let mut wanted: Vec<usize> = document
        .materials()
        .filter_map(|material| material.pbr_metallic_roughness().base_color_texture())
        .filter_map(|info| texture_image(&info.texture()))
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let images: Vec<gltf::Image<'_>> = document.images().collect();
    let mut decoded: Vec<Option<Result<TextureImage, String>>> = vec![None; wanted.len()];
    let _job_label = runtime::profiling::job_label("decode texture job");
    runtime::jobs::parallel_for_chunks(&mut decoded, 1, |first, chunk| {
        for (offset, slot) in chunk.iter_mut().enumerate() {
            let image = &images[wanted[first + offset]];
            *slot = Some(decode_image(document, image, views, base));
        }
    });
    let mut kept = Vec::new();
    // Per glTF image: its place in `kept`.
    let mut place = vec![None; images.len()];
    for (&index, result) in wanted.iter().zip(decoded) {
        match result.expect("parallel_for_chunks visits every element") {
            Ok(image) => {
                place[index] = Some(kept.len());
                kept.push(image);
            }
            Err(reason) => log::warn!("images[{index}]: {reason}; its materials use their base colour factor"),
        }
    }
    let mut materials: Vec<GltfMaterial> =
        document.materials().map(|material| read_material(&material, &place)).collect();
    materials.push(GltfMaterial::default());
    (materials, kept)
}

fn read_material(material: &gltf::Material<'_>, place: &[Option<usize>]) -> GltfMaterial {
    let pbr = material.pbr_metallic_roughness();
    let base_color_texture = pbr.base_color_texture().and_then(|info| {
        let texture = info.texture();
        let Some(image) = texture_image(&texture) else {
            log::warn!(
                "materials[{}]: the base colour texture has no image the engine can decode (an extension supplies \
                 it); the base colour factor is used",
                material.index().unwrap_or(0)
            );
            return None;
        };
        // An image that failed to decode was warned about where it failed.
        let image = place.get(image).copied().flatten()?;
        Some(BaseColorTexture { image, sampler: sampler_of(&texture.sampler()) })
    });
    let alpha = match material.alpha_mode() {
        gltf::material::AlphaMode::Opaque => AlphaMode::Opaque,
        gltf::material::AlphaMode::Mask => AlphaMode::Mask { cutoff: material.alpha_cutoff().unwrap_or(0.5) },
        gltf::material::AlphaMode::Blend => AlphaMode::Blend,
    };
    GltfMaterial {
        name: material.name().map(str::to_owned),
        base_color: pbr
            .base_color_factor()
            .map(|channel| if channel.is_finite() { channel.clamp(0.0, 1.0) } else { 1.0 }),
        base_color_texture,
        alpha,
        double_sided: material.double_sided(),
    }
}

/// The glTF image a texture samples, when its `source` names one.
fn texture_image(texture: &gltf::Texture<'_>) -> Option<usize> {
    texture.source().map(|image| image.index())
}

fn sampler_of(sampler: &gltf::texture::Sampler<'_>) -> TextureSampler {
    use gltf::texture::{MagFilter, MinFilter, WrappingMode};
    let wrap = |mode: WrappingMode| match mode {
        WrappingMode::Repeat => Wrap::Repeat,
        WrappingMode::MirroredRepeat => Wrap::MirroredRepeat,
        WrappingMode::ClampToEdge => Wrap::ClampToEdge,
    };
    let (linear_min, mipmaps) = match sampler.min_filter() {
        None => (true, true),
        Some(MinFilter::Nearest) => (false, false),
        Some(MinFilter::Linear) => (true, false),
        Some(MinFilter::NearestMipmapNearest | MinFilter::NearestMipmapLinear) => (false, true),
        Some(MinFilter::LinearMipmapNearest | MinFilter::LinearMipmapLinear) => (true, true),
    };
    TextureSampler {
        wrap_u: wrap(sampler.wrap_s()),
        wrap_v: wrap(sampler.wrap_t()),
        linear_mag: sampler.mag_filter() != Some(MagFilter::Nearest),
        linear_min,
        mipmaps,
    }
}

/// The image's encoded bytes (a buffer view, a data URI or a file beside the scene), decoded
/// to RGBA8 with its mips.
fn decode_image(
    document: &gltf::Document,
    image: &gltf::Image<'_>,
    views: &[ViewBytes<'_>],
    base: Option<&Path>,
) -> Result<TextureImage, String> {
    runtime::profile_zone!("decode texture");
    // gltf's `Image::source` unwraps what it expects: check it is there first.
    let json = document.as_json().images.get(image.index()).ok_or("it is missing")?;
    match (&json.buffer_view, &json.uri, &json.mime_type) {
        (Some(_), _, None) => return Err(String::from("a buffer view image without a mimeType")),
        (None, None, _) => return Err(String::from("neither a uri nor a bufferView")),
        _ => {}
    }
    let (name, encoded): (String, std::borrow::Cow<'_, [u8]>) = match image.source() {
        gltf::image::Source::View { view, .. } => {
            let bytes = views.get(view.index()).ok_or("its buffer view is missing")?.bytes().map_err(str::to_owned)?;
            (format!("images[{}]", image.index()), bytes.into())
        }
        gltf::image::Source::Uri { uri, .. } if uri.starts_with("data:") => {
            let (_, payload) = uri.split_once(";base64,").ok_or("a data URI that is not base64")?;
            (format!("images[{}]", image.index()), decode_base64(payload).ok_or("a data URI with bad base64")?.into())
        }
        gltf::image::Source::Uri { uri, .. } => {
            let base = base.ok_or("an external file, but the scene was not loaded from a file")?;
            if uri.contains("://") {
                return Err(format!("{uri:?} is not a relative file path"));
            }
            let path = base.join(percent_decode(uri));
            let bytes = std::fs::read(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
            (uri.to_owned(), bytes.into())
        }
    };
    let decoded = image::load_from_memory(&encoded).map_err(|error| format!("{name}: cannot decode: {error}"))?;
    let rgba = decoded.into_rgba8();
    let (width, height) = rgba.dimensions();
    Ok(TextureImage { image: image.index(), name, width, height, mips: mip_chain(rgba.into_raw(), width, height) })
}

/// `texels` (RGBA8 sRGB, `width` x `height`) and every mip below it down to 1x1, each texel
/// the average of the (up to) 2x2 texels below it in linear light.
pub fn mip_chain(texels: Vec<u8>, width: u32, height: u32) -> Vec<Vec<u8>> {
    let to_linear: Vec<f32> = (0..=255).map(|value| srgb_to_linear(value as f32 / 255.0)).collect();
    let mut mips = vec![texels];
    let (mut width, mut height) = (width as usize, height as usize);
    while width > 1 || height > 1 {
        let (next_width, next_height) = ((width / 2).max(1), (height / 2).max(1));
        let above = mips.last().expect("mip 0 is there");
        let mut next = vec![0; next_width * next_height * 4];
        for y in 0..next_height {
            for x in 0..next_width {
                let mut sum = [0.0_f32; 4];
                let mut count = 0.0;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (sx, sy) = ((x * 2 + dx).min(width - 1), (y * 2 + dy).min(height - 1));
                    let texel = &above[(sy * width + sx) * 4..][..4];
                    for channel in 0..3 {
                        sum[channel] += to_linear[texel[channel] as usize];
                    }
                    sum[3] += f32::from(texel[3]) / 255.0;
                    count += 1.0;
                }
                let out = &mut next[(y * next_width + x) * 4..][..4];
                for channel in 0..3 {
                    out[channel] = (linear_to_srgb(sum[channel] / count) * 255.0).round() as u8;
                }
                out[3] = (sum[3] / count * 255.0).round() as u8;
            }
        }
        mips.push(next);
        (width, height) = (next_width, next_height);
    }
    mips
}

fn srgb_to_linear(value: f32) -> f32 {
    if value <= 0.04045 {
        value / 12.92
    } else {
        ((value + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(value: f32) -> f32 {
    let value = value.clamp(0.0, 1.0);
    if value <= 0.003_130_8 {
        value * 12.92
    } else {
        1.055 * value.powf(1.0 / 2.4) - 0.055
    }
}

/// Side of the library's texture layers: the largest image's, rounded up to a power of two,
/// at most this.
const MAX_TEXTURE_SIDE: u32 = 2048;

/// Adds `images` to `library` as texture layers (every layer square and of one power-of-two
/// side, so images of other shapes are resized, with their mips made again) and `materials`
/// as library materials; returns the id each material got, in order (consecutive in a library
/// only one thread fills).
pub(crate) fn add_materials(
    library: &mut impl meshes::AssetSink,
    materials: &[GltfMaterial],
    images: &[TextureImage],
) -> meshes::Result<Vec<u32>> {
    runtime::profile_zone!("glTF textures to the library");
    let side = match library.texture_size() {
        0 => images
            .iter()
            .map(|image| image.width.max(image.height))
            .max()
            .unwrap_or(1)
            .next_power_of_two()
            .min(MAX_TEXTURE_SIDE),
        side => side,
    };
    let mut layers = Vec::with_capacity(images.len());
    for image in images {
        let mips = if image.width == side && image.height == side {
            image.mips.clone()
        } else {
            let source = image::RgbaImage::from_raw(image.width, image.height, image.mips[0].clone())
                .expect("a decoded image's mip 0 holds width x height texels");
            let resized = image::imageops::resize(&source, side, side, image::imageops::FilterType::Triangle);
            mip_chain(resized.into_raw(), side, side)
        };
        layers.push(library.add_texture(side, mips)?);
    }
    let mut ids = Vec::with_capacity(materials.len());
    for material in materials {
        let wrap = |wrap: Wrap| match wrap {
            Wrap::Repeat => meshes::TextureWrap::Repeat,
            Wrap::MirroredRepeat => meshes::TextureWrap::MirroredRepeat,
            Wrap::ClampToEdge => meshes::TextureWrap::ClampToEdge,
        };
        let texture = material.base_color_texture;
        ids.push(library.add_material(meshes::Material {
            texture: texture.map(|texture| layers[texture.image]),
            alpha_cutoff: match material.alpha {
                AlphaMode::Opaque => None,
                AlphaMode::Mask { cutoff } => Some(cutoff),
                AlphaMode::Blend => None,
            },
            wrap: texture.map_or([meshes::TextureWrap::Repeat; 2], |texture| {
                [wrap(texture.sampler.wrap_u), wrap(texture.sampler.wrap_v)]
            }),
            blend: material.alpha == AlphaMode::Blend,
            double_sided: material.double_sided,
            nearest: texture.is_some_and(|texture| !texture.sampler.linear_mag),
        })?);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mips_halve_down_to_one_texel_and_average_in_linear_light() {
        // Black and white columns: the mean in linear light is 0.5, sRGB 188.
        let texels: Vec<u8> =
            (0..4 * 2).flat_map(|index| if index % 2 == 0 { [0, 0, 0, 255] } else { [255, 255, 255, 255] }).collect();
        let mips = mip_chain(texels, 4, 2);
        assert_eq!(mips.iter().map(Vec::len).collect::<Vec<_>>(), [32, 8, 4]);
        assert_eq!(&mips[1][..4], &[188, 188, 188, 255]);
        assert_eq!(&mips[2][..], &[188, 188, 188, 255]);
        // An odd size keeps its last texel: 3x1 halves to 1x1 from the first two.
        let odd = mip_chain(vec![10, 10, 10, 0, 10, 10, 10, 255, 200, 200, 200, 255], 3, 1);
        assert_eq!(odd.len(), 2);
        assert_eq!(odd[1][3], 128, "alpha is averaged as it is");
    }
}

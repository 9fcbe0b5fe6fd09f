//! Materials as a game or an importer describes them (what an object's texture is, how it is
//! addressed, whether its alpha cuts holes or blends) and their base-colour textures: square
//! RGBA8 sRGB layers of one size, each with its full mip chain. Both live in the
//! [`MeshLibrary`](crate::MeshLibrary): the renderer uploads what it holds at install with the
//! meshes, and a game adds, replaces and removes materials and textures while frames run
//! through the renderer (its `RenderMeshes`), which keeps its library's copy and streams the
//! texels to the GPU under the per-frame transfer budget, smallest mips first.
//!
//! An object's colour (a game's `BaseColor` or a glTF material's factor) multiplies the
//! texture. A material index past the table, or a material without a texture, draws the
//! colour alone: the engine's procedural meshes keep their colours.

use std::sync::Arc;

use crate::{LibraryError, Result};

/// The most texture layers a library holds: as many as one image array of the render graph
/// holds (`render_graph::MAX_ARRAY_LAYERS`, which the renderer checks this against).
pub const MAX_TEXTURE_LAYERS: u32 = 256;

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

/// A material as a game or an importer describes it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Material {
    /// Its base-colour texture: a layer added with
    /// [`MeshLibrary::add_texture`](crate::MeshLibrary::add_texture).
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

/// The base-colour textures: square layers of one size, RGBA8 sRGB, each with its full mip
/// chain (mip `k` is `size >> k` texels a side).
#[derive(Clone, Debug, Default)]
pub struct TextureLayers {
    size: u32,
    /// Shared, so that cloning a library does not copy its texels.
    layers: Vec<Arc<Vec<Vec<u8>>>>,
}

impl TextureLayers {
    /// Adds a layer and returns its index: a square power-of-two RGBA8 sRGB image of side
    /// `size` with its full mip chain (mip `k` has side `size >> k`, down to 1x1), of the
    /// first layer's size, at most [`MAX_TEXTURE_LAYERS`] of them. Returns an error naming
    /// what is wrong otherwise.
    pub fn add(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32> {
        if self.layers.len() as u32 >= MAX_TEXTURE_LAYERS {
            return Err(LibraryError::InvalidTexture(
                "more texture layers than an image array holds (MAX_TEXTURE_LAYERS)",
            ));
        }
        self.check(size, &mips)?;
        self.size = size;
        self.layers.push(Arc::new(mips));
        Ok(self.layers.len() as u32 - 1)
    }

    /// Replaces layer `index`'s texels by `mips`, checked as [`TextureLayers::add`] checks
    /// them (the same size as every layer); nothing changes on an error.
    pub fn replace(&mut self, index: u32, size: u32, mips: Vec<Vec<u8>>) -> Result<()> {
        self.check(size, &mips)?;
        let layer = self
            .layers
            .get_mut(index as usize)
            .ok_or(LibraryError::InvalidTexture("no texture layer has this index"))?;
        *layer = Arc::new(mips);
        Ok(())
    }

    /// Layer `index`'s mips, from the largest.
    pub fn layer(&self, index: u32) -> Option<&[Vec<u8>]> {
        self.layers.get(index as usize).map(|layer| layer.as_slice())
    }

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

    /// The layers in order, each its mips from the largest.
    pub fn iter(&self) -> impl Iterator<Item = &[Vec<u8>]> + '_ {
        self.layers.iter().map(|layer| layer.as_slice())
    }

    /// Bytes of every layer and mip.
    pub fn bytes(&self) -> usize {
        self.layers.iter().flat_map(|layer| layer.iter()).map(Vec::len).sum()
    }

    /// Checks a layer for [`TextureLayers::add`].
    fn check(&self, size: u32, mips: &[Vec<u8>]) -> Result<()> {
        let invalid = |reason| Err(LibraryError::InvalidTexture(reason));
        if size == 0 || !size.is_power_of_two() {
            return invalid("a texture layer is square with a power-of-two side");
        }
        if self.size != 0 && self.size != size {
            return invalid("every texture layer has the size of the first (resize it on import)");
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textures_are_square_powers_of_two_of_one_size_with_full_chains() {
        let layers = TextureLayers::default();
        let chain = |size: u32| {
            (0..=size.trailing_zeros()).map(|level| vec![0; ((size >> level).pow(2) * 4) as usize]).collect::<Vec<_>>()
        };
        assert!(layers.check(4, &chain(4)).is_ok());
        assert!(layers.check(3, &chain(4)).is_err(), "not a power of two");
        assert!(layers.check(4, &chain(4)[..2]).is_err(), "a short chain");
        let one = TextureLayers { size: 8, layers: vec![Arc::new(chain(8))] };
        assert!(one.check(4, &chain(4)).is_err(), "another size");
    }
}

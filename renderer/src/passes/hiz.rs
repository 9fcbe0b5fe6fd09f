//! [`HiZBuildPass`]: the depth pyramid `hiz_depth` from `depth_prepass` (and, after the last
//! depth prepass, `hiz_depth_final` when a pass reads it).
//!
//! Reversed-Z: a pyramid texel keeps the **farthest** depth of the texels it covers, which is
//! the **smallest** stored value, so an object is occluded only when its nearest depth is
//! smaller than that over its whole footprint.
//!
//! Mip 0 has the size of `depth_prepass` and is a copy of it; mip `k` has Vulkan's size
//! (half of mip `k - 1`, rounded down, at least 1) and each texel covers the mip `k - 1`
//! texels `2x, 2x + 1`, plus `2x + 2` for the last texel of an odd-sized source, on each
//! axis. So no source texel is ever skipped at an odd edge (the bug Bevy's pull requests
//! 17211 and 22603 record for non-power-of-two pyramids), at the price of the last row and
//! column covering three texels. [`reduce_depth_pyramid`] is the CPU twin the tests compare
//! with, exactly.
//!
//! The pass declares its mip-to-mip dependencies to the graph, which places the barriers: it
//! writes mip 0 in its first step and, for each mip `k` of the chain (known from the output
//! extent when the graph compiles), one more step that reads mip `k - 1` and writes mip `k`
//! ([`Registry::next_step`]); `execute` begins each step ([`ExecuteContext::next_step`]) and
//! binds one view per mip ([`Binding::image_mip`]): the read handle of mip `k - 1`, the write
//! handle of mip `k`.

use std::borrow::Cow;
use std::sync::Arc;

use super::image_view::image_view_depth_name;

use crate::names::DEPTH_PREPASS;
use render_graph::{
    full_mip_chain, vk, Binding, BindingKind, ComputePipeline, ExecuteContext, GpuDevice, ImageDesc, ImageRead,
    ImageSize, ImageWrite, Registry, ShaderStage, TypedPass,
};

/// Name of the depth pyramid (**contract**): R32_SFLOAT, the size of `depth_prepass`, full
/// mip chain.
pub const HIZ_DEPTH: &str = "hiz_depth";

/// Name of the pyramid of the frame's final depth (**contract**): as [`HIZ_DEPTH`], built
/// after the frame's last depth prepass (the late phase's, on GPU-culled frames), where
/// [`HIZ_DEPTH`] holds the early phase's. Built only in frames where a pass reads it
/// ([`HiZBuildPass::final_depth`] is optional), so it costs nothing otherwise.
pub const HIZ_DEPTH_FINAL: &str = "hiz_depth_final";

/// The name of an image-target view's own pyramid (its depth's, `<image> depth`):
/// `<image> hiz`.
pub fn image_view_hiz_name(image: &str) -> String {
    format!("{image} hiz")
}

/// Format of [`HIZ_DEPTH`].
pub const HIZ_FORMAT: vk::Format = vk::Format::R32_SFLOAT;

/// Workgroup edge of the pyramid shaders (`local_size_x` and `local_size_y` of
/// `hiz_seed.comp` and `hiz_reduce.comp`).
pub const HIZ_GROUP: u32 = 8;

/// Builds [`HIZ_DEPTH`] from `depth_prepass` every frame (compute); or, made with
/// [`HiZBuildPass::shadow_atlas`], the pyramid of the shadow atlas.
pub struct HiZBuildPass {
    name: Cow<'static, str>,
    source: Cow<'static, str>,
    target: Cow<'static, str>,
    size: ImageSize,
    seed: ComputePipeline,
    reduce: ComputePipeline,
    /// Built only when a pass reads the pyramid ([`Registry::optional`]).
    optional: bool,
}

/// What the Hi-Z build declared: the depth it samples, mip 0 of the pyramid it writes, and
/// per later mip `k` (step `k`) the read of mip `k - 1` and the write of mip `k`.
pub struct HiZHandles {
    depth: ImageRead,
    seed: ImageWrite,
    steps: Vec<(ImageRead, ImageWrite)>,
}

impl HiZBuildPass {
    /// Name of the pass in the graph.
    pub const NAME: &'static str = "hi-z build";
    /// Name of the shadow atlas's pyramid pass.
    pub const SHADOW_NAME: &'static str = "shadow hi-z build";
    /// An image view's pyramid pass is named `<image> hi-z build`.
    pub const IMAGE_VIEW_SUFFIX: &'static str = "hi-z build";
    /// Name of the final depth's pyramid pass.
    pub const FINAL_NAME: &'static str = "hi-z build final";

    /// Creates the pass and its two pipelines on `device`.
    pub fn new(device: &Arc<GpuDevice>) -> render_graph::Result<HiZBuildPass> {
        HiZBuildPass::build(device, Self::NAME, (DEPTH_PREPASS, HIZ_DEPTH), ImageSize::OUTPUT)
    }

    /// The pyramid of the frame's final `depth_prepass` into [`HIZ_DEPTH_FINAL`], for the
    /// passes after the last depth prepass that cull against the whole frame's depth; it runs
    /// only in frames where some pass reads it.
    pub fn final_depth(device: &Arc<GpuDevice>) -> render_graph::Result<HiZBuildPass> {
        let mut pass =
            HiZBuildPass::build(device, Self::FINAL_NAME, (DEPTH_PREPASS, HIZ_DEPTH_FINAL), ImageSize::OUTPUT)?;
        pass.optional = true;
        Ok(pass)
    }

    /// The pyramid of the top-left square of `shadow_atlas`, `side` texels (at most the
    /// atlas's), into [`SHADOW_HIZ`](super::SHADOW_HIZ), for the late cull of the sun's
    /// cascades (whose tiles the atlas places there first).
    pub fn shadow_atlas(device: &Arc<GpuDevice>, side: u32) -> render_graph::Result<HiZBuildPass> {
        let side = side.clamp(1, 16_384);
        let size = ImageSize::Absolute { width: side, height: side };
        HiZBuildPass::build(device, Self::SHADOW_NAME, (crate::names::SHADOW_ATLAS, super::SHADOW_HIZ), size)
    }

    /// The pyramid of an image-target view's own depth (`<image> depth`, `width` x `height`)
    /// into `<image> hiz`, for that view's late cull; named `<image> hi-z build`.
    pub fn image_view(device: &Arc<GpuDevice>, image: &str, (width, height): (u32, u32)) -> render_graph::Result<Self> {
        let size = ImageSize::Absolute { width: width.max(1), height: height.max(1) };
        let names = (image_view_depth_name(image), image_view_hiz_name(image));
        HiZBuildPass::build(device, format!("{image} {}", Self::IMAGE_VIEW_SUFFIX), names, size)
    }

    fn build(
        device: &Arc<GpuDevice>,
        name: impl Into<Cow<'static, str>>,
        (source, target): (impl Into<Cow<'static, str>>, impl Into<Cow<'static, str>>),
        size: ImageSize,
    ) -> render_graph::Result<HiZBuildPass> {
        let (name, source, target) = (name.into(), source.into(), target.into());
        use BindingKind::{SampledImage, StorageImage};
        let seed = ComputePipeline::new(
            device,
            "hi-z seed",
            shaders::HIZ_SEED_COMP.words(),
            &[SampledImage, StorageImage],
            0,
        )?;
        let reduce = ComputePipeline::new(
            device,
            "hi-z reduce",
            shaders::HIZ_REDUCE_COMP.words(),
            &[StorageImage, StorageImage],
            0,
        )?;
        Ok(HiZBuildPass { name, source, target, size, seed, reduce, optional: false })
    }
}

impl TypedPass for HiZBuildPass {
    type Handles = HiZHandles;

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> HiZHandles {
        if self.optional {
            registry.optional();
        }
        let depth = registry.image(&self.source);
        let depth = registry.sample(depth, ShaderStage::Compute);
        let desc = ImageDesc::new(HIZ_FORMAT, self.size).with_mips(ImageDesc::FULL_MIP_CHAIN);
        let pyramid = registry.create_image(&self.target, desc);
        let seed = registry.write_storage_image_mip(pyramid, 0, ShaderStage::Compute);
        let extent = self.size.resolve(registry.output_extent()).unwrap_or(registry.output_extent());
        // One step per mip: the graph makes mip `k - 1` visible to the step that reads it.
        let steps = (1..full_mip_chain(extent))
            .map(|mip| {
                registry.next_step();
                let source = registry.read_storage_image_mip(pyramid, mip - 1, ShaderStage::Compute);
                (source, registry.write_storage_image_mip(pyramid, mip, ShaderStage::Compute))
            })
            .collect();
        HiZHandles { depth, seed, steps }
    }

    fn execute(&mut self, handles: &HiZHandles, context: &mut ExecuteContext<'_>) {
        let image = context.image(&handles.seed);
        let groups = |extent: vk::Extent2D| (extent.width.div_ceil(HIZ_GROUP), extent.height.div_ceil(HIZ_GROUP));
        let (x, y) = groups(image.extent);
        context.bind_compute(&self.seed, &[Binding::image(handles.depth), Binding::image_mip(&handles.seed, 0)]);
        context.dispatch(x, y, 1);
        for mip in 1..image.mip_levels {
            context.next_step();
            // A chain longer than the declared steps has failed the frame in `next_step`.
            let Some((source, target)) = handles.steps.get(mip as usize - 1) else { return };
            let bindings = [Binding::image_mip(*source, mip - 1), Binding::image_mip(target, mip)];
            context.bind_compute(&self.reduce, &bindings);
            let (x, y) = groups(image.mip_extent(mip));
            context.dispatch(x, y, 1);
        }
    }
}

/// The CPU twin of [`HiZBuildPass`]: the pyramid of a `width` x `height` depth image (rows
/// top first): one vector per mip down to 1x1, mip 0 (a copy) first, rows top first.
///
/// # Panics
/// When `depth.len() != width * height` or a side is zero.
pub fn reduce_depth_pyramid(depth: &[f32], width: usize, height: usize) -> Vec<Vec<f32>> {
    assert!(width > 0 && height > 0, "a depth image of {width}x{height} has no texels");
    assert_eq!(depth.len(), width * height, "depth holds {} texels, not {width}x{height}", depth.len());
    let mut mips = vec![depth.to_vec()];
    let (mut source_width, mut source_height) = (width, height);
    while source_width > 1 || source_height > 1 {
        let (target_width, target_height) = ((source_width / 2).max(1), (source_height / 2).max(1));
        let source = mips.last().expect("mip 0 is pushed first");
        let mut target = vec![0.0; target_width * target_height];
        // One past the last source texel a target texel covers on one axis.
        let end = |texel: usize, target_size: usize, source_size: usize| {
            if texel == target_size - 1 {
                source_size
            } else {
                (texel * 2 + 2).min(source_size)
            }
        };
        for y in 0..target_height {
            for x in 0..target_width {
                let mut farthest = f32::INFINITY;
                for source_y in y * 2..end(y, target_height, source_height) {
                    for source_x in x * 2..end(x, target_width, source_width) {
                        farthest = farthest.min(source[source_y * source_width + source_x]);
                    }
                }
                target[y * target_width + x] = farthest;
            }
        }
        mips.push(target);
        (source_width, source_height) = (target_width, target_height);
    }
    mips
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_texel_reaches_the_top_at_odd_sizes() {
        for (width, height) in [(7, 3), (1, 1), (5, 1), (1000, 563), (2, 9)] {
            for hole in [0, width * height / 2, width * height - 1] {
                let mut depth = vec![0.5; width * height];
                depth[hole] = 0.25;
                let mips = reduce_depth_pyramid(&depth, width, height);
                let top = mips.last().expect("the chain has a top");
                assert_eq!(top, &[0.25], "{width}x{height}: texel {hole} must reach the 1x1 mip");
                let expected = 32 - (width.max(height) as u32).leading_zeros();
                assert_eq!(mips.len() as u32, expected, "{width}x{height}: a full Vulkan chain");
            }
        }
    }

    #[test]
    fn the_chain_follows_vulkan_mip_sizes() {
        let mips = reduce_depth_pyramid(&[1.0; 21], 7, 3);
        let sizes: Vec<usize> = mips.iter().map(Vec::len).collect();
        assert_eq!(sizes, [21, 3, 1], "7x3, 3x1, 1x1");
    }
}

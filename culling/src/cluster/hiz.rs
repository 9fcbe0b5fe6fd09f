//! The occlusion test of a world box against a Hi-Z pyramid (reversed-Z: each texel holds
//! the farthest, smallest, depth of what it covers), step for step the GPU's `occluded` in
//! `hiz_occlusion.h`.

use glam::{Mat4, Vec2, Vec3, Vec4};

/// A Hi-Z pyramid on the host: mip 0 is `width` x `height`, each next mip half the size
/// (rounded down, at least 1), rows top first; `renderer::reduce_depth_pyramid` builds
/// one from a depth image.
#[derive(Clone, Copy, Debug)]
pub struct HiZLevels<'a> {
    /// Width of mip 0 in texels.
    pub width: u32,
    /// Height of mip 0 in texels.
    pub height: u32,
    /// The mips, finest first.
    pub mips: &'a [Vec<f32>],
}

impl HiZLevels<'_> {
    /// Texel `(x, y)` of mip `level`; a texel outside the pyramid reads 0 (the far plane),
    /// which hides nothing.
    fn texel(&self, level: usize, x: i32, y: i32) -> f32 {
        let width = (self.width >> level).max(1) as i32;
        self.mips.get(level).and_then(|mip| mip.get((y * width + x) as usize)).copied().unwrap_or(0.0)
    }
}

/// What the pyramid says of a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OcclusionAnswer {
    /// Some texel under the box is farther than its nearest point: it may be seen.
    Visible,
    /// Every texel under the box is nearer than its nearest point.
    Hidden,
    /// The test cannot judge it (a corner at or behind the near or camera plane, a
    /// non-finite number, a footprint off the image): kept.
    Undecided,
}

/// Tests the world box `min..max` against `hiz` for `view_projection`.
///
/// Conservative at every step: the footprint is the pixel rectangle of the corners' screen
/// bounds widened by `footprint_margin` texels and clipped to the image; the nearest depth
/// is the largest corner depth raised by `depth_margin` (relative) and by the box's depth
/// range over its footprint's narrower side in texels, whole when that is under one (the
/// rasterizer may extrapolate a covered pixel's depth a subpixel past its triangle, so an
/// object drawn into the pyramid must not read its own depth as an occluder's); the level is the finest
/// where the footprint spans at most 2x2 texels, and each texel holds the farthest depth of
/// what it covers. Hidden only when the raised nearest depth is smaller than all four texels.
pub fn occlusion_test(
    view_projection: &Mat4,
    min: Vec3,
    max: Vec3,
    hiz: &HiZLevels<'_>,
    depth_margin: f32,
    footprint_margin: f32,
) -> OcclusionAnswer {
    let mut nearest = 0.0f32;
    let mut deepest = 3.0e38f32;
    let mut low = Vec2::splat(3.0e38);
    let mut high = Vec2::splat(-3.0e38);
    for corner in 0..8 {
        let point = Vec3::new(
            if corner & 1 != 0 { max.x } else { min.x },
            if corner & 2 != 0 { max.y } else { min.y },
            if corner & 4 != 0 { max.z } else { min.z },
        );
        let clip = *view_projection * Vec4::from((point, 1.0));
        // Written so that NaN is undecided: every comparison with NaN is false.
        if !(clip.w > 1.0e-5) || !(clip.z < clip.w) {
            return OcclusionAnswer::Undecided;
        }
        let ndc = clip.truncate() / clip.w;
        nearest = nearest.max(ndc.z);
        deepest = deepest.min(ndc.z);
        low = low.min(ndc.truncate());
        high = high.max(ndc.truncate());
    }
    if !(low.is_finite() && high.is_finite() && nearest.is_finite()) {
        return OcclusionAnswer::Undecided;
    }
    // Row 0 is the top of the view (+y up in clip space).
    let size = Vec2::new(hiz.width as f32, hiz.height as f32);
    let first = Vec2::new(low.x * 0.5 + 0.5, 0.5 - high.y * 0.5) * size - footprint_margin;
    let last = Vec2::new(high.x * 0.5 + 0.5, 0.5 - low.y * 0.5) * size + footprint_margin;
    if last.x < 0.0 || last.y < 0.0 || first.x >= size.x || first.y >= size.y {
        return OcclusionAnswer::Undecided;
    }
    let limit = [hiz.width as i32 - 1, hiz.height as i32 - 1];
    let first_texel = [(first.x.floor() as i32).clamp(0, limit[0]), (first.y.floor() as i32).clamp(0, limit[1])];
    let last_texel = [(last.x.floor() as i32).clamp(0, limit[0]), (last.y.floor() as i32).clamp(0, limit[1])];
    let mips = hiz.mips.len();
    let mut level = 0usize;
    while level + 1 < mips
        && ((last_texel[0] >> level) - (first_texel[0] >> level) > 1
            || (last_texel[1] >> level) - (first_texel[1] >> level) > 1)
    {
        level += 1;
    }
    // A pyramid that stops short of its 1x1 level may leave a footprint wider than 2x2 texels
    // at its last mip: four texels would not cover it (the GLSL twin's rule, which a
    // split-screen view's rectangle needs).
    if (last_texel[0] >> level) - (first_texel[0] >> level) > 1
        || (last_texel[1] >> level) - (first_texel[1] >> level) > 1
    {
        return OcclusionAnswer::Undecided;
    }
    // Mip sizes round down; the last texel of a level covers the source's remainder.
    let level_limit = [((hiz.width >> level).max(1) - 1) as i32, ((hiz.height >> level).max(1) - 1) as i32];
    let a = [(first_texel[0] >> level).min(level_limit[0]), (first_texel[1] >> level).min(level_limit[1])];
    let b = [(last_texel[0] >> level).min(level_limit[0]), (last_texel[1] >> level).min(level_limit[1])];
    let farthest = hiz
        .texel(level, a[0], a[1])
        .min(hiz.texel(level, b[0], a[1]))
        .min(hiz.texel(level, a[0], b[1]).min(hiz.texel(level, b[0], b[1])));
    // The rasterizer may give a covered pixel centre a depth past its triangles' own (see
    // `hiz_occlusion.h`): the box's depth range over its footprint's narrower side in texels
    // (whole when under one) is added, with the same operations as the shader.
    let raised = nearest + nearest * depth_margin;
    let range = nearest - deepest;
    let span = (last.x - first.x).min(last.y - first.y);
    let hidden = if span > 1.0 { (raised - farthest) * span + range < 0.0 } else { raised + range < farthest };
    if hidden {
        OcclusionAnswer::Hidden
    } else {
        OcclusionAnswer::Visible
    }
}

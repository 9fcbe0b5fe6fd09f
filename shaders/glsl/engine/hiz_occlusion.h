// The occlusion test of a world box against a depth pyramid, shared by the object late cull
// (`gpu_cull_late.comp`), the cluster late cull (`cluster_cull_late.comp`), both against
// `hiz_depth`, and the shadow casters' late cull (`shadow_cull_late.comp`), against a tile of
// the shadow atlas's pyramid. CPU twin: culling/src/cluster/hiz.rs (`occlusion_test`), step
// for step.
//
// User API. A pass of yours may cull its own things (grass blades, particles, decals) the way
// the engine culls objects:
//
//     #include "config.h"          // HIZ_DEPTH_MARGIN, HIZ_FOOTPRINT_MARGIN
//     #include "view.h"
//     ENGINE_VIEW_BLOCK(0, 0);
//     layout(set = 0, binding = 1) uniform sampler2D hiz;   // declare `hiz` before the include
//     #include "hiz_occlusion.h"
//     ...
//     int verdict = hiz_test(engine_view.view_projection, box_min, box_max,
//         vec2(textureSize(hiz, 0)), uint(textureQueryLevels(hiz)), HIZ_DEPTH_MARGIN, HIZ_FOOTPRINT_MARGIN);
//     bool drawn = verdict != HIZ_HIDDEN;   // HIZ_UNDECIDED is kept, like HIZ_VISIBLE
//
// On the host: read the pyramid with `registry.sample(registry.image(renderer::HIZ_DEPTH),
// ShaderStage::Compute)` (a `SampledImage` binding; the engine's nearest sampler, no
// filtering between depths) at `points::BETWEEN_CULL_PHASES` or later for the early phase's
// pyramid (what was drawn last frame and is still visible), or `renderer::HIZ_DEPTH_FINAL`
// after the frame's last depth prepass (`points::AFTER_DEPTH_PREPASS` or later: the whole
// frame's depth). Both exist with GPU culling only: declare them with `optional_image` and
// ask `context.exists(..)` to serve the CPU frame too. The box is in world space, the matrix
// the one the pyramid's depth was drawn with; the test never hides a box it cannot judge (a
// corner behind the eye, a non-finite number): false-visible is allowed, false-hidden never.
#ifndef HIZ_OCCLUSION_H
#define HIZ_OCCLUSION_H

#define HIZ_VISIBLE 0
#define HIZ_HIDDEN 1
#define HIZ_UNDECIDED 2

// What the pyramid says of the box. Conservative at every step: a corner at the camera plane
// or at/in front of the near plane, or any non-finite number, is undecided (kept); the
// footprint is the pixel rectangle of the corners' screen bounds (widened by
// `footprint_margin` texels, clipped to the image); the nearest depth is the largest corner
// depth (raised by `depth_margin`, relative, and by the box's depth range over its footprint
// for the rasterizer's depth extrapolation); the pyramid level is the finest where the
// footprint spans at most 2x2 texels, and each pyramid texel holds the farthest depth of
// every texel it covers. Hidden only when the nearest depth is smaller than all four texels.
//
// The view covers the pyramid's texels `origin .. origin + size` (the whole image, a tile of
// an atlas aligned to its power-of-two side, with `mips` at most its own chain, or a
// split-screen view's rectangle with `mips` the levels whose texels stay inside it): the
// footprint is clipped to that rectangle, as the view's rasterization is, so no texel of
// another view is read.
int hiz_test_rect(mat4 view_projection, vec3 bounds_min, vec3 bounds_max, vec2 origin, vec2 size, uint mips,
    float depth_margin, float footprint_margin) {
    float nearest = 0.0;
    float deepest = 3.0e38;
    vec2 low = vec2(3.0e38);
    vec2 high = vec2(-3.0e38);
    for (uint corner = 0u; corner < 8u; ++corner) {
        vec3 point = vec3((corner & 1u) != 0u ? bounds_max.x : bounds_min.x,
            (corner & 2u) != 0u ? bounds_max.y : bounds_min.y,
            (corner & 4u) != 0u ? bounds_max.z : bounds_min.z);
        precise vec4 clip = view_projection * vec4(point, 1.0);
        // Written so that NaN keeps the box: every comparison with NaN is false.
        if (!(clip.w > 1.0e-5) || !(clip.z < clip.w)) {
            return HIZ_UNDECIDED;
        }
        vec3 ndc = clip.xyz / clip.w;
        nearest = max(nearest, ndc.z);
        deepest = min(deepest, ndc.z);
        low = min(low, ndc.xy);
        high = max(high, ndc.xy);
    }
    if (!(abs(low.x) <= 3.40282347e38 && abs(low.y) <= 3.40282347e38 && abs(high.x) <= 3.40282347e38
            && abs(high.y) <= 3.40282347e38)) {
        return HIZ_UNDECIDED;
    }
    // Row 0 is the top of the view (+y up in clip space, the scene shaders flip y).
    vec2 first = origin + (vec2(low.x * 0.5 + 0.5, 0.5 - high.y * 0.5) * size - footprint_margin);
    vec2 last = origin + (vec2(high.x * 0.5 + 0.5, 0.5 - low.y * 0.5) * size + footprint_margin);
    if (any(lessThan(last, origin)) || any(greaterThanEqual(first, origin + size))) {
        return HIZ_UNDECIDED;
    }
    ivec2 texel_first = ivec2(origin);
    ivec2 texel_limit = ivec2(origin + size) - 1;
    ivec2 first_texel = clamp(ivec2(floor(first)), texel_first, texel_limit);
    ivec2 last_texel = clamp(ivec2(floor(last)), texel_first, texel_limit);
    int level = 0;
    while (uint(level + 1) < mips && any(greaterThan((last_texel >> level) - (first_texel >> level), ivec2(1)))) {
        level += 1;
    }
    // A rectangle whose mips stop short of its 1x1 level (a split-screen view's, whose coarser
    // texels would cover another view's depth) may leave a footprint wider than 2x2 texels at
    // its last mip: four texels would not cover it, so it is undecided.
    if (any(greaterThan((last_texel >> level) - (first_texel >> level), ivec2(1)))) {
        return HIZ_UNDECIDED;
    }
    // Mip sizes round down; the last texel of a level covers the source's remainder.
    ivec2 level_limit = max(ivec2(origin + size) >> level, ivec2(1)) - 1;
    ivec2 a = min(first_texel >> level, level_limit);
    ivec2 b = min(last_texel >> level, level_limit);
    float farthest = min(min(texelFetch(hiz, a, level).r, texelFetch(hiz, ivec2(b.x, a.y), level).r),
        min(texelFetch(hiz, ivec2(a.x, b.y), level).r, texelFetch(hiz, b, level).r));
    // The rasterizer may give a covered pixel centre a depth past its triangles' own (the
    // centre lies up to a subpixel outside the exact triangle, and the depth plane is
    // extrapolated there), and that depth is what the pyramid holds; an object drawn in the
    // early phase then reads its own depth as nearer than its box. The box's depth range, over
    // its footprint's narrower side in texels (whole when under one), allows a pixel of that
    // extrapolation at the box's mean slope: far more than a subpixel. Written without a
    // division: `raised + range * min(1, 1 / span) < farthest`.
    precise float raised = nearest + nearest * depth_margin;
    precise float range = nearest - deepest;
    precise float span = min(last.x - first.x, last.y - first.y);
    bool hidden = span > 1.0 ? (raised - farthest) * span + range < 0.0 : raised + range < farthest;
    return hidden ? HIZ_HIDDEN : HIZ_VISIBLE;
}

// `hiz_test_rect` over a whole pyramid of mip 0 `size`.
int hiz_test(mat4 view_projection, vec3 bounds_min, vec3 bounds_max, vec2 size, uint mips, float depth_margin,
    float footprint_margin) {
    return hiz_test_rect(view_projection, bounds_min, bounds_max, vec2(0.0), size, mips, depth_margin,
        footprint_margin);
}
#endif

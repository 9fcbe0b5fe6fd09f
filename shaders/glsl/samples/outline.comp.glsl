#version 460
// Outlines where the depth jumps, in place on the engine's colour: a compute post-process at
// renderer::points::AFTER_GEOMETRY, run once per window view (renderer::PerView) over the
// view's rectangle `rect` (left, top, width, height) with the view's block of the engine's view
// uniform. A pixel whose distance along the view differs from one of its four neighbours'
// (clamped at the rectangle's edges: another view's pixels are not this view's depths) by more
// than `threshold` times the nearer of the two becomes `line_color`. It reads only the depth around it and writes only its own
// colour texel, so the colour is read and written in place.
#extension GL_GOOGLE_include_directive : require
#include "view.h"

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0, rgba8) uniform image2D color;
layout(set = 0, binding = 1) uniform sampler2D depth;
ENGINE_VIEW_BLOCK(0, 2);

layout(push_constant) uniform Outline {
    vec4 line_color;
    float threshold;
    ivec4 rect;
} outline;

float along(ivec2 pixel, ivec2 last) {
    return view_linear_depth(engine_view, texelFetch(depth, clamp(pixel, outline.rect.xy, last), 0).r);
}

void main() {
    ivec2 local = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = outline.rect.xy + local;
    ivec2 last = min(outline.rect.xy + outline.rect.zw, imageSize(color)) - 1;
    if (any(greaterThanEqual(pixel, last + 1))) {
        return;
    }
    float here = along(pixel, last);
    const ivec2 NEIGHBOURS[4] = ivec2[](ivec2(1, 0), ivec2(-1, 0), ivec2(0, 1), ivec2(0, -1));
    for (int index = 0; index < 4; index++) {
        float there = along(pixel + NEIGHBOURS[index], last);
        if (abs(there - here) > outline.threshold * min(here, there)) {
            imageStore(color, pixel, outline.line_color);
            return;
        }
    }
}

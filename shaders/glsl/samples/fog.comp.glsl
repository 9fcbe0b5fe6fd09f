#version 460
// Fog by depth, in place on the engine's colour: a compute post-process at
// renderer::points::AFTER_GEOMETRY, run once per window view (renderer::PerView) over the
// view's rectangle `rect` (left, top, width, height). Each pixel reads and writes only its own
// colour texel, so the colour is read and written as one storage image. The distance along
// the view comes from the view's block of the engine's view uniform (its near plane, finite or
// infinite far plane).
#extension GL_GOOGLE_include_directive : require
#include "view.h"

layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0, rgba8) uniform image2D color;
layout(set = 0, binding = 1) uniform sampler2D depth;
ENGINE_VIEW_BLOCK(0, 2);

layout(push_constant) uniform Fog {
    vec4 fog_color;
    float density;
    ivec4 rect;
} fog;

void main() {
    ivec2 local = ivec2(gl_GlobalInvocationID.xy);
    ivec2 pixel = fog.rect.xy + local;
    if (any(greaterThanEqual(local, fog.rect.zw)) || any(greaterThanEqual(pixel, imageSize(color)))) {
        return;
    }
    float along = view_linear_depth(engine_view, texelFetch(depth, pixel, 0).r);
    // The sky (depth 0) is infinitely far: all fog.
    float amount = 1.0 - exp(-fog.density * along);
    vec4 seen = imageLoad(color, pixel);
    imageStore(color, pixel, vec4(mix(seen.rgb, fog.fog_color.rgb, amount), seen.a));
}

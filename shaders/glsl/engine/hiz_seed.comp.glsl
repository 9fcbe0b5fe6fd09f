#version 450
// Hi-Z build, first step: copies `depth_prepass` into mip 0 of `hiz_depth` (same size), one
// thread per texel. Reversed-Z: the pyramid's later mips keep the farthest (smallest) depth.
#include "config.h"
layout(local_size_x = HIZ_GROUP, local_size_y = HIZ_GROUP) in;
layout(set = 0, binding = 0) uniform sampler2D depth;
layout(set = 0, binding = 1, r32f) uniform writeonly image2D mip0;

void main() {
    ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(texel, imageSize(mip0)))) {
        return;
    }
    imageStore(mip0, texel, vec4(texelFetch(depth, texel, 0).r, 0.0, 0.0, 0.0));
}

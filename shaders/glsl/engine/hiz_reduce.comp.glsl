#version 450
// Hi-Z build, one mip: each texel of mip k keeps the smallest (farthest, reversed-Z) depth of
// every mip k-1 texel it covers. Mip sizes halve rounding down (Vulkan's rule), so a texel
// covers source texels 2x and 2x+1, and the last texel of an odd-sized source also covers
// its last texel (2x+2): no source texel is skipped, which keeps the pyramid conservative.
// A source of size 1 on an axis is covered by its single texel (2x+1 is clamped away).
#include "config.h"
layout(local_size_x = HIZ_GROUP, local_size_y = HIZ_GROUP) in;
layout(set = 0, binding = 0, r32f) uniform readonly image2D source;
layout(set = 0, binding = 1, r32f) uniform writeonly image2D target;

void main() {
    ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    ivec2 target_size = imageSize(target);
    if (any(greaterThanEqual(texel, target_size))) {
        return;
    }
    ivec2 source_size = imageSize(source);
    ivec2 first = texel * 2;
    // One past the last source texel covered, per axis.
    ivec2 end = min(first + 2, source_size);
    end = mix(end, source_size, equal(texel, target_size - 1));
    // `first` is always inside the source: the target is at most half its size.
    float farthest = imageLoad(source, first).r;
    for (int y = first.y; y < end.y; ++y) {
        for (int x = first.x; x < end.x; ++x) {
            farthest = min(farthest, imageLoad(source, ivec2(x, y)).r);
        }
    }
    imageStore(target, texel, vec4(farthest, 0.0, 0.0, 0.0));
}

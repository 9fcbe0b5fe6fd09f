#version 450
// Writes hash(x + y * width) & 0xffff to every texel of an r32ui storage image; host twin:
// `noise_value` in samples/src/bin/post_process.rs.
// The probes' hash (lowbias32), whose host twin is `shaders::probe_hash`.
#include "../probes/probe_common.h"
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform writeonly uimage2D target;

void main() {
    uvec2 texel = gl_GlobalInvocationID.xy;
    uvec2 extent = imageSize(target);
    if (texel.x >= extent.x || texel.y >= extent.y) {
        return;
    }
    imageStore(target, ivec2(texel), uvec4(probe_hash(texel.x + texel.y * extent.x) & 0xffffu));
}

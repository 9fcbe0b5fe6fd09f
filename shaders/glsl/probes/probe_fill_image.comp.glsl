#version 450
// Writes probe_hash(seed + i) to every texel of a 16x16 r32ui storage image (a pure write).
#include "probe_common.h"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, r32ui) uniform writeonly uimage2D target;

void main() {
    uint index = gl_GlobalInvocationID.x;
    imageStore(target, probe_texel(index), uvec4(probe_hash(params.seed + index)));
}

#version 450
// Read-modify-write of an r32ui storage image: reports the value seen, then replaces it with
// probe_hash(seen ^ seed).
#include "probe_common.h"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D target;
layout(set = 0, binding = 1) writeonly buffer Report { uint data[]; } report;

void main() {
    uint index = gl_GlobalInvocationID.x;
    ivec2 texel = probe_texel(index);
    uint seen = imageLoad(target, texel).x;
    report.data[params.report_offset + index] = seen;
    imageStore(target, texel, uvec4(probe_hash(seen ^ params.seed)));
}

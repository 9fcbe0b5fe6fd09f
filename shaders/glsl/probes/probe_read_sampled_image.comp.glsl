#version 450
// Copies what a reader sees in a sampled r32ui image (layout SHADER_READ_ONLY_OPTIMAL) into
// its report buffer.
#include "probe_common.h"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform usampler2D source;
layout(set = 0, binding = 1) writeonly buffer Report { uint data[]; } report;

void main() {
    uint index = gl_GlobalInvocationID.x;
    report.data[params.report_offset + index] = texelFetch(source, probe_texel(index), 0).x;
}

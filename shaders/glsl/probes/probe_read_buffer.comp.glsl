#version 450
// Copies what a reader sees in a buffer into its report buffer.
#include "probe_common.h"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Source { uint data[]; } source;
layout(set = 0, binding = 1) writeonly buffer Report { uint data[]; } report;

void main() {
    uint index = gl_GlobalInvocationID.x;
    report.data[params.report_offset + index] = source.data[index];
}

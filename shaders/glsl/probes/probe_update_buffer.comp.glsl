#version 450
// Read-modify-write of a buffer: reports the value seen, then replaces it with
// probe_hash(seen ^ seed), so a later reader proves this pass ran after the first writer.
#include "probe_common.h"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Target { uint data[]; } target;
layout(set = 0, binding = 1) writeonly buffer Report { uint data[]; } report;

void main() {
    uint index = gl_GlobalInvocationID.x;
    uint seen = target.data[index];
    report.data[params.report_offset + index] = seen;
    target.data[index] = probe_hash(seen ^ params.seed);
}

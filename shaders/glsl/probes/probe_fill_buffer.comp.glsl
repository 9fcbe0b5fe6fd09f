#version 450
// Writes probe_hash(seed + i) to every element of a buffer (a pure write).
#include "probe_common.h"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Target { uint data[]; } target;

void main() {
    uint index = gl_GlobalInvocationID.x;
    target.data[index] = probe_hash(params.seed + index);
}

#version 450
// Counts its invocations into binding 0 with an atomic add: binding 0 has no qualifier, and
// the shader writes it, so a pass that declared it as a read is refused.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Counter { uint data[]; } counter;
layout(set = 0, binding = 1) writeonly buffer Copy { uint data[]; } copy;

void main() {
    uint index = gl_GlobalInvocationID.x;
    copy.data[index] = atomicAdd(counter.data[0], 1u);
}

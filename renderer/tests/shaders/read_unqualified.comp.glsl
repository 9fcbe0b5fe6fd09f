#version 450
// Copies the first words of binding 0, which has no qualifier and is only read: a read
// handle may bind it (the graph reads the shader's stores, not only its qualifiers).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Source { uint data[]; } source;
layout(set = 0, binding = 1) writeonly buffer Copy { uint data[]; } copy;

void main() {
    uint index = gl_GlobalInvocationID.x;
    copy.data[index] = source.data[index];
}

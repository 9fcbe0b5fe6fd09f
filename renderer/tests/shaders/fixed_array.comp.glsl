#version 450
// Lifts 256 particles of one vec4 each: its block has a fixed size (4096 bytes), so a
// smaller buffer bound here is a binding mismatch, not a write past the buffer.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Particles { vec4 position[256]; } particles;

void main() {
    uint index = gl_GlobalInvocationID.x;
    particles.position[index] += vec4(0.0, 0.01, 0.0, 0.0);
}

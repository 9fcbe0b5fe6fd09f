#version 450
// Temporal accumulation into a history resource: target = previous + current, per texel of
// r32ui images (previous is last frame's target, zero when the graph reset it).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimage2D previous;
layout(set = 0, binding = 1, r32ui) uniform readonly uimage2D current;
layout(set = 0, binding = 2, r32ui) uniform writeonly uimage2D target;

void main() {
    ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    ivec2 extent = imageSize(target);
    if (texel.x >= extent.x || texel.y >= extent.y) {
        return;
    }
    imageStore(target, texel, uvec4(imageLoad(previous, texel).r + imageLoad(current, texel).r));
}

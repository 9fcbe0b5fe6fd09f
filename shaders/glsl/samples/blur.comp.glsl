#version 450
// One axis of a separable box blur on r32ui images: each texel becomes the integer mean
// (rounded down) of itself and its two neighbours along `axis` (0 = x, 1 = y), edges clamped.
// Host twin: `blur_axis` in samples/src/bin/post_process.rs.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimage2D source;
layout(set = 0, binding = 1, r32ui) uniform writeonly uimage2D target;
layout(push_constant) uniform BlurParams {
    uint axis;
} params;

void main() {
    ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    ivec2 extent = imageSize(target);
    if (texel.x >= extent.x || texel.y >= extent.y) {
        return;
    }
    ivec2 step = params.axis == 0u ? ivec2(1, 0) : ivec2(0, 1);
    ivec2 last = extent - 1;
    uint sum = imageLoad(source, clamp(texel - step, ivec2(0), last)).r + imageLoad(source, texel).r +
               imageLoad(source, clamp(texel + step, ivec2(0), last)).r;
    imageStore(target, texel, uvec4(sum / 3u));
}

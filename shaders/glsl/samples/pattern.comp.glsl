#version 450
// Writes a test pattern into an rgba8 storage image: red grows with x, green with y, blue is
// a checkerboard of 8x8 tiles. Each channel is an exact multiple of 1/255 so that readers can
// compare bytes exactly.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) uniform writeonly image2D target;

layout(push_constant) uniform PatternParams {
    uvec2 extent;
} params;

void main() {
    uvec2 texel = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(texel, params.extent))) {
        return;
    }
    float red = float(texel.x % 256u) / 255.0;
    float green = float(texel.y % 256u) / 255.0;
    float blue = (((texel.x / 8u) + (texel.y / 8u)) % 2u == 0u) ? 1.0 : 0.0;
    imageStore(target, ivec2(texel), vec4(red, green, blue, 1.0));
}

#version 450
// Test shader of declared mip ranges: copies every texel of every mip of the sampled r32f
// view at binding 0 into the buffer at binding 1. Word 0 holds the view's level count, then
// the mips follow one after another, rows tightly packed. Dispatch one invocation per texel
// of the view's first mip (workgroup 64).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2D pyramid;
layout(set = 0, binding = 1) writeonly buffer Texels { float data[]; } texels;

void main() {
    uint index = gl_GlobalInvocationID.x;
    int levels = textureQueryLevels(pyramid);
    if (index == 0) {
        texels.data[0] = float(levels);
    }
    uint offset = 1;
    for (int level = 0; level < levels; ++level) {
        ivec2 size = textureSize(pyramid, level);
        uint count = uint(size.x * size.y);
        if (index < count) {
            ivec2 texel = ivec2(int(index) % size.x, int(index) / size.x);
            texels.data[offset + index] = texelFetch(pyramid, texel, level).r;
        }
        offset += count;
    }
}

#version 450
// Reads the source image at this fragment's texel and writes its complement (1 - rgb),
// keeping alpha. Exact for unorm8 inputs: (255 - v) / 255 rounds back to 255 - v.
layout(set = 0, binding = 0) uniform sampler2D source;
layout(location = 0) out vec4 color;

void main() {
    vec4 texel = texelFetch(source, ivec2(gl_FragCoord.xy), 0);
    color = vec4(1.0 - texel.rgb, texel.a);
}

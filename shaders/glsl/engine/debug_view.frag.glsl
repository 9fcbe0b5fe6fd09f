#version 450
// Shows one mip of any sampled image over the whole target (over fullscreen.vert): colour as
// it is, or, for depth and one-channel float images, the red channel as grey: as it is (0
// black, 1 and above white), or with `log_decades` above 0 on a logarithmic scale of that many
// decades (1 + log10(value) / log_decades), which makes a reversed-Z depth readable. The image may have any size: texels are picked by the fragment's place in the
// target, with the nearest sampler.
layout(set = 0, binding = 0) uniform sampler2D source;
layout(push_constant) uniform View {
    vec2 inverse_target_size;
    uint grey;
    float log_decades;
} view;
layout(location = 0) out vec4 color;

void main() {
    vec4 texel = textureLod(source, gl_FragCoord.xy * view.inverse_target_size, 0.0);
    float value = texel.r;
    if (view.log_decades > 0.0) {
        value = 1.0 + log2(max(value, 1e-30)) * (0.30103 / view.log_decades);
    }
    color = view.grey != 0u ? vec4(vec3(clamp(value, 0.0, 1.0)), 1.0) : texel;
}

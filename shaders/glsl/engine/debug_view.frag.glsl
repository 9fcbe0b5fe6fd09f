#version 450
// Shows one mip of any sampled image over the whole target (over fullscreen.vert): colour as
// it is, or, for depth and one-channel float images, the red channel as grey (0 black, 1 and
// above white). The image may have any size: texels are picked by the fragment's place in the
// target, with the nearest sampler.
layout(set = 0, binding = 0) uniform sampler2D source;
layout(push_constant) uniform View {
    vec2 inverse_target_size;
    uint grey;
} view;
layout(location = 0) out vec4 color;

void main() {
    vec4 texel = textureLod(source, gl_FragCoord.xy * view.inverse_target_size, 0.0);
    color = view.grey != 0u ? vec4(vec3(clamp(texel.r, 0.0, 1.0)), 1.0) : texel;
}

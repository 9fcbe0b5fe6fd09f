#version 450
// Test pattern for depth pyramids: writes a hashed depth per pixel, exact in 24 bits, with
// exact 0 and 1 sprinkled in. Drawn over `fullscreen.vert` with depth test ALWAYS.
layout(push_constant) uniform Pattern { uint seed; } pattern;

uint hash(uint value) {
    value ^= value >> 16;
    value *= 0x7feb352du;
    value ^= value >> 15;
    value *= 0x846ca68bu;
    value ^= value >> 16;
    return value;
}

void main() {
    uvec2 pixel = uvec2(gl_FragCoord.xy);
    uint mixed = hash(pixel.x * 0x9e3779b9u ^ hash(pixel.y + pattern.seed));
    uint bucket = mixed >> 28;
    if (bucket == 0u) {
        gl_FragDepth = 0.0;
    } else if (bucket == 1u) {
        gl_FragDepth = 1.0;
    } else {
        gl_FragDepth = float(mixed & 0xffffffu) / 16777216.0;
    }
}

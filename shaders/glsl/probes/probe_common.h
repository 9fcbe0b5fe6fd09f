// Shared by the probe shaders used to test the render graph: every probe pass works on
// resources of PROBE_ELEMENTS 32-bit values (a buffer of 256 uints or a 16x16 r32ui image).
// Host twin: shaders/src/lib.rs (probe_hash and PROBE_ELEMENTS), which the render graph's
// tests use (render_graph/tests/common/mod.rs).

// Must equal PROBE_WIDTH * PROBE_WIDTH and be a multiple of the workgroup size (64).
#define PROBE_ELEMENTS 256
#define PROBE_WIDTH 16

// Push constants of every probe shader. `seed` identifies the writer (pass and resource),
// `report_offset` is the first element this dispatch writes in the report buffer.
layout(push_constant) uniform ProbeParams {
    uint seed;
    uint report_offset;
} params;

// Integer hash (lowbias32): every writer writes values no other writer can guess.
uint probe_hash(uint value) {
    value ^= value >> 16;
    value *= 0x7feb352du;
    value ^= value >> 15;
    value *= 0x846ca68bu;
    value ^= value >> 16;
    return value;
}

ivec2 probe_texel(uint index) {
    return ivec2(int(index % PROBE_WIDTH), int(index / PROBE_WIDTH));
}

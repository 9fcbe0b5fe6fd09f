#version 460
// Bobs every object up and down on the GPU, before the engine culls and draws (a compute pass
// at renderer::points::BEFORE_CULL): slot s sits `height * sin(phase + (s % 64) * spread)`
// above where the host put it. The host uploads only the objects it moved, so the pass keeps,
// per slot, the height it wrote and the offset it applied (`bob state`, last frame's version
// read as history): a slot whose height is still the one written was left alone by the host
// and loses last frame's offset before taking this frame's; any other height is a fresh place
// from the host. The cull takes each box through its transform, so it tests the new places in
// the same frame.
#extension GL_GOOGLE_include_directive : require
#include "object_record.h"
#include "view.h"

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Transforms {
    ObjectTransform transforms[];
};
layout(std430, set = 0, binding = 1) readonly buffer LastState {
    vec2 last_state[];
};
layout(std430, set = 0, binding = 2) writeonly buffer State {
    vec2 state[];
};
ENGINE_VIEW_BLOCK(0, 3);

layout(push_constant) uniform Bob {
    float height;
    float phase;
    float spread;
    uint slots;
} bob;

void main() {
    uint slot = gl_GlobalInvocationID.x;
    if (slot >= bob.slots) {
        return;
    }
    if (slot >= engine_view.object_count) {
        state[slot] = vec2(0.0);
        return;
    }
    float y = transforms[slot].rows[1].w;
    vec2 last = last_state[slot];
    float base = y == last.x ? y - last.y : y;
    precise float angle = bob.phase + float(slot % 64u) * bob.spread;
    float offset = bob.height * sin(angle);
    precise float moved = base + offset;
    transforms[slot].rows[1].w = moved;
    state[slot] = vec2(moved, offset);
}

#version 460
// Copies the bound block of the engine's `view` uniform into slot `slot` of `seen`: its
// view_projection's four columns, its viewport and its eye; counts its runs in `calls`.
#include "view.h"

layout(local_size_x = 8) in;

ENGINE_VIEW_BLOCK(0, 0);

layout(std430, set = 0, binding = 1) buffer Seen {
    uint calls;
    uint pad[3];
    vec4 slots[];
} seen;

layout(push_constant) uniform Push {
    uint slot;
} push;

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint base = push.slot * 6u;
    if (lane < 4u) {
        seen.slots[base + lane] = engine_view.view_projection[lane];
    } else if (lane == 4u) {
        seen.slots[base + 4u] = engine_view.viewport;
    } else if (lane == 5u) {
        seen.slots[base + 5u] = engine_view.eye;
        atomicAdd(seen.calls, 1u);
    }
}

#version 450
// Scene upload: copies this frame's changed items of one object buffer (transforms or
// records) from the staged upload into their slots. `slots[i]` is the slot of item `i`, items
// are `vec4s_per_item` vec4s each; slots are distinct, so no two threads write one item.
// Host twin: renderer/src/passes/upload.rs (`ObjectUploadPass`, `SCATTER_GROUP`).
#include "config.h"
layout(local_size_x = SCATTER_GROUP) in;

layout(std430, set = 0, binding = 0) readonly buffer Slots {
    uint slots[];
};
layout(std430, set = 0, binding = 1) readonly buffer Items {
    uvec4 items[];
};
layout(std430, set = 0, binding = 2) writeonly buffer Target {
    uvec4 target[];
};

layout(push_constant) uniform Scatter {
    uint count;
    uint vec4s_per_item;
} scatter;

void main() {
    // A grid-stride loop: more items than threads dispatched are taken in turns.
    uint stride = gl_NumWorkGroups.x * SCATTER_GROUP;
    for (uint item = gl_GlobalInvocationID.x; item < scatter.count; item += stride) {
        uint from = item * scatter.vec4s_per_item;
        uint to = slots[item] * scatter.vec4s_per_item;
        for (uint part = 0u; part < scatter.vec4s_per_item; ++part) {
            target[to + part] = items[from + part];
        }
    }
}

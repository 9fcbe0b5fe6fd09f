#version 450
// The batch ids' upload: writes each changed slot's batch id into `object_batches`, the
// instanced lists' per-slot table the camera's object cull reads (`gpu_cull.h`). `pairs[i]`
// is (slot, batch id); slots are distinct, so no two threads write one entry.
// Host twin: renderer/src/passes/batches.rs (`DrawBatchPass`, `SCATTER_GROUP`).
#include "config.h"
layout(local_size_x = SCATTER_GROUP) in;

layout(std430, set = 0, binding = 0) readonly buffer Pairs {
    uvec2 pairs[];
};
layout(std430, set = 0, binding = 1) writeonly buffer ObjectBatches {
    uint object_batches[];
};

layout(push_constant) uniform Scatter {
    uint count;
} scatter;

void main() {
    // A grid-stride loop: more pairs than threads dispatched are taken in turns.
    uint stride = gl_NumWorkGroups.x * SCATTER_GROUP;
    for (uint pair = gl_GlobalInvocationID.x; pair < scatter.count; pair += stride) {
        object_batches[pairs[pair].x] = pairs[pair].y;
    }
}

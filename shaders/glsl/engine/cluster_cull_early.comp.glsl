#version 450
// The meshlet cull, early phase (`cluster_cull.h`): the pairs visible last frame that pass
// this frame's frustum and cone tests are appended to `draw_commands`, so that the depth
// prepass and the Hi-Z build see last frame's visible meshlets. One thread per pair, in rows
// past 65,535 groups (`cluster_thread`).
#define CULL_LATE 0
// After the pass's own bindings: the chains and the slots' states (`cluster_cull.h`).
#define CLUSTER_LOD_BINDING (CULL_KIND_BINDING + 6)
#include "cluster_cull.h"
layout(local_size_x = CLUSTER_GROUP) in;

layout(std430, set = 0, binding = CLUSTER_BINDING) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 1) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 2) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};

// The early phase decides no verdict (the late phase and the survivor pass do).
void cull_judged(uint view, uint pair, CullItem item, uint verdict) {
}

void cull_keep(uint view, uint pair, CullItem item, bool draw, bool bit) {
    if (draw) {
        DrawCommand command = pair_command(item);
        commands[atomicAdd(draw_count, 1u)] = command;
        atomicAdd(stats[CSTAT_EARLY_DRAWN], 1u);
        atomicAdd(stats[CSTAT_TRIANGLES], command.index_count / 3u);
        if (item.whole) {
            atomicAdd(stats[CSTAT_WHOLE_OBJECTS], 1u);
        }
    }
}

#include "two_phase_cull.h"

void main() {
    uint pair = cluster_thread();
    if (pair >= constants.item_count || !cull_needs_item(0u, pair)) {
        return;
    }
    CullItem item = cull_load(pair);
    if (item.record.index_count != 0u) {
        cull_in_view(0u, pair, item);
    }
}

#version 450
// The meshlet cull, late phase (`cluster_cull.h`): one workgroup per object the object pass
// kept (the survivor list of `cluster_survivors.comp`, dispatched indirectly), its threads
// striding over the object's pairs. Every meshlet of a surviving object is tested: sphere
// against the frustum, normal cone against the eye, box against the pyramid built from the
// early phase's depth. Writes each pair's verdict and bit (next frame's history) and appends
// the visible pairs the early phase did not draw to the late list. (The survivor pass gave the pairs of culled
// objects their verdicts.)
#define CULL_LATE 1
// After the pass's own bindings: the chains (`cluster_cull.h`; the levels come with the survivors).
#define CLUSTER_LOD_BINDING (CULL_KIND_BINDING + 10)
#include "cluster_cull.h"
layout(local_size_x = CLUSTER_GROUP) in;

// Zeroed by the reset pass; visible pairs set their bit with atomicOr.
layout(std430, set = 0, binding = CLUSTER_BINDING) buffer PairBits {
    uint pair_bits[];
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 1) writeonly buffer Verdicts {
    uint verdicts[];
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 2) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
// The early list's count, then the late list's (which starts at command `constants.region`).
layout(std430, set = 0, binding = CLUSTER_BINDING + 3) buffer DrawCounts {
    uint draw_counts[];
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 4) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};
// Word 0 the count, then the objects the object pass kept, each with its level this frame
// (SURVIVOR_LEVEL_SHIFT).
layout(std430, set = 0, binding = CLUSTER_BINDING + 5) readonly buffer Survivors {
    uint survivors[];
};
// (first pair, pair count) per covered object.
layout(std430, set = 0, binding = CLUSTER_BINDING + 6) readonly buffer ObjectPairs {
    uvec2 object_pairs[];
};

// No shared memory and no barrier: lavapipe runs barrier-free compute as plain SIMD loops
// (with a barrier, invocations run as coroutines, far slower over 1M pairs).
// The counters count pairs of kept objects (few), so global atomics cost little.

void cull_judged(uint view, uint pair, CullItem item, uint verdict) {
    verdicts[pair] = verdict;
    if (item.whole) {
        if (verdict == VERDICT_VISIBLE) {
            atomicAdd(stats[CSTAT_OBJECT_TRIANGLES], item.record.index_count / 3u);
        }
        return;
    }
    atomicAdd(stats[CSTAT_TESTED], 1u);
    atomicAdd(stats[CSTAT_OBJECT_TRIANGLES], item.meshlet.index_count / 3u);
    if (verdict == VERDICT_FRUSTUM) {
        atomicAdd(stats[CSTAT_FRUSTUM], 1u);
    } else if (verdict == VERDICT_BACK_FACING) {
        atomicAdd(stats[CSTAT_CONE], 1u);
    } else if (verdict == VERDICT_OCCLUDED) {
        atomicAdd(stats[CSTAT_OCCLUSION], 1u);
    } else if (verdict == VERDICT_CONSERVATIVE) {
        atomicAdd(stats[CSTAT_CONSERVATIVE], 1u);
    }
}

void cull_keep(uint view, uint pair, CullItem item, bool draw, bool bit) {
    if (bit) {
        atomicOr(pair_bits[pair / 32u], 1u << (pair % 32u));
    }
    if (draw) {
        DrawCommand command = pair_command(item);
        commands[constants.region + atomicAdd(draw_counts[1], 1u)] = command;
        atomicAdd(stats[CSTAT_LATE_DRAWN], 1u);
        atomicAdd(stats[CSTAT_TRIANGLES], command.index_count / 3u);
        if (item.whole) {
            atomicAdd(stats[CSTAT_WHOLE_OBJECTS], 1u);
        }
    }
}

#include "two_phase_cull.h"

void main() {
    // More survivors than groups (over 65,535): each group takes every n-th survivor.
    uint survivor_count = survivors[0];
    for (uint survivor = gl_WorkGroupID.x; survivor < survivor_count; survivor += gl_NumWorkGroups.x) {
        uint object = survivors[survivor + 1u] & ((1u << SURVIVOR_LEVEL_SHIFT) - 1u);
        survivor_level = survivors[survivor + 1u] >> SURVIVOR_LEVEL_SHIFT;
        uvec2 range = object_pairs[object];
        for (uint pair = range.x + gl_LocalInvocationID.x; pair < range.x + range.y; pair += gl_WorkGroupSize.x) {
            cull_in_view(0u, pair, cull_load(pair));
        }
    }
}

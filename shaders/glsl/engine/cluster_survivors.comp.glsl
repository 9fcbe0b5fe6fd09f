#version 450
// The meshlet cull's survivor list (`cluster_cull.h`), between the object pass and the late
// phase: one thread per object the cluster tables cover (in rows past 65,535 groups), after
// the object pass wrote `visibility_bits` (host: renderer/src/passes/cull/cluster_survivors.rs).
// A kept object is appended to `survivors` and widens the late phase's indirect dispatch (one
// workgroup per survivor); a culled object's pairs get their verdict here, from the object's
// box alone, so the late phase never visits them.
#define CULL_LATE 0
#include "cluster_cull.h"
#include "lod_table.h"
layout(local_size_x = CLUSTER_GROUP) in;

layout(std430, set = 0, binding = CLUSTER_BINDING) readonly buffer ObjectBits {
    uint object_bits[];
};
// (first pair, pair count) per covered object.
layout(std430, set = 0, binding = CLUSTER_BINDING + 1) readonly buffer ObjectPairs {
    uvec2 object_pairs[];
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 2) writeonly buffer Verdicts {
    uint verdicts[];
};
// Zeroed by the reset pass: word 0 the count, then the survivors.
layout(std430, set = 0, binding = CLUSTER_BINDING + 3) buffer Survivors {
    uint survivors[];
};
// Zeroed by the reset pass: the late phase's VkDispatchIndirectCommand.
layout(std430, set = 0, binding = CLUSTER_BINDING + 4) buffer Dispatch {
    uint dispatch[3];
};
layout(std430, set = 0, binding = CLUSTER_BINDING + 5) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};
// This frame's state of every slot (the object cull's late phase wrote it, `lod_table.h`).
layout(std430, set = 0, binding = CLUSTER_BINDING + 6) readonly buffer LodStates {
    uint lod_states[];
};

void main() {
    uint object = cluster_thread();
    if (object == 0u) {
        atomicAdd(stats[CSTAT_MESHLETS], constants.meshlet_pairs);
        dispatch[1] = 1u;
        dispatch[2] = 1u;
    }
    if (object >= constants.object_count) {
        return;
    }
    if ((object_bits[object / 32u] >> (object % 32u) & 1u) == 1u) {
        uint slot = atomicAdd(survivors[0], 1u);
        // The level the slot's state names (0 for another chain or none), for the late
        // phase's choice (`cluster_cull.h`).
        uint level = lod_state_level(lod_states[object], objects[object].reserved[0]);
        survivors[slot + 1u] = object | (level << SURVIVOR_LEVEL_SHIFT);
        atomicMax(dispatch[0], min(slot + 1u, CLUSTER_MAX_GROUPS));
        return;
    }
    // The object pass rejected the object: by its box outside the frustum, or else hidden.
    // An object drawn whole reports on its first pair.
    CullView view = views[0];
    bool outside = (view.flags & CULL_FRUSTUM) != 0u
        && (objects[object].index_count == 0u || object_outside(view, object, objects[object]));
    uint culled = outside ? VERDICT_FRUSTUM : VERDICT_OCCLUDED;
    uvec2 range = object_pairs[object];
    for (uint pair = range.x; pair < range.x + range.y; ++pair) {
        uint field = pairs[pair].y;
        bool reports = !field_is_whole(field) || (field & PAIR_FIRST) != 0u;
        verdicts[pair] = reports ? culled : VERDICT_UNTESTED;
    }
}

#version 450
// Cluster cull, survivor list: one thread per object the cluster tables cover, after the
// object pass wrote `visibility_bits` (host: renderer/src/passes/cluster_survivors.rs). A kept
// object is appended to `survivors` and widens the late phase's indirect dispatch (one
// workgroup per survivor); a culled object's pairs get their verdict here, from the object's
// box alone, so the late phase never visits them.
#include "cluster_cull.h"
layout(local_size_x = CLUSTER_GROUP) in;

layout(std430, set = 0, binding = 7) readonly buffer ObjectBits {
    uint object_bits[];
};
// (first pair, pair count) per covered object.
layout(std430, set = 0, binding = 8) readonly buffer ObjectPairs {
    uvec2 object_pairs[];
};
layout(std430, set = 0, binding = 9) writeonly buffer Verdicts {
    uint verdicts[];
};
// Zeroed by the reset pass: word 0 the count, then the survivors.
layout(std430, set = 0, binding = 10) buffer Survivors {
    uint survivors[];
};
// Zeroed by the reset pass: the late phase's VkDispatchIndirectCommand.
layout(std430, set = 0, binding = 11) buffer Dispatch {
    uint dispatch[3];
};
layout(std430, set = 0, binding = 12) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};

void main() {
    uint object = gl_GlobalInvocationID.x;
    if (object == 0u) {
        atomicAdd(stats[CSTAT_MESHLETS], cluster.meshlet_pairs);
        dispatch[1] = 1u;
        dispatch[2] = 1u;
    }
    if (object >= cluster.object_count) {
        return;
    }
    if ((object_bits[object / 32u] >> (object % 32u) & 1u) == 1u) {
        uint slot = atomicAdd(survivors[0], 1u);
        survivors[slot + 1u] = object;
        atomicMax(dispatch[0], min(slot + 1u, CLUSTER_MAX_GROUPS));
        return;
    }
    // The object pass rejected the object: by its box outside the frustum, or else hidden.
    // An object drawn whole reports on its first pair.
    bool outside = (cluster.flags & CLUSTER_FRUSTUM) != 0u
        && (objects[object].index_count == 0u || object_outside(object, objects[object]));
    uint culled = outside ? VERDICT_FRUSTUM : VERDICT_OCCLUDED;
    uvec2 range = object_pairs[object];
    for (uint pair = range.x; pair < range.x + range.y; ++pair) {
        uint field = pairs[pair].y;
        bool reports = (field & PAIR_MESHLET_MASK) != PAIR_WHOLE || (field & PAIR_FIRST) != 0u;
        verdicts[pair] = reports ? culled : VERDICT_UNTESTED;
    }
}

#version 450
// Cluster cull, late phase: one workgroup per object the object pass kept (the survivor
// list of `cluster_survivors.comp`, dispatched indirectly), its threads striding over the
// object's pairs. Every meshlet of a surviving object is tested: sphere against the frustum,
// normal cone against the eye, box against the pyramid built from the early phase's depth.
// Writes each pair's verdict and visibility bit (next frame's history) and appends the
// visible pairs the early phase did not draw. (The survivor pass gave the pairs of culled
// objects their verdicts.)
#include "cluster_cull.h"
layout(local_size_x = CLUSTER_GROUP) in;

// Read by the survivor pass, which lists the kept objects; still bound here.
layout(std430, set = 0, binding = 7) readonly buffer ObjectBits {
    uint object_bits[];
};
layout(set = 0, binding = 8) uniform sampler2D hiz;
// Zeroed by the reset pass; visible pairs set their bit with atomicOr.
layout(std430, set = 0, binding = 9) buffer PairBits {
    uint pair_bits[];
};
layout(std430, set = 0, binding = 10) writeonly buffer Verdicts {
    uint verdicts[];
};
layout(std430, set = 0, binding = 11) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 12) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = 13) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};
// Word 0 the count, then the objects the object pass kept.
layout(std430, set = 0, binding = 14) readonly buffer Survivors {
    uint survivors[];
};
// (first pair, pair count) per covered object.
layout(std430, set = 0, binding = 15) readonly buffer ObjectPairs {
    uvec2 object_pairs[];
};

#include "hiz_occlusion.h"

// No shared memory and no barrier: lavapipe runs barrier-free compute as plain SIMD loops
// (with a barrier, invocations run as coroutines, far slower over 1M pairs).
// The counters count pairs of kept objects (few), so global atomics cost little.

// The verdict on a meshlet of a visible object; each test is conservative (see the header).
uint classify(mat4 world, GpuMeshlet meshlet) {
    if ((cluster.flags & CLUSTER_FRUSTUM) != 0u && sphere_outside(world, meshlet)) {
        return VERDICT_FRUSTUM;
    }
    if ((cluster.flags & CLUSTER_CONE) != 0u && cone_rejects(world, meshlet)) {
        return VERDICT_BACK_FACING;
    }
    if ((cluster.flags & CLUSTER_OCCLUSION) != 0u) {
        vec3 low;
        vec3 high;
        world_box(world, meshlet, low, high);
        int answer = hiz_test(cluster.view_projection, low, high, cluster.hiz_size, cluster.hiz_mips,
            cluster.depth_margin, cluster.footprint_margin);
        if (answer == HIZ_HIDDEN) {
            return VERDICT_OCCLUDED;
        }
        if (answer == HIZ_UNDECIDED) {
            return VERDICT_CONSERVATIVE;
        }
    }
    return VERDICT_VISIBLE;
}

// Tests pair `pair` of `object`, which the object pass kept.
void cull_pair(uint pair, uint object, ObjectRecord record, mat4 world) {
    uint field = pairs[pair].y;
    uint verdict = VERDICT_UNTESTED;
    DrawCommand command;
    if (pair_draws_whole(object, field, record)) {
        // Drawn whole by its first pair.
        if ((field & PAIR_FIRST) != 0u) {
            verdict = VERDICT_VISIBLE;
            atomicAdd(stats[CSTAT_OBJECT_TRIANGLES], record.index_count / 3u);
        }
        command = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
    } else {
        GpuMeshlet meshlet = meshlets[field & PAIR_MESHLET_MASK];
        atomicAdd(stats[CSTAT_TESTED], 1u);
        atomicAdd(stats[CSTAT_OBJECT_TRIANGLES], meshlet.index_count / 3u);
        verdict = classify(world, meshlet);
        if (verdict == VERDICT_FRUSTUM) {
            atomicAdd(stats[CSTAT_FRUSTUM], 1u);
        } else if (verdict == VERDICT_BACK_FACING) {
            atomicAdd(stats[CSTAT_CONE], 1u);
        } else if (verdict == VERDICT_OCCLUDED) {
            atomicAdd(stats[CSTAT_OCCLUSION], 1u);
        } else if (verdict == VERDICT_CONSERVATIVE) {
            atomicAdd(stats[CSTAT_CONSERVATIVE], 1u);
        }
        command = meshlet_command(object, meshlet, record);
    }
    verdicts[pair] = verdict;
    bool visible = verdict == VERDICT_VISIBLE || verdict == VERDICT_CONSERVATIVE;
    if (visible) {
        atomicOr(pair_bits[pair / 32u], 1u << (pair % 32u));
        // The early phase drew the pairs visible last frame that pass frustum and cone.
        if (!pair_was_visible(pair)) {
            uint slot = atomicAdd(draw_count, 1u);
            commands[slot] = command;
            atomicAdd(stats[CSTAT_LATE_DRAWN], 1u);
            atomicAdd(stats[CSTAT_TRIANGLES], command.index_count / 3u);
            if ((field & PAIR_MESHLET_MASK) == PAIR_WHOLE || record.mesh != built_mesh[object]) {
                atomicAdd(stats[CSTAT_WHOLE_OBJECTS], 1u);
            }
        }
    }
}

void main() {
    // More survivors than groups (over 65,535): each group takes every n-th survivor.
    uint survivor_count = survivors[0];
    for (uint survivor = gl_WorkGroupID.x; survivor < survivor_count; survivor += gl_NumWorkGroups.x) {
        uint object = survivors[survivor + 1u];
        ObjectRecord record = objects[object];
        mat4 world = object_matrix(transforms[object]);
        uvec2 range = object_pairs[object];
        for (uint pair = range.x + gl_LocalInvocationID.x; pair < range.x + range.y; pair += gl_WorkGroupSize.x) {
            cull_pair(pair, object, record, world);
        }
    }
}

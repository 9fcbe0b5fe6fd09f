#version 450
// Cluster cull, late phase: one thread per pair. After the object pass (`visibility_bits`,
// this frame), every meshlet of a surviving object is tested: sphere against the frustum,
// normal cone against the eye, box against the pyramid built from the early phase's depth.
// Writes each pair's verdict and visibility bit (next frame's history) and appends the
// visible pairs the early phase did not draw.
#include "cluster_cull.h"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 6) readonly buffer ObjectBits {
    uint object_bits[];
};
layout(set = 0, binding = 7) uniform sampler2D hiz;
// Zeroed by the reset pass; visible pairs set their bit with atomicOr.
layout(std430, set = 0, binding = 8) buffer PairBits {
    uint pair_bits[];
};
layout(std430, set = 0, binding = 9) writeonly buffer Verdicts {
    uint verdicts[];
};
layout(std430, set = 0, binding = 10) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 11) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = 12) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};

#include "hiz_occlusion.h"

// No shared memory and no barrier: lavapipe runs barrier-free compute as plain SIMD loops
// (with a barrier, invocations run as coroutines, far slower over 1M pairs).
// Every counter but the first is rare (pairs of objects the object pass kept), so global
// atomics cost little.

// The verdict on a meshlet of a visible object; each test is conservative (see the header).
uint classify(ObjectRecord record, GpuMeshlet meshlet) {
    if ((cluster.flags & CLUSTER_FRUSTUM) != 0u && sphere_outside(record.world, meshlet)) {
        return VERDICT_FRUSTUM;
    }
    if ((cluster.flags & CLUSTER_CONE) != 0u && cone_rejects(record.world, meshlet)) {
        return VERDICT_BACK_FACING;
    }
    if ((cluster.flags & CLUSTER_OCCLUSION) != 0u) {
        vec3 low;
        vec3 high;
        world_box(record.world, meshlet, low, high);
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

void main() {
    uint pair = gl_GlobalInvocationID.x;
    if (pair == 0u) {
        atomicAdd(stats[CSTAT_MESHLETS], cluster.meshlet_pairs);
    }
    if (pair < cluster.pair_count) {
        uint object = pairs[pair].x;
        uint field = pairs[pair].y;
        bool object_visible = (object_bits[object / 32u] >> (object % 32u) & 1u) == 1u;
        if (!object_visible) {
            // The object pass rejected the object (most pairs): by its box outside the
            // frustum, or else hidden. Only the box is read. An object drawn whole reports
            // on its first pair.
            uint culled = VERDICT_UNTESTED;
            if ((field & PAIR_MESHLET_MASK) != PAIR_WHOLE || (field & PAIR_FIRST) != 0u) {
                bool outside = (cluster.flags & CLUSTER_FRUSTUM) != 0u
                    && (objects[object].index_count == 0u
                        || box_outside(objects[object].bounds_min, objects[object].bounds_max));
                culled = outside ? VERDICT_FRUSTUM : VERDICT_OCCLUDED;
            }
            verdicts[pair] = culled;
            return;
        }
        ObjectRecord record = objects[object];
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
            verdict = classify(record, meshlet);
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
}

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
layout(std430, set = 0, binding = 8) writeonly buffer PairBits {
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

shared uint words[2];
// This workgroup's counters, added to `stats` once.
shared uint counts[CSTAT_COUNT];

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
    if (gl_LocalInvocationIndex < 2u) {
        words[gl_LocalInvocationIndex] = 0u;
    }
    if (gl_LocalInvocationIndex < CSTAT_COUNT) {
        counts[gl_LocalInvocationIndex] = 0u;
    }
    barrier();
    uint pair = gl_GlobalInvocationID.x;
    if (pair < cluster.pair_count) {
        uint object = pairs[pair].x;
        uint field = pairs[pair].y;
        ObjectRecord record = objects[object];
        bool object_visible = (object_bits[object / 32u] >> (object % 32u) & 1u) == 1u;
        uint verdict = VERDICT_UNTESTED;
        DrawCommand command;
        if (pair_draws_whole(object, field, record)) {
            // Drawn whole by its first pair when the object pass kept it.
            if ((field & PAIR_FIRST) != 0u) {
                verdict = object_visible ? VERDICT_VISIBLE : VERDICT_FRUSTUM;
                if (object_visible) {
                    atomicAdd(counts[CSTAT_OBJECT_TRIANGLES], record.index_count / 3u);
                }
            }
            command = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
        } else {
            GpuMeshlet meshlet = meshlets[field & PAIR_MESHLET_MASK];
            atomicAdd(counts[CSTAT_MESHLETS], 1u);
            if (!object_visible) {
                // The object pass rejected the object: by its box outside the frustum, or
                // else hidden.
                bool outside = (cluster.flags & CLUSTER_FRUSTUM) != 0u
                    && (record.index_count == 0u || box_outside(record.bounds_min, record.bounds_max));
                verdict = outside ? VERDICT_FRUSTUM : VERDICT_OCCLUDED;
                atomicAdd(counts[CSTAT_OBJECT_CULLED], 1u);
            } else {
                atomicAdd(counts[CSTAT_OBJECT_TRIANGLES], meshlet.index_count / 3u);
                verdict = classify(record, meshlet);
                if (verdict == VERDICT_FRUSTUM) {
                    atomicAdd(counts[CSTAT_FRUSTUM], 1u);
                } else if (verdict == VERDICT_BACK_FACING) {
                    atomicAdd(counts[CSTAT_CONE], 1u);
                } else if (verdict == VERDICT_OCCLUDED) {
                    atomicAdd(counts[CSTAT_OCCLUSION], 1u);
                } else if (verdict == VERDICT_CONSERVATIVE) {
                    atomicAdd(counts[CSTAT_CONSERVATIVE], 1u);
                }
            }
            command = meshlet_command(object, meshlet, record);
        }
        verdicts[pair] = verdict;
        bool visible = verdict == VERDICT_VISIBLE || verdict == VERDICT_CONSERVATIVE;
        if (visible) {
            atomicOr(words[gl_LocalInvocationIndex / 32u], 1u << (gl_LocalInvocationIndex % 32u));
            // The early phase drew the pairs visible last frame that pass frustum and cone.
            if (!pair_was_visible(pair)) {
                uint slot = atomicAdd(draw_count, 1u);
                commands[slot] = command;
                atomicAdd(counts[CSTAT_LATE_DRAWN], 1u);
                atomicAdd(counts[CSTAT_TRIANGLES], command.index_count / 3u);
                if ((field & PAIR_MESHLET_MASK) == PAIR_WHOLE || record.mesh != built_mesh[object]) {
                    atomicAdd(counts[CSTAT_WHOLE_OBJECTS], 1u);
                }
            }
        }
    }
    barrier();
    if (gl_LocalInvocationIndex < 2u) {
        pair_bits[gl_WorkGroupID.x * 2u + gl_LocalInvocationIndex] = words[gl_LocalInvocationIndex];
    }
    if (gl_LocalInvocationIndex < CSTAT_COUNT && counts[gl_LocalInvocationIndex] != 0u) {
        atomicAdd(stats[gl_LocalInvocationIndex], counts[gl_LocalInvocationIndex]);
    }
}

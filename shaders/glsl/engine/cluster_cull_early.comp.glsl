#version 450
// Cluster cull, early phase: draws the pairs visible last frame (the history bits) that pass
// this frame's frustum and cone tests, so that the depth prepass and the Hi-Z build see last
// frame's visible meshlets. No occlusion test here: they are this frame's occluders.
// The late phase repeats the same frustum and cone tests and skips the pairs whose history
// bit is set, so a pair is drawn by at most one phase.
#include "cluster_cull.h"
layout(local_size_x = CLUSTER_GROUP) in;

layout(std430, set = 0, binding = 7) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 8) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = 9) buffer ClusterStats {
    uint stats[CSTAT_COUNT];
};

void main() {
    uint pair = gl_GlobalInvocationID.x;
    if (pair >= cluster.pair_count || !pair_was_visible(pair)) {
        return;
    }
    uint object = pairs[pair].x;
    uint field = pairs[pair].y;
    ObjectRecord record = objects[object];
    if (record.index_count == 0u) {
        return;
    }
    bool frustum = (cluster.flags & CLUSTER_FRUSTUM) != 0u;
    DrawCommand command;
    if (pair_draws_whole(object, field, record)) {
        if ((field & PAIR_FIRST) == 0u || (frustum && object_outside(object, record))) {
            return;
        }
        command = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
        atomicAdd(stats[CSTAT_WHOLE_OBJECTS], 1u);
    } else {
        GpuMeshlet meshlet = meshlets[field & PAIR_MESHLET_MASK];
        mat4 world = object_matrix(transforms[object]);
        if (frustum && sphere_outside(world, meshlet)) {
            return;
        }
        if ((cluster.flags & CLUSTER_CONE) != 0u && cone_rejects(world, meshlet)) {
            return;
        }
        command = meshlet_command(object, meshlet, record);
    }
    uint slot = atomicAdd(draw_count, 1u);
    commands[slot] = command;
    atomicAdd(stats[CSTAT_EARLY_DRAWN], 1u);
    atomicAdd(stats[CSTAT_TRIANGLES], command.index_count / 3u);
}

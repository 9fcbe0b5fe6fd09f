#version 450
// GPU cull, early phase: draws what was visible last frame (the history bits) and passes
// this frame's frustum, by appending its command to `draw_commands`. The depth prepass draws
// these, the Hi-Z build reduces that depth, and the late phase tests everything against it.
// No occlusion test here: last frame's visible set is the occluder set of this frame.
#include "gpu_cull.h"
layout(local_size_x = CULL_GROUP) in;

layout(std430, set = 0, binding = 4) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 5) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = 6) buffer CullStats {
    uint stats[STAT_COUNT];
};

void main() {
    uint object = gl_GlobalInvocationID.x;
    // Under cluster culling objects below `draw_from` are drawn meshlet by meshlet instead.
    if (object >= cull.object_count || object < cull.draw_from || !was_visible(object)) {
        return;
    }
    ObjectRecord record = objects[object];
    if (record.index_count == 0u) {
        return;
    }
    vec3 center;
    vec3 half_extent;
    object_world_box(transforms[object], record, center, half_extent);
    if ((cull.flags & CULL_FRUSTUM) != 0u && !frustum_keeps(center, half_extent)) {
        return;
    }
    uint slot = atomicAdd(draw_count, 1u);
    commands[slot] = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
    atomicAdd(stats[STAT_EARLY_DRAWN], 1u);
    atomicAdd(stats[STAT_TRIANGLES], record.index_count / 3u);
}

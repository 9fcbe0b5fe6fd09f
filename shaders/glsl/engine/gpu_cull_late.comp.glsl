#version 450
// GPU cull, late phase: tests every object against this frame's frustum, then against the
// pyramid built from the early phase's depth; writes `visibility_bits` (next frame's
// history) and appends the objects visible now that the early phase did not draw.
#include "gpu_cull.h"
layout(local_size_x = CULL_GROUP) in;

layout(set = 0, binding = 4) uniform sampler2D hiz;
layout(std430, set = 0, binding = 5) writeonly buffer VisibilityBits {
    uint visibility[];
};
layout(std430, set = 0, binding = 6) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 7) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = 8) buffer CullStats {
    uint stats[STAT_COUNT];
};

shared uint words[2];
// This workgroup's counters, added to `stats` once.
shared uint counts[STAT_COUNT];

#include "hiz_occlusion.h"

// Whether the pyramid proves the object's world box hidden (undecided boxes are kept). The
// corners are the CPU's stored box, centre minus and plus the half extents.
bool occluded(vec3 center, vec3 half_extent) {
    return hiz_test(cull.view_projection, center - half_extent, center + half_extent, cull.hiz_size, cull.hiz_mips,
               cull.depth_margin, cull.footprint_margin)
        == HIZ_HIDDEN;
}

void main() {
    if (gl_LocalInvocationIndex < 2u) {
        words[gl_LocalInvocationIndex] = 0u;
    }
    if (gl_LocalInvocationIndex < STAT_COUNT) {
        counts[gl_LocalInvocationIndex] = 0u;
    }
    barrier();
    uint object = gl_GlobalInvocationID.x;
    if (object < cull.object_count) {
        ObjectRecord record = objects[object];
        atomicAdd(counts[STAT_OBJECTS], 1u);
        vec3 center;
        vec3 half_extent;
        object_world_box(transforms[object], record, center, half_extent);
        bool visible = record.index_count != 0u
            && ((cull.flags & CULL_FRUSTUM) == 0u || frustum_keeps(center, half_extent));
        if (!visible) {
            atomicAdd(counts[STAT_FRUSTUM_REJECTED], 1u);
        } else if ((cull.flags & CULL_OCCLUSION) != 0u && occluded(center, half_extent)) {
            visible = false;
            atomicAdd(counts[STAT_OCCLUSION_REJECTED], 1u);
        }
        if (visible) {
            atomicOr(words[gl_LocalInvocationIndex / 32u], 1u << (gl_LocalInvocationIndex % 32u));
            // The early phase drew what was visible last frame and is in the frustum now;
            // under cluster culling only objects from `draw_from` on are drawn whole here.
            if (!was_visible(object) && object >= cull.draw_from) {
                uint slot = atomicAdd(draw_count, 1u);
                commands[slot] = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
                atomicAdd(counts[STAT_LATE_DRAWN], 1u);
                atomicAdd(counts[STAT_TRIANGLES], record.index_count / 3u);
            }
        }
    }
    barrier();
    if (gl_LocalInvocationIndex < 2u) {
        visibility[gl_WorkGroupID.x * 2u + gl_LocalInvocationIndex] = words[gl_LocalInvocationIndex];
    }
    if (gl_LocalInvocationIndex < STAT_COUNT && counts[gl_LocalInvocationIndex] != 0u) {
        atomicAdd(stats[gl_LocalInvocationIndex], counts[gl_LocalInvocationIndex]);
    }
}

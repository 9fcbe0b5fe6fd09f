// The camera's object cull, late phase (`gpu_cull.h`): every object is tested against each
// view's frustum this frame, then against the view's rectangle of the pyramid built from the
// early phase's depth; its bit goes to the view's words of `visibility_bits` (next frame's
// history), and the objects visible now that the view's early phase did not draw are appended
// to its late list of `draw_commands`; each object the main view's frustum keeps leaves its
// chosen level as its slot's state (`object_lod_levels`).
// The phase's shader body, included by gpu_cull_late.comp (the window's views) and
// image_cull_late.comp (an image-target view, CULL_IMAGE_VIEW 1) after their defines.
#ifndef GPU_CULL_LATE_MAIN_H
#define GPU_CULL_LATE_MAIN_H
#define CULL_LATE 1
#include "gpu_cull.h"

layout(std430, set = 0, binding = CULL_KIND_BINDING) writeonly buffer VisibilityBits {
    uint visibility[];
};
// Every slot's level for next frame (`lod_table.h`): the level chosen where the frustum
// keeps the object (the CPU's tracked frames re-pick only what is in view) or the view is
// flagged CULL_LOD_EVERY_OBJECT (the CPU's full pass re-picked everything), else last
// frame's.
#if !CULL_IMAGE_VIEW
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 7) writeonly buffer LodLevels {
    uint lod_levels[];
};
#endif

// This workgroup's 64 bits and counters, written to the buffers once.
shared uint words[2];
shared uint counts[STAT_COUNT];

void cull_judged(uint view, uint object, CullItem item, uint verdict) {
    // The slots' states are the main view's; the other views measure from them.
#if !CULL_IMAGE_VIEW
    if (view == 0u) {
        bool picked = verdict != VERDICT_FRUSTUM || (views[0].flags & CULL_LOD_EVERY_OBJECT) != 0u;
        lod_levels[object] = picked && item.lod_state != 0u ? item.lod_state : lod_history[object];
    }
#endif
    atomicAdd(counts[STAT_OBJECTS], 1u);
    if (verdict == VERDICT_FRUSTUM) {
        atomicAdd(counts[STAT_FRUSTUM_REJECTED], 1u);
    } else if (verdict == VERDICT_OCCLUDED) {
        atomicAdd(counts[STAT_OCCLUSION_REJECTED], 1u);
    }
}

void cull_keep(uint view, uint object, CullItem item, bool draw, bool bit) {
    if (bit) {
        atomicOr(words[gl_LocalInvocationIndex / 32u], 1u << (gl_LocalInvocationIndex % 32u));
    }
    // Under cluster culling only objects from `draw_from` on are drawn whole here.
    if (draw && object >= constants.draw_from) {
        if (append_object(2u * view + 1u, object, item)) {
            atomicAdd(counts[STAT_LATE_COMMANDS], 1u);
        }
        atomicAdd(counts[STAT_LATE_DRAWN], 1u);
        atomicAdd(counts[STAT_TRIANGLES], item.record.index_count / 3u);
        atomicAdd(counts[STAT_LOD_LEVEL0 + min(item.level, LOD_STAT_LEVELS - 1u)], 1u);
    }
}

#include "two_phase_cull.h"

void main() {
    if (gl_LocalInvocationIndex < 2u) {
        words[gl_LocalInvocationIndex] = 0u;
    }
    if (gl_LocalInvocationIndex < STAT_COUNT) {
        counts[gl_LocalInvocationIndex] = 0u;
    }
    barrier();
    uint object = gl_GlobalInvocationID.x;
    uint view = constants.first_view + gl_WorkGroupID.y;
    if (object < constants.item_count) {
        cull_in_view(view, object, cull_load_in(view, object));
    }
    barrier();
    if (gl_LocalInvocationIndex < 2u) {
        uint word = view * constants.words_per_view + gl_WorkGroupID.x * 2u + gl_LocalInvocationIndex;
        visibility[word] = words[gl_LocalInvocationIndex];
    }
    if (gl_LocalInvocationIndex < STAT_COUNT && counts[gl_LocalInvocationIndex] != 0u) {
        atomicAdd(stats[view * STAT_COUNT + gl_LocalInvocationIndex], counts[gl_LocalInvocationIndex]);
    }
}
#endif

// The camera's object cull, early phase (`gpu_cull.h`): the objects each view kept last frame
// that are in its frustum this frame are appended to the view's early list of `draw_commands`; the depth
// prepass draws them, the Hi-Z build reduces that depth and the late phase tests everything
// against it. Each is drawn at the level the late phase will keep for it (the same rule on
// the same inputs).
// The phase's shader body, included by gpu_cull_early.comp (the window's views) and
// image_cull_early.comp (an image-target view, CULL_IMAGE_VIEW 1) after their defines.
#ifndef GPU_CULL_EARLY_MAIN_H
#define GPU_CULL_EARLY_MAIN_H
#define CULL_LATE 0
#include "gpu_cull.h"

// The early phase decides no verdict of the camera's (the late phase counts them).
void cull_judged(uint view, uint object, CullItem item, uint verdict) {
}

void cull_keep(uint view, uint object, CullItem item, bool draw, bool bit) {
    if (draw) {
        uint counters = view * STAT_COUNT;
        if (append_object(2u * view, object, item)) {
            atomicAdd(stats[counters + STAT_EARLY_COMMANDS], 1u);
        }
        atomicAdd(stats[counters + STAT_EARLY_DRAWN], 1u);
        atomicAdd(stats[counters + STAT_TRIANGLES], item.record.index_count / 3u);
        atomicAdd(stats[counters + STAT_LOD_LEVEL0 + min(item.level, LOD_STAT_LEVELS - 1u)], 1u);
    }
}

#include "two_phase_cull.h"

void main() {
    uint object = gl_GlobalInvocationID.x;
    uint view = constants.first_view + gl_WorkGroupID.y;
    // Under cluster culling objects below `draw_from` are drawn meshlet by meshlet instead.
    if (object >= constants.item_count || object < constants.draw_from || !cull_needs_item(view, object)) {
        return;
    }
    cull_in_view(view, object, cull_load_in(view, object));
}
#endif

#version 450
// The shadow casters' late cull (`shadow_cull.h`): occlusion views test every caster in
// their frustum against the pyramid of their tile (built from the early phase's depth),
// write their bits (next frame's history) and draw those visible now that the early phase
// did not draw.
#include "shadow_cull.h"

layout(set = 0, binding = 5) uniform sampler2D hiz;
layout(std430, set = 0, binding = 6) writeonly buffer ShadowDrawsLate {
    DrawCommand draws[];
};
layout(std430, set = 0, binding = 7) buffer ShadowDrawCounts {
    uint draw_counts[MAX_SHADOW_VIEWS * 4];
};
layout(std430, set = 0, binding = 8) buffer ShadowCasterBits {
    uint bits[];
};

#include "hiz_occlusion.h"
// Occlusion views test every caster in their frustum against the pyramid of their tile, set
// the bit of each it does not hide and draw those the early phase did not.
void judge_view(uint view, ShadowCullView light_view, uint object, uint index_count, vec3 center, vec3 half_extent,
    inout uint drawn_views[4]) {
    if ((light_view.flags & CULL_OCCLUSION) == 0u || view >= MAX_CASCADES) {
        return;
    }
    if (!frustum_keeps_box(light_view.planes, light_view.plane_count, center, half_extent)) {
        return;
    }
    // A tile past the pyramid (placed elsewhere after a change of settings) is not tested:
    // every caster in its frustum counts as visible.
    uvec4 tile = light_view.tile;
    bool in_pyramid = max(tile.x, tile.y) + tile.z <= constants.hiz_size;
    int answer = !in_pyramid ? HIZ_UNDECIDED
                             : hiz_test_rect(light_view.view_projection, center - half_extent, center + half_extent,
                                 vec2(tile.xy), vec2(tile.z), tile.w, constants.depth_margin,
                                 constants.footprint_margin);
    if (answer != HIZ_HIDDEN) {
        keep(view, index_count, !kept_last_frame(view, object), true, drawn_views);
    }
}

#include "shadow_cull_phase.h"

void main() {
    cull_phase(true);
}

#version 450
// The shadow casters' early cull (`shadow_cull.h`): frustum-only views keep every caster in
// their frustum (the bits written here); occlusion views draw the casters they kept last
// frame that are in their frustum now.
#include "shadow_cull.h"

layout(std430, set = 0, binding = 5) writeonly buffer ShadowDraws {
    DrawCommand draws[];
};
layout(std430, set = 0, binding = 6) buffer ShadowDrawCounts {
    uint draw_counts[MAX_SHADOW_VIEWS * 4];
};
layout(std430, set = 0, binding = 7) buffer ShadowCasterBits {
    uint bits[];
};

// Frustum-only views keep every caster in their frustum; occlusion views draw only those of
// them they kept last frame (no bit: the late phase writes theirs).
void judge_view(uint view, ShadowCullView light_view, uint object, uint index_count, vec3 center, vec3 half_extent,
    inout uint drawn_views[4]) {
    bool occlusion = (light_view.flags & CULL_OCCLUSION) != 0u;
    if (occlusion && !kept_last_frame(view, object)) {
        return;
    }
    if ((light_view.flags & CULL_FRUSTUM) == 0u
        || frustum_keeps_box(light_view.planes, light_view.plane_count, center, half_extent)) {
        keep(view, index_count, true, !occlusion, drawn_views);
    }
}

#include "shadow_cull_phase.h"

void main() {
    cull_phase(false);
}

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

#include "shadow_cull_lists.h"

void main() {
    clear_group();
    barrier();
    uint object = gl_GlobalInvocationID.x;
    uint view_count = min(constants.view_count, MAX_SHADOW_VIEWS);
    uint drawn_views[4] = uint[4](0u, 0u, 0u, 0u);
    bool caster = false;
    ObjectRecord record;
    if (object < constants.object_count) {
        record = objects[object];
        caster = record.index_count != 0u && (casters[object / 32u] >> (object % 32u) & 1u) == 1u;
    }
    if (caster) {
        vec3 center;
        vec3 half_extent;
        object_world_box(transforms[object], record, center, half_extent);
        for (uint view = 0u; view < view_count; ++view) {
            ShadowCullView light_view = views[view];
            bool occlusion = (light_view.flags & CULL_OCCLUSION) != 0u;
            if (occlusion && !kept_last_frame(view, object)) {
                continue;
            }
            if ((light_view.flags & CULL_FRUSTUM) == 0u
                || frustum_keeps_box(light_view.planes, light_view.plane_count, center, half_extent)) {
                keep(view, record.index_count, true, !occlusion, drawn_views);
            }
        }
    }
    barrier();
    reserve(0u, false, view_count);
    barrier();
    if (caster) {
        append(record, object, view_count, drawn_views);
    }
}

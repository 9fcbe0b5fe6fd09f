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
            if ((light_view.flags & CULL_OCCLUSION) == 0u || view >= MAX_CASCADES) {
                continue;
            }
            if (!frustum_keeps_box(light_view.planes, light_view.plane_count, center, half_extent)) {
                continue;
            }
            // A tile past the pyramid (placed elsewhere after a change of settings) is not
            // tested: every caster in its frustum counts as visible.
            uvec4 tile = light_view.tile;
            bool in_pyramid = max(tile.x, tile.y) + tile.z <= constants.hiz_size;
            int answer = !in_pyramid ? HIZ_UNDECIDED
                                     : hiz_test_rect(light_view.view_projection, center - half_extent,
                                         center + half_extent, vec2(tile.xy), vec2(tile.z), tile.w,
                                         constants.depth_margin, constants.footprint_margin);
            if (answer != HIZ_HIDDEN) {
                keep(view, record.index_count, !kept_last_frame(view, object), true, drawn_views);
            }
        }
    }
    barrier();
    reserve(1u, true, view_count);
    barrier();
    if (caster) {
        append(record, object, view_count, drawn_views);
    }
}

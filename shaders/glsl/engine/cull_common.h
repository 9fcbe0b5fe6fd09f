// Shared by the object cull (`gpu_cull.h`), the cluster cull (`cluster_cull.h`) and the shadow
// caster cull (`shadow_cull.h`): the indirect draw command, the finiteness test of the CPU
// kernels and their frustum test on a world box.
// Host twins: renderer/src/scene/records.rs (`DrawCommand`), culling/src/frustum.rs
// (`lane_is_finite`).
#ifndef CULL_COMMON_H
#define CULL_COMMON_H

// One `VkDrawIndexedIndirectCommand` per draw, `firstInstance` = object slot.
struct DrawCommand {
    uint index_count;
    uint instance_count;
    uint first_index;
    int vertex_offset;
    uint first_instance;
};

// Whether `value` is finite, as the CPU kernels test it: |value| <= FLT_MAX (NaN fails).
bool lane_is_finite(float value) {
    return abs(value) <= 3.40282347e38;
}

// The frustum test on a world box (centre, half extents from `object_world_box`) against the
// first `plane_count` inward unit planes, step for step the CPU reference
// (`culling/src/frustum.rs`, `aabb_lane`) on the same box: `precise` forbids fused
// multiply-adds and reordering, so the bits equal the CPU kernels'. A box straddling a plane,
// or with a non-finite number, is kept.
bool frustum_keeps_box(vec4 planes[6], uint plane_count, vec3 center, vec3 half_extent) {
    // Step 1: a non-finite input is kept.
    bool finite = lane_is_finite(center.x) && lane_is_finite(center.y) && lane_is_finite(center.z)
        && lane_is_finite(half_extent.x) && lane_is_finite(half_extent.y) && lane_is_finite(half_extent.z);
    // Step 2: half extents by absolute value, so an inverted box cannot cull.
    vec3 half_abs = abs(half_extent);
    bool outside = false;
    for (uint index = 0u; index < plane_count; ++index) {
        vec4 plane = planes[index];
        // Step 3: centre distance ((nx*cx + ny*cy) + nz*cz) + d.
        precise float distance = ((plane.x * center.x + plane.y * center.y) + plane.z * center.z) + plane.w;
        // Step 4: reach of the corner furthest along n.
        precise float reach = (abs(plane.x) * half_abs.x + abs(plane.y) * half_abs.y) + abs(plane.z) * half_abs.z;
        // Step 5: outside when even that corner is behind the plane.
        precise float furthest = distance + reach;
        outside = outside || furthest < 0.0;
    }
    return !outside || !finite;
}
#endif

// Shared by the GPU cull shaders (`gpu_cull_early.comp`, `gpu_cull_late.comp`): the cull
// parameters, the object record and the frustum and occlusion tests.
// Host twins: culling/src/gpu/cull.rs (`CullUniforms`, `CULL_GROUP`, the flag constants) and
// render_graph/src/passes/records.rs (`ObjectTransform`, `ObjectRecord`, `DrawCommand`).

#include "config.h"

// std140, 208 bytes.
layout(std140, set = 0, binding = 0) uniform CullUniforms {
    // World to clip (glam conventions, +y up, reversed-Z).
    mat4 view_projection;
    // Inward unit planes (xyz normal, w offset); `plane_count` of them are used.
    vec4 planes[6];
    uint plane_count;
    uint object_count;
    uint flags;
    // Mips of `hiz_depth`.
    uint hiz_mips;
    // Size of mip 0 of `hiz_depth` in texels.
    vec2 hiz_size;
    // Relative raise of a box's nearest depth, and footprint widening in texels, for the
    // f32 rounding of the projection (the CPU occlusion test's margins).
    float depth_margin;
    float footprint_margin;
    // The late phase appends only objects from this index on: 0 normally; under cluster
    // culling, the first object the cluster table does not cover (the cluster pass draws the
    // others meshlet by meshlet).
    uint draw_from;
} cull;

#include "object_record.h"
#include "cull_common.h"

layout(std430, set = 0, binding = 1) readonly buffer ObjectTransforms {
    ObjectTransform transforms[];
};

layout(std430, set = 0, binding = 2) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};

// Last frame's visibility (bit i of word i / 32 = object i), zeros on the first frame.
layout(std430, set = 0, binding = 3) readonly buffer HistoryBits {
    uint history[];
};


// The frame's counters (`cull_stats`, zeroed by the reset pass) are `STAT_*` of config.h.


// The frustum test on a world box (centre, half extents from `object_world_box`), step for
// step the CPU reference (`culling/src/frustum.rs`, `aabb_lane`) on the same box: `precise`
// forbids fused multiply-adds and reordering, so the bits equal the CPU kernels'. A box
// straddling a plane, or with a non-finite number, is kept.
bool frustum_keeps(vec3 center, vec3 half_extent) {
    // Step 1: a non-finite input is kept.
    bool finite = lane_is_finite(center.x) && lane_is_finite(center.y) && lane_is_finite(center.z)
        && lane_is_finite(half_extent.x) && lane_is_finite(half_extent.y) && lane_is_finite(half_extent.z);
    // Step 2: half extents by absolute value, so an inverted box cannot cull.
    vec3 half_abs = abs(half_extent);
    bool outside = false;
    for (uint index = 0u; index < cull.plane_count; ++index) {
        vec4 plane = cull.planes[index];
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

// Whether object `object` was visible last frame.
bool was_visible(uint object) {
    return (history[object / 32u] >> (object % 32u) & 1u) == 1u;
}

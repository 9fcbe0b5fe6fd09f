// Shared by the GPU cull shaders (`gpu_cull_early.comp`, `gpu_cull_late.comp`): the cull
// parameters, the object record and the frustum and occlusion tests.
// Host twins: renderer/src/passes/cull.rs (`CullUniforms`, `CULL_GROUP`, the flag constants)
// and renderer/src/scene/records.rs (`ObjectTransform`, `ObjectRecord`, `DrawCommand`).

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


// The frustum test of `cull_common.h` against this frame's camera planes.
bool frustum_keeps(vec3 center, vec3 half_extent) {
    return frustum_keeps_box(cull.planes, cull.plane_count, center, half_extent);
}

// Whether object `object` was visible last frame.
bool was_visible(uint object) {
    return (history[object / 32u] >> (object % 32u) & 1u) == 1u;
}

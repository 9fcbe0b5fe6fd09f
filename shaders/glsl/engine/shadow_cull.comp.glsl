#version 450
// The shadow caster cull: one dispatch, one thread per object slot. Each caster's world box
// is tested against every light view of the frame with the frustum test of `cull_common.h`
// (so each view's bits equal the CPU's multi-view cull on the same boxes), and a draw of it
// is appended to the list of every view that keeps it. A caster outside the camera's view is
// tested like any other: the light view decides.
//
// View v's list starts at command `v * region` of `shadow_draws` and holds `counts[v]`
// commands of `shadow_draw_counts` (the count of its indirect-count draw; `triangles[v]`
// their triangles); its bits (bit s of word s / 32 = slot s) are the `words_per_view` words
// from `v * words_per_view` of `shadow_caster_bits`. Counts and bits start zeroed (the reset
// pass); a workgroup adds its counts with one atomic per view.
// Host twins: renderer/src/passes/shadow_cull.rs (`ShadowCullView`, `ShadowCullConstants`).
#include "config.h"
#include "object_record.h"
#include "cull_common.h"

#if MAX_SHADOW_VIEWS > 128
#error "a thread keeps its views' verdicts in four words"
#endif

layout(local_size_x = CULL_GROUP) in;

layout(push_constant) uniform ShadowCullConstants {
    // Slots to test (`object_records[..object_count]`).
    uint object_count;
    // Views of the frame (at most MAX_SHADOW_VIEWS).
    uint view_count;
    // Commands each view's list has room for (the scene's capacity).
    uint region;
    // u32 words of each view's bits.
    uint words_per_view;
} constants;

// One light view: inward unit planes (xyz normal, w offset), `plane_count` of them used;
// `flags` CULL_FRUSTUM tests them, 0 keeps every caster (caster culling off, or a view whose
// planes are not finite).
struct ShadowCullView {
    vec4 planes[6];
    uint plane_count;
    uint flags;
    uint pad0;
    uint pad1;
};

layout(std430, set = 0, binding = 0) readonly buffer ObjectTransforms {
    ObjectTransform transforms[];
};
layout(std430, set = 0, binding = 1) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};
// Bit s of word s / 32: slot s is a drawable shadow caster.
layout(std430, set = 0, binding = 2) readonly buffer ShadowCasters {
    uint casters[];
};
layout(std430, set = 0, binding = 3) readonly buffer ShadowCullViews {
    ShadowCullView views[];
};
layout(std430, set = 0, binding = 4) writeonly buffer ShadowDraws {
    DrawCommand draws[];
};
layout(std430, set = 0, binding = 5) buffer ShadowDrawCounts {
    uint counts[MAX_SHADOW_VIEWS];
    uint triangles[MAX_SHADOW_VIEWS];
};
layout(std430, set = 0, binding = 6) writeonly buffer ShadowCasterBits {
    uint bits[];
};

// Per view: this workgroup's keeps (then its cursor), triangles, first command, bits.
shared uint group_counts[MAX_SHADOW_VIEWS];
shared uint group_triangles[MAX_SHADOW_VIEWS];
shared uint group_base[MAX_SHADOW_VIEWS];
shared uint group_bits[MAX_SHADOW_VIEWS * 2];

void main() {
    uint local = gl_LocalInvocationIndex;
    for (uint view = local; view < MAX_SHADOW_VIEWS; view += CULL_GROUP) {
        group_counts[view] = 0u;
        group_triangles[view] = 0u;
        group_bits[view * 2u] = 0u;
        group_bits[view * 2u + 1u] = 0u;
    }
    barrier();

    uint object = gl_GlobalInvocationID.x;
    uint view_count = min(constants.view_count, MAX_SHADOW_VIEWS);
    uint kept[4] = uint[4](0u, 0u, 0u, 0u);
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
            if ((light_view.flags & CULL_FRUSTUM) == 0u
                || frustum_keeps_box(light_view.planes, light_view.plane_count, center, half_extent)) {
                kept[view / 32u] |= 1u << (view % 32u);
                atomicAdd(group_counts[view], 1u);
                atomicAdd(group_triangles[view], record.index_count / 3u);
                atomicOr(group_bits[view * 2u + local / 32u], 1u << (local % 32u));
            }
        }
    }
    barrier();

    // One thread per view reserves the workgroup's commands and writes its bits.
    for (uint view = local; view < view_count; view += CULL_GROUP) {
        uint count = group_counts[view];
        group_base[view] = count == 0u ? 0u : atomicAdd(counts[view], count);
        if (group_triangles[view] != 0u) {
            atomicAdd(triangles[view], group_triangles[view]);
        }
        uint word = view * constants.words_per_view + gl_WorkGroupID.x * 2u;
        bits[word] = group_bits[view * 2u];
        bits[word + 1u] = group_bits[view * 2u + 1u];
        group_counts[view] = 0u;
    }
    barrier();

    if (caster) {
        DrawCommand draw = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
        for (uint view = 0u; view < view_count; ++view) {
            if ((kept[view / 32u] >> (view % 32u) & 1u) == 1u) {
                uint index = group_base[view] + atomicAdd(group_counts[view], 1u);
                draws[view * constants.region + index] = draw;
            }
        }
    }
}

// The shadow casters' cull, in two phases like the camera's (`shadow_cull_early.comp`,
// `shadow_cull_late.comp`), one thread per object slot, every light view of the frame in
// each dispatch. A caster's world box is tested against a view with the frustum test of
// `cull_common.h` (so a frustum-only view's bits equal the CPU's multi-view cull on the same
// boxes); views flagged CULL_OCCLUSION (the sun's cascades) are also tested against the
// pyramid of their tile of the atlas, two-phase: the early phase draws the casters the view
// kept last frame (its history bits) that are in its frustum now, the pyramid is built from
// that depth, and the late phase tests every caster in the frustum against it, drawing those
// visible now that the early phase did not draw. A caster outside the camera's view is tested
// like any other: the light view decides.
//
// View v's early list starts at command `v * region` of `shadow_draws`, its late list at
// `v * region` of `shadow_draws_late`; `shadow_draw_counts` holds, per view, the early count,
// the early triangles, the late count and the late triangles (MAX_SHADOW_VIEWS u32 each, in
// that order). The view's bits (bit s of word s / 32 = slot s; its history is last frame's)
// are the `words_per_view` words from `v * words_per_view` of `shadow_caster_bits`: the early
// phase writes those of frustum-only views, the late phase those of occlusion views. Counts
// and bits start zeroed (the reset pass); a workgroup adds its counts with one atomic per
// view and list.
// Host twins: renderer/src/passes/shadow_cull.rs (`ShadowCullView` in scene/shadows.rs, the
// push constants, the count layout).
#ifndef SHADOW_CULL_H
#define SHADOW_CULL_H
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
    // The pyramid's mip 0 side (a square at the atlas's top-left corner) and mips (late
    // phase).
    uint hiz_size;
    uint hiz_mips;
    // The occlusion test's margins (the camera's).
    float depth_margin;
    float footprint_margin;
} constants;

// One light view: world to the view's clip space; inward unit planes (xyz normal, w offset),
// `plane_count` of them used; its tile of the atlas (x, y, side) and the pyramid mips its
// tile spans; `flags`: CULL_FRUSTUM tests the planes (0 keeps every caster: caster culling
// off, or planes that are not finite), CULL_OCCLUSION also the pyramid, two-phase.
struct ShadowCullView {
    mat4 view_projection;
    vec4 planes[6];
    uvec4 tile;
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
// Last frame's bits of every view (zeros after a reset).
layout(std430, set = 0, binding = 4) readonly buffer ShadowHistory {
    uint history[];
};

// Per view: this workgroup's keeps (then its cursor), triangles, first command, bits.
shared uint group_counts[MAX_SHADOW_VIEWS];
shared uint group_triangles[MAX_SHADOW_VIEWS];
shared uint group_base[MAX_SHADOW_VIEWS];
shared uint group_bits[MAX_SHADOW_VIEWS * 2];

// Whether `view` kept `object` last frame.
bool kept_last_frame(uint view, uint object) {
    return (history[view * constants.words_per_view + object / 32u] >> (object % 32u) & 1u) == 1u;
}

void clear_group() {
    for (uint view = gl_LocalInvocationIndex; view < MAX_SHADOW_VIEWS; view += CULL_GROUP) {
        group_counts[view] = 0u;
        group_triangles[view] = 0u;
        group_bits[view * 2u] = 0u;
        group_bits[view * 2u + 1u] = 0u;
    }
}

// Records that this thread draws its object into `view` (`drawn`) and/or sets its bit.
void keep(uint view, uint index_count, bool drawn, bool bit, inout uint drawn_views[4]) {
    if (drawn) {
        drawn_views[view / 32u] |= 1u << (view % 32u);
        atomicAdd(group_counts[view], 1u);
        atomicAdd(group_triangles[view], index_count / 3u);
    }
    if (bit) {
        atomicOr(group_bits[view * 2u + gl_LocalInvocationIndex / 32u], 1u << (gl_LocalInvocationIndex % 32u));
    }
}

#endif

// The shadow casters' cull (`shadow_cull_early.comp`, `shadow_cull_late.comp`): the two-phase
// skeleton (`two_phase_cull.h`) over every light view of the frame in each dispatch, one
// thread per object slot. A caster's world box is tested against each view's frustum (so a
// frustum-only view's bits equal the CPU's multi-view cull on the same boxes); views flagged
// CULL_OCCLUSION | CULL_TWO_PHASE (the sun's cascades) are also tested against their tile of
// the atlas's pyramid in the late phase, the others are decided in the early phase. A caster
// outside the camera's view is tested like any other: the light view decides.
//
// View v's early list starts at command `v * region` of `shadow_draws`, its late list at
// `v * region` of `shadow_draws_late`; `shadow_draw_counts` holds, per view, the early count,
// the early triangles, the late count and the late triangles (MAX_SHADOW_VIEWS u32 each, in
// that order). The view's bits are the `words_per_view` words from `v * words_per_view` of
// `shadow_caster_bits` (its history is last frame's). Counts and bits start zeroed (the reset
// pass); a workgroup adds its counts with one atomic per view and list, and writes each
// decided view's 64 bits once.
//
// Levels of detail: a caster whose record names a chain (`lod_table.h`) is drawn at the level
// the camera's cull chooses for it this frame, not one of its own per light view: every light
// view carries the main camera's rule and eye (flag CULL_LOD, `CullView::with_lod` on the
// host), and the level is chosen once per caster from view 0's copy with the slot's state of
// last frame (the camera's history, `object_lod_levels`), as `gpu_cull.h` chooses the main
// view's level, so a shadow is the shadow of the mesh the camera draws (a light's own eye
// would pick, for a far light, a coarser caster than the one on screen, and the shadow would
// not match its object). A caster outside the camera's view gets the level the camera's rule
// gives from the camera's eye, as if it were in view.
// Host twins: renderer/src/passes/cull/shadow.rs (the binding order, the count layout).
#ifndef SHADOW_CULL_H
#define SHADOW_CULL_H
#include "cull_inputs.h"
#include "lod_table.h"

#if MAX_SHADOW_VIEWS > 128
#error "a thread keeps its views' verdicts in four words"
#endif

layout(local_size_x = CULL_GROUP) in;

// Bit s of word s / 32: slot s is a drawable shadow caster.
layout(std430, set = 0, binding = CULL_KIND_BINDING) readonly buffer ShadowCasters {
    uint casters[];
};
layout(std430, set = 0, binding = CULL_KIND_BINDING + 1) writeonly buffer ShadowDraws {
    DrawCommand draws[];
};
layout(std430, set = 0, binding = CULL_KIND_BINDING + 2) buffer ShadowDrawCounts {
    uint draw_counts[MAX_SHADOW_VIEWS * 4];
};
layout(std430, set = 0, binding = CULL_KIND_BINDING + 3) buffer ShadowCasterBits {
    uint bits[];
};
// The chains' levels and the camera's state of every slot last frame (`lod_table.h`).
layout(std430, set = 0, binding = CULL_KIND_BINDING + 4) readonly buffer LodEntries {
    LodEntry lod_entries[];
};
layout(std430, set = 0, binding = CULL_KIND_BINDING + 5) readonly buffer LodHistory {
    uint lod_history[];
};

// The chain `lod_select` reads: its first entry.
uint lod_chain_first = 0u;

float lod_level_error(uint level) {
    return lod_entries[lod_chain_first + level].error;
}

// A caster, read once: its record and world box.
struct CullItem {
    ObjectRecord record;
    vec3 center;
    vec3 half_extent;
};

// Draws a chained caster at the level the camera's cull chooses for slot `object` this frame
// (see the header's comment): the rule and eye of view 0 (every light view carries the
// camera's), the slot's state of last frame.
void choose_caster_level(uint object, ObjectTransform transform, inout CullItem item) {
    uint count = item.record.reserved[1];
    if (constants.view_count == 0u || (views[0].flags & CULL_LOD) == 0u || count == 0u) {
        return;
    }
    CullView camera = views[0];
    uint first = item.record.reserved[0];
    // A distance chain's levels the camera's cull leaves at the record's (the CPU's pick), and
    // a chain held at the record's level (LOD_RULE_RECORD) is drawn at it too.
    if (lod_entries[first].rule != LOD_RULE_ERROR) {
        return;
    }
    lod_chain_first = first;
    float scale_sq = lod_scale_sq(transform_column(transform, 0), transform_column(transform, 1),
        transform_column(transform, 2));
    float distance_sq = lod_box_distance_sq(camera.lod_eye.xyz, item.center, item.half_extent);
    uint last = lod_state_level(lod_history[object], first);
    uint level = lod_select(min(count, MAX_GPU_LOD_LEVELS), scale_sq, distance_sq, camera.lod, last);
    LodEntry entry = lod_entries[first + level];
    item.record.index_count = entry.index_count;
    item.record.first_index = entry.first_index;
    item.record.vertex_offset = entry.vertex_offset;
}

// Per view: this workgroup's draws (then its cursor), triangles, first command, bits.
shared uint group_counts[MAX_SHADOW_VIEWS];
shared uint group_triangles[MAX_SHADOW_VIEWS];
shared uint group_base[MAX_SHADOW_VIEWS];
shared uint group_bits[MAX_SHADOW_VIEWS * 2];
// The views this thread draws its caster into, a bit each.
uint drawn_views[4] = uint[4](0u, 0u, 0u, 0u);

uint cull_tests(uint view, CullView v, CullItem item) {
    return view_keeps_box(v, item.center, item.half_extent) ? VERDICT_VISIBLE : VERDICT_FRUSTUM;
}

#if CULL_LATE
int cull_occlusion(uint view, CullView v, CullItem item) {
    return view_occlusion(v, item.center - item.half_extent, item.center + item.half_extent);
}
#endif

// The shadow views keep no statistics of their verdicts.
void cull_judged(uint view, uint object, CullItem item, uint verdict) {
}

void cull_keep(uint view, uint object, CullItem item, bool draw, bool bit) {
    if (draw) {
        drawn_views[view / 32u] |= 1u << (view % 32u);
        atomicAdd(group_counts[view], 1u);
        atomicAdd(group_triangles[view], item.record.index_count / 3u);
    }
    if (bit) {
        atomicOr(group_bits[view * 2u + gl_LocalInvocationIndex / 32u], 1u << (gl_LocalInvocationIndex % 32u));
    }
}

#include "two_phase_cull.h"

// After a barrier: one thread per view reserves the workgroup's commands of the phase's list
// (counts from 0 early, from 2 MAX_SHADOW_VIEWS late) and writes the bits of the views this
// phase decides (two-phase views in the late phase, the others in the early one).
void reserve(uint view_count) {
    for (uint view = gl_LocalInvocationIndex; view < view_count; view += CULL_GROUP) {
        uint count = group_counts[view];
        uint counted = (CULL_LATE != 0 ? 2u * MAX_SHADOW_VIEWS : 0u) + view;
        group_base[view] = count == 0u ? 0u : atomicAdd(draw_counts[counted], count);
        if (group_triangles[view] != 0u) {
            atomicAdd(draw_counts[counted + MAX_SHADOW_VIEWS], group_triangles[view]);
        }
        bool two_phase = (views[view].flags & CULL_TWO_PHASE) != 0u;
        if (two_phase == (CULL_LATE != 0)) {
            uint word = view * constants.words_per_view + gl_WorkGroupID.x * 2u;
            bits[word] = group_bits[view * 2u];
            bits[word + 1u] = group_bits[view * 2u + 1u];
        }
        group_counts[view] = 0u;
    }
}

// Appends the caster to the list of every view it is drawn into.
void append(ObjectRecord record, uint object, uint view_count) {
    DrawCommand draw = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
    for (uint view = 0u; view < view_count; ++view) {
        if ((drawn_views[view / 32u] >> (view % 32u) & 1u) == 1u) {
            uint index = group_base[view] + atomicAdd(group_counts[view], 1u);
            draws[view * constants.region + index] = draw;
        }
    }
}

// The phase's whole dispatch over the first `view_count` views.
void shadow_cull(uint view_count) {
    for (uint view = gl_LocalInvocationIndex; view < MAX_SHADOW_VIEWS; view += CULL_GROUP) {
        group_counts[view] = 0u;
        group_triangles[view] = 0u;
        group_bits[view * 2u] = 0u;
        group_bits[view * 2u + 1u] = 0u;
    }
    barrier();
    uint object = gl_GlobalInvocationID.x;
    bool caster = false;
    CullItem item;
    if (object < constants.item_count) {
        item.record = objects[object];
        caster = item.record.index_count != 0u && (casters[object / 32u] >> (object % 32u) & 1u) == 1u;
    }
    if (caster) {
        ObjectTransform transform = transforms[object];
        object_world_box(transform, item.record, item.center, item.half_extent);
        choose_caster_level(object, transform, item);
        for (uint view = 0u; view < view_count; ++view) {
            if (cull_needs_item(view, object)) {
                cull_in_view(view, object, item);
            }
        }
    }
    barrier();
    reserve(view_count);
    barrier();
    if (caster) {
        append(item.record, object, view_count);
    }
}
#endif

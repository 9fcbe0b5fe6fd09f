// The camera's object cull (`gpu_cull_early.comp`, `gpu_cull_late.comp`), the two-phase
// skeleton (`two_phase_cull.h`) specialised to the window's views (view 0 of `cull_views` the
// main camera, the others the split-screen views), one thread per object slot and view (the
// view is the workgroup's y): an object's world box is tested against the view's frustum, and
// in the late phase against the view's rectangle of `hiz_depth`; its bit goes to the view's
// words of `visibility_bits` (next frame's history) and it is appended to the view's list of
// its phase in `draw_commands` (list `2 view + phase` from command `list * constants.region`;
// `draw_count` word `list` holds its length), counted in the view's `STAT_COUNT` words of
// `cull_stats` (`STAT_*` of config.h). A view flagged CULL_LOD chooses the level of every
// object whose record names a chain (`lod_table.h`, the CPU's rule `lod_select.h`, with last
// frame's level of the slot as the hysteresis state; another view takes the main view's level
// of this frame as its state, as the CPU's other views do): the chosen level's range is drawn
// and its batch joined; the late phase keeps the level of every object the frustum keeps as the
// slot's state for next frame (`object_lod_levels`), the others' state unchanged. Batched (`constants.batched`), a list holds one
// instanced command per batch (mesh, level, material; the host's templates, instanceCount 0,
// firstInstance the base of the batch's run in `draw_instances`), and a kept object's slot is
// appended to its batch's run (an atomic add on the command's instanceCount); unbatched, one
// command per object, firstInstance its slot.
// Host twins: renderer/src/passes/cull/camera.rs (the statistics, the binding order),
// passes/batches.rs (the templates and `object_batches`) and scene/records.rs
// (`ObjectRecord`, `DrawCommand`).
#ifndef GPU_CULL_H
#define GPU_CULL_H
#include "cull_inputs.h"
#include "lod_table.h"
layout(local_size_x = CULL_GROUP) in;


// The lists, after the late phase's bits: the commands (read: a batch's firstInstance), each
// list's command count (early, late; zero, or the batches when batched), the counters, each
// slot's batch id and the instances of the batches' runs; then the chains' levels and last
// frame's level of every slot.
#if CULL_LATE
#define OBJECT_LIST_BINDING (CULL_KIND_BINDING + 1)
#else
#define OBJECT_LIST_BINDING CULL_KIND_BINDING
#endif
layout(std430, set = 0, binding = OBJECT_LIST_BINDING) buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 1) buffer DrawCounts {
    uint draw_counts[];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 2) buffer CullStats {
    uint stats[];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 3) readonly buffer ObjectBatches {
    uint object_batches[];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 4) writeonly buffer DrawInstances {
    uint draw_instances[];
};

// The chains' levels and last frame's level of every slot (`lod_table.h`).
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 5) readonly buffer LodEntries {
    LodEntry lod_entries[];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 6) readonly buffer LodHistory {
    uint lod_history[];
};

// An image-target view's cull (`image_cull_early.comp`, `image_cull_late.comp`, CULL_IMAGE_VIEW
// 1) dispatches one row, view 0 its own view, and stages the main camera's view as view 1: its
// levels measure their hysteresis from the main view's of this frame (as the CPU's other views
// do), it writes no slot's level state (the main view's), and it leaves out the slots whose bit
// is set in `excluded` (objects whose material samples the view's own image: a cycle).
#ifndef CULL_IMAGE_VIEW
#define CULL_IMAGE_VIEW 0
#endif
#if CULL_IMAGE_VIEW
#define CULL_MAIN_VIEW 1u
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 7) readonly buffer Excluded {
    uint excluded[];
};
#else
#define CULL_MAIN_VIEW 0u
#endif

// The chain `lod_select` reads: its first entry.
uint lod_chain_first = 0u;

float lod_level_error(uint level) {
    return lod_entries[lod_chain_first + level].error;
}

// A distance chain keeps each level's greatest distance where an error chain keeps its error.
float lod_level_limit(uint level) {
    return lod_entries[lod_chain_first + level].error;
}

// An object, read once: its record (with the chosen level's draw arguments), world box, the
// level chosen (0 for a record without a chain), its state word for next frame (0: none)
// and its batch.
struct CullItem {
    ObjectRecord record;
    vec3 center;
    vec3 half_extent;
    uint level;
    uint lod_state;
    uint batch;
};

// The state the main view's late phase leaves a chained slot this frame (`gpu_cull_late.comp`):
// the level it picks where its frustum keeps the box (or every object's), else last frame's.
// The other views measure their hysteresis from it, as the CPU's take the main view's level.
uint main_lod_state(uint first, uint levels, float scale_sq, vec3 center, vec3 half_extent, uint history) {
    CullView main_view = views[CULL_MAIN_VIEW];
    bool picked = (main_view.flags & CULL_LOD_EVERY_OBJECT) != 0u || view_keeps_box(main_view, center, half_extent);
    if ((main_view.flags & CULL_LOD) == 0u || !picked) {
        return history;
    }
    float distance_sq = lod_box_distance_sq(main_view.lod_eye.xyz, center, half_extent);
    uint level = lod_select(levels, scale_sq, distance_sq, main_view.lod, lod_state_level(history, first));
    return lod_state_word(first, level);
}

CullItem cull_load_in(uint view, uint object) {
    CullItem item;
    ObjectTransform transform = transforms[object];
    item.record = objects[object];
    object_world_box(transform, item.record, item.center, item.half_extent);
    item.level = 0u;
    item.lod_state = 0u;
    item.batch = constants.batched != 0u ? object_batches[object] : 0u;
#if CULL_IMAGE_VIEW
    // An excluded slot is drawn as an empty one: never.
    if ((excluded[object / 32u] >> (object % 32u) & 1u) == 1u) {
        item.record.index_count = 0u;
        return item;
    }
#endif
    CullView v = views[view];
    uint count = item.record.reserved[1];
    uint first = item.record.reserved[0];
    bool chained = count > 0u && item.record.index_count != 0u && lod_entries[first].rule != LOD_RULE_RECORD;
    bool by_distance = chained && lod_entries[first].rule == LOD_RULE_DISTANCE;
    uint rule_flag = by_distance ? CULL_LOD_DISTANCE : CULL_LOD;
    if (chained && (v.flags & rule_flag) != 0u) {
        lod_chain_first = first;
        uint levels = min(count, MAX_GPU_LOD_LEVELS);
        uint level;
        if (by_distance) {
            // The chain's bias times the view's global one, as `Lod::select` multiplies them.
            precise float bias = uintBitsToFloat(lod_entries[first].bias) * uintBitsToFloat(v.pad0);
            level = lod_select_distance(levels, item.center, v.lod_eye.xyz, v.lod_eye.w, bias);
        } else {
            float scale_sq = lod_scale_sq(transform_column(transform, 0), transform_column(transform, 1),
                transform_column(transform, 2));
            uint state = lod_history[object];
            if (view != CULL_MAIN_VIEW) {
                state = main_lod_state(first, levels, scale_sq, item.center, item.half_extent, state);
            }
            float distance_sq = lod_box_distance_sq(v.lod_eye.xyz, item.center, item.half_extent);
            level = lod_select(levels, scale_sq, distance_sq, v.lod, lod_state_level(state, first));
        }
        LodEntry entry = lod_entries[first + level];
        item.record.index_count = entry.index_count;
        item.record.first_index = entry.first_index;
        item.record.vertex_offset = entry.vertex_offset;
        item.record.mesh = entry.mesh;
        item.level = level;
        // A distance chain keeps no state: the rule has no hysteresis.
        item.lod_state = by_distance ? 0u : lod_state_word(first, level);
        item.batch = entry.batch;
    }
    return item;
}

// The main view's item (view 0).
CullItem cull_load(uint object) {
    return cull_load_in(0u, object);
}

// An empty slot (no indices) counts with the frustum's rejects: it is never drawn.
uint cull_tests(uint view, CullView v, CullItem item) {
    bool kept = item.record.index_count != 0u && view_keeps_box(v, item.center, item.half_extent);
    return kept ? VERDICT_VISIBLE : VERDICT_FRUSTUM;
}

#if CULL_LATE
// The corners are the CPU's stored box, centre minus and plus the half extents.
int cull_occlusion(uint view, CullView v, CullItem item) {
    return view_occlusion(v, item.center - item.half_extent, item.center + item.half_extent);
}
#endif

// The object drawn whole, `firstInstance` its slot.
DrawCommand object_command(uint object, ObjectRecord record) {
    return DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
}

// Appends `item` (slot `object`) to list `list` (`2 view + phase`: 0 the main view's early
// list, 1 its late list); true when it is the first instance of its command (a command that
// draws something this frame). Only a dispatch of one view is batched.
bool append_object(uint list, uint object, CullItem item) {
    ObjectRecord record = item.record;
    uint first = list * constants.region;
    if (constants.batched != 0u) {
        uint batch = item.batch;
        if (batch >= constants.region) {
            return false;
        }
        uint command = first + batch;
        uint place = atomicAdd(commands[command].instance_count, 1u);
        draw_instances[commands[command].first_instance + place] = object;
        return place == 0u;
    }
    commands[first + atomicAdd(draw_counts[list], 1u)] = object_command(object, record);
    return true;
}
#endif

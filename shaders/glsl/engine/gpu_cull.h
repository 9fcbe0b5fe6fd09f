// The camera's object cull (`gpu_cull_early.comp`, `gpu_cull_late.comp`), the two-phase
// skeleton (`two_phase_cull.h`) specialised to one view, the camera (view 0 of `cull_views`),
// one thread per object slot: an object's world box is tested against the frustum, and in the
// late phase against `hiz_depth`; its bit goes to `visibility_bits` (next frame's history) and
// it is appended to its phase's list of `draw_commands` (the early list from command 0, the
// late list from command `constants.region`; `draw_count` holds each list's length), counted
// in `cull_stats` (`STAT_*` of config.h). Batched (`constants.batched`), a list holds one
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
layout(local_size_x = CULL_GROUP) in;

// An object, read once: its record and world box.
struct CullItem {
    ObjectRecord record;
    vec3 center;
    vec3 half_extent;
};

CullItem cull_load(uint object) {
    CullItem item;
    item.record = objects[object];
    object_world_box(transforms[object], item.record, item.center, item.half_extent);
    return item;
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

// The lists, after the late phase's bits: the commands (read: a batch's firstInstance), each
// list's command count (early, late; zero, or the batches when batched), the counters, each
// slot's batch id and the instances of the batches' runs.
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
    uint stats[STAT_COUNT];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 3) readonly buffer ObjectBatches {
    uint object_batches[];
};
layout(std430, set = 0, binding = OBJECT_LIST_BINDING + 4) writeonly buffer DrawInstances {
    uint draw_instances[];
};

// Appends `object` to list `list` (0 early, 1 late); true when it is the first instance of
// its command (a command that draws something this frame).
bool append_object(uint list, uint object, ObjectRecord record) {
    uint first = list * constants.region;
    if (constants.batched != 0u) {
        uint batch = object_batches[object];
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

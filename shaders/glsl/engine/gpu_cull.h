// The camera's object cull (`gpu_cull_early.comp`, `gpu_cull_late.comp`), the two-phase
// skeleton (`two_phase_cull.h`) specialised to one view, the camera (view 0 of `cull_views`),
// one thread per object slot: an object's world box is tested against the frustum, and in the
// late phase against `hiz_depth`; its bit goes to `visibility_bits` (next frame's history) and
// its command is appended to `draw_commands` (one list for both phases, `draw_count` its
// length), counted in `cull_stats` (`STAT_*` of config.h).
// Host twins: renderer/src/passes/cull/camera.rs (the statistics, the binding order) and
// scene/records.rs (`ObjectRecord`, `DrawCommand`).
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
#endif

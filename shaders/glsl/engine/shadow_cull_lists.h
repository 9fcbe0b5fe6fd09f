// The end of both shadow cull phases (`shadow_cull.h`): each workgroup's commands reserved
// and its bits written, then a thread's object into the list of every view it is drawn into.
// The includer declares its list as `draws`, the counts as `draw_counts` and the bits as
// `bits`.
#ifndef SHADOW_CULL_LISTS_H
#define SHADOW_CULL_LISTS_H
// After a barrier: one thread per view reserves the workgroup's commands of list `list`
// (0 early, 1 late) and writes the bits of the views whose phase this is (occlusion views in
// the late phase, the others in the early one).
void reserve(uint list, bool late_phase, uint view_count) {
    for (uint view = gl_LocalInvocationIndex; view < view_count; view += CULL_GROUP) {
        uint count = group_counts[view];
        uint counted = (list * 2u) * MAX_SHADOW_VIEWS + view;
        group_base[view] = count == 0u ? 0u : atomicAdd(draw_counts[counted], count);
        if (group_triangles[view] != 0u) {
            atomicAdd(draw_counts[counted + MAX_SHADOW_VIEWS], group_triangles[view]);
        }
        bool occlusion = (views[view].flags & CULL_OCCLUSION) != 0u;
        if (occlusion == late_phase) {
            uint word = view * constants.words_per_view + gl_WorkGroupID.x * 2u;
            bits[word] = group_bits[view * 2u];
            bits[word + 1u] = group_bits[view * 2u + 1u];
        }
        group_counts[view] = 0u;
    }
}
void append(ObjectRecord record, uint object, uint view_count, uint drawn_views[4]) {
    DrawCommand draw = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
    for (uint view = 0u; view < view_count; ++view) {
        if ((drawn_views[view / 32u] >> (view % 32u) & 1u) == 1u) {
            uint index = group_base[view] + atomicAdd(group_counts[view], 1u);
            draws[view * constants.region + index] = draw;
        }
    }
}
#endif

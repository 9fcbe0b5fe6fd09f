// One phase of the shadow casters' cull (`shadow_cull.h`), the same steps in both: each
// thread loads its object and, for a caster, lets the phase judge it in every view
// (`judge_view`, which calls `keep`); each workgroup then reserves its commands and writes
// its bits, and each thread appends its object to the list of every view it is drawn into.
// The includer declares its list as `draws`, the counts as `draw_counts`, the bits as `bits`,
// and `void judge_view(uint view, ShadowCullView light_view, uint object, uint index_count,
// vec3 center, vec3 half_extent, inout uint drawn_views[4])`.
#ifndef SHADOW_CULL_PHASE_H
#define SHADOW_CULL_PHASE_H
// After a barrier: one thread per view reserves the workgroup's commands of the phase's list
// (counts from 0 early, from 2 MAX_SHADOW_VIEWS late) and writes the bits of the views whose
// phase this is (occlusion views in the late phase, the others in the early one).
void reserve(bool late_phase, uint view_count) {
    for (uint view = gl_LocalInvocationIndex; view < view_count; view += CULL_GROUP) {
        uint count = group_counts[view];
        uint counted = (late_phase ? 2u * MAX_SHADOW_VIEWS : 0u) + view;
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

// The phase's whole dispatch.
void cull_phase(bool late_phase) {
    clear_group();
    barrier();
    uint object = gl_GlobalInvocationID.x;
    uint view_count = min(constants.view_count, MAX_SHADOW_VIEWS);
    uint drawn_views[4] = uint[4](0u, 0u, 0u, 0u);
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
            judge_view(view, views[view], object, record.index_count, center, half_extent, drawn_views);
        }
    }
    barrier();
    reserve(late_phase, view_count);
    barrier();
    if (caster) {
        append(record, object, view_count, drawn_views);
    }
}
#endif

#version 450
// The blended pass's draws on a GPU-culled frame (renderer/src/passes/blended_levels.rs): one
// indexed indirect command per blended object of each view, view after view, each in the
// host's back-to-front order (`order`: the slot and its view), drawing the level that view's
// cull chose for the object this frame. The late cull left each slot the main view's frustum
// keeps its chosen level as its state (`object_lod_levels`, `lod_table.h`): a drawn blended
// object of the main view (its bit set) is such a slot, and another window view chooses from
// that state by its own eye and rule, as `gpu_cull.h`'s `cull_load_in` does (error chains
// with CULL_LOD, distance chains with CULL_LOD_DISTANCE). Records without a chain, chains a
// view does not choose (the main view's distance chains: the record's level) and chains held
// at the record's level (LOD_RULE_RECORD) draw the record's range. The instance is the slot;
// the vertex shader still leaves out what the view's cull hid.
#include "config.h"
#include "object_record.h"
#include "cull_common.h"
#include "lod_table.h"

layout(local_size_x = BLENDED_LEVELS_GROUP) in;

// A view's side of the rules (renderer's `BlendedView`, 48 bytes): CullView's `lod`,
// `lod_eye` and `flags`, the global distance bias's bits and whether it is the main view
// (its levels are the slots' states).
struct BlendedView {
    LodView lod;
    vec4 lod_eye;
    uint flags;
    uint bias;
    uint main_view;
    uint pad;
};

layout(std430, set = 0, binding = 0) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};
layout(std430, set = 0, binding = 1) readonly buffer LodEntries {
    LodEntry lod_entries[];
};
layout(std430, set = 0, binding = 2) readonly buffer LodLevels {
    uint lod_levels[];
};
// (slot, view) per command.
layout(std430, set = 0, binding = 3) readonly buffer Order {
    uvec2 order[];
};
layout(std430, set = 0, binding = 4) writeonly buffer BlendedDraws {
    DrawCommand draws[];
};
layout(std430, set = 0, binding = 5) readonly buffer ObjectTransforms {
    ObjectTransform transforms[];
};
layout(std430, set = 0, binding = 6) readonly buffer Views {
    BlendedView views[];
};

layout(push_constant) uniform Constants {
    uint count;
    uint lod;
} constants;

// The chain `lod_select` and `lod_select_distance` read: its first entry.
uint lod_chain_first = 0u;

float lod_level_error(uint level) {
    return lod_entries[lod_chain_first + level].error;
}

float lod_level_limit(uint level) {
    return lod_entries[lod_chain_first + level].error;
}

// The level view `v` draws of the chain of `levels` levels from `first` for slot `slot`.
uint view_level(BlendedView v, uint slot, ObjectRecord record, uint first, uint levels) {
    uint state_level = min(lod_state_level(lod_levels[slot], first), levels - 1u);
    if (v.main_view != 0u) {
        return state_level;
    }
    lod_chain_first = first;
    ObjectTransform transform = transforms[slot];
    vec3 center;
    vec3 half_extent;
    object_world_box(transform, record, center, half_extent);
    if (lod_entries[first].rule == LOD_RULE_DISTANCE) {
        // The chain's bias times the view's global one, as `Lod::select` multiplies them.
        precise float bias = uintBitsToFloat(lod_entries[first].bias) * uintBitsToFloat(v.bias);
        return lod_select_distance(levels, center, v.lod_eye.xyz, v.lod_eye.w, bias);
    }
    float scale_sq = lod_scale_sq(transform_column(transform, 0), transform_column(transform, 1),
        transform_column(transform, 2));
    float distance_sq = lod_box_distance_sq(v.lod_eye.xyz, center, half_extent);
    return lod_select(levels, scale_sq, distance_sq, v.lod, state_level);
}

void main() {
    uint index = gl_GlobalInvocationID.x;
    if (index >= constants.count) {
        return;
    }
    uint slot = order[index].x;
    BlendedView v = views[order[index].y];
    ObjectRecord record = objects[slot];
    DrawCommand command = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, slot);
    uint first = record.reserved[0];
    uint levels = min(record.reserved[1], MAX_GPU_LOD_LEVELS);
    uint rule = levels > 0u ? lod_entries[first].rule : LOD_RULE_RECORD;
    uint rule_flag = rule == LOD_RULE_DISTANCE ? CULL_LOD_DISTANCE : CULL_LOD;
    // The main view chooses error chains while the camera chooses levels (`lod`); another view
    // the chains its flags name.
    bool main_chooses = constants.lod != 0u && rule == LOD_RULE_ERROR;
    bool chosen = rule != LOD_RULE_RECORD && (v.main_view != 0u ? main_chooses : (v.flags & rule_flag) != 0u);
    if (levels > 0u && record.index_count != 0u && chosen) {
        LodEntry entry = lod_entries[first + view_level(v, slot, record, first, levels)];
        command.index_count = entry.index_count;
        command.first_index = entry.first_index;
        command.vertex_offset = entry.vertex_offset;
    }
    draws[index] = command;
}

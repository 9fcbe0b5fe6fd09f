#version 450
// The blended pass's draws on a GPU-culled frame (renderer/src/passes/blended_levels.rs): one
// indexed indirect command per blended object of the main view, in the host's back-to-front
// order (`order`, the slots), drawing the level the camera's cull chose for the object this
// frame. The late cull left each slot the main view's frustum keeps its chosen level as its
// state (`object_lod_levels`, `lod_table.h`): a drawn blended object (its bit set) is such a
// slot. Records without a chain, chains of the distance rule (the main view draws the
// record's level) and chains held at the record's level (LOD_RULE_RECORD) draw the record's
// range, as does every object while the camera does not choose levels (`lod` 0). The
// instance is the slot; the vertex shader still leaves out what the late cull hid.
#include "config.h"
#include "object_record.h"
#include "cull_common.h"
#include "lod_table.h"

layout(local_size_x = BLENDED_LEVELS_GROUP) in;

layout(std430, set = 0, binding = 0) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};
layout(std430, set = 0, binding = 1) readonly buffer LodEntries {
    LodEntry lod_entries[];
};
layout(std430, set = 0, binding = 2) readonly buffer LodLevels {
    uint lod_levels[];
};
layout(std430, set = 0, binding = 3) readonly buffer Order {
    uint order[];
};
layout(std430, set = 0, binding = 4) writeonly buffer BlendedDraws {
    DrawCommand draws[];
};

layout(push_constant) uniform Constants {
    uint count;
    uint lod;
} constants;

// Declared by lod_select.h; no level is selected here (the cull chose it).
float lod_level_error(uint level) {
    return 0.0;
}

void main() {
    uint index = gl_GlobalInvocationID.x;
    if (index >= constants.count) {
        return;
    }
    uint slot = order[index];
    ObjectRecord record = objects[slot];
    DrawCommand command = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, slot);
    uint first = record.reserved[0];
    uint levels = min(record.reserved[1], MAX_GPU_LOD_LEVELS);
    if (constants.lod != 0u && levels > 0u && record.index_count != 0u && lod_entries[first].rule == LOD_RULE_ERROR) {
        LodEntry entry = lod_entries[first + min(lod_state_level(lod_levels[slot], first), levels - 1u)];
        command.index_count = entry.index_count;
        command.first_index = entry.first_index;
        command.vertex_offset = entry.vertex_offset;
    }
    draws[index] = command;
}

// The levels of detail a cull chooses from: `lod_entries`, MAX_GPU_LOD_LEVELS entries per
// chain (a chain of meshes and one material, finest first), and each object slot's state,
// the level it drew last (`object_lod_levels`). A record naming a chain holds its first
// entry and its level count in `reserved` (0 levels: the record's own range is drawn, as the
// CPU chose it). The rule is `lod_select.h`'s, the CPU's.
// Host twins: renderer/src/scene/gpu_scene/lod_table.rs (`LodEntry`, `lod_state`, the
// record's columns).
#ifndef LOD_TABLE_H
#define LOD_TABLE_H
#include "lod_select.h"
#include "lod_distance.h"

// One level of a chain (32 bytes): the draw arguments of the level as drawn (a level not on
// the GPU yet names the resident stand-in its mesh draws, as the CPU path does), the level's
// error in mesh units (a distance chain's: the level's greatest distance) and the batch of
// (drawn mesh, material) its objects join; `rule` LOD_RULE_DISTANCE for a chain of the
// distance rule (`lod_distance.h`), whose `bias` holds the chain's bias's bits.
struct LodEntry {
    uint index_count;
    uint first_index;
    int vertex_offset;
    float error;
    uint batch;
    uint mesh;
    uint rule;
    uint bias;
};

// `LodEntry::rule` of a chain chosen by its levels' errors (renderer's `LOD_RULE_ERROR`).
#define LOD_RULE_ERROR 0u
// `LodEntry::rule` of a chain chosen by distance (renderer's `LOD_RULE_DISTANCE`).
#define LOD_RULE_DISTANCE 1u
// `LodEntry::rule` of a chain no view chooses from for now (renderer's `LOD_RULE_RECORD`): its
// levels as drawn are not all skinned or all rigid (a skinned level drawn by its rigid
// placeholder box), so the record's level, the CPU's pick, is drawn.
#define LOD_RULE_RECORD 2u

// The state word of a slot: its chain's first entry (plus one) above the level, so a slot
// whose record names another chain starts again from level 0.
uint lod_state_word(uint first, uint level) {
    return ((first + 1u) << 3u) | level;
}

// The level a state word gives the chain starting at `first`: its level when the word is that
// chain's, else 0 (a new object, or another chain).
uint lod_state_level(uint word, uint first) {
    return (word >> 3u) == first + 1u ? word & 7u : 0u;
}
#endif

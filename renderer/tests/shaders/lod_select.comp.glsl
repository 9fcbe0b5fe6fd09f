#version 450
// Runs the engine's LOD rule (`lod_select.h`) over test objects and a sequence of views: one
// object per invocation, the views in order, each view's level becoming the next view's
// `last` (the hysteresis state a cull keeps per slot). `levels[view * object_count + object]`
// is the level chosen in view `view`.
#include "lod_select.h"
layout(local_size_x = 64) in;

// An object: its world box, its chain's errors (`first`, `count`) and the axes of its world
// matrix.
struct LodObject {
    vec3 center;
    uint first;
    vec3 half_extent;
    uint count;
    vec3 axis_x;
    uint pad_x;
    vec3 axis_y;
    uint pad_y;
    vec3 axis_z;
    uint pad_z;
};

// A view: the eye and the rule's view.
struct LodTestView {
    vec3 eye;
    uint pad;
    LodView lod;
};

layout(set = 0, binding = 0) readonly buffer Errors { float errors[]; };
layout(set = 0, binding = 1) readonly buffer Objects { LodObject objects[]; };
layout(set = 0, binding = 2) readonly buffer Views { LodTestView views[]; };
layout(set = 0, binding = 3) writeonly buffer Levels { uint levels[]; };
layout(push_constant) uniform Counts {
    uint object_count;
    uint view_count;
};

uint chain_first;

float lod_level_error(uint level) {
    return errors[chain_first + level];
}

void main() {
    uint object = gl_GlobalInvocationID.x;
    if (object >= object_count) {
        return;
    }
    LodObject item = objects[object];
    chain_first = item.first;
    float scale_sq = lod_scale_sq(item.axis_x, item.axis_y, item.axis_z);
    uint last = 0u;
    for (uint view = 0u; view < view_count; view++) {
        float distance_sq = lod_box_distance_sq(views[view].eye, item.center, item.half_extent);
        last = lod_select(item.count, scale_sq, distance_sq, views[view].lod, last);
        levels[view * object_count + object] = last;
    }
}

#version 450
// Runs the engine's distance rule (`lod_distance.h`, with `object_point` of `object_record.h`
// for the world centre, as the camera's cull does) over test objects and views: one object per
// invocation, `levels[view * object_count + object]` the level chosen in view `view`.
#include "object_record.h"
#include "lod_distance.h"
layout(local_size_x = 64) in;

// An object: its world matrix's rows, its local centre and its chain (`first` limit, `count`
// levels, the chain's bias).
struct DistanceObject {
    ObjectTransform transform;
    vec3 local_center;
    uint first;
    uint count;
    float bias;
    uint pad0;
    uint pad1;
};

// A view: the eye, the field-of-view scale and the global bias.
struct DistanceView {
    vec3 eye;
    float scale;
    float bias;
    uint pad0;
    uint pad1;
    uint pad2;
};

layout(set = 0, binding = 0) readonly buffer Limits { float limits[]; };
layout(set = 0, binding = 1) readonly buffer Objects { DistanceObject objects[]; };
layout(set = 0, binding = 2) readonly buffer Views { DistanceView views[]; };
layout(set = 0, binding = 3) writeonly buffer Levels { uint levels[]; };
layout(push_constant) uniform Counts {
    uint object_count;
    uint view_count;
};

uint chain_first;

float lod_level_limit(uint level) {
    return limits[chain_first + level];
}

void main() {
    uint object = gl_GlobalInvocationID.x;
    if (object >= object_count) {
        return;
    }
    DistanceObject item = objects[object];
    chain_first = item.first;
    vec3 center = object_point(item.transform, item.local_center);
    for (uint view = 0u; view < view_count; view++) {
        precise float bias = item.bias * views[view].bias;
        uint level = lod_select_distance(item.count, center, views[view].eye, views[view].scale, bias);
        levels[view * object_count + object] = level;
    }
}

#version 450
// Probe: the object-space position of vertices of one object as the scene passes skin them
// (`object_local_position` of skinning.h, the function every scene vertex shader calls),
// written as vec4 (w = 1) to binding 3: vertices `first_vertex ..` of the object's mesh
// (counted from its record's `vertex_offset`). Bindings as the scene passes': 1 `object_records`,
// 2 `mesh_vertices`, 7 `skin_palette`, 8 `mesh_skin`; push constants `uint object,
// first_vertex, count`.
#include "object_record.h"

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 1) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};
layout(std430, set = 0, binding = 2) readonly buffer MeshVertices {
    vec4 positions[];
};
layout(std430, set = 0, binding = 3) writeonly buffer Report {
    vec4 report[];
};

#include "skinning.h"

layout(push_constant) uniform Probe {
    uint object;
    uint first_vertex;
    uint count;
} probe;

void main() {
    uint item = gl_GlobalInvocationID.x;
    if (item >= probe.count) {
        return;
    }
    uint vertex_index = uint(objects[probe.object].vertex_offset) + probe.first_vertex + item;
    vec3 local = object_local_position(objects[probe.object], vertex_index, positions[vertex_index].xyz);
    report[item] = vec4(local, 1.0);
}

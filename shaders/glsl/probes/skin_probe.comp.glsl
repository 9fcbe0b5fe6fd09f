#version 450
// Probe: the object-space position and normal of vertices of one object as the scene passes
// skin them (`object_local_position` and `object_local_normal` of skinning.h, the functions
// the scene vertex shaders call), written as two vec4 per vertex to binding 3 (the position
// with w = 1, then the normal, normalized, with w = 0): vertices `first_vertex ..` of the object's mesh
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
#include "vertex_normal.h"

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
    vec4 vertex = positions[vertex_index];
    vec3 local = object_local_position(objects[probe.object], vertex_index, vertex.xyz);
    vec3 normal = object_local_normal(objects[probe.object], vertex_index, unpack_normal(floatBitsToUint(vertex.w)));
    report[2u * item] = vec4(local, 1.0);
    report[2u * item + 1u] = vec4(normalize(normal), 0.0);
}

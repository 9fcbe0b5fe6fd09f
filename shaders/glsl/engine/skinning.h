// Linear blend skinning of the scene passes' vertices: included by scene_common.h, so the
// depth prepass, the geometry pass (and its shadowed and blended variants), the shadow
// atlas's depth pass, the object-id image and users' draws through `object_clip_position`
// all move a vertex the same way.
//
// `skin_palette` (binding 7) holds every rig's skin matrices (joint world * inverse bind),
// 3x4 rows each like an ObjectTransform (the matrices are affine): rig `r`'s joint `j` is
// entry `skin_first + j` of its record. `mesh_skin` (binding 8), parallel to
// `mesh_vertices`, holds each vertex's four joints (u16 pairs in x and y) and weights
// (unorm16 pairs in z and w). A record with `skin_count` 0 is drawn rigid and reads neither
// buffer: the branch is the same for every vertex of a draw's object (an instanced batch
// shares its mesh), so a static mesh pays one uniform test.
// Host twins: renderer/src/scene/gpu_scene/skinning.rs (`pack_vertex_skin`, the palette's
// rows) and the CPU reference of tests/tests/skinned_gpu.rs.
#ifndef SKINNING_H
#define SKINNING_H

layout(std430, set = 0, binding = 7) readonly buffer SkinPalette {
    ObjectTransform skin_palette[];
};

layout(std430, set = 0, binding = 8) readonly buffer MeshSkin {
    uvec4 mesh_skin[];
};

// Whether the object's vertices are skinned.
bool object_skinned(ObjectRecord record) {
    return record.skin_count != 0u;
}

// The skin matrix of vertex `vertex_index` of an object with `record`: its four joints'
// palette entries weighted, summed in joint order. A joint past the rig is clamped to its
// last (a mesh made for a larger skeleton never reads another rig's entries).
ObjectTransform vertex_skin_matrix(ObjectRecord record, uint vertex_index) {
    uvec4 influence = mesh_skin[vertex_index];
    uvec4 joints = uvec4(influence.x & 0xffffu, influence.x >> 16, influence.y & 0xffffu, influence.y >> 16);
    vec4 weights = vec4(unpackUnorm2x16(influence.z), unpackUnorm2x16(influence.w));
    uint last = record.skin_count - 1u;
    ObjectTransform blended;
    for (int row = 0; row < 3; ++row) {
        precise vec4 sum = skin_palette[record.skin_first + min(joints.x, last)].rows[row] * weights.x;
        sum = sum + skin_palette[record.skin_first + min(joints.y, last)].rows[row] * weights.y;
        sum = sum + skin_palette[record.skin_first + min(joints.z, last)].rows[row] * weights.z;
        sum = sum + skin_palette[record.skin_first + min(joints.w, last)].rows[row] * weights.w;
        blended.rows[row] = sum;
    }
    return blended;
}

// The vertex's position in its object's space: `mesh_position` moved by its skin matrix
// (object_point, `precise`), or as it is for a rigid object.
vec3 object_local_position(ObjectRecord record, uint vertex_index, vec3 mesh_position) {
    if (!object_skinned(record)) {
        return mesh_position;
    }
    return object_point(vertex_skin_matrix(record, vertex_index), mesh_position);
}

// The vertex's normal in its object's space: `mesh_normal` turned by the inverse transpose of
// the skin matrix's 3x3 part, so a joint scaled unevenly keeps its normals perpendicular to its
// surface. It uses the cofactor matrix (the inverse transpose times the determinant: columns
// y x z, z x x, x x y of the axes; no division, finite for any finite matrix) with the
// determinant's sign, so a mirroring skin turns normals as the inverse transpose does (not
// normalized; the caller normalizes after the object's own normal matrix).
vec3 object_local_normal(ObjectRecord record, uint vertex_index, vec3 mesh_normal) {
    if (!object_skinned(record)) {
        return mesh_normal;
    }
    ObjectTransform skin = vertex_skin_matrix(record, vertex_index);
    vec3 x_axis = transform_column(skin, 0);
    vec3 y_axis = transform_column(skin, 1);
    vec3 z_axis = transform_column(skin, 2);
    vec3 cofactor_x = cross(y_axis, z_axis);
    vec3 cofactor_y = cross(z_axis, x_axis);
    vec3 cofactor_z = cross(x_axis, y_axis);
    float orientation = dot(x_axis, cofactor_x) < 0.0 ? -1.0 : 1.0;
    return (cofactor_x * mesh_normal.x + cofactor_y * mesh_normal.y + cofactor_z * mesh_normal.z) * orientation;
}
#endif

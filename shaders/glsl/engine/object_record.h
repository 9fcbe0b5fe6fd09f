// One object of the GPU scene, in two std430 buffers indexed by the object's slot:
// `object_transforms` (what moves, 48 bytes) and `object_records` (what it is drawn and culled
// with, 64 bytes). `rows` are the three rows of the affine local-to-world matrix; the record
// holds the object's box in its own space as centre and half extents, `color` (RGBA8 packed
// with red in the lowest byte), the mesh's draw arguments and its rig's slice of
// `skin_palette` (`skin_first`, `skin_count`; a count of 0 draws the mesh rigid: skinning.h).
// `reserved` names the LOD chain the camera's GPU cull chooses levels from (lod_table.h:
// the chain's first entry, its level count; zero without one). An empty slot has
// `index_count` 0: it is never drawn, counted visible or in the depth.
// Host twins: renderer/src/scene/records.rs (`ObjectTransform`, `ObjectRecord`,
// `world_box`). Included by the scene passes (`scene_common.h`), GPU culling (`gpu_cull.h`)
// and cluster culling (`cluster_cull.h`), which bind the buffers at different slots.
#ifndef OBJECT_RECORD_H
#define OBJECT_RECORD_H
struct ObjectTransform {
    vec4 rows[3];
};

struct ObjectRecord {
    vec3 local_center;
    uint index_count;
    vec3 local_half;
    uint first_index;
    int vertex_offset;
    uint color;
    uint material;
    uint mesh;
    uint skin_first;
    uint skin_count;
    uint reserved[2];
};

// Column `c` of the matrix (0-2 the axes, 3 the translation).
vec3 transform_column(ObjectTransform transform, int c) {
    return vec3(transform.rows[0][c], transform.rows[1][c], transform.rows[2][c]);
}

// The local point `p` in world space: ((X px + Y py) + Z pz) + W, glam's `transform_point3`
// step for step. `precise` forbids fused multiply-adds and reordering, so every shader that
// calls it (both scene vertex shaders, every cull) computes the same bits as the CPU.
vec3 object_point(ObjectTransform transform, vec3 p) {
    precise vec3 world = ((transform_column(transform, 0) * p.x + transform_column(transform, 1) * p.y)
        + transform_column(transform, 2) * p.z) + transform_column(transform, 3);
    return world;
}

// The world box of the object (centre, half extents) by Arvo's method, as the CPU's
// `Aabb::transformed_center_half`: the centre as a point, the half extents through |M|. A
// non-finite input gives a non-finite box, which every cull keeps.
void object_world_box(ObjectTransform transform, ObjectRecord record, out vec3 center, out vec3 half_extent) {
    center = object_point(transform, record.local_center);
    precise vec3 reach = (abs(transform_column(transform, 0)) * record.local_half.x
        + abs(transform_column(transform, 1)) * record.local_half.y)
        + abs(transform_column(transform, 2)) * record.local_half.z;
    half_extent = reach;
}

// The matrix as a mat4 (fourth row 0 0 0 1), for tests written against a whole matrix.
mat4 object_matrix(ObjectTransform transform) {
    return mat4(vec4(transform_column(transform, 0), 0.0), vec4(transform_column(transform, 1), 0.0),
        vec4(transform_column(transform, 2), 0.0), vec4(transform_column(transform, 3), 1.0));
}
#endif

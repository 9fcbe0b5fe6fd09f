// One object of the GPU scene (`object_records`), 112 bytes, std430. `world` is column-major
// local-to-world; `bounds_min`/`bounds_max` are its world AABB; `color` is RGBA8 packed with
// red in the lowest byte; the last four words are the mesh's draw arguments.
// Host twin: render_graph/src/passes/records.rs (`ObjectRecord`). Included by the scene
// passes (`scene_common.h`) and GPU culling (`gpu_cull.h`), which bind it at different slots.
#ifndef OBJECT_RECORD_H
#define OBJECT_RECORD_H
struct ObjectRecord {
    mat4 world;
    vec3 bounds_min;
    uint color;
    vec3 bounds_max;
    uint mesh;
    uint index_count;
    uint first_index;
    int vertex_offset;
    uint material;
};
#endif

// Shared by the scene passes (depth prepass and geometry): the GPU scene's buffers and the
// camera push constants.
// Host twins: render_graph/src/passes/records.rs (`ObjectRecord`, `CameraConstants`) and the
// binding order of render_graph/src/passes/draw.rs (`SCENE_BINDINGS`).

// One object of the scene (`object_records`), 112 bytes, std430. `world` is column-major
// local-to-world; `bounds_min`/`bounds_max` are its world AABB; `color` is RGBA8 packed
// with red in the lowest byte; the last four words are the mesh's draw arguments.
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

layout(std430, set = 0, binding = 0) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};

// Mesh vertex positions (`mesh_vertices`); w is 1 and unused.
layout(std430, set = 0, binding = 1) readonly buffer MeshVertices {
    vec4 positions[];
};

// The camera: clip = view_projection * world position (reversed-Z, glam conventions).
layout(push_constant) uniform CameraConstants {
    mat4 view_projection;
} camera;

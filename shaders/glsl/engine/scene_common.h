// Shared by the scene passes' vertex shaders (depth prepass and geometry): the GPU scene's
// buffers, the instances of an instanced list, the skinning palette and influences
// (skinning.h, bindings 7 and 8) and the camera push constants.
// Host twins: renderer/src/scene/records.rs (`ObjectTransform`, `ObjectRecord`,
// `CameraConstants`) and the binding order of renderer/src/passes/draw.rs
// (`SCENE_BINDINGS`).

#include "object_record.h"
#define MATERIAL_TABLE_ONLY
#include "material.h"

layout(std430, set = 0, binding = 0) readonly buffer ObjectTransforms {
    ObjectTransform transforms[];
};

layout(std430, set = 0, binding = 1) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};

// Mesh vertex positions (`mesh_vertices`); w is 1 and unused.
layout(std430, set = 0, binding = 2) readonly buffer MeshVertices {
    vec4 positions[];
};

// Texture coordinates per vertex (`mesh_uvs`), parallel to `mesh_vertices`. Bindings 4 and
// 5 are the materials (`material.h`).
layout(std430, set = 0, binding = 3) readonly buffer MeshUvs {
    vec2 uvs[];
};

// The instances of an instanced list (`draw_instances`): object slots, each command's from its
// firstInstance (see DRAW_INSTANCED).
layout(std430, set = 0, binding = 6) readonly buffer DrawInstances {
    uint draw_instances[];
};

#include "skinning.h"

// The camera: clip = view_projection * world position (reversed-Z, glam conventions), and
// which objects this draw is for (`DRAW_*` in the bits of DRAW_FILTER_MASK, host twin
// `DrawFilter` in renderer/src/passes/draw.rs): the opaque passes draw the same list once
// with back-face culling for one-sided materials and, when the library has any, once without
// it for double-sided ones; blended materials are the blended pass's alone. The bit
// DRAW_OBJECT_IDS asks the geometry fragment shader for the object-id image
// (geometry_fragment.h, which declares the same block).
layout(push_constant) uniform CameraConstants {
    mat4 view_projection;
    uint draw_filter;
} camera;

#include "draw_filter.h"

// Outside the clip volume (z > w): a vertex the draw leaves out, so none of the object's
// triangles reaches the rasterizer.
const vec4 CLIPPED_AWAY = vec4(2.0, 2.0, 2.0, 1.0);

// The object slot this vertex's instance draws: read from `draw_instances` in an instanced
// list (a batch's run), else the instance index itself (firstInstance = the slot).
uint draw_object() {
    uint instance = uint(gl_InstanceIndex);
    return (camera.draw_filter & DRAW_INSTANCED) != 0u ? draw_instances[instance] : instance;
}

// Whether object `object_index` belongs to this draw (see `draw_filter`).
bool object_in_draw(uint object_index) {
    uint objects_drawn = camera.draw_filter & DRAW_FILTER_MASK;
    if (objects_drawn == DRAW_BLENDED) {
        return true;
    }
    uint flags = material_flags(objects[object_index].material);
    if ((flags & MATERIAL_BLENDED) != 0u) {
        return false;
    }
    return ((flags & MATERIAL_DOUBLE_SIDED) != 0u) == (objects_drawn == DRAW_DOUBLE_SIDED);
}

// Vertex `vertex_index` of object `object_index` in the object's space: skinned by its rig
// when its record has one (skinning.h), else the mesh's position.
vec3 object_vertex(uint object_index, uint vertex_index) {
    return object_local_position(objects[object_index], vertex_index, positions[vertex_index].xyz);
}

// Clip position of the point `local` of object `object_index` (its space).
vec4 object_clip_position_of(uint object_index, vec3 local) {
    vec3 world = object_point(transforms[object_index], local);
    precise vec4 clip = camera.view_projection * vec4(world, 1.0);
    // glam's projections put +y up; Vulkan's framebuffer y points down. Flipping y keeps
    // row 0 of the image at the top of the view, and makes triangles wound counter-clockwise
    // as seen from outside the mesh front-facing under Vulkan's rule, so the pipelines cull
    // back faces with the usual counter-clockwise front face.
    clip.y = -clip.y;
    return clip;
}

// Clip position of vertex `vertex_index` of object `object_index`, skinned when the object
// is. Both scene vertex shaders (depth prepass and geometry) compute it this way; `precise`
// (here, in object_point and in the skinning) forbids contraction into fused multiply-adds
// and reordering, so both compute bit-identical positions and depths (the geometry pass
// tests GREATER_OR_EQUAL against the prepass's depth and must find its own surfaces equal).
vec4 object_clip_position(uint object_index, uint vertex_index) {
    return object_clip_position_of(object_index, object_vertex(object_index, vertex_index));
}

// The geometry pass's vertex shader (geometry.vert.glsl), also the blended pass's
// (blended_culled.vert.glsl defines GATED_BY_VISIBILITY first) and the shadowed geometry
// pass's (geometry_shadowed.vert.glsl defines SHADOWED first: the world position goes out
// too, only where a fragment shader reads it, so no pipeline has an unread output).
// Geometry pass: transforms one vertex of one object and passes on its flat colour and its
// world-space normal.
//
// The object is the instance's (`draw_object` in scene_common.h): in an instanced (batched)
// list a command draws every object of one (mesh, level, material) kept this frame, its
// instances the slots at draw_instances[firstInstance + i], so gl_InstanceIndex (which
// includes firstInstance) indexes `draw_instances`; in a list of one command per object
// (DRAW_INSTANCED clear) firstInstance is the object's slot and instanceCount 1, and
// gl_InstanceIndex names its transform and record. Vertices are pulled from `mesh_vertices`;
// gl_VertexIndex includes the command's vertexOffset. The position comes from object_clip_position, as in the depth prepass.
#include "scene_common.h"
#include "vertex_normal.h"

#ifdef GATED_BY_VISIBILITY
// The blended pass of a GPU-culled frame draws every blended object the host sorted and
// leaves out those the cull found hidden (its `visibility_bits`, binding 9; a split-screen
// frame's view's words from the draw filter's DRAW_BITS_WORD_SHIFT bits).
#include "visibility_bits.h"
layout(std430, set = 0, binding = 9) readonly buffer VisibilityBits {
    uint visibility[];
};
#endif

// The same `mesh_vertices` seen as bits: `w` holds the packed normal, read without any
// float conversion.
layout(std430, set = 0, binding = 2) readonly buffer MeshVertexBits {
    uvec4 vertex_bits[];
};

layout(location = 0) flat out uint out_color;
layout(location = 1) out vec3 out_normal;
layout(location = 2) out vec2 out_uv;
layout(location = 3) flat out uint out_material;
#ifdef SHADOWED
// World position, for the shadowed fragment shader's lights.
layout(location = 4) out vec3 out_world;
#endif


void main() {
    uint object_index = draw_object();
    bool drawn = object_in_draw(object_index);
#ifdef GATED_BY_VISIBILITY
    uint view_words = camera.draw_filter >> DRAW_BITS_WORD_SHIFT;
    drawn = drawn && (visibility[view_words + VISIBILITY_WORD(object_index)] & VISIBILITY_MASK(object_index)) != 0u;
#endif
    // Skinned once for the position, the world point and the normal.
    vec3 local = object_vertex(object_index, uint(gl_VertexIndex));
    gl_Position = drawn ? object_clip_position_of(object_index, local) : CLIPPED_AWAY;
#ifdef SHADOWED
    out_world = object_point(transforms[object_index], local);
#endif
    out_color = objects[object_index].color;
    out_uv = uvs[gl_VertexIndex];
    out_material = objects[object_index].material;
    uint normal_bits = vertex_bits[gl_VertexIndex].w;
    if (normal_bits == 0u) {
        out_normal = vec3(0.0);
    } else {
        // The inverse transpose keeps normals perpendicular under non-uniform scale.
        ObjectTransform transform = transforms[object_index];
        mat3 axes = mat3(transform_column(transform, 0), transform_column(transform, 1), transform_column(transform, 2));
        mat3 normal_matrix = transpose(inverse(axes));
        vec3 normal = object_local_normal(objects[object_index], uint(gl_VertexIndex), unpack_normal(normal_bits));
        out_normal = normalize(normal_matrix * normal);
    }
}

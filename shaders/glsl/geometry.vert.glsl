#version 450
// Transforms one vertex of one object; used by both the depth prepass and the geometry pass,
// so that both compute bit-identical positions (the geometry pass tests depth with
// GREATER_OR_EQUAL against the prepass's depth and must see its own surfaces as equal).
//
// The object is the instance: every draw command sets firstInstance to the object's index
// and instanceCount to 1, so gl_InstanceIndex (which includes firstInstance) names the
// record. Vertices are pulled from `mesh_vertices`; gl_VertexIndex includes the command's
// vertexOffset.
#include "scene_common.h"

layout(location = 0) flat out uint out_color;

// The same expression in both passes must give the same position.
invariant gl_Position;

void main() {
    ObjectRecord object = objects[gl_InstanceIndex];
    vec4 world = object.world * vec4(positions[gl_VertexIndex].xyz, 1.0);
    vec4 clip = camera.view_projection * world;
    // glam's projections put +y up; Vulkan's framebuffer y points down. Flipping y keeps
    // row 0 of the image at the top of the view, and makes triangles wound counter-clockwise
    // as seen from outside the mesh front-facing under Vulkan's rule, so the pipelines cull
    // back faces with the usual counter-clockwise front face.
    clip.y = -clip.y;
    gl_Position = clip;
    out_color = object.color;
}

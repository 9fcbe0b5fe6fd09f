#version 450
// Geometry pass: transforms one vertex of one object and passes on its flat colour.
//
// The object is the instance: every draw command sets firstInstance to the object's index
// and instanceCount to 1, so gl_InstanceIndex (which includes firstInstance) names the
// record. Vertices are pulled from `mesh_vertices`; gl_VertexIndex includes the command's
// vertexOffset. The position comes from object_clip_position, as in the depth prepass.
#include "scene_common.h"

layout(location = 0) flat out uint out_color;

void main() {
    gl_Position = object_clip_position(uint(gl_InstanceIndex), uint(gl_VertexIndex));
    out_color = objects[gl_InstanceIndex].color;
}

#version 450
// Depth prepass: transforms one vertex of one object (the instance's object, `draw_object`, as
// in the geometry pass) with the same object_clip_position, so both passes store and test
// equal depths; the
// coordinates, material and colour go on for the masked materials' holes.
#include "scene_common.h"

layout(location = 0) out vec2 out_uv;
layout(location = 1) flat out uint out_material;
layout(location = 2) flat out uint out_color;

void main() {
    uint object_index = draw_object();
    gl_Position = object_in_draw(object_index) ? object_clip_position(object_index, uint(gl_VertexIndex)) : CLIPPED_AWAY;
    out_uv = uvs[gl_VertexIndex];
    out_material = objects[object_index].material;
    out_color = objects[object_index].color;
}

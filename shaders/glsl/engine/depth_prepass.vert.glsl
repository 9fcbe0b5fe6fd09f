#version 450
// Depth prepass: transforms one vertex of one object (instance = object, as in the geometry
// pass) with the same object_clip_position, so both passes store and test equal depths.
#include "scene_common.h"

void main() {
    gl_Position = object_clip_position(uint(gl_InstanceIndex), uint(gl_VertexIndex));
}

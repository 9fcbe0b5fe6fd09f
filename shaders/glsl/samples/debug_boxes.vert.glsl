#version 460
// Every object's world box as 12 lines, green where the GPU's visibility bit of this frame is
// set, red where it is not: a debug pass at renderer::points::AFTER_GEOMETRY reading the
// engine's own buffers, run once per window view (renderer::PerView) with the view's block of
// the view uniform and its bits: those from uint word `bits_offset` of `visibility_bits`. Draw 24 vertices per instance, one instance per slot; empty slots
// and slots past the object count are moved outside the clip volume.
#extension GL_GOOGLE_include_directive : require
#include "object_record.h"
#include "view.h"
#include "visibility_bits.h"

layout(std430, set = 0, binding = 0) readonly buffer Transforms {
    ObjectTransform transforms[];
};
layout(std430, set = 0, binding = 1) readonly buffer Records {
    ObjectRecord records[];
};
layout(std430, set = 0, binding = 2) readonly buffer Bits {
    uint bits[];
};
ENGINE_VIEW_BLOCK(0, 3);

layout(push_constant) uniform Boxes {
    uint bits_offset;
} boxes;

layout(location = 0) flat out vec4 out_color;

// Corner c of a box is (+-x, +-y, +-z) by bits 0, 1, 2 of c; an edge joins two corners.
const ivec2 EDGES[12] = ivec2[](ivec2(0, 1), ivec2(1, 3), ivec2(3, 2), ivec2(2, 0), ivec2(4, 5), ivec2(5, 7),
    ivec2(7, 6), ivec2(6, 4), ivec2(0, 4), ivec2(1, 5), ivec2(2, 6), ivec2(3, 7));

void main() {
    uint slot = uint(gl_InstanceIndex);
    if (slot >= engine_view.object_count || records[slot].index_count == 0u) {
        gl_Position = vec4(0.0, 0.0, -2.0, 1.0);
        out_color = vec4(0.0);
        return;
    }
    int corner = EDGES[gl_VertexIndex / 2][gl_VertexIndex % 2];
    vec3 side = vec3((corner & 1) != 0 ? 1.0 : -1.0, (corner & 2) != 0 ? 1.0 : -1.0, (corner & 4) != 0 ? 1.0 : -1.0);
    vec3 center, half_extent;
    object_world_box(transforms[slot], records[slot], center, half_extent);
    vec4 clip = engine_view.view_projection * vec4(center + half_extent * side, 1.0);
    clip.y = -clip.y;
    gl_Position = clip;
    bool visible = (bits[boxes.bits_offset + VISIBILITY_WORD(slot)] & VISIBILITY_MASK(slot)) != 0u;
    out_color = visible ? vec4(0.0, 1.0, 0.0, 1.0) : vec4(1.0, 0.0, 0.0, 1.0);
}

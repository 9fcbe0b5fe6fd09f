#version 460
// Moves every object of the GPU scene by a world offset, on the GPU, before the engine culls
// and draws: a compute pass at renderer::points::BEFORE_CULL. The boxes move with the
// transforms (every cull takes an object's box through its transform), so the cull tests the
// new places in the same frame. The object count comes from the engine's view block.
#extension GL_GOOGLE_include_directive : require
#include "object_record.h"
#include "view.h"

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Transforms {
    ObjectTransform transforms[];
};

ENGINE_VIEW_BLOCK(0, 1);

layout(push_constant) uniform Move {
    vec4 offset;
} move;

void main() {
    uint slot = gl_GlobalInvocationID.x;
    if (slot >= engine_view.object_count) {
        return;
    }
    // Row i's w is the translation's component i.
    transforms[slot].rows[0].w += move.offset.x;
    transforms[slot].rows[1].w += move.offset.y;
    transforms[slot].rows[2].w += move.offset.z;
}

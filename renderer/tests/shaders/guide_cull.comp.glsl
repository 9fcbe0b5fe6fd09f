#version 450
// Culls your own boxes the way the engine culls its objects: the frustum of the frame's view,
// then the pyramid of the frame's final depth. One box per invocation; `seen[i]` is 1 when
// box i may be seen, 0 when it is outside the view or hidden.
#include "config.h"
#include "view.h"
layout(local_size_x = 64) in;
ENGINE_VIEW_BLOCK(0, 0);
layout(set = 0, binding = 1) uniform sampler2D hiz;
#include "hiz_occlusion.h"

struct Box {
    vec4 min_corner;
    vec4 max_corner;
};
layout(set = 0, binding = 2) readonly buffer Boxes { Box boxes[]; };
layout(set = 0, binding = 3) writeonly buffer Seen { uint seen[]; };
layout(push_constant) uniform Count { uint count; };

void main() {
    uint index = gl_GlobalInvocationID.x;
    if (index >= count) {
        return;
    }
    vec3 low = boxes[index].min_corner.xyz;
    vec3 high = boxes[index].max_corner.xyz;
    bool in_view = view_may_see_box(engine_view, low, high);
    int verdict = hiz_test(engine_view.view_projection, low, high, vec2(textureSize(hiz, 0)),
        uint(textureQueryLevels(hiz)), HIZ_DEPTH_MARGIN, HIZ_FOOTPRINT_MARGIN);
    seen[index] = in_view && verdict != HIZ_HIDDEN ? 1u : 0u;
}

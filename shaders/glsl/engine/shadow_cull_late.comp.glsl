#version 450
// The shadow casters' late cull (`shadow_cull.h`): two-phase views (the sun's cascades, the
// only views with late lists) test every caster in their frustum against the pyramid of
// their tile, built from the early phase's depth, write their bits (next frame's history) and
// draw those visible now that the early phase did not draw.
#define CULL_LATE 1
#include "shadow_cull.h"

void main() {
    shadow_cull(min(constants.view_count, MAX_CASCADES));
}

#version 450
// The shadow casters' early cull (`shadow_cull.h`): views of one phase keep every caster in
// their frustum (their bits written here); two-phase views draw the casters they kept last
// frame that are in their frustum now.
#define CULL_LATE 0
#include "shadow_cull.h"

void main() {
    shadow_cull(min(constants.view_count, MAX_SHADOW_VIEWS));
}

#version 450
// The camera's object cull, early phase (`gpu_cull.h`): the objects each view kept last frame
// that are in its frustum this frame are appended to the view's early list of `draw_commands`; the depth
// prepass draws them, the Hi-Z build reduces that depth and the late phase tests everything
// against it. Each is drawn at the level the late phase will keep for it (the same rule on
// the same inputs).
#include "gpu_cull_early_main.h"

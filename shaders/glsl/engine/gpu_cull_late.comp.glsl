#version 450
// The camera's object cull, late phase (`gpu_cull.h`): every object is tested against each
// view's frustum this frame, then against the view's rectangle of the pyramid built from the
// early phase's depth; its bit goes to the view's words of `visibility_bits` (next frame's
// history), and the objects visible now that the view's early phase did not draw are appended
// to its late list of `draw_commands`; each object the main view's frustum keeps leaves its
// chosen level as its slot's state (`object_lod_levels`).
#include "gpu_cull_late_main.h"

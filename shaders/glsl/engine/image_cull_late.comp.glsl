#version 450
// An image-target view's object cull, late phase: `gpu_cull_late.comp` for one view (view 0,
// the image's camera; view 1 the main camera, for its levels' hysteresis), reading its own
// history, lists and pyramid, leaving out the slots `excluded` marks (`gpu_cull.h`).
#define CULL_IMAGE_VIEW 1
#include "gpu_cull_late_main.h"

#version 450
// The geometry pass of a frame with shadows: lit by the frame's lights, shadowed by the atlas.
#define SHADOWED
#include "geometry_fragment.h"

#version 450
// The shadowed geometry pass's vertex shader: the geometry pass's, with the world position
// out for the lights (geometry_shadowed.frag.glsl).
#define SHADOWED
#include "geometry_vertex.h"

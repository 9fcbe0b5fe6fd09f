#version 450
// The blended pass's vertex shader on a GPU-culled frame: the geometry pass's, leaving out
// the objects whose visibility bit the cull cleared.
#define GATED_BY_VISIBILITY
#include "geometry_vertex.h"

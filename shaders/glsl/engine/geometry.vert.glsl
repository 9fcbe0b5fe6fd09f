#version 450
#include "geometry_vertex.h"

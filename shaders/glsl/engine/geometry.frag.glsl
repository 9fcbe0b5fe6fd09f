#version 450
#include "geometry_fragment.h"

#version 450
// Depth prepass: depth only, no colour attachment; the fixed-function depth test and write
// do the work. A masked material's holes are discarded (material.h), so neither the depth,
// the Hi-Z pyramid built from it nor the geometry pass's depth test sees a surface there;
// opaque objects skip the texture.
layout(location = 0) in vec2 in_uv;
layout(location = 1) flat in uint in_material;
layout(location = 2) flat in uint in_color;

#include "material.h"

void main() {
    if (!material_masked(in_material)) {
        return;
    }
    float alpha = unpackUnorm4x8(in_color).a * material_texel(in_material, in_uv).a;
    if (material_hole(in_material, alpha)) {
        discard;
    }
}

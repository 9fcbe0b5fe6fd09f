#version 450
// Writes the object's colour times its material's base-colour texel (material.h), lit by
// one directional light when the mesh has normals; a masked material's holes are discarded,
// as in the depth prepass, so what lies behind them shows.
// A mesh without normals (interpolated normal exactly zero) gets its flat colour, byte for
// byte; either way the image depends only on which surface covers each pixel, so two
// renders of the same visible surfaces are equal byte for byte.
layout(location = 0) flat in uint in_color;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 3) flat in uint in_material;
layout(location = 0) out vec4 out_color;

#include "material.h"

// Direction towards the sun (world space, +y up), and the share of light that is ambient.
const vec3 TO_LIGHT = normalize(vec3(0.4, 0.9, 0.35));
const float AMBIENT = 0.35;

void main() {
    // unpackUnorm4x8 gives byte / 255, which the RGBA8 UNORM attachment stores exactly.
    vec4 base = unpackUnorm4x8(in_color);
    // White (exactly 1.0, leaving the colour's bytes as they are) without a texture.
    base *= material_texel(in_material, in_uv);
    if (material_hole(in_material, base.a)) {
        discard;
    }
    float normal_length = length(in_normal);
    if (normal_length == 0.0) {
        out_color = base;
        return;
    }
    // A double-sided material's back face is lit as the face the viewer sees.
    vec3 normal = (gl_FrontFacing ? in_normal : -in_normal) / normal_length;
    float diffuse = max(dot(normal, TO_LIGHT), 0.0);
    float shade = AMBIENT + (1.0 - AMBIENT) * diffuse;
    out_color = vec4(base.rgb * shade, base.a);
}

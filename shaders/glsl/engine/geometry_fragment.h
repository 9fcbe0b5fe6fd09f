// The geometry pass's fragment shader: geometry.frag.glsl includes it as it is,
// geometry_shadowed.frag.glsl with SHADOWED defined (lights and shadow maps, shadows.h).
// Writes the object's colour times its material's base-colour texel (material.h), lit by
// one directional light when the mesh has normals; a masked material's holes are discarded,
// as in the depth prepass, so what lies behind them shows.
// A mesh without normals (interpolated normal exactly zero) gets its flat colour, byte for
// byte; either way the image depends only on which surface covers each pixel, so two
// renders of the same visible surfaces are equal byte for byte. With DRAW_OBJECT_IDS in the
// push constants (draw_filter.h) it writes the object-id image instead.
layout(location = 0) flat in uint in_color;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 3) flat in uint in_material;
layout(location = 0) out vec4 out_color;

#include "material.h"
#include "draw_filter.h"

// The scene shaders' push constants (scene_common.h): only `draw_filter` is read here.
layout(push_constant) uniform CameraConstants {
    mat4 view_projection;
    uint draw_filter;
} camera;

#ifdef SHADOWED
layout(location = 4) in vec3 in_world;
#include "shadows.h"
#endif

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
    if ((camera.draw_filter & DRAW_OBJECT_IDS) != 0u) {
        if ((camera.draw_filter & DRAW_FILTER_MASK) == DRAW_BLENDED) {
            discard;
        }
        out_color = vec4(unpackUnorm4x8(in_color).rgb, 0.0);
        return;
    }
    float normal_length = length(in_normal);
    if (normal_length == 0.0) {
        out_color = base;
        return;
    }
    // A double-sided material's back face is lit as the face the viewer sees.
    vec3 normal = (gl_FrontFacing ? in_normal : -in_normal) / normal_length;
#ifdef SHADOWED
    // With lights in the world (shadows.h), the sun and the local lights shade instead of the
    // built-in direction; the same ambient share stays.
    if (light_counts.x != 0u || light_counts.z != 0u) {
        vec3 light = vec3(AMBIENT);
        if (light_counts.x != 0u) {
            float sun = max(dot(normal, -sun_direction.xyz), 0.0);
            if (sun > 0.0) {
                light += (1.0 - AMBIENT) * sun * sun_lit(in_world, normal) * sun_radiance.rgb;
            }
        }
        for (uint i = 0u; i < light_counts.z; ++i) {
            light += local_light(i, in_world, normal);
        }
        out_color = vec4(base.rgb * light, base.a);
        return;
    }
#endif
    float diffuse = max(dot(normal, TO_LIGHT), 0.0);
    float shade = AMBIENT + (1.0 - AMBIENT) * diffuse;
    out_color = vec4(base.rgb * shade, base.a);
}

// The frame's lights and shadow maps, read by the shadowed geometry pass.
// Host twin: renderer/src/scene/shadows.rs (`ShadowFrame::write_lights`), bindings 9 and 10
// of `SHADOWED_SCENE_BINDINGS` in renderer/src/passes/draw.rs.
//
// Every shadow view is a tile of one D32 atlas, drawn reversed-Z (1 nearest the light, 0
// far), so a receiver is lit where its own depth is at least the stored one.

#include "config.h"

struct ShadowView {
    mat4 view_projection;
    // Tile left, top and side in texels; world size of a texel (at unit distance for a
    // perspective view).
    vec4 tile;
    // Constant and slope offsets in texels; 1 for a perspective view; unused.
    vec4 bias;
};

struct LocalLight {
    // World position, range.
    vec4 position_range;
    // Linear radiance; kind (0 spot, 1 point).
    vec4 radiance_kind;
    // Spot direction (unit); cosine of the outer half angle.
    vec4 direction_cos_outer;
    // Cosine of the inner half angle; first shadow view (-1: none); unused.
    vec4 cos_inner_view;
};

layout(std430, set = 0, binding = 9) readonly buffer ShadowLights {
    // Sun present (0/1), its cascades, local lights, atlas side in texels.
    uvec4 light_counts;
    // Direction the sun's light travels (unit); unused.
    vec4 sun_direction;
    // Sun radiance.
    vec4 sun_radiance;
    // Camera distance each cascade ends at.
    vec4 cascade_ends;
    // Camera position, and its view axis (unit), for picking a cascade.
    vec4 camera_position;
    vec4 camera_forward;
    LocalLight local_lights[MAX_LOCAL_LIGHTS];
    ShadowView shadow_views[MAX_SHADOW_VIEWS];
};

layout(set = 0, binding = 10) uniform sampler2D shadow_atlas;

// How lit `world` is in view `index` (1 lit, 0 in shadow): the receiver moved along its
// normal and towards the light by the view's offsets, then a 3x3 tent of bilinear
// comparisons (16 texels), clamped to the view's tile. Outside the view: lit.
float shadow_lit(uint index, vec3 world, vec3 normal, vec3 to_light, float distance_to_light) {
    ShadowView view = shadow_views[index];
    float texel = view.tile.w * (view.bias.z > 0.5 ? distance_to_light : 1.0);
    float n_dot_l = clamp(dot(normal, to_light), 0.0, 1.0);
    float slope = sqrt(1.0 - n_dot_l * n_dot_l);
    vec3 offset = normal * (texel * view.bias.y * slope) + to_light * (texel * view.bias.x);
    vec4 clip = view.view_projection * vec4(world + offset, 1.0);
    if (clip.w <= 0.0) {
        return 1.0;
    }
    vec3 ndc = clip.xyz / clip.w;
    if (any(greaterThan(abs(ndc.xy), vec2(1.0))) || ndc.z < 0.0) {
        return 1.0;
    }
    // The depth pass flips y (scene_common.h), so the tile's top row is ndc y = +1.
    vec2 uv = vec2(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    vec2 position = view.tile.xy + uv * view.tile.z - 0.5;
    ivec2 base = ivec2(floor(position));
    vec2 f = position - vec2(base);
    ivec2 low = ivec2(view.tile.xy);
    ivec2 high = low + ivec2(view.tile.z) - 1;
    float depth = min(ndc.z, 1.0);
    float lit = 0.0;
    for (int j = 0; j < 4; ++j) {
        float wy = j == 0 ? 1.0 - f.y : (j == 3 ? f.y : 1.0);
        for (int i = 0; i < 4; ++i) {
            float wx = i == 0 ? 1.0 - f.x : (i == 3 ? f.x : 1.0);
            ivec2 at = clamp(base + ivec2(i - 1, j - 1), low, high);
            float stored = texelFetch(shadow_atlas, at, 0).r;
            lit += (depth >= stored ? 1.0 : 0.0) * wx * wy;
        }
    }
    return lit / 9.0;
}

// The sun's shadow at `world`: the cascade holding the camera distance, lit past the last.
float sun_lit(vec3 world, vec3 normal) {
    uint cascades = light_counts.y;
    float depth = dot(world - camera_position.xyz, camera_forward.xyz);
    for (uint i = 0u; i < cascades; ++i) {
        if (depth <= cascade_ends[i]) {
            return shadow_lit(i, world, normal, -sun_direction.xyz, 1.0);
        }
    }
    return 1.0;
}

// Light from local light `index` reaching `world` with `normal` (radiance times cosine,
// falloff, cone and shadow).
vec3 local_light(uint index, vec3 world, vec3 normal) {
    LocalLight light = local_lights[index];
    vec3 to_light = light.position_range.xyz - world;
    float distance_to_light = length(to_light);
    float range = light.position_range.w;
    if (distance_to_light >= range || distance_to_light <= 0.0) {
        return vec3(0.0);
    }
    to_light /= distance_to_light;
    float n_dot_l = dot(normal, to_light);
    if (n_dot_l <= 0.0) {
        return vec3(0.0);
    }
    // A smooth window to zero at the range over inverse-square falloff.
    float ratio = distance_to_light / range;
    float window = clamp(1.0 - ratio * ratio * ratio * ratio, 0.0, 1.0);
    float falloff = window * window / (distance_to_light * distance_to_light + 1.0);
    bool spot = light.radiance_kind.w < 0.5;
    if (spot) {
        float cos_angle = dot(-to_light, light.direction_cos_outer.xyz);
        falloff *= smoothstep(light.direction_cos_outer.w, max(light.cos_inner_view.x, light.direction_cos_outer.w + 1e-4), cos_angle);
    }
    if (falloff <= 0.0) {
        return vec3(0.0);
    }
    float lit = 1.0;
    int first = int(light.cos_inner_view.y);
    if (first >= 0) {
        uint view = uint(first);
        if (!spot) {
            // The cube face of the major axis (+X, -X, +Y, -Y, +Z, -Z).
            vec3 away = -to_light;
            vec3 size = abs(away);
            uint face = size.x >= size.y && size.x >= size.z ? (away.x >= 0.0 ? 0u : 1u)
                      : (size.y >= size.z ? (away.y >= 0.0 ? 2u : 3u) : (away.z >= 0.0 ? 4u : 5u));
            view += face;
        }
        lit = shadow_lit(view, world, normal, to_light, distance_to_light);
    }
    return light.radiance_kind.rgb * (n_dot_l * falloff * lit);
}

#version 450
// GPU cull, late phase: tests every object against this frame's frustum, then against the
// pyramid built from the early phase's depth; writes `visibility_bits` (next frame's
// history) and appends the objects visible now that the early phase did not draw.
#include "gpu_cull.h"
layout(local_size_x = CULL_GROUP) in;

layout(set = 0, binding = 3) uniform sampler2D hiz;
layout(std430, set = 0, binding = 4) writeonly buffer VisibilityBits {
    uint visibility[];
};
layout(std430, set = 0, binding = 5) writeonly buffer DrawCommands {
    DrawCommand commands[];
};
layout(std430, set = 0, binding = 6) buffer DrawCount {
    uint draw_count;
};
layout(std430, set = 0, binding = 7) buffer CullStats {
    uint stats[STAT_COUNT];
};

shared uint words[2];
// This workgroup's counters, added to `stats` once.
shared uint counts[STAT_COUNT];

// Whether the pyramid proves the box hidden. Conservative at every step: a corner at the
// camera plane or at/in front of the near plane, or any non-finite number, keeps the box;
// the footprint is the pixel rectangle of the corners' screen bounds (widened, clipped to
// the image); the nearest depth is the largest corner depth (raised); the pyramid level is
// the finest where the footprint spans at most 2x2 texels, and each pyramid texel holds the
// farthest depth of every texel it covers. Hidden only when the nearest depth is smaller
// than all four texels.
bool occluded(vec3 bounds_min, vec3 bounds_max) {
    float nearest = 0.0;
    vec2 low = vec2(3.0e38);
    vec2 high = vec2(-3.0e38);
    for (uint corner = 0u; corner < 8u; ++corner) {
        vec3 point = vec3((corner & 1u) != 0u ? bounds_max.x : bounds_min.x,
            (corner & 2u) != 0u ? bounds_max.y : bounds_min.y,
            (corner & 4u) != 0u ? bounds_max.z : bounds_min.z);
        precise vec4 clip = cull.view_projection * vec4(point, 1.0);
        // Written so that NaN keeps the box: every comparison with NaN is false.
        if (!(clip.w > 1.0e-5) || !(clip.z < clip.w)) {
            return false;
        }
        vec3 ndc = clip.xyz / clip.w;
        nearest = max(nearest, ndc.z);
        low = min(low, ndc.xy);
        high = max(high, ndc.xy);
    }
    if (!(lane_is_finite(low.x) && lane_is_finite(low.y) && lane_is_finite(high.x) && lane_is_finite(high.y))) {
        return false;
    }
    // Row 0 is the top of the view (+y up in clip space, the scene shaders flip y).
    vec2 size = cull.hiz_size;
    vec2 first = vec2(low.x * 0.5 + 0.5, 0.5 - high.y * 0.5) * size - cull.footprint_margin;
    vec2 last = vec2(high.x * 0.5 + 0.5, 0.5 - low.y * 0.5) * size + cull.footprint_margin;
    if (any(lessThan(last, vec2(0.0))) || any(greaterThanEqual(first, size))) {
        return false;
    }
    ivec2 texel_limit = ivec2(size) - 1;
    ivec2 first_texel = clamp(ivec2(floor(first)), ivec2(0), texel_limit);
    ivec2 last_texel = clamp(ivec2(floor(last)), ivec2(0), texel_limit);
    int level = 0;
    while (uint(level + 1) < cull.hiz_mips && any(greaterThan((last_texel >> level) - (first_texel >> level), ivec2(1)))) {
        level += 1;
    }
    // Mip sizes round down; the last texel of a level covers the source's remainder.
    ivec2 level_limit = max(ivec2(size) >> level, ivec2(1)) - 1;
    ivec2 a = min(first_texel >> level, level_limit);
    ivec2 b = min(last_texel >> level, level_limit);
    float farthest = min(min(texelFetch(hiz, a, level).r, texelFetch(hiz, ivec2(b.x, a.y), level).r),
        min(texelFetch(hiz, ivec2(a.x, b.y), level).r, texelFetch(hiz, b, level).r));
    precise float raised = nearest + nearest * cull.depth_margin;
    return raised < farthest;
}

void main() {
    if (gl_LocalInvocationIndex < 2u) {
        words[gl_LocalInvocationIndex] = 0u;
    }
    if (gl_LocalInvocationIndex < STAT_COUNT) {
        counts[gl_LocalInvocationIndex] = 0u;
    }
    barrier();
    uint object = gl_GlobalInvocationID.x;
    if (object < cull.object_count) {
        ObjectRecord record = objects[object];
        atomicAdd(counts[STAT_OBJECTS], 1u);
        bool visible = record.index_count != 0u
            && ((cull.flags & CULL_FRUSTUM) == 0u || frustum_keeps(record.bounds_min, record.bounds_max));
        if (!visible) {
            atomicAdd(counts[STAT_FRUSTUM_REJECTED], 1u);
        } else if ((cull.flags & CULL_OCCLUSION) != 0u && occluded(record.bounds_min, record.bounds_max)) {
            visible = false;
            atomicAdd(counts[STAT_OCCLUSION_REJECTED], 1u);
        }
        if (visible) {
            atomicOr(words[gl_LocalInvocationIndex / 32u], 1u << (gl_LocalInvocationIndex % 32u));
            // The early phase drew what was visible last frame and is in the frustum now.
            if (!was_visible(object)) {
                uint slot = atomicAdd(draw_count, 1u);
                commands[slot] = DrawCommand(record.index_count, 1u, record.first_index, record.vertex_offset, object);
                atomicAdd(counts[STAT_LATE_DRAWN], 1u);
                atomicAdd(counts[STAT_TRIANGLES], record.index_count / 3u);
            }
        }
    }
    barrier();
    if (gl_LocalInvocationIndex < 2u) {
        visibility[gl_WorkGroupID.x * 2u + gl_LocalInvocationIndex] = words[gl_LocalInvocationIndex];
    }
    if (gl_LocalInvocationIndex < STAT_COUNT && counts[gl_LocalInvocationIndex] != 0u) {
        atomicAdd(stats[gl_LocalInvocationIndex], counts[gl_LocalInvocationIndex]);
    }
}

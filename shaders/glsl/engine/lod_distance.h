// Level of detail by distance: the GLSL twin of the CPU's distance rule (ecs::lod::select_level
// fed by culling's `LevelRule::pick`: the world centre of the local box, its distance from the
// eye, the projection's field-of-view scale and the chain's bias times the global one), step
// for step, every step one correctly rounded operation under `precise`, so the GPU picks the
// CPU's level for the same inputs.
// The includer defines `lod_level_limit`, declared here: the greatest distance of level
// `level` of the chain being chosen from (`LodLevel::max_distance`).
#ifndef LOD_DISTANCE_H
#define LOD_DISTANCE_H

float lod_level_limit(uint level);

// The square root rounded to the nearest float, as Rust's `f32::sqrt`: the device's root
// (which Vulkan lets be a few units in the last place off) moved to whichever neighbour's
// square is nearer `x` (the residuals are exact with a fused multiply-add, and for a square
// root the nearer square is the nearer root).
float lod_sqrt(float x) {
    float root = sqrt(x);
    if (!(x > 0.0) || isinf(x) || !(root > 0.0)) {
        return root;
    }
    float best = root;
    precise float best_residual = abs(fma(-root, root, x));
    for (int step = -2; step <= 2; step++) {
        float candidate = uintBitsToFloat(uint(int(floatBitsToUint(root)) + step));
        precise float residual = abs(fma(-candidate, candidate, x));
        if (residual < best_residual) {
            best = candidate;
            best_residual = residual;
        }
    }
    return best;
}

// The level to draw of a chain of `count` levels for an object whose world centre is `center`
// seen from `eye` by a view of field-of-view scale `scale`, `bias` the chain's bias times the
// global one: the first level whose `distance * scale <= limit * bias`, else the last; the
// finest for a NaN distance or bias.
uint lod_select_distance(uint count, vec3 center, vec3 eye, float scale, float bias) {
    precise vec3 gap = center - eye;
    precise float distance_sq = (gap.x * gap.x + gap.y * gap.y) + gap.z * gap.z;
    precise float scaled = lod_sqrt(distance_sq) * scale;
    if (isnan(scaled) || isnan(bias)) {
        return 0u;
    }
    uint last = 0u;
    for (uint level = 0u; level < count; level++) {
        precise float limit = lod_level_limit(level) * bias;
        if (scaled <= limit) {
            return level;
        }
        last = level;
    }
    return last;
}
#endif

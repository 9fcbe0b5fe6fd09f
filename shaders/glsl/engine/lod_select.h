// Level of detail from each level's simplification error: the GLSL twin of
// culling/src/lod_error.rs (`LodErrorView`, `lod_box_distance_sq`, `select_lod_by_error`),
// step for step, every step one correctly rounded operation under `precise`, so the GPU picks
// the CPU's level for the same inputs. The rule, its ties (a level exactly at its limit
// passes: the coarser wins) and its hysteresis (a band keyed by last frame's level) are
// documented once, in that Rust file.
// The includer defines `lod_level_error`, declared here: the error of level `level` of the
// chain being chosen from (each includer keeps its chains in its own buffer layout).
#ifndef LOD_SELECT_H
#define LOD_SELECT_H

float lod_level_error(uint level);

// A view's side of the rule (`LodErrorView`, 16 bytes).
struct LodView {
    float pixels_per_unit;
    float coarsen_sq;
    float keep_sq;
    uint orthographic;
};

// Squared distance from `eye` to the nearest point of the box: per axis the gap where
// positive, else 0 (a NaN gap too: the finest level), summed as (x² + y²) + z².
float lod_box_distance_sq(vec3 eye, vec3 center, vec3 half_extent) {
    precise vec3 reach = abs(center - eye) - half_extent;
    float x = reach.x > 0.0 ? reach.x : 0.0;
    float y = reach.y > 0.0 ? reach.y : 0.0;
    float z = reach.z > 0.0 ? reach.z : 0.0;
    precise float distance_sq = (x * x + y * y) + z * z;
    return distance_sq;
}

// The largest squared length of the three axes of an object's world matrix, a NaN one ignored
// unless all are.
float lod_scale_sq(vec3 axis_x, vec3 axis_y, vec3 axis_z) {
    precise float x = (axis_x.x * axis_x.x + axis_x.y * axis_x.y) + axis_x.z * axis_x.z;
    precise float y = (axis_y.x * axis_y.x + axis_y.y * axis_y.y) + axis_y.z * axis_y.z;
    precise float z = (axis_z.x * axis_z.x + axis_z.y * axis_z.y) + axis_z.z * axis_z.z;
    float larger = y > x ? y : x;
    return z > larger ? z : larger;
}

// The level to draw of a chain of `count` levels (errors in mesh units) for an object of
// squared scale `scale_sq` at squared box distance `distance_sq`, given last frame's level
// `last` (0 for a new object).
uint lod_select(uint count, float scale_sq, float distance_sq, LodView view, uint last) {
    float distance = view.orthographic != 0u ? 1.0 : distance_sq;
    uint level = 0u;
    for (uint index = 1u; index < count; index++) {
        float limit_sq = index > last ? view.coarsen_sq : view.keep_sq;
        precise float pixels = lod_level_error(index) * view.pixels_per_unit;
        precise float projected = (pixels * pixels) * scale_sq;
        precise float allowed = limit_sq * distance;
        // "Not at most", so a NaN ends the run (the finer level stays).
        if (!(projected <= allowed)) {
            break;
        }
        level = index;
    }
    return level;
}
#endif

// The meshlet (cluster) cull (`cluster_cull_early.comp`, `cluster_cull_late.comp`, and the
// survivor pass between them, `cluster_survivors.comp`): the two-phase skeleton
// (`two_phase_cull.h`) specialised to (object, meshlet) pairs of `cluster_pairs`, one view
// (the camera, view 0 of `cull_views`). A meshlet is tested by its world sphere against the
// frustum, meshopt's normal cone against the eye and, in the late phase, its world box against
// `hiz_depth`; an object drawn whole (its mesh has no meshlets, or its record names another
// mesh now) is reported by its first pair. Bits are per pair (`cluster_visibility_bits`, next
// frame's history).
// Levels of detail: an object whose record names a chain has the pairs of every level's mesh
// (`cluster_table.rs`); where the view chooses levels (CULL_LOD, error chains, as the object
// cull), a pass that defines CLUSTER_LOD_BINDING draws the pairs of the chosen level's mesh
// only: the early phase chooses from last frame's state (`object_lod_levels`' history) by the
// rule, as the object cull does; the late phase reads the state the object cull's late phase
// wrote this frame (its survivors are in the frustum: picked), which the survivor pass packs
// with each survivor (a late phase has no binding left for the states). Otherwise the
// record's mesh is drawn.
// Host twins: renderer/src/passes/cull/cluster.rs (`GpuMeshlet`, the binding order) and
// config.h's constants; CPU reference: culling/src/cluster/ (every test below repeats its
// steps).
#ifndef CLUSTER_CULL_H
#define CLUSTER_CULL_H
#include "cull_inputs.h"

// The pair fields, verdicts and counters (`PAIR_*`, `VERDICT_*`, `CSTAT_*`) are config.h's.

// The thread's item (pair or object) of a direct dispatch: one dimension holds at most
// CLUSTER_MAX_GROUPS groups, so bigger counts run in rows (`cluster_dispatch_shape` in
// renderer/src/passes/cull/cluster.rs); the threads past the count return.
uint cluster_thread() {
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    return group * CLUSTER_GROUP + gl_LocalInvocationID.x;
}

// One meshlet of the mesh library, mesh space, 80 bytes.
struct GpuMeshlet {
    vec3 center;
    float radius;
    vec3 cone_apex;
    float cone_cutoff;
    vec3 cone_axis;
    // First index of the meshlet from its mesh's first index (the record's: a mesh added
    // while frames run lies wherever the GPU buffers had room).
    uint first_index;
    vec3 box_min;
    uint index_count;
    vec3 box_max;
    // The mesh id the meshlet belongs to.
    uint mesh;
};

layout(std430, set = 0, binding = CULL_KIND_BINDING) readonly buffer ClusterMeshlets {
    GpuMeshlet meshlets[];
};

// (object, meshlet field) per pair.
layout(std430, set = 0, binding = CULL_KIND_BINDING + 1) readonly buffer ClusterPairs {
    uvec2 pairs[];
};

// Per object: the mesh its pairs were built for, or BUILT_CHAIN and its block of level meshes
// (after the objects' words). An object drawing a mesh none of its pairs were built for (a
// LOD switch, a level streamed in, not refreshed yet) is drawn whole by its first pair.
layout(std430, set = 0, binding = CULL_KIND_BINDING + 2) readonly buffer ClusterObjects {
    uint built_mesh[];
};

#ifdef CLUSTER_LOD_BINDING
#include "lod_table.h"
layout(std430, set = 0, binding = CLUSTER_LOD_BINDING) readonly buffer LodEntries {
    LodEntry lod_entries[];
};
#if !CULL_LATE
// Last frame's state of every slot.
layout(std430, set = 0, binding = CLUSTER_LOD_BINDING + 1) readonly buffer LodStates {
    uint lod_states[];
};
#else
// The level this frame's state of the object being culled names (its survivor's).
uint survivor_level = 0u;
#endif

// The chain `lod_select` reads: its first entry.
uint lod_chain_first = 0u;

float lod_level_error(uint level) {
    return lod_entries[lod_chain_first + level].error;
}

// The record with the draw arguments of the level the view chooses (as `gpu_cull.h`'s
// `cull_load_in` for the main view, error chains only); the record itself where it chooses
// none.
ObjectRecord chosen_level(CullView v, uint object, ObjectRecord record) {
    uint count = record.reserved[1];
    uint first = record.reserved[0];
    bool chained = count > 0u && record.index_count != 0u && lod_entries[first].rule == LOD_RULE_ERROR;
    if (!chained || (v.flags & CULL_LOD) == 0u) {
        return record;
    }
    lod_chain_first = first;
#if CULL_LATE
    uint level = min(survivor_level, count - 1u);
#else
    ObjectTransform transform = transforms[object];
    vec3 center;
    vec3 half_extent;
    object_world_box(transform, record, center, half_extent);
    float scale_sq = lod_scale_sq(transform_column(transform, 0), transform_column(transform, 1),
        transform_column(transform, 2));
    float distance_sq = lod_box_distance_sq(v.lod_eye.xyz, center, half_extent);
    uint levels = min(count, MAX_GPU_LOD_LEVELS);
    uint level = lod_select(levels, scale_sq, distance_sq, v.lod, lod_state_level(lod_states[object], first));
#endif
    LodEntry entry = lod_entries[first + level];
    record.index_count = entry.index_count;
    record.first_index = entry.first_index;
    record.vertex_offset = entry.vertex_offset;
    record.mesh = entry.mesh;
    return record;
}
#endif

// The first binding after the tables.
#define CLUSTER_BINDING (CULL_KIND_BINDING + 3)

// The upper bound of the stretch of the object's 3x3 (CPU twin `max_stretch`): the square
// root of the Gershgorin bound of MᵀM; never smaller than the true largest stretch.
float max_stretch(mat4 world) {
    vec3 c0 = world[0].xyz;
    vec3 c1 = world[1].xyz;
    vec3 c2 = world[2].xyz;
    float r0 = abs(dot(c0, c0)) + abs(dot(c0, c1)) + abs(dot(c0, c2));
    float r1 = abs(dot(c1, c0)) + abs(dot(c1, c1)) + abs(dot(c1, c2));
    float r2 = abs(dot(c2, c0)) + abs(dot(c2, c1)) + abs(dot(c2, c2));
    return sqrt(max(max(r0, r1), r2));
}

// Whether the meshlet's sphere, carried to world space (radius times `max_stretch`, widened),
// is outside a frustum plane. Conservative: a sphere straddling a plane, or with a
// non-finite number, is kept (as `frustum_keeps` and the CPU's `sphere_lane`).
bool sphere_outside(CullView view, mat4 world, GpuMeshlet meshlet) {
    vec3 center = (world * vec4(meshlet.center, 1.0)).xyz;
    float radius = abs(meshlet.radius) * max_stretch(world) * (1.0 + view.bounds_margin);
    bool finite = lane_is_finite(center.x) && lane_is_finite(center.y) && lane_is_finite(center.z)
        && lane_is_finite(radius);
    bool outside = false;
    for (uint index = 0u; index < view.plane_count; ++index) {
        vec4 plane = view.planes[index];
        float distance = ((plane.x * center.x + plane.y * center.y) + plane.z * center.z) + plane.w;
        outside = outside || distance + radius < 0.0;
    }
    return outside && finite;
}

// meshopt's back-face test in mesh space (CPU twin `cone_rejects`, which argues why mesh
// space is exact for any affine world with a positive determinant). Conservative: a
// degenerate cone (cutoff >= 1), a mirroring or singular world, an eye at the apex, or NaN
// keeps the meshlet; `cone_margin` covers the rounding of the inverse.
bool cone_rejects(CullView view, mat4 world, GpuMeshlet meshlet) {
    if (!(meshlet.cone_cutoff < 1.0)) {
        return false;
    }
    // world⁻¹ by cofactors: the rows of the 3x3 inverse are the columns' cross products over
    // the determinant (CPU twin `mesh_space_eye`).
    vec3 c0 = world[0].xyz;
    vec3 c1 = world[1].xyz;
    vec3 c2 = world[2].xyz;
    vec3 r0 = cross(c1, c2);
    float det = dot(c0, r0);
    if (!(det > 0.0)) {
        return false;
    }
    vec3 offset = view.eye.xyz - world[3].xyz;
    vec3 local_eye = vec3(dot(r0, offset), dot(cross(c2, c0), offset), dot(cross(c0, c1), offset)) / det;
    vec3 to_apex = meshlet.cone_apex - local_eye;
    float len = length(to_apex);
    if (!(len > 0.0)) {
        return false;
    }
    return dot(to_apex, meshlet.cone_axis) / len >= meshlet.cone_cutoff + view.cone_margin;
}

// The meshlet's box in world space: centre as a point, half extents through |M| (CPU twin
// `world_box`), widened by `bounds_margin`.
void world_box(CullView view, mat4 world, GpuMeshlet meshlet, out vec3 low, out vec3 high) {
    vec3 center = (world * vec4((meshlet.box_min + meshlet.box_max) * 0.5, 1.0)).xyz;
    vec3 half_extent = abs((meshlet.box_max - meshlet.box_min) * 0.5);
    vec3 reach = abs(world[0].xyz) * half_extent.x + abs(world[1].xyz) * half_extent.y
        + abs(world[2].xyz) * half_extent.z;
    reach += (reach + abs(center)) * view.bounds_margin;
    low = center - reach;
    high = center + reach;
}

// Whether the object's world box is outside a frustum plane: the box's corners are
// `object_world_box`'s centre minus and plus its half extents (the Visibility stage's stored
// box), tested with the steps of the CPU reference (`classify_object`, which takes the
// corners). A straddling or non-finite box is kept.
bool object_outside(CullView view, uint object, ObjectRecord record) {
    vec3 world_center;
    vec3 world_half;
    object_world_box(transforms[object], record, world_center, world_half);
    vec3 bounds_min = world_center - world_half;
    vec3 bounds_max = world_center + world_half;
    precise vec3 center = (bounds_min + bounds_max) * 0.5;
    precise vec3 half_extent = abs((bounds_max - bounds_min) * 0.5);
    bool finite = lane_is_finite(center.x) && lane_is_finite(center.y) && lane_is_finite(center.z)
        && lane_is_finite(half_extent.x) && lane_is_finite(half_extent.y) && lane_is_finite(half_extent.z);
    bool outside = false;
    for (uint index = 0u; index < view.plane_count; ++index) {
        vec4 plane = view.planes[index];
        precise float distance = ((plane.x * center.x + plane.y * center.y) + plane.z * center.z) + plane.w;
        precise float reach = (abs(plane.x) * half_extent.x + abs(plane.y) * half_extent.y) + abs(plane.z) * half_extent.z;
        precise float furthest = distance + reach;
        outside = outside || furthest < 0.0;
    }
    return outside && finite;
}

// Whether the field is a pair drawing a level whole (PAIR_WHOLE - level).
bool field_is_whole(uint field) {
    return (field & PAIR_MESHLET_MASK) > PAIR_WHOLE - MAX_GPU_LOD_LEVELS;
}

// The mesh level `level`'s pairs of `object` were built for (BUILT_NONE: none).
uint built_level_mesh(uint object, uint level) {
    uint word = built_mesh[object];
    if ((word & BUILT_CHAIN) == 0u) {
        return level == 0u ? word : BUILT_NONE;
    }
    return built_mesh[constants.object_count + (word & ~BUILT_CHAIN) * MAX_GPU_LOD_LEVELS + level];
}

// Whether some of the object's pairs were built for `mesh`.
bool built_for(uint object, uint mesh) {
    uint word = built_mesh[object];
    if ((word & BUILT_CHAIN) == 0u) {
        return word == mesh;
    }
    bool built = false;
    for (uint level = 0u; level < MAX_GPU_LOD_LEVELS; ++level) {
        built = built || built_level_mesh(object, level) == mesh;
    }
    return built;
}

// A pair, read once: its object and record (with the drawn level's arguments), its meshlet
// unless the pair draws the object whole (then only the object's first pair reports), and
// whether it draws nothing this frame (a pair of another level than the drawn one).
struct CullItem {
    uint object;
    uint field;
    bool whole;
    bool other_level;
    ObjectRecord record;
    GpuMeshlet meshlet;
    mat4 world;
};

CullItem cull_load(uint pair) {
    CullItem item;
    item.object = pairs[pair].x;
    item.field = pairs[pair].y;
    item.record = objects[item.object];
#ifdef CLUSTER_LOD_BINDING
    item.record = chosen_level(views[0], item.object, item.record);
#endif
    item.other_level = false;
    if (!built_for(item.object, item.record.mesh)) {
        // A stale table: the object is drawn whole, by its first pair.
        item.whole = true;
        return item;
    }
    item.whole = field_is_whole(item.field);
    if (item.whole) {
        item.other_level = built_level_mesh(item.object, PAIR_WHOLE - (item.field & PAIR_MESHLET_MASK)) != item.record.mesh;
        // The drawn level's whole pair reports for the object.
        item.field |= PAIR_FIRST;
        return item;
    }
    item.meshlet = meshlets[item.field & PAIR_MESHLET_MASK];
    item.other_level = item.meshlet.mesh != item.record.mesh;
    item.world = object_matrix(transforms[item.object]);
    return item;
}

// An object drawn whole is tested by its box in the early phase (the late phase visits only
// objects the object pass kept, so it keeps them); a meshlet by its sphere, then its cone.
// Only an object's first pair reports an object drawn whole (or the drawn level's whole
// pair); a pair of another level is untested.
uint cull_tests(uint view, CullView v, CullItem item) {
    if (item.other_level) {
        return VERDICT_UNTESTED;
    }
    if (item.whole) {
        if ((item.field & PAIR_FIRST) == 0u) {
            return VERDICT_UNTESTED;
        }
#if CULL_LATE
        return VERDICT_VISIBLE;
#else
        bool outside = (v.flags & CULL_FRUSTUM) != 0u && object_outside(v, item.object, item.record);
        return outside ? VERDICT_FRUSTUM : VERDICT_VISIBLE;
#endif
    }
    if ((v.flags & CULL_FRUSTUM) != 0u && sphere_outside(v, item.world, item.meshlet)) {
        return VERDICT_FRUSTUM;
    }
    if ((v.flags & CULL_CONE) != 0u && cone_rejects(v, item.world, item.meshlet)) {
        return VERDICT_BACK_FACING;
    }
    return VERDICT_VISIBLE;
}

#if CULL_LATE
// A meshlet's world box against the pyramid; an object drawn whole was judged by the object
// pass.
int cull_occlusion(uint view, CullView v, CullItem item) {
    if (item.whole) {
        return HIZ_VISIBLE;
    }
    vec3 low;
    vec3 high;
    world_box(v, item.world, item.meshlet, low, high);
    return view_occlusion(v, low, high);
}
#endif

// The command that draws the pair: the object whole, or one meshlet of it.
DrawCommand pair_command(CullItem item) {
    if (item.whole) {
        return DrawCommand(item.record.index_count, 1u, item.record.first_index, item.record.vertex_offset, item.object);
    }
    uint first_index = item.record.first_index + item.meshlet.first_index;
    return DrawCommand(item.meshlet.index_count, 1u, first_index, item.record.vertex_offset, item.object);
}
#endif

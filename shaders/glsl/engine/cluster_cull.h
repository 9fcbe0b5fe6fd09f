// Shared by the cluster cull shaders (`cluster_cull_early.comp`, `cluster_cull_late.comp`):
// the parameters, the cluster tables and the per-meshlet tests. One thread per entry of
// `cluster_pairs` (an object and one meshlet of its mesh, or the object drawn whole).
// Host twins: renderer/src/passes/cluster.rs (`ClusterUniforms`, the constants) and
// renderer/src/scene/cluster_table.rs (`GpuMeshlet`, the pair fields);
// CPU reference: culling/src/cluster/ (every test below repeats its steps).

#include "config.h"
#include "object_record.h"
#include "cull_common.h"

// The flags, pair fields, verdicts and counters (`CLUSTER_*`, `PAIR_*`, `VERDICT_*`,
// `CSTAT_*`) are config.h's.

// std140, 224 bytes.
layout(std140, set = 0, binding = 0) uniform ClusterUniforms {
    // World to clip (glam conventions, +y up, reversed-Z).
    mat4 view_projection;
    // Inward unit planes (xyz normal, w offset); `plane_count` of them are used.
    vec4 planes[6];
    // The eye in world space (perspective views; CLUSTER_CONE is off otherwise).
    vec4 eye;
    uint plane_count;
    uint pair_count;
    uint flags;
    uint hiz_mips;
    vec2 hiz_size;
    float depth_margin;
    float footprint_margin;
    // Relative widening of world spheres and boxes; added to the cone cutoff.
    float bounds_margin;
    float cone_margin;
    // Pairs that are meshlets (not objects drawn whole).
    uint meshlet_pairs;
    // Objects the tables cover (threads of the survivor pass).
    uint object_count;
} cluster;

layout(std430, set = 0, binding = 1) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};

layout(std430, set = 0, binding = 2) readonly buffer ObjectTransforms {
    ObjectTransform transforms[];
};

// One meshlet of the mesh library, mesh space, 80 bytes.
struct GpuMeshlet {
    vec3 center;
    float radius;
    vec3 cone_apex;
    float cone_cutoff;
    vec3 cone_axis;
    // First index in `mesh_indices` (absolute).
    uint first_index;
    vec3 box_min;
    uint index_count;
    vec3 box_max;
    // The mesh id the meshlet belongs to.
    uint mesh;
};

layout(std430, set = 0, binding = 3) readonly buffer ClusterMeshlets {
    GpuMeshlet meshlets[];
};

// (object, meshlet field) per pair.
layout(std430, set = 0, binding = 4) readonly buffer ClusterPairs {
    uvec2 pairs[];
};

// Per object: the mesh its pairs were built for. An object whose record names another mesh
// now (a LOD switch) is drawn whole by its first pair.
layout(std430, set = 0, binding = 5) readonly buffer ClusterObjects {
    uint built_mesh[];
};

// Last frame's pair visibility (bit i of word i / 32), zeros on the first frame.
layout(std430, set = 0, binding = 6) readonly buffer ClusterHistory {
    uint history[];
};

bool pair_was_visible(uint pair) {
    return (history[pair / 32u] >> (pair % 32u) & 1u) == 1u;
}

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
bool sphere_outside(mat4 world, GpuMeshlet meshlet) {
    vec3 center = (world * vec4(meshlet.center, 1.0)).xyz;
    float radius = abs(meshlet.radius) * max_stretch(world) * (1.0 + cluster.bounds_margin);
    bool finite = lane_is_finite(center.x) && lane_is_finite(center.y) && lane_is_finite(center.z)
        && lane_is_finite(radius);
    bool outside = false;
    for (uint index = 0u; index < cluster.plane_count; ++index) {
        vec4 plane = cluster.planes[index];
        float distance = ((plane.x * center.x + plane.y * center.y) + plane.z * center.z) + plane.w;
        outside = outside || distance + radius < 0.0;
    }
    return outside && finite;
}

// meshopt's back-face test in mesh space (CPU twin `cone_rejects`, which argues why mesh
// space is exact for any affine world with a positive determinant). Conservative: a
// degenerate cone (cutoff >= 1), a mirroring or singular world, an eye at the apex, or NaN
// keeps the meshlet; `cone_margin` covers the rounding of the inverse.
bool cone_rejects(mat4 world, GpuMeshlet meshlet) {
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
    vec3 offset = cluster.eye.xyz - world[3].xyz;
    vec3 local_eye = vec3(dot(r0, offset), dot(cross(c2, c0), offset), dot(cross(c0, c1), offset)) / det;
    vec3 to_apex = meshlet.cone_apex - local_eye;
    float len = length(to_apex);
    if (!(len > 0.0)) {
        return false;
    }
    return dot(to_apex, meshlet.cone_axis) / len >= meshlet.cone_cutoff + cluster.cone_margin;
}

// The meshlet's box in world space: centre as a point, half extents through |M| (CPU twin
// `world_box`), widened by `bounds_margin`.
void world_box(mat4 world, GpuMeshlet meshlet, out vec3 low, out vec3 high) {
    vec3 center = (world * vec4((meshlet.box_min + meshlet.box_max) * 0.5, 1.0)).xyz;
    vec3 half_extent = abs((meshlet.box_max - meshlet.box_min) * 0.5);
    vec3 reach = abs(world[0].xyz) * half_extent.x + abs(world[1].xyz) * half_extent.y
        + abs(world[2].xyz) * half_extent.z;
    reach += (reach + abs(center)) * cluster.bounds_margin;
    low = center - reach;
    high = center + reach;
}

// Whether the object's world box is outside a frustum plane: the box's corners are
// `object_world_box`'s centre minus and plus its half extents (the Visibility stage's stored
// box), tested with the steps of the CPU reference (`classify_object`, which takes the
// corners). A straddling or non-finite box is kept.
bool object_outside(uint object, ObjectRecord record) {
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
    for (uint index = 0u; index < cluster.plane_count; ++index) {
        vec4 plane = cluster.planes[index];
        precise float distance = ((plane.x * center.x + plane.y * center.y) + plane.z * center.z) + plane.w;
        precise float reach = (abs(plane.x) * half_extent.x + abs(plane.y) * half_extent.y) + abs(plane.z) * half_extent.z;
        precise float furthest = distance + reach;
        outside = outside || furthest < 0.0;
    }
    return outside && finite;
}

// Whether the object is drawn whole by this pair, and whether this pair is silent (another
// pair of the object draws it whole).
bool pair_draws_whole(uint object, uint field, ObjectRecord record) {
    return (field & PAIR_MESHLET_MASK) == PAIR_WHOLE || record.mesh != built_mesh[object];
}

// Draw command of a meshlet of `object`.
DrawCommand meshlet_command(uint object, GpuMeshlet meshlet, ObjectRecord record) {
    return DrawCommand(meshlet.index_count, 1u, meshlet.first_index, record.vertex_offset, object);
}

// What every two-phase cull reads (the camera's objects `gpu_cull.h`, the shadow casters
// `shadow_cull.h`, the meshlets `cluster_cull.h`): the views it tests against, the objects'
// transforms and records, last frame's answer and, in the late phase, the depth pyramid; the
// per-dispatch constants; and the two tests every view applies to a world box. The rule that
// turns their verdicts into draws and bits is `two_phase_cull.h`.
//
// The includer defines CULL_LATE (0 for an early phase's shader, 1 for a late one's) before
// including; its own bindings start at CULL_KIND_BINDING.
// Host twins: renderer/src/passes/cull/view.rs (`CullView`, `CullConstants`, the flags; the
// layouts are checked by renderer/tests/shader_layouts.rs) and skeleton.rs (the bindings).
#ifndef CULL_INPUTS_H
#define CULL_INPUTS_H
#include "config.h"
#include "object_record.h"
#include "cull_common.h"
#include "lod_select.h"

#ifndef CULL_LATE
#error "define CULL_LATE (0 early, 1 late) before including cull_inputs.h"
#endif

// One view a cull tests against (std430, 256 bytes): the camera, a light view, the camera for
// meshlets. The host makes every one from a view-projection matrix with one function per kind
// (`CullView::camera`, `light`, `cluster`), so a view reaches the shader in this one form.
struct CullView {
    // World to the view's clip space (glam conventions, +y up, reversed-Z).
    mat4 view_projection;
    // Inward unit planes (xyz normal, w offset); the first `plane_count` are used.
    vec4 planes[6];
    // The eye in world space (w 1) of a perspective view; zero otherwise (no cone test).
    vec4 eye;
    // The view's rectangle of the depth pyramid in texels of mip 0: origin (xy), size (zw).
    vec4 pyramid;
    uint plane_count;
    // CULL_FRUSTUM, CULL_OCCLUSION, CULL_CONE, CULL_TWO_PHASE, CULL_LOD (config.h).
    uint flags;
    // Mips of the pyramid the rectangle spans.
    uint pyramid_mips;
    uint pad0;
    // The occlusion test's relative raise of the nearest depth and footprint widening in
    // texels (the CPU occlusion test's margins); the meshlet tests' relative widening of world
    // spheres and boxes, and the addition to the cone cutoff.
    float depth_margin;
    float footprint_margin;
    float bounds_margin;
    float cone_margin;
    // The view's side of the level-of-detail rule (`lod_select.h`) and the eye it measures
    // from, with the CPU's bits (xyz; w 0), for a view flagged CULL_LOD.
    LodView lod;
    vec4 lod_eye;
};

// The constants of one dispatch (32 bytes of push constants).
layout(push_constant) uniform CullConstants {
    // Items to test: objects (object and shadow culls) or (object, meshlet) pairs.
    uint item_count;
    // Views in `views`.
    uint view_count;
    // u32 words of each view's bits (and of its history).
    uint words_per_view;
    // Commands each view's list has room for (the scene's capacity); the camera's and the
    // meshlets' late list starts at command `region` of `draw_commands`.
    uint region;
    // The camera's object cull draws only objects from this slot on (0 unless cluster culling
    // draws the objects below it meshlet by meshlet); it still decides every object's bit.
    uint draw_from;
    // Pairs that are meshlets (not objects drawn whole), counted once by the survivor pass.
    uint meshlet_pairs;
    // Objects the cluster tables cover.
    uint object_count;
    // 1 when the camera's object cull batches its lists (`gpu_cull.h`), else 0.
    uint batched;
    // The view of the first row of workgroups: the camera's object cull may dispatch each
    // window view on its own (one row, `first_view` its view) to time it; 0 otherwise.
    uint first_view;
} constants;

layout(std430, set = 0, binding = 0) readonly buffer CullViews {
    CullView views[];
};
layout(std430, set = 0, binding = 1) readonly buffer ObjectTransforms {
    ObjectTransform transforms[];
};
layout(std430, set = 0, binding = 2) readonly buffer ObjectRecords {
    ObjectRecord objects[];
};
// Last frame's answer of every view: `words_per_view` words from `view * words_per_view`, bit
// i of word i / 32 = item i (zeros on the first frame and after a reset).
layout(std430, set = 0, binding = 3) readonly buffer CullHistory {
    uint history[];
};
#if CULL_LATE
// The pyramid of the early phase's depth (each texel the farthest depth it covers).
layout(set = 0, binding = 4) uniform sampler2D hiz;
#include "hiz_occlusion.h"
#define CULL_KIND_BINDING 5
#else
#define CULL_KIND_BINDING 4
#endif

// Whether `view` kept `item` last frame.
bool cull_kept_last_frame(uint view, uint item) {
    return (history[view * constants.words_per_view + item / 32u] >> (item % 32u) & 1u) == 1u;
}

// The frustum test of `cull_common.h` against the view's planes; a view without CULL_FRUSTUM
// (culling off, or planes the host could not trust) keeps every box.
bool view_keeps_box(CullView view, vec3 center, vec3 half_extent) {
    return (view.flags & CULL_FRUSTUM) == 0u || frustum_keeps_box(view.planes, view.plane_count, center, half_extent);
}

#if CULL_LATE
// What the view's rectangle of the pyramid says of a world box (`hiz_occlusion.h`). A
// rectangle reaching past the bound pyramid (a tile placed elsewhere after a change of
// settings) is not tested: the box is undecided, so kept.
int view_occlusion(CullView view, vec3 bounds_min, vec3 bounds_max) {
    if (any(greaterThan(view.pyramid.xy + view.pyramid.zw, vec2(textureSize(hiz, 0))))) {
        return HIZ_UNDECIDED;
    }
    return hiz_test_rect(view.view_projection, bounds_min, bounds_max, view.pyramid.xy, view.pyramid.zw,
        view.pyramid_mips, view.depth_margin, view.footprint_margin);
}
#endif
#endif

// The frame's view, as every pass may read it from the uniform buffer `view` (renderer::VIEW),
// written by the engine at the start of each frame. Host twin: renderer/src/scene/view.rs
// (`FrameView`; its layout is checked against this declaration by
// renderer/tests/shader_layouts.rs). Matrices are column-major, glam's conventions
// (right-handed, reversed-Z: depth 1 at the near plane, 0 at an infinite far plane).
//
//     #include "view.h"
//     ENGINE_VIEW_BLOCK(0, 3);
//     ... engine_view.view_projection * vec4(p, 1.0) ...
//
// The Y flip. glam's projections put +y up in clip space, and Vulkan's framebuffer has row 0
// at the top with y growing down. The engine's vertex shaders write `clip.y = -clip.y` after
// `view_projection` (scene_common.h), so row 0 of every image is the top of the view and
// counter-clockwise triangles (seen from outside) are front faces. A vertex shader of yours
// that draws into `color` or `depth_prepass` must flip too, or its drawing comes out upside
// down (and its back faces culled instead of its front faces). A compute pass that goes from
// a pixel to the world uses `view_world_position` below, which undoes the flip; one that goes
// from a world point to a pixel takes `ndc = clip.xy / clip.w` and row `(0.5 - 0.5 * ndc.y) *
// height` (hiz_occlusion.h does this).
#ifndef ENGINE_VIEW_H
#define ENGINE_VIEW_H
struct FrameView {
    mat4 view;
    mat4 projection;
    mat4 view_projection;
    mat4 inverse_view_projection;
    vec4 eye;
    vec4 viewport;
    float near_plane;
    float far_plane;
    uint frame_index;
    uint object_count;
    // Last frame's view and view_projection (this frame's in the first frame): motion
    // vectors, reprojection of last frame's images.
    mat4 previous_view;
    mat4 previous_view_projection;
    // The frustum of view_projection in world space: [nx, ny, nz, d], unit inward normals,
    // inside when dot(n, p) + d >= 0; the CPU's planes in its order (culling::Frustum: left,
    // right, bottom, top, near, far), the places of planes the view lacks (an infinite far
    // plane) holding (0, 0, 0, 1), which every point passes.
    vec4 frustum_planes[6];
};

// Declares the uniform block at (set, binding), read as `engine_view`.
#define ENGINE_VIEW_BLOCK(SET, BINDING) \
    layout(std140, set = SET, binding = BINDING) uniform EngineView { FrameView engine_view; }

// The world position of a pixel's depth (reversed-Z, as `depth_prepass` holds it); `uv` in
// [0, 1] with v down, as Vulkan's framebuffer.
vec3 view_world_position(FrameView frame_view, vec2 uv, float depth) {
    vec4 clip = vec4(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, depth, 1.0);
    vec4 world = frame_view.inverse_view_projection * clip;
    return world.xyz / world.w;
}

// Whether a world box may be inside the frustum: false only when it lies wholly outside one
// plane (the conservative test of the engine's culls, without their rounding margins).
bool view_may_see_box(FrameView frame_view, vec3 bounds_min, vec3 bounds_max) {
    for (int index = 0; index < 6; ++index) {
        vec4 plane = frame_view.frustum_planes[index];
        vec3 corner = mix(bounds_min, bounds_max, greaterThanEqual(plane.xyz, vec3(0.0)));
        if (dot(plane.xyz, corner) + plane.w < 0.0) {
            return false;
        }
    }
    return true;
}

// Distance along the view axis of a reversed-Z perspective depth (infinite or finite far).
float view_linear_depth(FrameView frame_view, float depth) {
    if (isinf(frame_view.far_plane)) {
        return frame_view.near_plane / max(depth, 1e-30);
    }
    float near_plane = frame_view.near_plane, far_plane = frame_view.far_plane;
    return near_plane * far_plane / max(near_plane + depth * (far_plane - near_plane), 1e-30);
}
#endif

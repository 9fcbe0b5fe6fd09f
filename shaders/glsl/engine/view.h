// The frame's view, as every pass may read it from the uniform buffer `view` (renderer::VIEW),
// written by the engine at the start of each frame. Host twin: renderer/src/scene/view.rs
// (`FrameView`; its layout is checked against this declaration by
// renderer/tests/shader_layouts.rs). Matrices are column-major, glam's conventions
// (right-handed, reversed-Z: depth 1 at the near plane).
//
//     #include "view.h"
//     ENGINE_VIEW_BLOCK(0, 3);
//     ... engine_view.view_projection * vec4(p, 1.0) ...
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

// Distance along the view axis of a reversed-Z perspective depth (infinite or finite far).
float view_linear_depth(FrameView frame_view, float depth) {
    if (isinf(frame_view.far_plane)) {
        return frame_view.near_plane / max(depth, 1e-30);
    }
    float near_plane = frame_view.near_plane, far_plane = frame_view.far_plane;
    return near_plane * far_plane / max(near_plane + depth * (far_plane - near_plane), 1e-30);
}
#endif

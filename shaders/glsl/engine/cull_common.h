// Shared by the object cull (`gpu_cull.h`) and the cluster cull (`cluster_cull.h`): the
// indirect draw command and the finiteness test of the CPU kernels.
// Host twins: render_graph/src/passes/records.rs (`DrawCommand`), culling/src/frustum.rs
// (`lane_is_finite`).
#ifndef CULL_COMMON_H
#define CULL_COMMON_H

// One `VkDrawIndexedIndirectCommand` per draw, `firstInstance` = object slot.
struct DrawCommand {
    uint index_count;
    uint instance_count;
    uint first_index;
    int vertex_offset;
    uint first_instance;
};

// Whether `value` is finite, as the CPU kernels test it: |value| <= FLT_MAX (NaN fails).
bool lane_is_finite(float value) {
    return abs(value) <= 3.40282347e38;
}
#endif

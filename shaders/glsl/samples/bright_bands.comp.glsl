#version 450
// Writes one VkDrawIndirectCommand for band.vert: 6 vertices (one column), and one instance
// (band) per `pixels_per_band` texels of the r32ui image brighter than `threshold`, at most
// `band_count`. One invocation walks the image: simple and exact. Host twin: `bright_bands`
// in samples/src/bin/post_process.rs.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimage2D source;
layout(set = 0, binding = 1) writeonly buffer DrawCommand {
    uint vertex_count;
    uint instance_count;
    uint first_vertex;
    uint first_instance;
} command;
layout(push_constant) uniform BandParams {
    uint threshold;
    uint pixels_per_band;
    uint band_count;
} params;

void main() {
    ivec2 extent = imageSize(source);
    uint bright = 0u;
    for (int y = 0; y < extent.y; ++y) {
        for (int x = 0; x < extent.x; ++x) {
            bright += imageLoad(source, ivec2(x, y)).r > params.threshold ? 1u : 0u;
        }
    }
    command.vertex_count = 6u;
    command.instance_count = min(bright / params.pixels_per_band, params.band_count);
    command.first_vertex = 0u;
    command.first_instance = 0u;
}

#version 450
// Draws rectangles without vertex buffers: vertex v belongs to quad v / 6 (column
// `v / 6` of `column_count`), instance i to band i (row i of `band_count` horizontal bands).
// So `first_vertex` picks the column and `first_instance` the band, and every draw helper
// (direct, indexed with indices 0..6 plus an offset, indirect) shows in which cell it drew.
// The cell edges fall on pixel edges when the extent divides by the counts.
layout(push_constant) uniform BandParams {
    uint band_count;
    uint column_count;
} params;

layout(location = 0) flat out uvec2 cell;

void main() {
    uint column = uint(gl_VertexIndex) / 6u;
    uint corner = uint(gl_VertexIndex) % 6u;
    // Two counter-clockwise triangles: (0,0) (1,0) (1,1) and (0,0) (1,1) (0,1).
    const vec2 corners[6] = vec2[6](vec2(0, 0), vec2(1, 0), vec2(1, 1), vec2(0, 0), vec2(1, 1), vec2(0, 1));
    vec2 unit = corners[corner];
    float x = (float(column) + unit.x) / float(params.column_count);
    float y = (float(gl_InstanceIndex) + unit.y) / float(params.band_count);
    gl_Position = vec4(x * 2.0 - 1.0, y * 2.0 - 1.0, 0.0, 1.0);
    cell = uvec2(uint(gl_InstanceIndex), column);
}

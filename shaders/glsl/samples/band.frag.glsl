#version 450
// Colours a cell of band.vert: red = band + 1, green = column + 1 (unorm8, exact).
layout(location = 0) flat in uvec2 cell;
layout(location = 0) out vec4 color;

void main() {
    color = vec4(float(cell.x + 1u) / 255.0, float(cell.y + 1u) / 255.0, 0.0, 1.0);
}

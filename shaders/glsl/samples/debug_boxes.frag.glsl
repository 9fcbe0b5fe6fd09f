#version 460
// The colour debug_boxes.vert chose for the object's lines.
layout(location = 0) flat in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = in_color;
}

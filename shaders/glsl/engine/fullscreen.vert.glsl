#version 450
// One triangle that covers the whole viewport; no vertex buffer. The three vertices are
// (-1,-1), (3,-1) and (-1,3) in clip space.
void main() {
    vec2 corner = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}

#version 450
// Writes the object's flat colour. No lighting or interpolation: the image depends only on
// which object covers each pixel, so two renders of the same visible surfaces are equal
// byte for byte.
layout(location = 0) flat in uint in_color;
layout(location = 0) out vec4 out_color;

void main() {
    // unpackUnorm4x8 gives byte / 255, which the RGBA8 UNORM attachment stores exactly.
    out_color = unpackUnorm4x8(in_color);
}

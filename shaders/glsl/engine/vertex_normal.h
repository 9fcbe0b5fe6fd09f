// A vertex's packed normal, as the geometry passes and the skin probe read it.
// Host twin: `pack_normal` in meshes/src/vertex.rs: three signed 10-bit values,
// x in bits 0-9, y in 10-19, z in 20-29; 0 means no normal (drawn unlit).
#ifndef VERTEX_NORMAL_H
#define VERTEX_NORMAL_H

vec3 unpack_normal(uint bits) {
    int packed = int(bits);
    ivec3 fixed_point = ivec3(bitfieldExtract(packed, 0, 10), bitfieldExtract(packed, 10, 10), bitfieldExtract(packed, 20, 10));
    return vec3(fixed_point) / 511.0;
}
#endif

// The `draw_filter` word of the scene shaders' push constants (`CameraConstants` in
// scene_common.h and geometry_fragment.h). Host twin: `DrawFilter` and `OBJECT_IDS_BIT` in
// renderer/src/passes/draw.rs.
#ifndef ENGINE_DRAW_FILTER_H
#define ENGINE_DRAW_FILTER_H
// Bits 0-7: which objects of the list the draw is for.
#define DRAW_FILTER_MASK 0xffu
#define DRAW_ONE_SIDED 0u
#define DRAW_DOUBLE_SIDED 1u
#define DRAW_BLENDED 2u
// Bit 8: the geometry pass draws the object-id image (the truth checks' reference renderer):
// each fragment writes its colour's red, green and blue bytes as they are (the object's id,
// unlit, untextured) with alpha 0, while a masked material still cuts its holes with the
// colour's alpha byte times the texel's, as in the frame it checks. Blended surfaces hide
// nothing and own no pixel of it: they are discarded.
#define DRAW_OBJECT_IDS 0x100u
// Bit 9: the draw's list is instanced (batched): a command's instances are object slots read
// from `draw_instances` at gl_InstanceIndex (its firstInstance is the base of the batch's run);
// without it, gl_InstanceIndex is the object's slot (firstInstance the slot, one instance).
#define DRAW_INSTANCED 0x200u
// Bits 12-31: the blended pass of a GPU-culled split-screen frame: the u32 word of
// `visibility_bits` where the drawn view's bits begin (view v: v times the words of one view),
// so each view's blended objects are gated by that view's bits.
#define DRAW_BITS_WORD_SHIFT 12u
#endif

// The GPU's visibility bits (the buffer `visibility_bits`, renderer::VISIBILITY_BITS): bit `s`
// of the host's u64 word `s / 64` is slot `s`, so read as uint words (little-endian) slot `s`
// is bit `s % 32` of word `s / 32`. Host twins: culling::VisibilityBits and
// renderer::read_visibility_words. Bind the buffer as
//     layout(std430, set = 0, binding = N) readonly buffer Bits { uint bits[]; };
// and test a slot with `VISIBILITY_BIT(bits, slot)`.
#ifndef ENGINE_VISIBILITY_BITS_H
#define ENGINE_VISIBILITY_BITS_H
#define VISIBILITY_WORD(SLOT) ((SLOT) >> 5u)
#define VISIBILITY_MASK(SLOT) (1u << ((SLOT) & 31u))
// Whether slot SLOT is visible in the uint array WORDS.
#define VISIBILITY_BIT(WORDS, SLOT) (((WORDS)[VISIBILITY_WORD(SLOT)] & VISIBILITY_MASK(SLOT)) != 0u)
#endif

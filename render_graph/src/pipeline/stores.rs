//! Which descriptors a shader writes, read from its instructions rather than its qualifiers:
//! a storage binding without `readonly` or `writeonly` says nothing, so the SPIR-V is
//! scanned for stores, atomic updates and image writes through a pointer (or image) that
//! comes from the binding's variable. Function calls that take such a pointer count as
//! writes (the callee is not followed), so the answer is never "reads only" for a shader
//! that may write.

/// `OpFunctionCall`.
const FUNCTION_CALL: u32 = 57;
/// `OpVariable`.
const VARIABLE: u32 = 59;
/// `OpImageTexelPointer` (a pointer to a texel, for image atomics).
const IMAGE_TEXEL_POINTER: u32 = 60;
/// `OpLoad` (of an image variable: the image itself).
const LOAD: u32 = 61;
/// `OpStore`.
const STORE: u32 = 62;
/// `OpCopyMemory`.
const COPY_MEMORY: u32 = 63;
/// `OpAccessChain`, `OpInBoundsAccessChain`, `OpPtrAccessChain`.
const ACCESS_CHAINS: [u32; 3] = [65, 66, 67];
/// `OpInBoundsPtrAccessChain`.
const IN_BOUNDS_PTR_ACCESS_CHAIN: u32 = 70;
/// `OpDecorate`.
const DECORATE: u32 = 71;
/// `OpCopyObject`.
const COPY_OBJECT: u32 = 83;
/// `OpImageWrite`.
const IMAGE_WRITE: u32 = 99;
/// `OpSelect`, `OpPhi`: a result that may be any of its operands.
const CHOICES: [u32; 2] = [169, 245];
/// `OpAtomicStore`: the pointer is the first operand.
const ATOMIC_STORE: u32 = 228;
/// Atomic read-modify-writes whose pointer is the third word (after the result's type and id):
/// exchange, compare-exchange (and weak), increment, decrement, add, sub, signed and unsigned
/// min and max, and, or, xor, and the float min, max and add extensions.
const ATOMIC_UPDATES: [u32; 17] =
    [229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 5614, 5615, 6035];
/// The `Binding` and `DescriptorSet` decorations.
const BINDING: u32 = 33;
const DESCRIPTOR_SET: u32 = 34;

/// The set-0 bindings `spirv` writes, in increasing order (empty for a module it cannot read:
/// the reflection reports those).
pub(crate) fn written_bindings(spirv: &[u32]) -> Vec<u32> {
    let Some(bound) = spirv.get(3).map(|&bound| bound as usize) else { return Vec::new() };
    if bound > 1 << 22 {
        return Vec::new();
    }
    // Per id: the binding of the set-0 variable it points into (or is the image of).
    let mut binding_of: Vec<Option<u32>> = vec![None; bound];
    let mut set_of: Vec<Option<u32>> = vec![None; bound];
    let mut decorated: Vec<Option<u32>> = vec![None; bound];
    let mut written = Vec::new();
    let mut at = 5;
    while at < spirv.len() {
        let (count, opcode) = ((spirv[at] >> 16) as usize, spirv[at] & 0xffff);
        if count == 0 || at + count > spirv.len() {
            break;
        }
        let words = &spirv[at + 1..at + count];
        let id = |index: usize| words.get(index).map(|&word| word as usize).filter(|&word| word < bound);
        let from = |index: usize| id(index).and_then(|source| binding_of[source]);
        // The id this instruction makes that points into (or is the image of) a binding.
        let derived: Option<(usize, Option<u32>)> = match opcode {
            DECORATE if words.len() >= 3 => {
                let target = words[0] as usize;
                match (words[1], target < bound) {
                    (BINDING, true) => decorated[target] = Some(words[2]),
                    (DESCRIPTOR_SET, true) => set_of[target] = Some(words[2]),
                    _ => {}
                }
                None
            }
            VARIABLE => {
                id(1).filter(|&variable| set_of[variable] == Some(0)).map(|variable| (variable, decorated[variable]))
            }
            LOAD | COPY_OBJECT | IMAGE_TEXEL_POINTER | IN_BOUNDS_PTR_ACCESS_CHAIN => {
                id(1).map(|result| (result, from(2)))
            }
            _ if ACCESS_CHAINS.contains(&opcode) => id(1).map(|result| (result, from(2))),
            _ if CHOICES.contains(&opcode) => id(1).map(|result| (result, (2..words.len()).find_map(from))),
            STORE | COPY_MEMORY | IMAGE_WRITE | ATOMIC_STORE => {
                written.extend(from(0));
                None
            }
            _ if ATOMIC_UPDATES.contains(&opcode) => {
                written.extend(from(2));
                None
            }
            FUNCTION_CALL => {
                written.extend((3..words.len()).filter_map(from));
                None
            }
            _ => None,
        };
        if let Some((result, Some(binding))) = derived {
            binding_of[result] = Some(binding);
        }
        at += count;
    }
    written.sort_unstable();
    written.dedup();
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_shaders_write_what_they_store_to_and_nothing_else() {
        // The update shader reads and rewrites binding 0 and writes its report at binding 1;
        // the read shader only reads binding 0.
        assert_eq!(written_bindings(shaders::PROBE_UPDATE_BUFFER_COMP.words()), [0, 1]);
        assert_eq!(written_bindings(shaders::PROBE_UPDATE_IMAGE_COMP.words()), [0, 1]);
        assert_eq!(written_bindings(shaders::PROBE_READ_BUFFER_COMP.words()), [1]);
        assert_eq!(written_bindings(shaders::PROBE_FILL_IMAGE_COMP.words()), [0]);
    }

    #[test]
    fn truncated_or_empty_modules_write_nothing_and_do_not_panic() {
        assert!(written_bindings(&[]).is_empty());
        let words = shaders::PROBE_UPDATE_BUFFER_COMP.words();
        for cut in [4, 5, 17, words.len() / 2] {
            let _ = written_bindings(&words[..cut]);
        }
    }
}

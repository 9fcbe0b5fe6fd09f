//! Transient memory aliasing: resources whose lifetimes (pass positions) do not overlap share
//! one memory block. Greedy, largest first: each resource joins the first block whose memory
//! types fit and whose occupants are all dead before it starts or born after it ends.

/// One transient resource to place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AliasItem {
    /// First and last pass position using it (inclusive).
    pub lifetime: (usize, usize),
    /// Bytes needed.
    pub size: u64,
    /// Alignment needed.
    pub alignment: u64,
    /// Memory types allowed (Vulkan `memoryTypeBits`).
    pub type_bits: u32,
    /// Images and buffers never share a block (keeps buffer-image granularity out of play).
    pub is_image: bool,
}

/// One shared block and its occupants (indices into the items), sorted by lifetime start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasBlock {
    /// Largest size of its occupants.
    pub size: u64,
    /// Largest alignment of its occupants.
    pub alignment: u64,
    /// Memory types every occupant allows.
    pub type_bits: u32,
    /// Whether the occupants are images.
    pub is_image: bool,
    /// Item indices, by lifetime start.
    pub occupants: Vec<usize>,
}

/// The blocks and the bytes saved against one allocation per resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AliasPlan {
    /// Blocks to allocate.
    pub blocks: Vec<AliasBlock>,
    /// Block of each item.
    pub block_of: Vec<usize>,
    /// Sum of item sizes minus sum of block sizes.
    pub bytes_saved: u64,
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// Places `items` into as few shared blocks as the greedy rule finds.
pub fn plan_aliasing(items: &[AliasItem]) -> AliasPlan {
    let mut by_size: Vec<usize> = (0..items.len()).collect();
    by_size.sort_by(|&a, &b| items[b].size.cmp(&items[a].size).then(a.cmp(&b)));
    let mut blocks: Vec<AliasBlock> = Vec::new();
    let mut block_of = vec![usize::MAX; items.len()];
    for index in by_size {
        let item = items[index];
        let fits = |block: &AliasBlock| {
            block.is_image == item.is_image
                && block.type_bits & item.type_bits != 0
                && block.occupants.iter().all(|&other| !overlaps(items[other].lifetime, item.lifetime))
        };
        match blocks.iter().position(fits) {
            Some(found) => {
                let block = &mut blocks[found];
                block.size = block.size.max(item.size);
                block.alignment = block.alignment.max(item.alignment);
                block.type_bits &= item.type_bits;
                block.occupants.push(index);
                block_of[index] = found;
            }
            None => {
                block_of[index] = blocks.len();
                blocks.push(AliasBlock {
                    size: item.size,
                    alignment: item.alignment,
                    type_bits: item.type_bits,
                    is_image: item.is_image,
                    occupants: vec![index],
                });
            }
        }
    }
    for block in &mut blocks {
        block.occupants.sort_by_key(|&occupant| items[occupant].lifetime.0);
    }
    let total: u64 = items.iter().map(|item| item.size).sum();
    let allocated: u64 = blocks.iter().map(|block| block.size).sum();
    AliasPlan { blocks, block_of, bytes_saved: total - allocated }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(first: usize, last: usize, size: u64) -> AliasItem {
        AliasItem { lifetime: (first, last), size, alignment: 256, type_bits: 0b11, is_image: true }
    }

    #[test]
    fn disjoint_lifetimes_share_and_overlapping_do_not() {
        let items = [image(0, 1, 1000), image(2, 3, 800), image(1, 2, 500)];
        let plan = plan_aliasing(&items);
        assert_eq!(plan.block_of[0], plan.block_of[1], "0..1 and 2..3 do not overlap");
        assert_ne!(plan.block_of[2], plan.block_of[0], "1..2 overlaps both");
        assert_eq!(plan.bytes_saved, 800);
        assert_eq!(plan.blocks[plan.block_of[0]].occupants, vec![0, 1], "occupants in lifetime order");
    }

    #[test]
    fn incompatible_memory_types_and_kinds_never_share() {
        let mut buffer = image(2, 3, 100);
        buffer.is_image = false;
        let mut other_type = image(4, 5, 100);
        other_type.type_bits = 0b100;
        let plan = plan_aliasing(&[image(0, 1, 100), buffer, other_type]);
        assert_eq!(plan.blocks.len(), 3);
        assert_eq!(plan.bytes_saved, 0);
    }
}

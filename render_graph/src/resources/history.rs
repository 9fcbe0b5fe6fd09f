//! History kept across recompiles: a double-buffered resource whose description is
//! unchanged keeps its pair, and with it last frame's contents.

use std::collections::HashMap;

use ash::vk;

use super::compiled::{Backing, Compiled};
use crate::memory::ImageInfo;

/// What a double-buffered resource is created from; a recompile keeps the pair (and last
/// frame's contents) when this is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HistoryKey {
    Image(ImageInfo),
    Buffer { size: u64, usage: vk::BufferUsageFlags },
}

/// A double buffer taken from the previous compilation.
pub(crate) struct KeptHistory {
    pub(super) key: HistoryKey,
    pub(super) backing: Backing,
    /// Layout of the copy that holds the last frame's contents.
    pub(super) previous_layout: vk::ImageLayout,
}

impl Compiled {
    /// Takes the double buffers out of a compiled graph whose frames have all finished,
    /// keyed by resource name. A graph that never ran a frame has nothing worth keeping.
    pub(crate) fn into_history(self) -> HashMap<String, KeptHistory> {
        let mut kept = HashMap::new();
        if self.first_frame {
            return kept;
        }
        let Compiled { decl, graph, backings, .. } = self;
        for (index, backing) in backings.into_iter().enumerate() {
            let final_state = graph.barriers.final_state[index];
            let key = match &backing {
                Backing::ImagePair(pair) => HistoryKey::Image(*pair[0].info()),
                Backing::BufferPair(pair) => HistoryKey::Buffer { size: pair[0].size(), usage: pair[0].usage() },
                _ => continue,
            };
            let Some(state) = final_state else { continue };
            if matches!(key, HistoryKey::Image(_)) && state.layout == vk::ImageLayout::UNDEFINED {
                continue;
            }
            let name = decl.resources[index].name.clone();
            kept.insert(name, KeptHistory { key, backing, previous_layout: state.layout });
        }
        kept
    }
}

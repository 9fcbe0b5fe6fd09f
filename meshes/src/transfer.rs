//! Bounded uploads: a [`TransferQueue`] hands out, frame by frame, the copies of assets that
//! wait for the GPU, never more than a budget of bytes per frame, so a large mesh arrives
//! over several frames instead of in one long frame; and [`resident_level`], the level of
//! detail an object draws while its own is not on the GPU yet.
//!
//! The queue holds only offsets and sizes: the consumer keeps the bytes (a mesh's vertices
//! and indices in its library), stages each frame's copies and records them in that frame's
//! command buffer. An asset whose last bytes went out in frame `N` is listed in that frame's
//! [`FrameTransfer::completed`]; it is resident once frame `N` has finished on the GPU (its
//! fence), not before: the consumer draws it from the next frame it prepares after that.
//!
//! Assets go out in the order they were pushed, each one's regions in order, so a consumer
//! that pushes an asset's coarse levels first (a small placeholder, the coarsest level of
//! detail) has something to draw after a frame or two.

use std::collections::VecDeque;

/// Bytes moved to the GPU per frame when a game sets no budget: 16 MiB, about a
/// 500k-triangle mesh with its levels of detail; a 1M-triangle mesh takes a few frames.
pub const DEFAULT_TRANSFER_BUDGET: u64 = 16 << 20;

/// A region split between frames is cut at multiples of this many bytes from its start: a
/// vertex (16 bytes) is never split, and a region that starts aligned keeps every copy's
/// offset aligned (what buffer updates ask for).
pub const TRANSFER_GRANULE: u64 = 16;

/// Bytes of an asset bound for one destination: `bytes` bytes to `offset` of target
/// `target` (the consumer's numbering of its buffers: vertices, indices, a texture layer…).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferRegion {
    /// Which destination buffer or image, as the consumer numbers them.
    pub target: u32,
    /// Byte offset in the destination (and, for the consumer, where the source bytes are).
    pub offset: u64,
    /// Bytes to copy.
    pub bytes: u64,
}

/// One copy of a frame: part of a region of asset `key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferCopy<K> {
    /// The asset.
    pub key: K,
    /// The destination.
    pub target: u32,
    /// Byte offset in the destination.
    pub offset: u64,
    /// Bytes to copy.
    pub bytes: u64,
}

/// What one frame uploads: its copies, at most the budget in all, and the assets whose last
/// bytes are among them.
#[derive(Clone, Debug)]
pub struct FrameTransfer<K> {
    /// The copies, in order.
    pub copies: Vec<TransferCopy<K>>,
    /// Assets complete once this frame has finished on the GPU.
    pub completed: Vec<K>,
    /// Bytes of all the copies.
    pub bytes: u64,
}

impl<K> Default for FrameTransfer<K> {
    fn default() -> FrameTransfer<K> {
        FrameTransfer { copies: Vec::new(), completed: Vec::new(), bytes: 0 }
    }
}

/// An asset waiting for the GPU: its regions and how far it got.
#[derive(Debug)]
struct Pending<K> {
    key: K,
    regions: Vec<TransferRegion>,
    /// The region being sent.
    region: usize,
    /// Bytes of that region sent.
    sent: u64,
}

/// Assets waiting for the GPU, sent in bounded slices, in the order they were pushed; an
/// asset listed in a frame's [`FrameTransfer::completed`] is resident once that frame has
/// finished on the GPU.
///
/// ```
/// use meshes::{TransferQueue, TransferRegion, FrameTransfer};
/// let mut queue = TransferQueue::new();
/// // A mesh of 40 MiB of vertices and 24 MiB of indices, under a 16 MiB budget.
/// let mib = 1 << 20;
/// queue.push("statue", &[
///     TransferRegion { target: 0, offset: 0, bytes: 40 * mib },
///     TransferRegion { target: 1, offset: 0, bytes: 24 * mib },
/// ]);
/// let mut frame = FrameTransfer::default();
/// let mut frames = 0;
/// while !queue.is_empty() {
///     queue.next_frame(16 * mib, &mut frame);
///     assert!(frame.bytes <= 16 * mib);
///     frames += 1;
/// }
/// assert_eq!(frames, 4);
/// assert_eq!(frame.completed, ["statue"], "complete once the fourth frame finishes");
/// ```
#[derive(Debug)]
pub struct TransferQueue<K> {
    pending: VecDeque<Pending<K>>,
    bytes: u64,
}

impl<K> Default for TransferQueue<K> {
    fn default() -> TransferQueue<K> {
        TransferQueue { pending: VecDeque::new(), bytes: 0 }
    }
}

impl<K: Copy + PartialEq> TransferQueue<K> {
    /// An empty queue.
    pub fn new() -> TransferQueue<K> {
        TransferQueue::default()
    }

    /// Queues asset `key`'s regions, after everything queued before. Empty regions are
    /// dropped; an asset with no bytes is listed complete by the next frame.
    pub fn push(&mut self, key: K, regions: &[TransferRegion]) {
        let regions: Vec<TransferRegion> = regions.iter().copied().filter(|region| region.bytes > 0).collect();
        self.bytes += regions.iter().map(|region| region.bytes).sum::<u64>();
        self.pending.push_back(Pending { key, regions, region: 0, sent: 0 });
    }

    /// Drops what is left of asset `key` (removed before it arrived); returns whether it was
    /// queued. Copies already handed out are the consumer's to finish or ignore.
    pub fn cancel(&mut self, key: K) -> bool {
        let Some(position) = self.pending.iter().position(|pending| pending.key == key) else { return false };
        let pending = self.pending.remove(position).expect("position found above");
        self.bytes -= pending.left();
        true
    }

    /// Fills `out` with the next frame's copies: whole regions while they fit in `budget`,
    /// then a part of the next one cut at a [`TRANSFER_GRANULE`] (a budget under one granule
    /// still moves one, so every queue drains). `out` is cleared first and keeps its
    /// capacity.
    pub fn next_frame(&mut self, budget: u64, out: &mut FrameTransfer<K>) {
        out.copies.clear();
        out.completed.clear();
        out.bytes = 0;
        let budget = (budget - budget % TRANSFER_GRANULE).max(TRANSFER_GRANULE);
        while let Some(pending) = self.pending.front_mut() {
            while let Some(region) = pending.regions.get(pending.region).copied() {
                let room = budget - out.bytes;
                let left = region.bytes - pending.sent;
                // A region's tail under one granule goes out whole with the rest of it.
                let bytes = if left <= room { left } else { room - room % TRANSFER_GRANULE };
                if bytes == 0 {
                    break;
                }
                out.copies.push(TransferCopy {
                    key: pending.key,
                    target: region.target,
                    offset: region.offset + pending.sent,
                    bytes,
                });
                out.bytes += bytes;
                pending.sent += bytes;
                if pending.sent == region.bytes {
                    pending.region += 1;
                    pending.sent = 0;
                }
            }
            if pending.region < pending.regions.len() {
                break;
            }
            out.completed.push(pending.key);
            self.pending.pop_front();
        }
        self.bytes -= out.bytes;
    }

    /// Reorders the assets waiting by `rank` of their key, lowest first (an asset partly
    /// sent keeps its progress wherever it goes; equal ranks are in no set order). Does not
    /// allocate.
    pub fn reorder_by<R: Ord>(&mut self, mut rank: impl FnMut(K) -> R) {
        self.pending.make_contiguous().sort_unstable_by_key(|pending| rank(pending.key));
    }

    /// Whether asset `key` still has bytes to send.
    pub fn is_pending(&self, key: K) -> bool {
        self.pending.iter().any(|pending| pending.key == key)
    }

    /// Bytes still to send, of every asset.
    pub fn pending_bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

impl<K> Pending<K> {
    /// Bytes of this asset not yet handed out.
    fn left(&self) -> u64 {
        let rest: u64 = self.regions.iter().skip(self.region).map(|region| region.bytes).sum();
        rest - self.sent
    }
}

/// The level an object draws when the level it wants may not be on the GPU yet: `wanted`
/// when it is resident, else the nearest coarser resident level, else the nearest finer
/// one; `None` when no level of `levels` (finest first) is resident (the object then draws a
/// placeholder of its bounds). Never a level that is not resident.
pub fn resident_level(levels: usize, wanted: usize, resident: impl Fn(usize) -> bool) -> Option<usize> {
    let wanted = wanted.min(levels.checked_sub(1)?);
    (wanted..levels).find(|&level| resident(level)).or_else(|| (0..wanted).rev().find(|&level| resident(level)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(target: u32, offset: u64, bytes: u64) -> TransferRegion {
        TransferRegion { target, offset, bytes }
    }

    /// What a queue sent until empty.
    #[derive(Default)]
    struct Drained {
        /// Every frame's bytes.
        bytes: Vec<u64>,
        /// Each asset with the frame it completed in.
        completed: Vec<(u32, usize)>,
        /// Every copy, in order.
        copies: Vec<TransferCopy<u32>>,
    }

    /// Runs the queue to empty under `budget`.
    fn drain(queue: &mut TransferQueue<u32>, budget: u64) -> Drained {
        let mut frame = FrameTransfer::default();
        let Drained { mut bytes, mut completed, mut copies } = Drained::default();
        while !queue.is_empty() {
            queue.next_frame(budget, &mut frame);
            bytes.push(frame.bytes);
            completed.extend(frame.completed.iter().map(|&key| (key, bytes.len() - 1)));
            copies.extend_from_slice(&frame.copies);
            assert!(bytes.len() < 10_000, "the queue drains");
        }
        Drained { bytes, completed, copies }
    }

    #[test]
    fn no_frame_sends_more_than_the_budget_and_every_byte_goes_out_once_in_order() {
        let mut queue = TransferQueue::new();
        queue.push(0, &[region(0, 0, 1008), region(1, 0, 48)]);
        queue.push(1, &[region(0, 1008, 4000), region(1, 48, 8000)]);
        queue.push(2, &[region(0, 5008, 16)]);
        assert_eq!(queue.pending_bytes(), 13_072);
        let Drained { bytes, completed, copies } = drain(&mut queue, 1000);
        assert!(bytes.iter().all(|&frame| frame <= 1000), "{bytes:?}");
        assert_eq!(bytes.iter().sum::<u64>(), 13_072);
        assert_eq!(bytes.len(), 14, "992 bytes a frame (the budget cut at a granule): {bytes:?}");
        assert_eq!(queue.pending_bytes(), 0);
        assert_eq!(completed, [(0, 1), (1, 13), (2, 13)]);
        // The copies of each target tile it without gaps or overlaps.
        for (target, total) in [(0, 5024), (1, 8048)] {
            let mut next = 0;
            for copy in copies.iter().filter(|copy| copy.target == target) {
                assert_eq!(copy.offset, next, "target {target}");
                assert_eq!(copy.offset % TRANSFER_GRANULE, 0, "cut at a granule");
                next += copy.bytes;
            }
            assert_eq!(next, total);
        }
    }

    #[test]
    fn a_tiny_budget_still_drains_and_cancel_drops_the_rest() {
        let mut queue = TransferQueue::new();
        queue.push(7, &[region(0, 0, 100)]);
        queue.push(8, &[region(0, 100, 64), region(1, 0, 0)]);
        queue.push(9, &[]);
        let mut frame = FrameTransfer::default();
        queue.next_frame(1, &mut frame);
        assert_eq!(frame.bytes, TRANSFER_GRANULE, "one granule a frame at least");
        assert!(queue.cancel(8));
        assert!(!queue.cancel(8), "cancelled once");
        assert!(!queue.is_pending(8) && queue.is_pending(7));
        assert_eq!(queue.pending_bytes(), 84);
        let Drained { bytes, completed, .. } = drain(&mut queue, 0);
        assert_eq!(bytes.iter().sum::<u64>(), 84);
        assert_eq!(completed.iter().map(|&(key, _)| key).collect::<Vec<_>>(), [7, 9]);
    }

    #[test]
    fn a_reordered_queue_sends_by_rank_and_a_partly_sent_asset_resumes() {
        let mut queue = TransferQueue::new();
        queue.push(3, &[region(0, 0, 64)]);
        queue.push(1, &[region(0, 64, 32)]);
        queue.push(2, &[region(0, 96, 16)]);
        let mut frame = FrameTransfer::default();
        queue.next_frame(32, &mut frame);
        assert_eq!((frame.copies[0].key, frame.bytes), (3, 32), "half of the first asset");
        queue.reorder_by(|key| key);
        let Drained { completed, copies, .. } = drain(&mut queue, 1000);
        assert_eq!(completed, [(1, 0), (2, 0), (3, 0)]);
        assert_eq!(copies.last().map(|copy| (copy.offset, copy.bytes)), Some((32, 32)), "the rest of asset 3");
    }

    #[test]
    fn a_million_triangle_mesh_arrives_over_several_frames_under_the_default_budget() {
        // A 1M-triangle mesh: about 500k vertices of 16 bytes plus 8 of texture coordinates,
        // 3M indices of 4 bytes, and its coarser levels (about as many indices again).
        let (vertices, uvs, indices) = (500_000 * 16, 500_000 * 8, 2 * 3_000_000 * 4);
        let mut queue = TransferQueue::new();
        queue.push(0, &[region(0, 0, vertices), region(1, 0, uvs), region(2, 0, indices)]);
        let Drained { bytes, completed, .. } = drain(&mut queue, DEFAULT_TRANSFER_BUDGET);
        assert_eq!(bytes.len(), 3, "{bytes:?}");
        assert!(bytes.iter().all(|&frame| frame <= DEFAULT_TRANSFER_BUDGET));
        assert_eq!(completed, [(0, 2)]);
    }

    #[test]
    fn an_object_draws_the_nearest_resident_level_coarser_first() {
        let resident = |set: &'static [usize]| move |level: usize| set.contains(&level);
        assert_eq!(resident_level(4, 1, resident(&[0, 1, 2, 3])), Some(1), "its own level");
        assert_eq!(resident_level(4, 0, resident(&[2, 3])), Some(2), "the nearest coarser one");
        assert_eq!(resident_level(4, 3, resident(&[0, 1])), Some(1), "a finer one when no coarser is");
        assert_eq!(resident_level(4, 9, resident(&[3])), Some(3), "a wanted level past the chain is its last");
        assert_eq!(resident_level(4, 1, resident(&[])), None, "nothing resident: the placeholder");
        assert_eq!(resident_level(0, 0, resident(&[0])), None, "no level at all");
    }
}

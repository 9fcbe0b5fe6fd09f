//! The frame clock: which frames of one graph are known to have finished on the GPU, so
//! that readers of a buffer a frame writes know whether its contents are there yet.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts the frames of one graph whose fences were waited for.
#[derive(Debug, Default)]
pub(crate) struct FrameClock {
    // Frames with an index below this have finished. Relaxed is enough: the value is only
    // written after a fence wait on the same thread that submits, and a reader on another
    // thread that sees a stale value only reports "pending" conservatively.
    finished: AtomicU64,
}

impl FrameClock {
    /// Frame `frame` has finished on the GPU (its fence was waited for).
    pub(crate) fn finish(&self, frame: u64) {
        self.finished.fetch_max(frame.saturating_add(1), Ordering::Relaxed);
    }

    /// Every frame has finished (the device is idle and no more frames come).
    pub(crate) fn finish_all(&self) {
        self.finished.store(u64::MAX, Ordering::Relaxed);
    }

    pub(super) fn has_finished(&self, frame: u64) -> bool {
        frame < self.finished.load(Ordering::Relaxed)
    }
}

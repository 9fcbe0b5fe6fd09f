//! Where the incremental pass stores its matrices: the rows of a `WorldTransform` column that
//! several jobs store to at once, and the cache hints that keep scattered nodes' loads in
//! flight.

use glam::Mat4;

use super::same_bits;
use crate::transform::WorldTransform;

/// The rows of one `WorldTransform` column, stored to by several jobs at once, each at rows
/// no other job touches. Valid while the column borrow it was made from is held.
#[derive(Clone, Copy)]
pub(super) struct SharedRows {
    base: *mut WorldTransform,
    len: usize,
}

// SAFETY: the pointer is only dereferenced through `SharedRows::store`, whose callers promise
// that no two threads store to the same row, and only while the column borrow is held.
unsafe impl Send for SharedRows {}
// SAFETY: as for `Send`: shared use only ever stores to disjoint rows.
unsafe impl Sync for SharedRows {}

impl SharedRows {
    #[inline]
    pub(super) fn new(column: &mut [WorldTransform]) -> SharedRows {
        SharedRows { base: column.as_mut_ptr(), len: column.len() }
    }

    /// Stores `matrix` at `row` unless the row holds those bits already (so an unchanged
    /// line is not dirtied).
    ///
    /// # Safety
    /// No other thread may read or store `row` during the call, and the column borrow this
    /// was made from must still be held.
    #[inline]
    pub(super) unsafe fn store(&self, row: usize, matrix: Mat4) {
        assert!(row < self.len, "row {row} is past the column's {} rows", self.len);
        // SAFETY: `row` is in bounds (checked above) of a column the caller still borrows
        // mutably, and no other thread touches this row (the caller's promise).
        let stored = unsafe { &mut (*self.base.add(row)).0 };
        if !same_bits(stored, &matrix) {
            *stored = matrix;
        }
    }

    /// Asks for the cache line of `row` ahead of its store (see [`prefetch`]).
    #[inline]
    pub(super) fn prefetch(&self, row: usize) {
        prefetch_address(self.base.wrapping_add(row));
    }
}

/// Asks the CPU to bring the cache line of `slice[index]` closer (a hint with no effect on
/// the result; nothing on targets without one).
#[inline(always)]
pub(super) fn prefetch<T>(slice: &[T], index: usize) {
    // A prefetch never faults, so computing the address is all that is needed; wrapping
    // arithmetic keeps even an index past the end from being undefined behaviour.
    prefetch_address(slice.as_ptr().wrapping_add(index));
}

/// Asks the CPU to bring the cache line at `address` closer; any address will do.
#[inline(always)]
fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetching is a hint that never dereferences or faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

//! Cache-line prefetch hints for the hot loops that read columns by slot in an order the
//! hardware prefetcher cannot guess.

/// Asks the CPU to bring the cache lines of `column[index]` closer: a hint with no effect on
/// any result, and nothing on targets without one.
///
/// The first and the last byte of the entry: columns are aligned to their element type only
/// (16 bytes for a matrix), so a 64-byte matrix or a 32-byte cache entry usually straddles two
/// cache lines, and a miss on the second one stalls as long.
#[inline(always)]
pub(crate) fn prefetch_entry<T>(column: *const T, index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // A prefetch never faults, so computing an address is all that is needed; wrapping
        // arithmetic keeps even a wrong index from being undefined behaviour.
        let first = column.wrapping_add(index) as *const i8;
        let last = first.wrapping_add(std::mem::size_of::<T>().max(1) - 1);
        // SAFETY: prefetching is a hint that never dereferences or faults.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (column, index);
}

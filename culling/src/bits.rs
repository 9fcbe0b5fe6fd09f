//! One bit per object: the answer a cull writes for one view.

/// Objects per word of a [`VisibilityBits`].
pub const BITS_PER_WORD: usize = 64;

/// Visibility of `len` objects, bit `i % 64` of word `i / 64` set when object `i` may be
/// visible.
///
/// Bits past `len` in the last word are always zero, so [`VisibilityBits::count_visible`]
/// is a plain population count. Resizing within the capacity never allocates, so a bitset
/// kept across frames costs nothing per frame in steady state.
///
/// ```
/// use culling::VisibilityBits;
/// let mut bits = VisibilityBits::new(70);
/// bits.set(3, true);
/// bits.set(69, true);
/// assert!(bits.is_visible(69) && !bits.is_visible(4));
/// assert_eq!(bits.count_visible(), 2);
/// assert_eq!(bits.words().len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VisibilityBits {
    words: Vec<u64>,
    len: usize,
}

/// Number of words holding `len` bits.
#[inline]
pub const fn words_for(len: usize) -> usize {
    len.div_ceil(BITS_PER_WORD)
}

impl VisibilityBits {
    /// `len` objects, all hidden.
    pub fn new(len: usize) -> Self {
        Self { words: vec![0; words_for(len)], len }
    }

    /// Number of objects.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no objects.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether object `index` may be visible.
    ///
    /// # Panics
    /// When `index >= len()`.
    #[inline]
    pub fn is_visible(&self, index: usize) -> bool {
        assert!(index < self.len, "object {index} is out of range of {} visibility bits", self.len);
        self.words[index / BITS_PER_WORD] >> (index % BITS_PER_WORD) & 1 == 1
    }

    /// Sets whether object `index` may be visible.
    ///
    /// # Panics
    /// When `index >= len()`.
    #[inline]
    pub fn set(&mut self, index: usize, visible: bool) {
        assert!(index < self.len, "object {index} is out of range of {} visibility bits", self.len);
        let mask = 1u64 << (index % BITS_PER_WORD);
        let word = &mut self.words[index / BITS_PER_WORD];
        if visible {
            *word |= mask;
        } else {
            *word &= !mask;
        }
    }

    /// Number of objects that may be visible.
    #[inline]
    pub fn count_visible(&self) -> usize {
        self.words.iter().map(|word| word.count_ones() as usize).sum()
    }

    /// The words, `words_for(len())` of them.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words for writing, as kernels and parallel callers do (one 64-object block per
    /// word, so disjoint word ranges are disjoint object ranges).
    ///
    /// A writer must leave the bits past `len()` in the last word zero; the kernels do.
    #[inline]
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Marks every object hidden (`false`) or visible (`true`).
    pub fn fill(&mut self, visible: bool) {
        let fill = if visible { u64::MAX } else { 0 };
        self.words.iter_mut().for_each(|word| *word = fill);
        self.clear_tail();
    }

    /// Changes the number of objects to `len`, all hidden; allocates only when the capacity
    /// is too small.
    pub fn reset(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(words_for(len), 0);
        self.len = len;
    }

    /// Changes the number of objects, keeping the bits of objects below both lengths; new
    /// objects are hidden. Allocates only when the capacity is too small.
    pub fn resize(&mut self, len: usize) {
        self.words.resize(words_for(len), 0);
        self.len = len;
        self.clear_tail();
    }

    /// Number of objects the bitset holds without allocating.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.words.capacity() * BITS_PER_WORD
    }

    /// Indices of the objects that may be visible, ascending.
    pub fn iter_visible(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(word_index, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(word_index * BITS_PER_WORD + bit)
            })
        })
    }

    fn clear_tail(&mut self) {
        let used = self.len % BITS_PER_WORD;
        if used != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << used) - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_count_and_iterate() {
        let mut bits = VisibilityBits::new(130);
        for index in [0, 63, 64, 127, 129] {
            bits.set(index, true);
        }
        bits.set(64, false);
        assert_eq!(bits.count_visible(), 4);
        assert_eq!(bits.iter_visible().collect::<Vec<_>>(), vec![0, 63, 127, 129]);
        assert!(!bits.is_visible(64));
    }

    #[test]
    fn fill_leaves_the_tail_clear() {
        let mut bits = VisibilityBits::new(70);
        bits.fill(true);
        assert_eq!(bits.count_visible(), 70);
        assert_eq!(bits.words()[1], (1 << 6) - 1);
    }

    #[test]
    fn resize_within_capacity_does_not_reallocate() {
        let mut bits = VisibilityBits::new(1000);
        bits.fill(true);
        let before = bits.words().as_ptr();
        bits.resize(100);
        assert_eq!(bits.count_visible(), 100, "shrinking keeps the low bits only");
        bits.resize(900);
        assert_eq!(bits.count_visible(), 100, "growing adds hidden objects");
        bits.reset(1000);
        assert_eq!(bits.count_visible(), 0);
        assert_eq!(before, bits.words().as_ptr(), "no reallocation within capacity");
        assert!(bits.capacity() >= 1000);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn out_of_range_read_panics_with_a_message() {
        VisibilityBits::new(10).is_visible(10);
    }
}

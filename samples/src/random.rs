//! The samples' deterministic random stream: a xorshift64 generator, so a seed gives the same
//! world on every machine and run (tests compare runs), with no dependency for it.

/// A xorshift64 stream (shifts 13, 7, 17). Its state must not be zero: [`XorShift::new`]
/// sets the lowest bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift {
    state: u64,
}

impl XorShift {
    /// The stream of `seed` (its lowest bit set, so no seed gives the all-zero state).
    pub fn new(seed: u64) -> XorShift {
        XorShift { state: seed | 1 }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// A float in `[0, 1)`, from the top 24 bits.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A float in `[low, high)`.
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }
}

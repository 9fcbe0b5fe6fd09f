//! What the culling benchmarks share: a deterministic generator, so each bench builds the
//! same scene on every run and machine.

/// Deterministic xorshift numbers in [0, 1).
pub struct Random(pub u64);

impl Random {
    /// The next number in [0, 1).
    pub fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// The next number in [low, high).
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }
}

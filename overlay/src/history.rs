//! The frame-time history the graph panel draws: the last [`HISTORY_FRAMES`] frames' CPU
//! frame, stage and GPU frame milliseconds, in fixed rings (no allocation once the stage
//! names are known).

/// Frames the graph shows.
pub const HISTORY_FRAMES: usize = 240;

/// One series of milliseconds, a ring of [`HISTORY_FRAMES`] samples.
#[derive(Clone, Debug)]
pub struct Series {
    /// What the series measures ("cpu frame", a stage's name, "gpu frame").
    pub name: &'static str,
    samples: Box<[f32; HISTORY_FRAMES]>,
}

impl Series {
    fn new(name: &'static str) -> Series {
        Series { name, samples: Box::new([0.0; HISTORY_FRAMES]) }
    }

    /// The samples oldest first, given the ring's next write position.
    pub fn oldest_first(&self, next: usize) -> impl Iterator<Item = f32> + '_ {
        self.samples[next..].iter().chain(&self.samples[..next]).copied()
    }

    /// The largest sample.
    pub fn max(&self) -> f32 {
        self.samples.iter().copied().fold(0.0, f32::max)
    }
}

/// The last [`HISTORY_FRAMES`] frames: the CPU frame, each stage, the GPU frame.
#[derive(Clone, Debug)]
pub struct FrameHistory {
    /// Series 0 is the CPU frame, the last the GPU frame, the stages between them.
    series: Vec<Series>,
    next: usize,
    recorded: usize,
}

/// Name of the CPU frame's series.
pub const CPU_FRAME: &str = "cpu frame";
/// Name of the GPU frame's series.
pub const GPU_FRAME: &str = "gpu frame";

impl Default for FrameHistory {
    fn default() -> FrameHistory {
        FrameHistory { series: vec![Series::new(CPU_FRAME), Series::new(GPU_FRAME)], next: 0, recorded: 0 }
    }
}

impl FrameHistory {
    /// Records one frame: its CPU milliseconds, each stage's, and its GPU milliseconds (0 when
    /// not known). A stage not seen before gets a series of its own (zero before it).
    pub fn record<'stage>(
        &mut self,
        cpu_ms: f32,
        stages: impl Iterator<Item = (&'static str, f32)> + 'stage,
        gpu_ms: f32,
    ) {
        let slot = self.next;
        self.series[0].samples[slot] = cpu_ms;
        let gpu = self.series.len() - 1;
        self.series[gpu].samples[slot] = gpu_ms;
        for (name, ms) in stages {
            let found = self.series[1..gpu].iter().position(|series| series.name == name);
            let index = match found {
                Some(index) => index + 1,
                None => {
                    let at = self.series.len() - 1;
                    self.series.insert(at, Series::new(name));
                    at
                }
            };
            self.series[index].samples[slot] = ms;
        }
        self.next = (slot + 1) % HISTORY_FRAMES;
        self.recorded = (self.recorded + 1).min(HISTORY_FRAMES);
    }

    /// Every series: the CPU frame first, the stages, the GPU frame last.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// Where the next sample goes (the oldest sample's position once the ring is full).
    pub fn next(&self) -> usize {
        self.next
    }

    /// Frames recorded, up to [`HISTORY_FRAMES`].
    pub fn recorded(&self) -> usize {
        self.recorded
    }

    /// The newest sample of series `index`.
    pub fn newest(&self, index: usize) -> f32 {
        let newest = (self.next + HISTORY_FRAMES - 1) % HISTORY_FRAMES;
        self.series.get(index).map_or(0.0, |series| series.samples[newest])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_of_the_last_frames_with_a_series_per_stage() {
        let mut history = FrameHistory::default();
        for frame in 0..HISTORY_FRAMES + 10 {
            let stages = [("input", 1.0), ("render", frame as f32)];
            history.record(frame as f32, stages.into_iter(), 2.0);
        }
        let names: Vec<&str> = history.series().iter().map(|series| series.name).collect();
        assert_eq!(names, [CPU_FRAME, "input", "render", GPU_FRAME]);
        assert_eq!(history.recorded(), HISTORY_FRAMES);
        let cpu: Vec<f32> = history.series()[0].oldest_first(history.next()).collect();
        assert_eq!(cpu.first().copied(), Some(10.0), "the oldest kept frame comes first");
        assert_eq!(cpu.last().copied(), Some((HISTORY_FRAMES + 9) as f32));
        assert_eq!(history.newest(2), (HISTORY_FRAMES + 9) as f32);
    }
}

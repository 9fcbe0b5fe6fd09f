//! The process's resident memory, so the demo itself shows its peak and that it does not grow
//! from frame to frame: read from Linux's `/proc/self/status` (`VmRSS`, `VmHWM`); on other
//! systems every sample is unavailable and says so.

use serde::Serialize;

/// One reading of the process's memory, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemorySample {
    /// Resident set size now (`VmRSS`).
    pub resident_bytes: u64,
    /// Highest resident set size so far (`VmHWM`, the peak).
    pub peak_bytes: u64,
}

/// Reads the process's memory now; `None` where `/proc/self/status` is missing or lacks the
/// fields (systems other than Linux).
pub fn sample() -> Option<MemorySample> {
    parse_status(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// Reads `VmRSS` and `VmHWM` (kB) from the text of `/proc/<pid>/status`.
pub fn parse_status(status: &str) -> Option<MemorySample> {
    let field = |name: &str| {
        let line = status.lines().find(|line| line.starts_with(name))?;
        let kilobytes: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kilobytes * 1024)
    };
    Some(MemorySample { resident_bytes: field("VmRSS:")?, peak_bytes: field("VmHWM:")? })
}

/// `bytes` in MiB with one decimal, or "unavailable".
pub fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "unavailable".to_owned(), |bytes| format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64))
}

/// The memory the demo reports: resident after the city was built, at frame 100, after the
/// last frame not drawn (when later ones are) and at the last frame, and the peak; `None`
/// where unavailable (or, for frame 100, not reached).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryReport {
    /// Resident bytes once the city, its meshes and the renderer were set up.
    pub after_setup_bytes: Option<u64>,
    /// Resident bytes after frame 100.
    pub frame_100_bytes: Option<u64>,
    /// The last frame the GPU did not draw, and the resident bytes after it, when later
    /// frames were drawn (`--render last`): the steady state before the first drawn frames
    /// add the driver's working set (compiled pipelines, the scene's first upload), so
    /// that step is not mistaken for growth from frame to frame.
    pub before_drawing: Option<(u64, Option<u64>)>,
    /// The last frame's index.
    pub last_frame: u64,
    /// Resident bytes after the last frame.
    pub last_frame_bytes: Option<u64>,
    /// Highest resident bytes of the whole run (`VmHWM` after the last frame).
    pub peak_bytes: Option<u64>,
}

impl MemoryReport {
    /// Records the reading after setup.
    pub fn after_setup(&mut self, sample: Option<MemorySample>) {
        self.after_setup_bytes = sample.map(|sample| sample.resident_bytes);
    }

    /// Records the reading after frame `frame` (kept for frame 100, and as the last frame:
    /// call it at least after frame 100 and after the last one).
    pub fn after_frame(&mut self, frame: u64, sample: Option<MemorySample>) {
        let resident = sample.map(|sample| sample.resident_bytes);
        if frame == 100 {
            self.frame_100_bytes = resident;
        }
        self.last_frame = frame;
        self.last_frame_bytes = resident;
        self.peak_bytes = sample.map(|sample| sample.peak_bytes);
    }

    /// Records the reading after frame `frame`, the last one before the GPU draws.
    pub fn before_drawing(&mut self, frame: u64, sample: Option<MemorySample>) {
        self.before_drawing = Some((frame, sample.map(|sample| sample.resident_bytes)));
    }

    /// One line for the end of the run.
    pub fn line(&self) -> String {
        let before_drawing = self.before_drawing.map_or_else(String::new, |(frame, bytes)| {
            format!(", at frame {frame} (the last not drawn) {}", mib(bytes))
        });
        format!(
            "memory: resident after setup {}, at frame 100 {}{before_drawing}, at frame {} {}, peak {}",
            mib(self.after_setup_bytes),
            if self.last_frame >= 100 { mib(self.frame_100_bytes) } else { "not reached".to_owned() },
            self.last_frame,
            mib(self.last_frame_bytes),
            mib(self.peak_bytes)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_bytes_and_a_missing_field_is_unavailable() {
        let status = "Name:\tcity\nVmPeak:\t 9999 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads: 3\n";
        assert_eq!(parse_status(status), Some(MemorySample { resident_bytes: 1 << 20, peak_bytes: 2 << 20 }));
        assert_eq!(parse_status("Name:\tcity\nVmRSS:\t 1 kB\n"), None, "no VmHWM: unavailable");
        assert_eq!(mib(Some(3 << 19)), "1.5 MiB");
        assert_eq!(mib(None), "unavailable");
    }

    #[test]
    fn the_report_keeps_frame_100_the_last_frame_and_the_peak() {
        let mut report = MemoryReport::default();
        let at = |resident: u64, peak: u64| Some(MemorySample { resident_bytes: resident, peak_bytes: peak });
        report.after_setup(at(10, 12));
        for frame in 1..=150 {
            report.after_frame(frame, at(20 + frame, 200 + frame));
        }
        assert_eq!(report.after_setup_bytes, Some(10));
        assert_eq!(report.frame_100_bytes, Some(120));
        assert_eq!((report.last_frame, report.last_frame_bytes, report.peak_bytes), (150, Some(170), Some(350)));
        assert!(!report.line().contains("not drawn"), "every frame drawn or none: no such reading");
        report.before_drawing(147, at(160, 190));
        assert_eq!(report.before_drawing, Some((147, Some(160))));
        assert!(report.line().contains("at frame 147 (the last not drawn) 0.0 MiB, at frame 150"), "{}", report.line());
        let mut short = MemoryReport::default();
        short.after_frame(5, None);
        assert!(short.line().contains("at frame 100 not reached"), "{}", short.line());
        assert!(short.line().contains("peak unavailable"), "{}", short.line());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_a_resident_size_below_its_peak() {
        let sample = sample().expect("Linux has /proc/self/status");
        assert!(sample.resident_bytes > 0 && sample.resident_bytes <= sample.peak_bytes);
    }
}

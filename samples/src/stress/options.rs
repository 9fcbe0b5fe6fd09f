//! The stress scene's command line (`src/bin/stress.rs`).

use clap::{Parser, ValueEnum};
use culling::CullingBackend;

use super::StressConfig;
use crate::city::{RenderChoice, Switch};

/// Which backend culls.
// The variants are the command line's words, undocumented: clap would print doc comments as
// help text beside each value.
#[allow(missing_docs)]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CullChoice {
    Cpu,
    Gpu,
    Auto,
}

/// Which drawn frames are checked.
// Undocumented variants, as above.
#[allow(missing_docs)]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckChoice {
    Every,
    Last,
}

/// The stress scene's command line.
#[derive(Parser, Clone, Debug)]
#[command(name = "stress", version, about = "A world that moves, spawns and despawns every frame, culled and checked")]
pub struct StressOptions {
    /// Objects in the world at any time (bullets, ships and turrets included).
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub objects: u64,
    /// Share of the objects that move every frame, 0 to 1.
    #[arg(long, value_name = "F", default_value_t = 0.3, value_parser = parse_share)]
    pub moving: f32,
    /// Bullets spawned, and as many despawned, every frame.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub churn: u64,
    /// Objects given another mesh and colour each frame (one in eight also hidden or shown).
    #[arg(long, value_name = "N", default_value_t = StressConfig::default().restyle as u64)]
    pub restyle: u64,
    /// Turrets moved to another ship each frame.
    #[arg(long, value_name = "N", default_value_t = StressConfig::default().reparent as u64)]
    pub reparent: u64,
    /// Frames to run.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub frames: u64,
    /// Image size.
    #[arg(long, value_name = "WxH", default_value = "640x360", value_parser = crate::city::options::parse_size)]
    pub size: (u32, u32),
    /// Which backend culls (auto: the GPU where a device is usable).
    #[arg(long, value_enum, default_value_t = CullChoice::Auto)]
    pub cull: CullChoice,
    /// GPU occlusion culling (the GPU backend's Hi-Z test).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub occlusion: Switch,
    /// Which frames are drawn and checked (default: every frame with --truth, else the last).
    #[arg(long, value_enum)]
    pub render: Option<RenderChoice>,
    /// Which drawn frames are checked against the same frame drawn with culling off (default:
    /// every drawn frame with --truth, else the last): `--render every --check last` draws
    /// every frame at the engine's own pace.
    #[arg(long, value_enum)]
    pub check: Option<CheckChoice>,
    /// Check each drawn frame against the object-id truth and the GPU scene against a
    /// from-scratch upload; prints `false_hidden` and `scene_mismatches` per frame.
    #[arg(long)]
    pub truth: bool,
    /// Validation layer with synchronization checks; any message fails the run.
    #[arg(long)]
    pub validate: bool,
    /// Where `stress.png` and `stats.json` go.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: std::path::PathBuf,
    /// The seed of everything random.
    #[arg(long, value_name = "S", default_value_t = StressConfig::default().seed)]
    pub seed: u64,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Print a line every N frames.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub report_every: u64,
    /// Show the world in a window (until it closes, or for `--frames` when given).
    #[arg(long)]
    pub window: bool,
    /// With `--window`: open the debug overlay from the start (F3 shows or hides it).
    #[arg(long, requires = "window")]
    pub hud: bool,
    /// With `--window` and `--frames`: write the last frame's picture here.
    #[arg(long, value_name = "IMAGE.png", requires = "window")]
    pub screenshot: Option<std::path::PathBuf>,
    /// Object slots the renderer starts with (`RenderSetup::capacity`; it grows, doubling, in
    /// the frames that need more). Default: room for the world and a frame's churn.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub capacity: Option<u32>,
}

/// `--moving`: a share from 0 to 1.
fn parse_share(text: &str) -> Result<f32, String> {
    text.parse::<f32>()
        .ok()
        .filter(|share| (0.0..=1.0).contains(share))
        .ok_or_else(|| format!("'{text}' is not a share from 0 to 1"))
}

impl CullChoice {
    /// The culling backend the choice names.
    pub fn backend(self) -> CullingBackend {
        match self {
            CullChoice::Cpu => CullingBackend::Cpu,
            CullChoice::Gpu => CullingBackend::Gpu,
            CullChoice::Auto => CullingBackend::Auto,
        }
    }
}

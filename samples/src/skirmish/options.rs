//! The skirmish's command line (`src/bin/skirmish.rs`).

use clap::{Parser, ValueEnum};
use culling::CullingBackend;

use super::SkirmishConfig;
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

/// What `--still` holds.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Every unit (the torch bearers too).
    Units,
    /// The torch bearers (and so their lights).
    Torches,
    /// The camera, high above the map.
    Camera,
}

/// The skirmish's command line.
#[derive(Parser, Clone, Debug)]
#[command(
    name = "skirmish",
    version,
    about = "A game's world (props with levels of detail, walking units carrying parented items, volleys of arrows, torches casting shadows, a zooming camera) measured against the city"
)]
pub struct SkirmishOptions {
    /// Mesh entities at any time (the ground, the units and their items, the arrows in
    /// flight; static props for the rest). The city of the comparison has as many.
    #[arg(long, value_name = "N", default_value_t = 160_000, value_parser = clap::value_parser!(u64).range(1_000..=1_000_000))]
    pub objects: u64,
    /// Units walking the map, each carrying a parented pack or torch.
    #[arg(long, value_name = "N", default_value_t = 4_000)]
    pub units: u64,
    /// Units carrying a torch (a point light casting shadows, parented to the torch).
    #[arg(long, value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u64).range(0..=16))]
    pub torches: u64,
    /// Arrows fired, and as many despawned, every frame.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub volley: u64,
    /// Frames an arrow flies.
    #[arg(long, value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..))]
    pub arrow_frames: u64,
    /// What stands still: any of units, torches, camera (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "WHAT")]
    pub still: Vec<Hold>,
    /// Whether the sun and the torches cast shadows.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub shadows: Switch,
    /// The shadow budget: most torch shadow views a frame (six a torch), the torches ranked
    /// by their share of the image (`ecs::ShadowSettings::max_light_views`; 96: no budget).
    #[arg(long, value_name = "N", default_value_t = ecs::DEFAULT_MAX_LIGHT_VIEWS, value_parser = clap::value_parser!(u32).range(0..=96))]
    pub shadow_views: u32,
    /// Frames to run (the camera zooms down and back up every 600).
    #[arg(long, value_name = "N", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub frames: u64,
    /// Size of the view and of the images.
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = crate::city::options::parse_size)]
    pub size: (u32, u32),
    /// Which backend culls (auto: the GPU where a device is usable).
    #[arg(long, value_enum, default_value_t = CullChoice::Auto)]
    pub cull: CullChoice,
    /// Which frames are drawn (default: every frame with --truth, else the last).
    #[arg(long, value_enum)]
    pub render: Option<RenderChoice>,
    /// Check each drawn frame against the object-id truth (`false_hidden`) and each light
    /// view against its own (`dropped_casters`).
    #[arg(long)]
    pub truth: bool,
    /// Validation layer with synchronization checks; any message fails the run.
    #[arg(long)]
    pub validate: bool,
    /// The city at the same object count, in the same run (`off`: the skirmish alone).
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub city: Switch,
    /// The city's street lamps casting shadows, with its sun (0: the plain city, no lights).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=16))]
    pub city_shadows: u32,
    /// Frames each scene runs before the other takes its turn.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub turns: u64,
    /// Where `skirmish.png`, `stats.json` and `city-stats.json` go.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: std::path::PathBuf,
    /// The seed of everything random.
    #[arg(long, value_name = "S", default_value_t = SkirmishConfig::default().seed)]
    pub seed: u64,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Print a line every N frames.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub report_every: u64,
    /// Instanced batching of the camera's draws (`ecs::RenderSettings::batch_draws`), in the
    /// skirmish and the city alike: one command per (mesh, level of detail, material) (`on`)
    /// or per object (`off`); the summary's `draw commands` row counts them.
    #[arg(long, value_enum, value_name = "on|off", default_value_t = Switch::On)]
    pub batch: Switch,
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

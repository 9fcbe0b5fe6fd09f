//! A skirmish: what a game's world asks of the engine, as a benchmark scene beside the city.
//!
//! About 160k objects: 150k static props with levels of detail (trees, rocks, crates, huts
//! that occlude) laid out chunk by chunk as a level streams in; 4,000 units walking their
//! rounds, each carrying a parented pack or torch (mustered on the first frame through
//! `ctx.commands` and [`ecs::HierarchyCommands::set_parent`]); 200 arrows fired and the 200
//! oldest despawned every frame, through `ctx.commands`; 12 torch bearers whose torches are
//! shadow-casting point lights parented to them, and a sun; a camera that zooms from high
//! above (most of the map in view) down to street level and back.
//!
//! Everything is a function of the frame index and the seed, so two runs see the same frames.
//! The parts: `art.rs` (the meshes and their level chains), `scene.rs` (the map, the units
//! and the lights), `motion.rs` (the systems that move them and the camera's path),
//! `compare.rs` (the same-run comparison with the city at the same object count),
//! `invariants.rs` (what must hold of any frame: arrows, children, counts) and
//! `shadow_work.rs` (what the shadow views cost over a run, and how the shadow budget
//! shared them among the torches). The `skirmish` binary's command line is `options.rs`, and
//! `run.rs` runs it step by step (setup, the frame loop in turns with the city, the summary).

pub mod art;
pub mod compare;
pub mod invariants;
pub mod motion;
pub mod options;
pub mod run;
pub mod scene;
pub mod shadow_work;

pub use art::{SkirmishLibrary, SkirmishMeshes};
pub use motion::{Arrow, SkirmishCamera, TorchBearer, Walker};
pub use scene::{build_skirmish, skirmish_app, Skirmish, SkirmishState, SKIRMISH_STAGE};

/// What the skirmish holds and does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkirmishConfig {
    /// Mesh entities in the world at any time: the ground, the units and what they carry,
    /// the arrows in flight, and static props for the rest.
    pub objects: usize,
    /// Units walking the map, each carrying one child (a pack, or a torch).
    pub units: usize,
    /// Units carrying a torch: a shadow-casting point light parented to the torch.
    pub torches: usize,
    /// Arrows fired, and as many despawned (the oldest), each frame.
    pub volley: usize,
    /// Frames an arrow flies before it is despawned.
    pub arrow_frames: usize,
    /// Frames of the camera's zoom down to street level and back up.
    pub camera_period: u64,
    /// What stands still.
    pub still: Still,
    /// Whether the sun and the torches cast shadows.
    pub shadows: bool,
    /// The seed of everything random.
    pub seed: u64,
}

/// What stands still in a skirmish (for measuring what each kind of motion costs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Still {
    /// Every unit stands (the torch bearers included).
    pub units: bool,
    /// The torch bearers stand (their torches' lights with them).
    pub torches: bool,
    /// The camera stays where the zoom starts, high above the map.
    pub camera: bool,
}

impl Default for SkirmishConfig {
    fn default() -> Self {
        SkirmishConfig {
            objects: 160_000,
            units: 4_000,
            torches: 12,
            volley: 200,
            arrow_frames: 12,
            camera_period: 600,
            still: Still::default(),
            shadows: true,
            seed: 0x5C1B_315E,
        }
    }
}

/// Metres between two neighbouring props.
pub const PROP_SPACING: f32 = 4.0;

impl SkirmishConfig {
    /// Arrows in flight at any time.
    pub fn arrows(&self) -> usize {
        self.volley * self.arrow_frames
    }

    /// Torch bearers (at most one per unit).
    pub fn torch_bearers(&self) -> usize {
        self.torches.min(self.units)
    }

    /// Static props: what is left of [`SkirmishConfig::objects`] after the ground, the units,
    /// their children and the arrows.
    pub fn props(&self) -> usize {
        self.objects.saturating_sub(1 + 2 * self.units + self.arrows())
    }

    /// Side of the square map, metres.
    pub fn field(&self) -> f32 {
        (self.props().max(1) as f32).sqrt().ceil() * PROP_SPACING
    }
}

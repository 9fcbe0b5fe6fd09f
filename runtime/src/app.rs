//! The application: world, resources, schedule and the frame loop.

use std::time::Instant;

use hecs::World;

use crate::changes::Changes;
use crate::frame::FrameContext;
use crate::jobs::JobSystem;
use crate::resources::{Res, ResMut, Resources};
use crate::schedule::{Schedule, ScheduleError, StageName, System};

/// Frame counter and time, as systems see them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameTime {
    /// Index of the frame being run, starting at 0.
    pub frame_index: u64,
    /// Seconds since the previous frame (the fixed step when one is set).
    pub delta_seconds: f32,
    /// Seconds since the first frame began (sum of the deltas).
    pub elapsed_seconds: f64,
}

/// Wall-clock statistics of the frames an [`App`] ran (each frame measured from the start of
/// `run_frame` to its end, every stage and command flush included).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Frames run.
    pub frames: u64,
    /// Seconds the last frame took.
    pub last_seconds: f64,
    /// Seconds all frames took together.
    pub total_seconds: f64,
    /// The longest frame, in seconds.
    pub max_seconds: f64,
}

impl FrameStats {
    /// Mean seconds per frame (zero before the first).
    pub fn mean_seconds(&self) -> f64 {
        if self.frames == 0 {
            0.0
        } else {
            self.total_seconds / self.frames as f64
        }
    }

    fn record(&mut self, seconds: f64) {
        self.frames += 1;
        self.last_seconds = seconds;
        self.total_seconds += seconds;
        self.max_seconds = self.max_seconds.max(seconds);
    }
}

/// Which job system runs the frame.
enum Jobs {
    Global,
    Owned(JobSystem),
}

/// Owns the ECS world, the typed resources, the schedule and the frame loop.
///
/// ```
/// use runtime::{App, Stage, System};
/// #[derive(Default)]
/// struct FrameCount(u64);
///
/// let mut app = App::new();
/// app.insert_resource(FrameCount::default());
/// app.add_system(Stage::Input, System::new("count", |ctx| ctx.resource_mut::<FrameCount>().0 += 1).writes_resource::<FrameCount>());
/// app.run_frames(3);
/// assert_eq!(app.resource::<FrameCount>().0, 3);
/// assert_eq!(app.frames_run(), 3);
/// assert_eq!(app.last_frame_index(), Some(2));
/// ```
pub struct App {
    world: World,
    world_epoch: u64,
    resources: Resources,
    frame: FrameContext,
    schedule: Schedule,
    time: FrameTime,
    fixed_delta: Option<f32>,
    last_frame_start: Option<Instant>,
    stats: FrameStats,
    jobs: Jobs,
    changes: Changes,
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

/// Apps alive in the process: the last one to go ends profiling ([`crate::profiling::finish`]).
static LIVE_APPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Drop for App {
    fn drop(&mut self) {
        if LIVE_APPS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            crate::profiling::finish();
        }
    }
}

impl App {
    /// An app on the process-wide job system ([`JobSystem::global`]).
    pub fn new() -> App {
        crate::profiling::start();
        if LIVE_APPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            crate::profiling::restart();
        }
        App {
            world: World::new(),
            world_epoch: 0,
            resources: Resources::new(),
            frame: FrameContext::default(),
            schedule: Schedule::new(),
            time: FrameTime::default(),
            fixed_delta: None,
            last_frame_start: None,
            stats: FrameStats::default(),
            jobs: Jobs::Global,
            changes: Changes::default(),
        }
    }

    /// An app with its own job system of `threads`-way parallelism.
    pub fn with_threads(threads: usize) -> App {
        let mut app = App::new();
        app.jobs = Jobs::Owned(JobSystem::new(threads));
        app
    }

    /// The job system frames run on.
    pub fn job_system(&self) -> &JobSystem {
        match &self.jobs {
            Jobs::Global => JobSystem::global(),
            Jobs::Owned(pool) => pool,
        }
    }

    /// The ECS world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The ECS world, mutably (between frames). Anything may change through it, so the change
    /// log ([`App::changes`]) records that everything changed: caches over static objects
    /// check every object on the next frame. Move objects from a system (a query with
    /// `&mut T`) when only some of them move every frame.
    pub fn world_mut(&mut self) -> &mut World {
        self.changes.record_everything();
        &mut self.world
    }

    /// The change log: which components were lent mutably, where, since a reader last looked
    /// (see [`crate::changes`]).
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Replaces the world (a level load) and returns the old one. Bumps the world epoch, so
    /// systems holding entity ids (the active camera) know to look them up again.
    pub fn replace_world(&mut self, world: World) -> World {
        self.world_epoch += 1;
        self.changes.record_everything();
        std::mem::replace(&mut self.world, world)
    }

    /// How many times the world was replaced.
    pub fn world_epoch(&self) -> u64 {
        self.world_epoch
    }

    /// The typed resources.
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The typed resources, mutably (between frames).
    pub fn resources_mut(&mut self) -> &mut Resources {
        &mut self.resources
    }

    /// Inserts or replaces a resource.
    pub fn insert_resource<T: Send + Sync + 'static>(&mut self, value: T) -> &mut Self {
        self.resources.insert(value);
        self
    }

    /// Borrows a resource.
    ///
    /// # Panics
    /// If it was never inserted.
    pub fn resource<T: 'static>(&self) -> Res<'_, T> {
        self.resources
            .get::<T>()
            .unwrap_or_else(|| panic!("resource {} was never inserted", std::any::type_name::<T>()))
    }

    /// Borrows a resource mutably (a live settings edit, say).
    ///
    /// # Panics
    /// If it was never inserted.
    pub fn resource_mut<T: 'static>(&mut self) -> ResMut<'_, T> {
        self.resources
            .get_mut::<T>()
            .unwrap_or_else(|| panic!("resource {} was never inserted", std::any::type_name::<T>()))
    }

    /// The per-frame context. Values inserted between frames belong to the next frame.
    pub fn frame_context(&self) -> &FrameContext {
        &self.frame
    }

    /// The per-frame context, mutably: a host publishes its view here before `run_frame`.
    pub fn frame_context_mut(&mut self) -> &mut FrameContext {
        &mut self.frame
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The schedule, for tests that tune how it decides.
    #[cfg(test)]
    pub(crate) fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
    }

    /// Adds a system to a stage.
    ///
    /// # Panics
    /// If the stage does not exist; see [`App::try_add_system`].
    pub fn add_system(&mut self, stage: impl Into<StageName>, system: System) -> &mut Self {
        let stage = stage.into();
        if let Err(error) = self.try_add_system(stage, system) {
            panic!("cannot add system: {error}");
        }
        self
    }

    /// Adds a system to a stage, or says why it cannot.
    pub fn try_add_system(&mut self, stage: impl Into<StageName>, system: System) -> Result<&mut Self, ScheduleError> {
        for register in &system.frame_slots {
            register(&mut self.frame);
        }
        self.schedule.add_system(stage, system)?;
        Ok(self)
    }

    /// Dead despawns and inserts found while applying systems' commands, over the app's life
    /// (see [`Commands`](crate::Commands)).
    pub fn command_report(&self) -> crate::CommandReport {
        self.schedule.command_report()
    }

    /// Inserts a user stage right before `anchor`.
    #[track_caller]
    pub fn add_stage_before(
        &mut self,
        anchor: impl Into<StageName>,
        name: &'static str,
    ) -> Result<&mut Self, ScheduleError> {
        self.schedule.add_stage_before(anchor, name)?;
        Ok(self)
    }

    /// Inserts a user stage right after `anchor`.
    #[track_caller]
    pub fn add_stage_after(
        &mut self,
        anchor: impl Into<StageName>,
        name: &'static str,
    ) -> Result<&mut Self, ScheduleError> {
        self.schedule.add_stage_after(anchor, name)?;
        Ok(self)
    }

    /// Uses a fixed time step (deterministic runs) or, with `None`, the measured one.
    pub fn set_fixed_delta(&mut self, delta_seconds: Option<f32>) -> &mut Self {
        self.fixed_delta = delta_seconds;
        self
    }

    /// The time the systems of the last frame run saw (all zero before the first): its
    /// [`FrameTime::frame_index`] is [`App::last_frame_index`].
    pub fn time(&self) -> FrameTime {
        self.time
    }

    /// Wall-clock seconds the last frame took to run (zero before the first). Unlike
    /// [`FrameTime::delta_seconds`], it is the engine's own cost, not the time between frames.
    pub fn frame_seconds(&self) -> f64 {
        self.stats.last_seconds
    }

    /// Wall-clock statistics of all frames run.
    pub fn frame_stats(&self) -> FrameStats {
        self.stats
    }

    /// Number of frames run so far (a frame that panicked counts): also the
    /// [`FrameTime::frame_index`] the next [`App::run_frame`] gives its systems.
    pub fn frames_run(&self) -> u64 {
        self.stats.frames
    }

    /// The [`FrameTime::frame_index`] the systems of the last frame run saw (`None` before the
    /// first): after `run_frame` returns, the number of the frame it ran. It is the number
    /// every answer about that frame uses (`RenderReport::game_frame` in the renderer, a
    /// screenshot's frame).
    ///
    /// ```
    /// use runtime::{App, Stage, System};
    /// #[derive(Default)]
    /// struct Seen(Option<u64>);
    ///
    /// let mut app = App::new();
    /// app.insert_resource(Seen::default());
    /// app.add_system(Stage::Input, System::new("note", |ctx| ctx.resource_mut::<Seen>().0 = Some(ctx.time.frame_index)).writes_resource::<Seen>());
    /// assert_eq!(app.last_frame_index(), None);
    /// app.run_frame();
    /// assert_eq!(app.last_frame_index(), Some(0));
    /// assert_eq!(app.last_frame_index(), app.resource::<Seen>().0);
    /// assert_eq!(app.frames_run(), 1);
    /// ```
    pub fn last_frame_index(&self) -> Option<u64> {
        self.stats.frames.checked_sub(1)
    }

    /// Runs one frame: every stage in order, then clears the frame context.
    ///
    /// A panic in a system reaches the caller once the frame's other running systems have
    /// finished, as a `String` payload that starts with the system's and the stage's name
    /// (`system 'move' in stage 'Transform' panicked: …`); the frame still ends (its frame values are cleared, its index is used up),
    /// and the app can run the next frame. The panicking stage's command buffers are applied
    /// with the next stage that ends.
    pub fn run_frame(&mut self) {
        if self.stats.frames == 0 {
            crate::profiling::setup_done();
        }
        let app_frame = crate::profiling::app_frame();
        let now = Instant::now();
        let measured = self.last_frame_start.map_or(0.0, |last| now.duration_since(last).as_secs_f32());
        self.last_frame_start = Some(now);
        let delta_seconds = self.fixed_delta.unwrap_or(measured);
        let frame_index = self.stats.frames;
        let time = FrameTime {
            frame_index,
            delta_seconds,
            elapsed_seconds: self.time.elapsed_seconds + f64::from(delta_seconds),
        };

        let App { world, world_epoch, resources, frame, schedule, jobs, changes, .. } = self;
        let pool = match jobs {
            Jobs::Global => JobSystem::global(),
            Jobs::Owned(pool) => pool,
        };
        let outcome = {
            crate::profile_zone!("frame");
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| schedule.run(world, resources, frame, changes, time, *world_epoch))
            }))
        };
        // A frame that panicked still ends: its frame values are cleared and its index is
        // used up, so the next frame neither sees stale values nor replays the same index.
        frame.end_frame();
        self.stats.record(now.elapsed().as_secs_f64());
        drop(app_frame);
        crate::profiling::frame_mark();
        self.time = time;
        if let Err(payload) = outcome {
            std::panic::resume_unwind(payload);
        }
    }

    /// Runs `count` frames headless.
    pub fn run_frames(&mut self, count: u64) {
        for _ in 0..count {
            self.run_frame();
        }
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("App")
            .field("entities", &self.world.len())
            .field("frames_run", &self.stats.frames)
            .field("schedule", &self.schedule)
            .finish()
    }
}

//! The frame scheduler: ordered stages of systems, run in conflict-free parallel batches.
//!
//! A frame runs the stages in order (`Input`, `Transform`, `Visibility`, `Render`, plus any
//! user stage inserted before or after one of them). Within a stage, systems run in *run
//! order*: the order they were added, except where a system says
//! [`before`](System::before)`(name)` or [`after`](System::after)`(name)`; such a system moves
//! just far enough to honour it, and the others keep their order. Systems are grouped into
//! batches: a system goes into the first batch after every earlier system (in run order) it
//! conflicts with (one writes what the other reads or writes) or is ordered after, so the result
//! never depends on the number of threads. The systems of a batch run in parallel on the job
//! system, except a batch that took less than about 10 µs in the last frame, which runs on the
//! calling thread one system after another (spreading it would cost more than it saves); so
//! systems of a batch may share a thread, and must never wait for one another. A system may
//! itself call `parallel_for`. Structural changes go through each system's
//! command buffer and are applied when the stage ends, in run order.
//!
//! # Ordering against the engine's systems
//!
//! A follow camera that writes its `Transform` in the `Transform` stage must run before the
//! hierarchy propagates world matrices, or the view lags a frame behind. Added after the
//! engine's systems, it would run after them; it says so instead:
//!
//! ```
//! use runtime::{App, Stage, System};
//! struct Pose(f32);
//! let mut app = App::new();
//! // Stands in for `ecs::hierarchy_system()`, named `ecs::HIERARCHY_SYSTEM`.
//! app.add_system(Stage::Transform, System::new("ecs::hierarchy", |_| {}).reads::<Pose>());
//! app.add_system(
//!     Stage::Transform,
//!     System::new("follow camera", |_| {}).writes::<Pose>().before("ecs::hierarchy"),
//! );
//! let batches = app.schedule().batches(Stage::Transform).unwrap();
//! assert_eq!(batches, vec![vec!["follow camera"], vec!["ecs::hierarchy"]]);
//! ```
//!
//! A system may also anchor itself at either end of its stage ([`System::at_stage_start`],
//! [`System::at_stage_end`]): it then runs before (after) every system of the stage that does
//! not say otherwise explicitly.
//!
//! A loop of constraints is refused with the names of its systems
//! ([`ScheduleError::OrderCycle`]), as is a name no system of the stage has.

mod access;
mod columns;
mod commands;
mod order;
mod parallel;
mod params;
mod query;
mod system;
mod typed;

use std::fmt;
use std::ops::Range;

use hecs::World;

use crate::app::FrameTime;
use crate::changes::Changes;
use crate::frame::FrameContext;
use crate::jobs;
use crate::profiling::ZoneSite;
use crate::resources::Resources;

pub use columns::{ArchetypeColumns, Columns, EntityColumns};
pub use commands::{CommandReport, Commands};
pub use params::{ExclusiveParam, Frame, Publish, SystemParam};
pub use query::QueryAccess;
pub use system::{ExclusiveContext, System, SystemContext};
pub use typed::{QuerySet, SystemQuery};

use system::SystemBody;

/// The engine's built-in stages, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Input, and a host's view for this frame.
    Input,
    /// Local to world matrices, posed bounds.
    Transform,
    /// Culling, LOD, visibility tags and lists.
    Visibility,
    /// Render graph: uploads, culling passes, draws.
    Render,
}

impl Stage {
    /// The stage's name.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Input => "Input",
            Stage::Transform => "Transform",
            Stage::Visibility => "Visibility",
            Stage::Render => "Render",
        }
    }
}

/// A stage's name: a built-in [`Stage`] or a user stage's string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StageName(pub &'static str);

impl From<Stage> for StageName {
    fn from(stage: Stage) -> StageName {
        StageName(stage.name())
    }
}

impl From<&'static str> for StageName {
    fn from(name: &'static str) -> StageName {
        StageName(name)
    }
}

/// Errors a caller can cause while building a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleError {
    /// No stage has this name.
    UnknownStage(&'static str),
    /// A stage with this name exists already.
    DuplicateStage(&'static str),
    /// A system orders itself against a name no system of its stage has (yet): add the
    /// system it names first, or declare the order on that one instead.
    UnknownSystem {
        /// The stage.
        stage: &'static str,
        /// The system whose `before`/`after` names the missing one.
        system: String,
        /// The name not found.
        missing: String,
    },
    /// `before`/`after` constraints of a stage form a loop; each system listed must run before
    /// the next one, and the last before the first. The system being added is not added.
    OrderCycle {
        /// The stage.
        stage: &'static str,
        /// The systems of the loop.
        systems: Vec<String>,
    },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::UnknownStage(name) => write!(formatter, "no stage is named '{name}'"),
            ScheduleError::DuplicateStage(name) => write!(formatter, "a stage named '{name}' exists already"),
            ScheduleError::UnknownSystem { stage, system, missing } => write!(
                formatter,
                "system '{system}' in stage '{stage}' is ordered against '{missing}', but no system of that stage has this name"
            ),
            ScheduleError::OrderCycle { stage, systems } => {
                write!(formatter, "the before/after constraints of stage '{stage}' form a loop: ")?;
                for system in systems {
                    write!(formatter, "'{system}' before ")?;
                }
                write!(formatter, "'{}'", systems.first().map_or("", String::as_str))
            }
        }
    }
}

impl std::error::Error for ScheduleError {}

/// One stage: its systems in execution order (batch by batch) and its batch ranges.
struct StageData {
    name: &'static str,
    /// Where the stage was added: its Tracy zone's source.
    site: ZoneSite,
    /// Systems sorted by batch; within a batch, by run order.
    systems: Vec<System>,
    /// Declaration index of each entry of `systems`.
    declared_index: Vec<usize>,
    /// `systems[batches[k]]` is batch k.
    batches: Vec<Range<usize>>,
    /// Positions in `systems` in run order: command buffers are applied this way.
    apply_order: Vec<usize>,
    /// Wall time of the stage's last run, command flush included.
    last_seconds: f64,
}

impl StageData {
    #[track_caller]
    fn new(name: &'static str) -> StageData {
        StageData {
            name,
            site: ZoneSite::caller("stage"),
            systems: Vec::new(),
            declared_index: Vec::new(),
            batches: Vec::new(),
            apply_order: Vec::new(),
            last_seconds: 0.0,
        }
    }

    /// Adds a system and recomputes the batches (adding systems is rare: not per frame). On an
    /// ordering error the system is not added and the stage is left as it was.
    fn add(&mut self, system: System) -> Result<(), ScheduleError> {
        let declared = self.systems.len();
        self.systems.push(system);
        self.declared_index.push(declared);
        if let Err(error) = self.rebuild_batches() {
            let position = self.declared_index.iter().position(|&index| index == declared).expect("just pushed");
            self.systems.remove(position);
            self.declared_index.remove(position);
            self.rebuild_batches().expect("the stage was ordered before this system was added");
            return Err(error);
        }
        Ok(())
    }

    fn rebuild_batches(&mut self) -> Result<(), ScheduleError> {
        // Back to declaration order first.
        let mut entries: Vec<(usize, System)> = self.declared_index.drain(..).zip(self.systems.drain(..)).collect();
        entries.sort_by_key(|(declared, _)| *declared);
        let inputs: Vec<order::OrderInput<'_>> = entries
            .iter()
            .map(|(_, system)| order::OrderInput {
                name: &system.name,
                access: &system.access,
                before: &system.before,
                after: &system.after,
                anchor: system.anchor,
            })
            .collect();
        let outcome = order::order(&inputs).map_err(|error| match error {
            order::OrderError::Unknown { system, missing } => {
                ScheduleError::UnknownSystem { stage: self.name, system, missing }
            }
            order::OrderError::Cycle(systems) => ScheduleError::OrderCycle { stage: self.name, systems },
        });
        drop(inputs);
        let order = match outcome {
            Ok(order) => order,
            Err(error) => {
                // Put the systems back; the caller removes the one just added and rebuilds.
                for (declared, system) in entries {
                    self.systems.push(system);
                    self.declared_index.push(declared);
                }
                return Err(error);
            }
        };
        let mut run_position = vec![0usize; entries.len()];
        for (position, &declared) in order.run_order.iter().enumerate() {
            run_position[declared] = position;
        }
        let mut keyed: Vec<(usize, usize, usize, System)> = entries
            .into_iter()
            .map(|(declared, system)| (order.batch_of[declared], run_position[declared], declared, system))
            .collect();
        keyed.sort_by_key(|(batch, position, _, _)| (*batch, *position));
        self.batches.clear();
        let mut current_batch = usize::MAX;
        let mut run_position_at = Vec::with_capacity(keyed.len());
        for (position, (batch, run_position, declared, system)) in keyed.into_iter().enumerate() {
            if batch != current_batch {
                self.batches.push(position..position);
                current_batch = batch;
            }
            self.batches.last_mut().expect("pushed above").end = position + 1;
            self.systems.push(system);
            self.declared_index.push(declared);
            run_position_at.push(run_position);
        }
        self.apply_order = (0..self.systems.len()).collect();
        self.apply_order.sort_by_key(|&position| run_position_at[position]);
        Ok(())
    }
}

/// Shared, read-only inputs of every system in a frame.
#[derive(Clone, Copy)]
struct FrameInputs<'a> {
    stage: &'static str,
    world: &'a World,
    changes: &'a Changes,
    resources: &'a Resources,
    frame: &'a FrameContext,
    time: FrameTime,
    world_epoch: u64,
}

/// Ordered stages and their systems.
pub struct Schedule {
    stages: Vec<StageData>,
    command_report: CommandReport,
    /// Batches of more than one system that the last frame ran inline (see [`is_cheap`]).
    inline_batches: usize,
    /// The most a batch may have taken last frame to run inline ([`INLINE_BATCH_SECONDS`];
    /// tests raise it so that a loaded machine's stray microseconds cannot change the
    /// decision they check).
    inline_batch_seconds: f64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule::new()
    }
}

impl Schedule {
    /// A schedule with the four built-in stages and no systems.
    pub fn new() -> Schedule {
        let stages = [Stage::Input, Stage::Transform, Stage::Visibility, Stage::Render]
            .map(|stage| StageData::new(stage.name()));
        Schedule {
            stages: stages.into(),
            command_report: CommandReport::default(),
            inline_batches: 0,
            inline_batch_seconds: INLINE_BATCH_SECONDS,
        }
    }

    /// Sets the most a batch may have taken last frame to run on the calling thread.
    #[cfg(test)]
    pub(crate) fn set_inline_batch_seconds(&mut self, seconds: f64) {
        self.inline_batch_seconds = seconds;
    }

    fn position(&self, name: StageName) -> Result<usize, ScheduleError> {
        self.stages.iter().position(|stage| stage.name == name.0).ok_or(ScheduleError::UnknownStage(name.0))
    }

    #[track_caller]
    fn insert_stage(&mut self, index: usize, name: &'static str) -> Result<(), ScheduleError> {
        if self.position(StageName(name)).is_ok() {
            return Err(ScheduleError::DuplicateStage(name));
        }
        self.stages.insert(index, StageData::new(name));
        Ok(())
    }

    /// Inserts a user stage named `name` right before `anchor`.
    #[track_caller]
    pub fn add_stage_before(&mut self, anchor: impl Into<StageName>, name: &'static str) -> Result<(), ScheduleError> {
        let index = self.position(anchor.into())?;
        self.insert_stage(index, name)
    }

    /// Inserts a user stage named `name` right after `anchor`.
    #[track_caller]
    pub fn add_stage_after(&mut self, anchor: impl Into<StageName>, name: &'static str) -> Result<(), ScheduleError> {
        let index = self.position(anchor.into())?;
        self.insert_stage(index + 1, name)
    }

    /// Adds `system` to `stage`, after the systems already there unless its
    /// [`before`](System::before)/[`after`](System::after) constraints say otherwise.
    ///
    /// # Errors
    /// [`ScheduleError::UnknownStage`]; [`ScheduleError::UnknownSystem`] when a constraint names
    /// no system of the stage; [`ScheduleError::OrderCycle`] when the constraints loop. On error
    /// the system is not added.
    pub fn add_system(&mut self, stage: impl Into<StageName>, system: System) -> Result<(), ScheduleError> {
        let index = self.position(stage.into())?;
        self.stages[index].add(system)
    }

    /// The stage names in run order.
    pub fn stage_names(&self) -> Vec<&'static str> {
        self.stages.iter().map(|stage| stage.name).collect()
    }

    /// The batches of `stage`, each a list of system names that run together.
    pub fn batches(&self, stage: impl Into<StageName>) -> Result<Vec<Vec<String>>, ScheduleError> {
        let stage = &self.stages[self.position(stage.into())?];
        Ok(stage
            .batches
            .iter()
            .map(|range| stage.systems[range.clone()].iter().map(|system| system.name.to_string()).collect())
            .collect())
    }

    /// Runs every stage once, applying each stage's commands when it ends.
    pub(crate) fn run(
        &mut self,
        world: &mut World,
        resources: &Resources,
        frame: &FrameContext,
        changes: &Changes,
        time: FrameTime,
        world_epoch: u64,
    ) {
        let report = &mut self.command_report;
        let inline_limit = self.inline_batch_seconds;
        self.inline_batches = 0;
        changes.begin_frame();
        for stage in &mut self.stages {
            changes.advance();
            crate::profile_zone_site!(stage.name, &stage.site);
            let started = std::time::Instant::now();
            for batch in &stage.batches {
                let systems = &mut stage.systems[batch.clone()];
                // An exclusive-world system is alone in its batch (it conflicts with all).
                if let [System { name, run: SystemBody::Exclusive(run), last_seconds, reports_changes, site, .. }] =
                    systems
                {
                    crate::profile_zone_site!(name.as_ref(), site);
                    let system_started = std::time::Instant::now();
                    let mut context = ExclusiveContext {
                        world: &mut *world,
                        time,
                        world_epoch,
                        resources,
                        frame,
                        changes,
                        name: name.as_ref(),
                    };
                    with_system_name(name, stage.name, || run(&mut context));
                    if !*reports_changes {
                        changes.record_everything();
                    }
                    *last_seconds = system_started.elapsed().as_secs_f64();
                } else {
                    let inputs =
                        FrameInputs { stage: stage.name, world: &*world, changes, resources, frame, time, world_epoch };
                    if systems.len() > 1 && is_cheap(systems, inline_limit) {
                        self.inline_batches += 1;
                        systems.iter_mut().for_each(|system| run_system(system, inputs));
                    } else {
                        run_batch(systems, inputs);
                    }
                }
            }
            for &position in &stage.apply_order {
                let system = &mut stage.systems[position];
                system.commands.apply(world, report, changes, &system.name);
            }
            stage.last_seconds = started.elapsed().as_secs_f64();
        }
    }

    /// Batches of several systems that the last frame ran on the calling thread, one system
    /// after another, because together they took less than about 10 µs the frame before (a
    /// Tracy capture then shows them on one thread, without a "system batch" zone).
    pub fn inline_batches(&self) -> usize {
        self.inline_batches
    }

    /// Dead despawns and inserts found while applying commands, over the schedule's life.
    pub fn command_report(&self) -> CommandReport {
        self.command_report
    }

    /// Wall time each stage took in the last frame, in run order (zero before the first).
    pub fn stage_seconds(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.stages.iter().map(|stage| (stage.name, stage.last_seconds))
    }

    /// Wall time each system took in the last frame, as `(stage, system, seconds)` in run
    /// order (zero before the first). Systems of one batch may run in parallel, so their times
    /// may add up to more than their stage's.
    pub fn system_seconds(&self) -> impl Iterator<Item = (&'static str, &str, f64)> + '_ {
        self.stages.iter().flat_map(|stage| {
            stage.systems.iter().map(move |system| (stage.name, system.name.as_ref(), system.last_seconds))
        })
    }
}

/// Below this much work in the last frame (its systems' times added up), a batch runs on the
/// calling thread, one system after another, as on one thread: handing half of it to another
/// thread and waiting for that half costs microseconds on a loaded machine, more than the
/// batch could gain. A system that calls `join` or `parallel_for` itself still spreads its own
/// work. (An empty frame of 4 stages x 10 no-op systems on 2 threads: 7.9-8.8 µs with every
/// batch split on a loaded machine, 2.3 µs inline, as on one thread.)
const INLINE_BATCH_SECONDS: f64 = 10e-6;

/// Whether `systems` all ran before and took less than `limit` seconds together (normally
/// [`INLINE_BATCH_SECONDS`]): a batch that grows costs at most one frame at its old width, and
/// one never measured is split.
fn is_cheap(systems: &[System], limit: f64) -> bool {
    systems.iter().all(|system| system.has_run) && systems.iter().map(|system| system.last_seconds).sum::<f64>() < limit
}

/// Runs the systems of one batch, in parallel when there is more than one. Splitting with
/// `join` keeps the scheduler free of per-frame allocation.
fn run_batch(systems: &mut [System], inputs: FrameInputs<'_>) {
    match systems {
        [] => {}
        [system] => run_system(system, inputs),
        _ => {
            crate::profile_zone!("system batch");
            let _job_label = crate::profiling::job_label("system batch half job");
            let (left, right) = systems.split_at_mut(systems.len() / 2);
            jobs::join(|| run_batch(left, inputs), || run_batch(right, inputs));
        }
    }
}

fn run_system(system: &mut System, inputs: FrameInputs<'_>) {
    crate::profile_zone_site!(&system.name, &system.site);
    // The jobs the system spawns carry its name and source unless it labels them itself.
    #[cfg(feature = "profile")]
    let _job_label = crate::profiling::job_label_at(system.job_label, system.site.location);
    let started = std::time::Instant::now();
    let System { name, access, run, commands, last_seconds, has_run, .. } = system;
    let SystemBody::Shared(run) = run else {
        unreachable!("exclusive-world systems run alone in their batch, never through run_batch")
    };
    let mut context = SystemContext {
        world: inputs.world,
        changes: inputs.changes,
        commands: Commands { world: inputs.world, queue: commands, access, name },
        time: inputs.time,
        world_epoch: inputs.world_epoch,
        resources: inputs.resources,
        frame: inputs.frame,
        access,
        name,
    };
    with_system_name(name, inputs.stage, || run(&mut context));
    *last_seconds = started.elapsed().as_secs_f64();
    *has_run = true;
}

/// Runs `body`; a panic in it is re-raised as a `String` naming the system and the stage, then
/// the original message. Costs nothing unless it panics.
fn with_system_name(system: &str, stage: &str, body: impl FnOnce()) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("(a panic payload that is not a string)");
        std::panic::resume_unwind(Box::new(format!("system '{system}' in stage '{stage}' panicked: {message}")));
    }
}

impl fmt::Debug for Schedule {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = formatter.debug_map();
        for stage in &self.stages {
            list.entry(&stage.name, &stage.systems.iter().map(|system| system.name.as_ref()).collect::<Vec<_>>());
        }
        list.finish()
    }
}

#[cfg(test)]
mod declared_tests;
#[cfg(test)]
mod params_tests;
#[cfg(test)]
mod tests;

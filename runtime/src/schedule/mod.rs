//! The frame scheduler: ordered stages of systems, run in conflict-free parallel batches.
//!
//! A frame runs the stages in order (`Input`, `Transform`, `Visibility`, `Render`, plus any
//! user stage inserted before or after one of them). Within a stage, systems are grouped into
//! batches: a system goes into the first batch after every earlier system it conflicts with
//! (one writes what the other reads or writes), so declaration order decides among conflicting
//! systems and the result never depends on the number of threads. The systems of a batch run
//! in parallel on the job system; a system may itself call `parallel_for`. Structural changes
//! go through each system's command buffer and are applied when the stage ends, in
//! declaration order.

mod access;
mod system;

use std::fmt;
use std::ops::Range;

use hecs::World;

use crate::app::FrameTime;
use crate::frame::FrameContext;
use crate::jobs;
use crate::resources::Resources;

pub use system::{ExclusiveContext, System, SystemContext};

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
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::UnknownStage(name) => write!(formatter, "no stage is named '{name}'"),
            ScheduleError::DuplicateStage(name) => write!(formatter, "a stage named '{name}' exists already"),
        }
    }
}

impl std::error::Error for ScheduleError {}

/// One stage: its systems in execution order (batch by batch) and its batch ranges.
struct StageData {
    name: &'static str,
    /// Systems sorted by batch; within a batch, by declaration order.
    systems: Vec<System>,
    /// Declaration index of each entry of `systems`.
    declared_index: Vec<usize>,
    /// `systems[batches[k]]` is batch k.
    batches: Vec<Range<usize>>,
    /// Positions in `systems` in declaration order: command buffers are applied this way.
    apply_order: Vec<usize>,
    /// Wall time of the stage's last run, command flush included.
    last_seconds: f64,
}

impl StageData {
    fn new(name: &'static str) -> StageData {
        StageData {
            name,
            systems: Vec::new(),
            declared_index: Vec::new(),
            batches: Vec::new(),
            apply_order: Vec::new(),
            last_seconds: 0.0,
        }
    }

    /// Adds a system and recomputes the batches (adding systems is rare: not per frame).
    fn add(&mut self, system: System) {
        let declared = self.systems.len();
        self.systems.push(system);
        self.declared_index.push(declared);
        self.rebuild_batches();
    }

    fn rebuild_batches(&mut self) {
        // Back to declaration order first.
        let mut entries: Vec<(usize, System)> = self.declared_index.drain(..).zip(self.systems.drain(..)).collect();
        entries.sort_by_key(|(declared, _)| *declared);
        // batch(i) = 1 + max batch of an earlier conflicting system, else 0.
        let mut batch_of = vec![0usize; entries.len()];
        for later in 0..entries.len() {
            for earlier in 0..later {
                if entries[later].1.access.conflicts_with(&entries[earlier].1.access) {
                    batch_of[later] = batch_of[later].max(batch_of[earlier] + 1);
                }
            }
        }
        let mut keyed: Vec<(usize, usize, System)> =
            entries.into_iter().zip(batch_of).map(|((declared, system), batch)| (batch, declared, system)).collect();
        keyed.sort_by_key(|(batch, declared, _)| (*batch, *declared));
        self.batches.clear();
        let mut current_batch = usize::MAX;
        for (position, (batch, declared, system)) in keyed.into_iter().enumerate() {
            if batch != current_batch {
                self.batches.push(position..position);
                current_batch = batch;
            }
            self.batches.last_mut().expect("pushed above").end = position + 1;
            self.systems.push(system);
            self.declared_index.push(declared);
        }
        self.apply_order = (0..self.systems.len()).collect();
        self.apply_order.sort_by_key(|&position| self.declared_index[position]);
    }
}

/// Shared, read-only inputs of every system in a frame.
#[derive(Clone, Copy)]
struct FrameInputs<'a> {
    world: &'a World,
    resources: &'a Resources,
    frame: &'a FrameContext,
    time: FrameTime,
    world_epoch: u64,
}

/// Ordered stages and their systems.
pub struct Schedule {
    stages: Vec<StageData>,
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
        Schedule { stages: stages.into() }
    }

    fn position(&self, name: StageName) -> Result<usize, ScheduleError> {
        self.stages.iter().position(|stage| stage.name == name.0).ok_or(ScheduleError::UnknownStage(name.0))
    }

    fn insert_stage(&mut self, index: usize, name: &'static str) -> Result<(), ScheduleError> {
        if self.position(StageName(name)).is_ok() {
            return Err(ScheduleError::DuplicateStage(name));
        }
        self.stages.insert(index, StageData::new(name));
        Ok(())
    }

    /// Inserts a user stage named `name` right before `anchor`.
    pub fn add_stage_before(&mut self, anchor: impl Into<StageName>, name: &'static str) -> Result<(), ScheduleError> {
        let index = self.position(anchor.into())?;
        self.insert_stage(index, name)
    }

    /// Inserts a user stage named `name` right after `anchor`.
    pub fn add_stage_after(&mut self, anchor: impl Into<StageName>, name: &'static str) -> Result<(), ScheduleError> {
        let index = self.position(anchor.into())?;
        self.insert_stage(index + 1, name)
    }

    /// Adds `system` to `stage`, after the systems already there.
    pub fn add_system(&mut self, stage: impl Into<StageName>, system: System) -> Result<(), ScheduleError> {
        let index = self.position(stage.into())?;
        self.stages[index].add(system);
        Ok(())
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
        time: FrameTime,
        world_epoch: u64,
    ) {
        for stage in &mut self.stages {
            crate::profile_zone_dynamic!(stage.name);
            let started = std::time::Instant::now();
            for batch in &stage.batches {
                let systems = &mut stage.systems[batch.clone()];
                // An exclusive-world system is alone in its batch (it conflicts with all).
                if let [System { name, run: SystemBody::Exclusive(run), .. }] = systems {
                    crate::profile_zone_dynamic!(name.as_ref());
                    let mut context = ExclusiveContext {
                        world: &mut *world,
                        time,
                        world_epoch,
                        resources,
                        frame,
                        name: name.as_ref(),
                    };
                    run(&mut context);
                } else {
                    run_batch(systems, FrameInputs { world: &*world, resources, frame, time, world_epoch });
                }
            }
            for &position in &stage.apply_order {
                stage.systems[position].commands.run_on(world);
            }
            stage.last_seconds = started.elapsed().as_secs_f64();
        }
    }

    /// Wall time each stage took in the last frame, in run order (zero before the first).
    pub fn stage_seconds(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.stages.iter().map(|stage| (stage.name, stage.last_seconds))
    }
}

/// Runs the systems of one batch, in parallel when there is more than one. Splitting with
/// `join` keeps the scheduler free of per-frame allocation.
fn run_batch(systems: &mut [System], inputs: FrameInputs<'_>) {
    match systems {
        [] => {}
        [system] => run_system(system, inputs),
        _ => {
            crate::profile_zone!("system batch");
            let (left, right) = systems.split_at_mut(systems.len() / 2);
            jobs::join(|| run_batch(left, inputs), || run_batch(right, inputs));
        }
    }
}

fn run_system(system: &mut System, inputs: FrameInputs<'_>) {
    crate::profile_zone_dynamic!(&system.name);
    let System { name, access, run, commands, .. } = system;
    let SystemBody::Shared(run) = run else {
        unreachable!("exclusive-world systems run alone in their batch, never through run_batch")
    };
    let mut context = SystemContext {
        world: inputs.world,
        commands,
        time: inputs.time,
        world_epoch: inputs.world_epoch,
        resources: inputs.resources,
        frame: inputs.frame,
        access,
        name,
    };
    run(&mut context);
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
mod tests;

//! The `Transform`-stage system: world = parent world × local, at any depth, level by level on
//! the job system, and only where something moved.
//!
//! The system reads the app's change log ([`runtime::changes`]) and picks one of three passes:
//! - nothing it depends on changed: **skipped** (no gather, `WorldTransform` untouched);
//! - the log names what changed (`Transform` or `Parent` values written, entities spawned,
//!   despawned or given or stripped of components) and the candidates are at most a quarter
//!   of the nodes: **incremental** (`incremental.rs`): new nodes join, despawned ones leave,
//!   a new `Parent` relinks a subtree (`structure.rs`), and the nodes whose `Transform` bits
//!   differ from the last pass, the new and the relinked ones, and their descendants, are
//!   recomputed by the same operations as the full pass (`moved.rs`), so the matrices are
//!   bit-identical;
//! - anything else (many changes, "everything", a loop of `Parent` links, the first frame):
//!   the **full** pass below.
//!
//! Either way it records what it wrote in the change log for readers downstream: entity by
//! entity after an incremental pass, archetype by archetype (only those whose matrices
//! changed) after a full one. `WorldTransform` is this system's output, which other systems
//! read and never write: an incremental pass takes a parent's matrix from it.
//!
//! Each full pass the propagator
//! 1. gathers every entity with a [`Transform`] (a *node*) straight from the archetype
//!    columns, in parallel; node `i` is row `i - start` of its archetype, and a table indexed
//!    by entity id maps entities back to nodes;
//! 2. links each node to its parent's node and finds its depth by walking up at most
//!    [`HOP_LIMIT`] links, in parallel; deeper nodes, and any loop made by inserting
//!    [`Parent`] directly, are finished by a serial memoised walk that cuts loops (the node that
//!    closes one becomes a root);
//! 3. orders the nodes by depth with a stable counting sort over fixed node chunks (parallel
//!    when there are at most [`PARALLEL_LEVELS`] levels);
//! 4. computes the world matrices level by level: every node of a level reads only its
//!    parent's matrix from the levels before, so a level is one `parallel_for_chunks`;
//! 5. writes the matrices into the [`WorldTransform`] columns, in parallel over disjoint
//!    slices, storing only those whose bits changed.
//!
//! Chunk boundaries depend on the node count only, and every value is computed by the same
//! floating-point operations whatever the thread count, so the result is bit-identical on 1 or
//! N threads. Buffers are kept between frames: a steady state allocates nothing, and
//! structural changes (a missing `WorldTransform` inserted, an orphan's `Parent` removed)
//! happen only on transitions.
//!
//! A full pass leaves its link data (node of each id, parent node, depth) for the incremental
//! passes that follow, which keep it in step with the world from then on: a node keeps its
//! slot (its index in these tables) for as long as its entity has a `Transform`, wherever its
//! row moves.
//!
//! Atomics: the id-to-node table and the sort's scatter targets are `AtomicU32`s written with
//! `Relaxed` stores by disjoint jobs and read after the parallel loop that wrote them has
//! returned; the job system's join orders those reads after the writes.

mod children;
mod depth;
mod fixes;
mod incremental;
mod moved;
mod places;
mod rows;
mod structure;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use glam::Mat4;
use hecs::{Entity, With, World};
use runtime::jobs::parallel_for_chunks;
use runtime::{ArchetypeColumns, Columns, ResMut, System};

use super::Parent;
use crate::transform::{Transform, WorldTransform};
use fixes::FixSink;
use incremental::Tracking;
#[cfg(test)]
pub(in crate::hierarchy) use incremental::{INCREMENTAL_SHARE, NAMED_WEIGHT};

/// Marks "no node" in index tables.
const NONE: u32 = u32::MAX;
/// Depth not computed yet.
const DEPTH_UNKNOWN: u32 = u32::MAX;
/// Depth being computed: the node is on the serial walk's stack.
const DEPTH_ON_STACK: u32 = u32::MAX - 1;
/// Matrices (or nodes) per job: big enough to amortise scheduling, small enough to balance.
const GRAIN: usize = 2048;
/// Links the parallel depth pass follows before leaving a node to the serial pass.
pub const HOP_LIMIT: u32 = 32;
/// Most levels the parallel counting sort handles (its per-chunk counters are this wide).
pub const PARALLEL_LEVELS: usize = 8;
/// Nodes per counting-sort chunk. Fixed, so positions never depend on the thread count.
const SORT_CHUNK: usize = 4096;

/// Which pass the hierarchy system ran in a frame (see [`hierarchy_system`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PassKind {
    /// Nothing the hierarchy depends on changed: no work, no `WorldTransform` written.
    #[default]
    Skipped,
    /// Only moved nodes and their descendants were recomputed.
    Incremental,
    /// Every node was gathered, linked and recomputed.
    Full,
}

/// What the hierarchy system did, as a resource (inserted by [`install`](crate::install)).
///
/// `nodes` and `levels` describe the hierarchy as the last pass left it (a skipped pass
/// changes nothing); `last_pass` and `updated` describe the last frame; the counters add up
/// over the app's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HierarchyReport {
    /// Entities with a `Transform`.
    pub nodes: usize,
    /// Depth levels (1 for a flat scene, 0 for none).
    pub levels: usize,
    /// The pass the last frame ran.
    pub last_pass: PassKind,
    /// World matrices recomputed in the last frame (every node in a full pass).
    pub updated: usize,
    /// Children whose parent was despawned and which were made roots where they stood (their
    /// local `Transform` set to their last world pose; each logged once), over the app's life.
    pub orphans_detached: u64,
    /// How many of those were detached in the last frame.
    pub orphans_this_frame: usize,
    /// Loops of `Parent` links found and cut (each full pass that sees a loop cuts it again).
    pub cycles_cut: u64,
}

/// Name of the system [`hierarchy_system`] returns: order a `Transform`-stage system against it
/// with [`System::before`] (a follow camera that moves a `Transform` the propagation must see
/// this frame) or [`System::after`] (a system that reads this frame's `WorldTransform`).
pub const HIERARCHY_SYSTEM: &str = "ecs::hierarchy";

/// The components [`hierarchy_system`] declares, as the query type of its [`Columns`]: it
/// reads every node's `Transform` and `Parent`, and writes the nodes' `WorldTransform`.
pub type HierarchyAccess = (&'static Transform, Option<&'static Parent>, Option<&'static mut WorldTransform>);

/// The world as the propagation sees it: the columns of [`HierarchyAccess`].
pub type HierarchyColumns<'a> = Columns<'a, HierarchyAccess>;

/// The hierarchy system for [`Stage::Transform`](runtime::Stage::Transform), named
/// [`HIERARCHY_SYSTEM`].
///
/// Reads `Transform` and `Parent`, writes `WorldTransform` and the [`HierarchyReport`]
/// resource (which must be present; [`install`](crate::install) inserts it). It works only
/// where the app's change log ([`runtime::changes`]) says something may have moved
/// ([`Propagator::run_tracked`]), in one of three passes ([`PassKind`]):
/// - nothing it depends on changed: skipped, `WorldTransform` untouched;
/// - the log names the changes (written `Transform`s or `Parent`s, spawns, despawns,
///   components inserted or removed), and they are at most a quarter of the nodes:
///   incremental, new nodes joined, despawned ones dropped, re-parented ones relinked, and
///   the changed nodes and their descendants recomputed, bit-identical to a full pass;
/// - anything else (many changes, a lent world, the first frame): the full pass.
///
/// It records the `WorldTransform`s it wrote in the change log (entities after an
/// incremental pass, archetypes whose matrices changed after a full one). `WorldTransform` is
/// its output: other systems read it and never write it.
///
/// A child whose parent no longer exists gets its `Parent` removed through the commands (so
/// it is a root from this frame on) and is logged once as a warning. A parent that exists but
/// has no `Transform` places its children as roots for as long as it lacks one.
pub fn hierarchy_system() -> System {
    let mut propagator = Propagator::default();
    System::with_params::<(HierarchyColumns, ResMut<HierarchyReport>)>(
        HIERARCHY_SYSTEM,
        move |ctx, (world, mut report)| {
            runtime::profile_zone!("hierarchy");
            let changes = ctx.changes();
            let commands = &mut ctx.commands;
            // One scope around all the parallel loops: a thread outside the pool (the main thread
            // running a lone system) then joins the pool once per frame, not once per loop.
            let _job_label = runtime::profiling::job_label("transform propagate job");
            runtime::jobs::scope(|_| propagator.run_tracked(&world, changes, commands, &mut report));
        },
    )
}

/// A node's inputs, copied from its archetype row (64 bytes: one cache line).
#[derive(Clone, Copy)]
struct NodeInput {
    local: Transform,
    parent: Option<Entity>,
    /// The node's entity (for the change log; its id for the id-to-node table).
    entity: Entity,
}

impl Default for NodeInput {
    fn default() -> Self {
        NodeInput { local: Transform::IDENTITY, parent: None, entity: Entity::DANGLING }
    }
}

/// A node's parent node (or [`NONE`] for a root) and depth.
#[derive(Clone, Copy)]
struct Link {
    parent: u32,
    depth: u32,
}

/// The nodes that are the rows of one archetype: nodes `start..start + len`.
#[derive(Clone, Copy)]
struct ArchetypeRun {
    /// The archetype's position in `World::archetypes`.
    archetype: u32,
    start: u32,
    len: u32,
    has_world: bool,
}

/// The propagation itself, outside any system: what [`hierarchy_system`] runs each frame.
///
/// [`run`](Self::run) is the full pass; [`run_tracked`](Self::run_tracked) reads a change log
/// and does only what it must. It keeps its buffers between runs, so a steady state allocates
/// nothing. Run it inside `JobSystem::install` to choose the pool its parallel loops use.
///
/// ```
/// use ecs::hierarchy::{HierarchyReport, Propagator};
/// use ecs::scene;
/// let mut world = hecs::World::new();
/// scene::spawn_forest(&mut world, 4, &[2], scene::unit_cube_mesh());
/// let mut propagator = Propagator::default();
/// let mut commands = hecs::CommandBuffer::new();
/// let mut report = HierarchyReport::default();
/// runtime::JobSystem::new(1).install(|| propagator.run(&world, &mut commands, &mut report));
/// commands.run_on(&mut world);
/// assert_eq!((report.nodes, report.levels), (12, 2));
/// ```
#[derive(Default)]
pub struct Propagator {
    /// Node of each entity id; stale entries are caught by comparing `inputs[node].entity`'s id.
    node_of_id: Vec<AtomicU32>,
    /// Per node: in archetype-row order after a full pass, then each node keeps its slot (a
    /// freed slot holds `Entity::DANGLING` until a new node takes it).
    inputs: Vec<NodeInput>,
    links: Vec<Link>,
    position_of_node: Vec<AtomicU32>,
    /// Node at each position of the depth order.
    order: Vec<AtomicU32>,
    /// World matrix at each position of the depth order.
    worlds: Vec<Mat4>,
    runs: Vec<ArchetypeRun>,
    /// First position of each level, plus the end.
    level_start: Vec<u32>,
    /// Per sort chunk: its count of each level, then its next position in each level.
    chunk_cursors: Vec<[u32; PARALLEL_LEVELS]>,
    walk: Vec<u32>,
    warned_parent_without_transform: bool,
    /// Per run: whether the last full pass changed any of its matrices.
    run_written: Vec<AtomicBool>,
    /// The link data above describes the world: a full pass built it, and the incremental
    /// passes since kept it in step.
    linked: bool,
    /// The change-log cursor and what the incremental passes keep.
    tracking: Tracking,
}

impl std::fmt::Debug for Propagator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Propagator").field("nodes", &self.inputs.len()).finish()
    }
}

impl Propagator {
    /// One full pass of propagation over `world`: writes every `WorldTransform` of an entity
    /// with a `Transform`; structural fixes (a missing `WorldTransform`, an orphan's `Parent`)
    /// are recorded in `commands` for the caller to apply.
    pub fn run(&mut self, world: &World, commands: &mut hecs::CommandBuffer, report: &mut HierarchyReport) {
        report.orphans_this_frame = 0;
        self.full_pass(&Columns::whole(world), commands, report);
    }

    /// The full pass, with its structural fixes sent to `fixes`.
    fn full_pass(&mut self, world: &HierarchyColumns<'_>, fixes: &mut impl FixSink, report: &mut HierarchyReport) {
        let count = self.gather(world);
        let flags = self.link(world);
        if flags.parent_gone.load(Ordering::Relaxed) {
            self.detach_orphans(world, fixes, report);
        }
        let unplaced = flags.parent_unplaced.load(Ordering::Relaxed);
        if unplaced && !self.warned_parent_without_transform {
            log::warn!("some parents have no Transform; their children are placed as roots");
        }
        self.warned_parent_without_transform = unplaced;
        let mut deepest = flags.deepest.load(Ordering::Relaxed);
        if flags.too_deep.load(Ordering::Relaxed) {
            deepest = deepest.max(self.finish_depths(report));
        }
        let levels = if count == 0 { 0 } else { deepest as usize + 1 };
        self.sort_by_depth(levels);
        self.compute_worlds();
        self.write_back(world);
        if self.runs.iter().any(|run| !run.has_world) {
            self.insert_missing_world_transforms(world, fixes);
        }
        self.linked = true;
        self.tracking.ready = false;
        report.nodes = count;
        report.levels = levels;
        report.last_pass = PassKind::Full;
        report.updated = count;
    }

    /// Copies every node's inputs from the archetype columns; returns the node count.
    fn gather(&mut self, world: &HierarchyColumns<'_>) -> usize {
        runtime::profile_zone!("hierarchy gather");
        self.runs.clear();
        let mut total = 0usize;
        let mut max_id = 0;
        for (position, archetype) in world.archetypes().enumerate() {
            if !is_node_archetype(&archetype) {
                continue;
            }
            self.runs.push(ArchetypeRun {
                archetype: position as u32,
                start: total as u32,
                len: archetype.len(),
                has_world: archetype.has::<WorldTransform>(),
            });
            total += archetype.len() as usize;
            max_id = max_id.max(archetype.ids().iter().copied().max().unwrap_or(0));
        }
        if self.node_of_id.len() <= max_id as usize {
            self.node_of_id.resize_with((max_id as usize + 1).next_power_of_two(), || AtomicU32::new(NONE));
        }
        self.inputs.resize(total, NodeInput::default());
        let node_of_id = &self.node_of_id;
        for (archetype, run) in world.archetypes().filter(|archetype| is_node_archetype(archetype)).zip(&self.runs) {
            let transforms = archetype.column::<Transform>().expect("node archetypes have a Transform column");
            let transforms: &[Transform] = &transforms;
            let parents_column = archetype.column::<Parent>();
            let parents: Option<&[Parent]> = parents_column.as_deref();
            let ids = archetype.ids();
            let start = run.start as usize;
            parallel_for_chunks(&mut self.inputs[start..start + run.len as usize], GRAIN, |first, chunk| {
                for (offset, input) in chunk.iter_mut().enumerate() {
                    let row = first + offset;
                    *input = NodeInput {
                        local: transforms[row],
                        parent: parents.map(|parents| parents[row].0),
                        // SAFETY: `ids` are the rows of a live archetype of `world`, which is
                        // borrowed for this whole call, so each id is a live entity's.
                        entity: unsafe { world.find_entity_from_id(ids[row]) },
                    };
                    node_of_id[ids[row] as usize].store((start + row) as u32, Ordering::Relaxed);
                }
            });
        }
        total
    }

    /// Makes every node whose parent was despawned a root where it stands: its local
    /// `Transform` becomes its last world pose (this frame's matrices use it already, so it
    /// does not jump) and its `Parent` is removed. Each is logged once (the removal makes it a
    /// root, so the next frame does not see it again) and counted in the report.
    fn detach_orphans(&mut self, world: &HierarchyColumns<'_>, fixes: &mut impl FixSink, report: &mut HierarchyReport) {
        let mut query = world.query::<With<(Entity, &Parent, Option<&WorldTransform>), &Transform>>();
        for (child, parent, last_world) in query.iter() {
            if world.contains(parent.0) {
                continue;
            }
            log::warn!(
                "entity {child:?} lost its parent {:?} (despawned); it is a root where it stands from now on",
                parent.0
            );
            let node = self.node_of_id[child.id() as usize].load(Ordering::Relaxed) as usize;
            debug_assert_eq!(self.inputs[node].entity, child, "gathered this frame");
            if let Some(pose) = last_world.filter(|last| last.is_finite()).map(|last| Transform::from_matrix(last.0)) {
                self.inputs[node].local = pose;
                fixes.set_pose(child, pose);
            }
            // The inputs say what the fixes leave, so a `Parent` given back to the same
            // despawned entity is a change the next incremental pass sees.
            self.inputs[node].parent = None;
            fixes.remove_parent(child);
            report.orphans_detached += 1;
            report.orphans_this_frame += 1;
        }
    }

    /// World matrices, level by level; each level in parallel.
    fn compute_worlds(&mut self) {
        runtime::profile_zone!("hierarchy matrices");
        let count = self.links.len();
        self.worlds.resize(count, Mat4::IDENTITY);
        let (order, position_of_node, links, inputs) = (&self.order, &self.position_of_node, &self.links, &self.inputs);
        for level in self.level_start.windows(2) {
            let (start, end) = (level[0] as usize, level[1] as usize);
            let (done, rest) = self.worlds.split_at_mut(start);
            let done: &[Mat4] = done;
            parallel_for_chunks(&mut rest[..end - start], GRAIN, |first, chunk| {
                for (offset, world) in chunk.iter_mut().enumerate() {
                    let node = order[start + first + offset].load(Ordering::Relaxed) as usize;
                    let local = inputs[node].local.to_matrix();
                    let parent = links[node].parent;
                    *world = if parent == NONE {
                        local
                    } else {
                        let parent_position = position_of_node[parent as usize].load(Ordering::Relaxed) as usize;
                        debug_assert!(parent_position < start, "a parent must sit in an earlier level");
                        done[parent_position] * local
                    };
                }
            });
        }
    }

    /// Copies the matrices into the `WorldTransform` columns, storing only those whose bits
    /// changed, and flags in `run_written` the runs where any did.
    fn write_back(&mut self, world: &HierarchyColumns<'_>) {
        runtime::profile_zone!("hierarchy write back");
        self.run_written.resize_with(self.runs.len(), AtomicBool::default);
        let (position_of_node, worlds) = (&self.position_of_node, &self.worlds);
        let archetypes = world.archetypes().filter(|archetype| is_node_archetype(archetype));
        for ((archetype, run), written) in archetypes.zip(&self.runs).zip(&self.run_written) {
            written.store(false, Ordering::Relaxed);
            let Some(mut column) = archetype.column_mut::<WorldTransform>() else {
                continue;
            };
            let start = run.start as usize;
            parallel_for_chunks(&mut column, GRAIN, |first, chunk| {
                let mut changed = false;
                for (offset, world_transform) in chunk.iter_mut().enumerate() {
                    let node = start + first + offset;
                    let position = position_of_node[node].load(Ordering::Relaxed) as usize;
                    let matrix = worlds[position];
                    if !same_bits(&world_transform.0, &matrix) {
                        world_transform.0 = matrix;
                        changed = true;
                    }
                }
                if changed {
                    written.store(true, Ordering::Relaxed);
                }
            });
        }
    }

    /// Records in the change log the archetypes whose matrices the last full pass changed.
    fn record_full_pass(&self, world: &HierarchyColumns<'_>) {
        for (run, written) in self.runs.iter().zip(&self.run_written) {
            if written.load(Ordering::Relaxed) {
                world.record_archetype_write::<WorldTransform>(run.archetype as usize);
            }
        }
    }

    /// Gives nodes spawned without a `WorldTransform` one, holding this frame's value.
    fn insert_missing_world_transforms(&self, world: &HierarchyColumns<'_>, fixes: &mut impl FixSink) {
        let mut query = world.query::<Entity>().with::<&Transform>().without::<&WorldTransform>();
        for entity in query.iter() {
            let node = self.node_of_id[entity.id() as usize].load(Ordering::Relaxed) as usize;
            let position = self.position_of_node[node].load(Ordering::Relaxed) as usize;
            fixes.insert_world(entity, WorldTransform(self.worlds[position]));
        }
    }
}

fn is_node_archetype(archetype: &ArchetypeColumns<'_>) -> bool {
    !archetype.is_empty() && archetype.has::<Transform>()
}

/// Whether two matrices hold the same bits. Unlike `==`, a NaN equals itself and `-0.0`
/// differs from `0.0`: an unchanged matrix is not reported as written, a changed one always is.
fn same_bits(left: &Mat4, right: &Mat4) -> bool {
    same_float_bits(&left.to_cols_array(), &right.to_cols_array())
}

/// Whether two float arrays hold the same bits. An OR of XORs rather than `==` on the bit
/// arrays, which compiles to a call to `memcmp`: this is a handful of vector instructions.
fn same_float_bits<const N: usize>(left: &[f32; N], right: &[f32; N]) -> bool {
    left.iter().zip(right).fold(0, |differ, (left, right)| differ | (left.to_bits() ^ right.to_bits())) == 0
}

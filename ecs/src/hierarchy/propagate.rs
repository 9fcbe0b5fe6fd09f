//! The `Transform`-stage system: world = parent world × local, at any depth, level by level on
//! the job system.
//!
//! Each frame the system
//! 1. gathers every entity with a [`Transform`] (a *node*) with its parent, in world storage
//!    order, and maps entity slots to nodes through a table indexed by entity id;
//! 2. gives each node its depth (roots 0) by walking parent links with memoisation, cutting
//!    any loop made by inserting [`Parent`] directly (the node that closes it becomes a root);
//! 3. orders the nodes by depth with a stable counting sort;
//! 4. computes the world matrices level by level: every node of a level reads only its
//!    parent's matrix from the levels before, so a level is one `parallel_for_chunks`;
//! 5. writes the matrices into the [`WorldTransform`] columns of the world's archetypes, again
//!    in parallel over disjoint slices.
//!
//! The result is a pure function of the world, computed with the same floating-point
//! operations whatever the thread count, so it is bit-identical on 1 or N threads. All buffers
//! are kept between frames: a steady state allocates nothing, and structural changes (a
//! missing `WorldTransform` inserted, an orphan's `Parent` removed) happen only on transitions.

use glam::Mat4;
use hecs::{Entity, World};
use runtime::{System, SystemContext};

use super::Parent;
use crate::transform::{Transform, WorldTransform};

/// Marks "no node" in index tables.
const NONE: u32 = u32::MAX;
/// Depth not computed yet.
const DEPTH_UNKNOWN: u32 = u32::MAX;
/// Depth being computed: the node is on the walk stack.
const DEPTH_ON_STACK: u32 = u32::MAX - 1;
/// Matrices per job: big enough to amortise scheduling, small enough to balance.
const GRAIN: usize = 2048;

/// What the hierarchy system did, as a resource (inserted by [`install`](crate::install)).
///
/// `nodes` and `levels` describe the last frame; the counters add up over the app's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HierarchyReport {
    /// Entities with a `Transform` last frame.
    pub nodes: usize,
    /// Depth levels last frame (1 for a flat scene, 0 for none).
    pub levels: usize,
    /// Children whose parent was despawned and which were made roots (each logged once).
    pub orphans_detached: u64,
    /// Loops of `Parent` links found and cut (each frame a loop is seen, it is cut again).
    pub cycles_cut: u64,
}

/// The hierarchy system for [`Stage::Transform`](runtime::Stage::Transform).
///
/// Reads `Transform` and `Parent`, writes `WorldTransform` and the [`HierarchyReport`]
/// resource (which must be present; [`install`](crate::install) inserts it). A child whose
/// parent no longer exists gets its `Parent` removed through the command buffer (so it is a
/// root from this frame on) and is logged once as a warning. A parent that exists but has no
/// `Transform` places its children as roots for as long as it lacks one.
pub fn hierarchy_system() -> System {
    let mut propagator = Propagator::default();
    System::new("ecs::hierarchy", move |ctx: &mut SystemContext<'_>| {
        runtime::profile_zone!("hierarchy");
        let mut report = ctx.resource_mut::<HierarchyReport>();
        propagator.run(ctx.world, ctx.commands, &mut report);
    })
    .reads::<Transform>()
    .reads::<Parent>()
    .writes::<WorldTransform>()
    .writes_resource::<HierarchyReport>()
}

/// The propagation itself, outside any system: what [`hierarchy_system`] runs each frame.
///
/// It keeps its buffers between runs, so a steady state allocates nothing. Run it inside
/// `JobSystem::install` to choose the pool its parallel loops use.
///
/// ```
/// use ecs::hierarchy::{HierarchyReport, Propagator};
/// use ecs::{scene, WorldTransform};
/// let mut world = hecs::World::new();
/// let forest = scene::spawn_forest(&mut world, 4, &[2], scene::unit_cube_mesh());
/// let (mut propagator, mut commands, mut report) = (Propagator::default(), hecs::CommandBuffer::new(), HierarchyReport::default());
/// runtime::JobSystem::new(1).install(|| propagator.run(&world, &mut commands, &mut report));
/// commands.run_on(&mut world);
/// assert_eq!((report.nodes, report.levels), (12, 2));
/// ```
#[derive(Default)]
pub struct Propagator {
    /// Node index of each entity slot (indexed by `Entity::id`); stale entries are detected by
    /// comparing `entities[node]`.
    node_of_slot: Vec<u32>,
    /// Per node, in gather order.
    entities: Vec<Entity>,
    locals: Vec<Transform>,
    parent_entity: Vec<Option<Entity>>,
    parent_node: Vec<u32>,
    depth: Vec<u32>,
    position_of_node: Vec<u32>,
    /// Nodes that still lack a `WorldTransform` component.
    missing_world: Vec<u32>,
    /// Per position in depth order.
    order: Vec<u32>,
    parent_position: Vec<u32>,
    worlds: Vec<Mat4>,
    /// First position of each level, plus the end.
    level_start: Vec<u32>,
    walk: Vec<u32>,
    warned_parent_without_transform: bool,
}

impl Propagator {
    /// One frame of propagation over `world`: writes every `WorldTransform` of an entity
    /// with a `Transform`; structural fixes (a missing `WorldTransform`, an orphan's `Parent`)
    /// are recorded in `commands` for the caller to apply.
    pub fn run(&mut self, world: &World, commands: &mut hecs::CommandBuffer, report: &mut HierarchyReport) {
        self.gather(world);
        self.link_parents(world, commands, report);
        let levels = self.compute_depths(report);
        self.sort_by_depth(levels);
        self.compute_worlds();
        self.write_back(world);
        for &node in &self.missing_world {
            let position = self.position_of_node[node as usize] as usize;
            commands.insert_one(self.entities[node as usize], WorldTransform(self.worlds[position]));
        }
        report.nodes = self.entities.len();
        report.levels = levels;
    }

    fn gather(&mut self, world: &World) {
        runtime::profile_zone!("hierarchy gather");
        self.entities.clear();
        self.locals.clear();
        self.parent_entity.clear();
        self.missing_world.clear();
        let mut query = world.query::<(Entity, &Transform, Option<&Parent>, Option<&WorldTransform>)>();
        for (entity, local, parent, world_transform) in query.iter() {
            let node = self.entities.len() as u32;
            let slot = entity.id() as usize;
            if slot >= self.node_of_slot.len() {
                self.node_of_slot.resize((slot + 1).next_power_of_two(), NONE);
            }
            self.node_of_slot[slot] = node;
            self.entities.push(entity);
            self.locals.push(*local);
            self.parent_entity.push(parent.map(|parent| parent.0));
            if world_transform.is_none() {
                self.missing_world.push(node);
            }
        }
    }

    /// The node of `entity` this frame, if it is one.
    fn node_of(&self, entity: Entity) -> Option<u32> {
        let node = *self.node_of_slot.get(entity.id() as usize)?;
        (node != NONE && self.entities.get(node as usize) == Some(&entity)).then_some(node)
    }

    fn link_parents(&mut self, world: &World, commands: &mut hecs::CommandBuffer, report: &mut HierarchyReport) {
        self.parent_node.clear();
        let mut parent_without_transform = false;
        for index in 0..self.entities.len() {
            let parent_node = match self.parent_entity[index] {
                None => NONE,
                Some(parent) => match self.node_of(parent) {
                    Some(node) => node,
                    None if !world.contains(parent) => {
                        let child = self.entities[index];
                        log::warn!("entity {child:?} lost its parent {parent:?} (despawned); it is a root from now on");
                        commands.remove_one::<Parent>(child);
                        report.orphans_detached += 1;
                        NONE
                    }
                    None => {
                        parent_without_transform = true;
                        NONE
                    }
                },
            };
            self.parent_node.push(parent_node);
        }
        if parent_without_transform && !self.warned_parent_without_transform {
            log::warn!("some parents have no Transform; their children are placed as roots");
        }
        self.warned_parent_without_transform = parent_without_transform;
    }

    /// Depth of every node; returns the number of levels.
    fn compute_depths(&mut self, report: &mut HierarchyReport) -> usize {
        runtime::profile_zone!("hierarchy depths");
        let count = self.entities.len();
        self.depth.clear();
        self.depth.resize(count, DEPTH_UNKNOWN);
        let mut deepest = 0;
        for start in 0..count {
            let mut current = start as u32;
            while self.depth[current as usize] == DEPTH_UNKNOWN {
                self.depth[current as usize] = DEPTH_ON_STACK;
                self.walk.push(current);
                let parent = self.parent_node[current as usize];
                if parent == NONE {
                    break;
                }
                current = parent;
            }
            // Unwind from the highest ancestor reached down to `start`.
            while let Some(node) = self.walk.pop() {
                let parent = self.parent_node[node as usize];
                let depth = if parent == NONE {
                    0
                } else if self.depth[parent as usize] == DEPTH_ON_STACK {
                    // The parent is still being walked: the links loop. Cut the loop here.
                    log::error!(
                        "Parent links of {:?} form a loop; it is placed as a root (use hierarchy::set_parent, which refuses loops)",
                        self.entities[node as usize]
                    );
                    self.parent_node[node as usize] = NONE;
                    report.cycles_cut += 1;
                    0
                } else {
                    self.depth[parent as usize] + 1
                };
                self.depth[node as usize] = depth;
                deepest = deepest.max(depth);
            }
        }
        if count == 0 {
            0
        } else {
            deepest as usize + 1
        }
    }

    /// Stable counting sort of the nodes by depth.
    fn sort_by_depth(&mut self, levels: usize) {
        let count = self.entities.len();
        self.level_start.clear();
        self.level_start.resize(levels + 1, 0);
        for &depth in &self.depth {
            self.level_start[depth as usize + 1] += 1;
        }
        for level in 0..levels {
            self.level_start[level + 1] += self.level_start[level];
        }
        self.order.clear();
        self.order.resize(count, NONE);
        self.position_of_node.clear();
        self.position_of_node.resize(count, NONE);
        // `walk` doubles as the fill cursor of each level.
        self.walk.clear();
        self.walk.extend_from_slice(&self.level_start[..levels]);
        for node in 0..count {
            let level = self.depth[node] as usize;
            let position = self.walk[level];
            self.walk[level] += 1;
            self.order[position as usize] = node as u32;
            self.position_of_node[node] = position;
        }
        self.walk.clear();
        self.parent_position.clear();
        self.parent_position.extend(self.order.iter().map(|&node| {
            let parent = self.parent_node[node as usize];
            if parent == NONE {
                NONE
            } else {
                self.position_of_node[parent as usize]
            }
        }));
    }

    fn compute_worlds(&mut self) {
        runtime::profile_zone!("hierarchy matrices");
        let count = self.order.len();
        self.worlds.clear();
        self.worlds.resize(count, Mat4::IDENTITY);
        let order = &self.order;
        let locals = &self.locals;
        let parent_position = &self.parent_position;
        for level in self.level_start.windows(2) {
            let (start, end) = (level[0] as usize, level[1] as usize);
            let (done, rest) = self.worlds.split_at_mut(start);
            let done: &[Mat4] = done;
            runtime::jobs::parallel_for_chunks(&mut rest[..end - start], GRAIN, |first, chunk| {
                for (offset, world) in chunk.iter_mut().enumerate() {
                    let position = start + first + offset;
                    let local = locals[order[position] as usize].to_matrix();
                    let parent = parent_position[position];
                    *world = if parent == NONE {
                        local
                    } else {
                        debug_assert!((parent as usize) < start, "a parent must sit in an earlier level");
                        done[parent as usize] * local
                    };
                }
            });
        }
    }

    fn write_back(&self, world: &World) {
        runtime::profile_zone!("hierarchy write back");
        for archetype in world.archetypes() {
            if archetype.is_empty() || !archetype.has::<Transform>() {
                continue;
            }
            let Some(mut column) = archetype.get::<&mut WorldTransform>() else {
                continue;
            };
            let ids = archetype.ids();
            runtime::jobs::parallel_for_chunks(&mut column, GRAIN, |first, chunk| {
                for (offset, world_transform) in chunk.iter_mut().enumerate() {
                    let node = self.node_of_slot[ids[first + offset] as usize];
                    world_transform.0 = self.worlds[self.position_of_node[node as usize] as usize];
                }
            });
        }
    }
}

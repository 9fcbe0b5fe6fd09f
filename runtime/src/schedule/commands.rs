//! The engine's command buffer: structural changes recorded by a system and applied when its
//! stage ends, with the entity of a spawn known at once and misuse counted.

use std::any::TypeId;
use std::collections::HashSet;

use hecs::{Bundle, CommandBuffer, Component, DynamicBundle, Entity, World};

use super::access::{Access, Domain};
use crate::changes::Changes;

/// What the access of [`System::spawns`](crate::System::spawns) is declared on: the world's
/// entity ids, which a spawn reserves at once.
pub(crate) struct EntityIds;

/// One recorded operation that changes or needs an entity's life, kept to check it on apply.
#[derive(Clone, Copy, Debug)]
enum LifeOp {
    Spawn(Entity),
    Insert(Entity),
    Despawn(Entity),
}

/// A system's recorded commands: hecs's buffer holds the type-erased bundles, `ops` the
/// operations whose target must be alive when they apply.
#[derive(Default)]
pub(crate) struct CommandQueue {
    buffer: CommandBuffer,
    ops: Vec<LifeOp>,
    /// Scratch sets of the apply-time check; kept for their capacity.
    spawned: HashSet<Entity>,
    despawned: HashSet<Entity>,
    /// Entities whose structure the buffer changes, for the change log.
    touched: Vec<Entity>,
    /// A queued closure or the raw buffer was used: anything may change.
    opaque: bool,
    /// Entities that closures queued with [`Commands::queue_reporting`] said they changed.
    reported: std::sync::Arc<parking_lot::Mutex<Vec<Entity>>>,
    /// A closure was queued with [`Commands::queue_reporting`] since the last apply.
    reporting: bool,
}

/// Structural misuse found while applying commands, summed over the app's life.
///
/// Both are ignored by the world (nothing happens), so a game bug shows here rather than as a
/// crash; in debug builds the first of each kind is also logged as a warning naming the system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommandReport {
    /// Despawns of an entity that was already gone when the command applied (a double despawn).
    pub dead_despawns: u64,
    /// Inserts into an entity that was gone when the command applied (the bundle is dropped).
    pub dead_inserts: u64,
}

impl CommandQueue {
    /// Applies the recorded commands to `world`, counting dead targets into `report`.
    pub(crate) fn apply(&mut self, world: &mut World, report: &mut CommandReport, changes: &Changes, system: &str) {
        // Most systems queue nothing: then no lock is taken.
        if self.opaque {
            changes.record_everything();
        } else if !self.touched.is_empty() {
            changes.record_structure(self.touched.drain(..));
        }
        self.opaque = false;
        self.touched.clear();
        if !self.ops.is_empty() {
            self.check(world, report, system);
        }
        self.buffer.run_on(world);
        if std::mem::take(&mut self.reporting) {
            changes.record_structure(self.reported.lock().drain(..));
        }
    }

    /// Replays the life operations in order against `world` as it is before they apply.
    fn check(&mut self, world: &World, report: &mut CommandReport, system: &str) {
        self.spawned.clear();
        self.despawned.clear();
        let (mut dead_inserts, mut dead_despawns) = (0u64, 0u64);
        for op in self.ops.drain(..) {
            let alive = |entity: Entity| {
                !self.despawned.contains(&entity) && (self.spawned.contains(&entity) || world.contains(entity))
            };
            match op {
                LifeOp::Spawn(entity) => {
                    self.spawned.insert(entity);
                }
                LifeOp::Insert(entity) => dead_inserts += u64::from(!alive(entity)),
                LifeOp::Despawn(entity) => {
                    if alive(entity) {
                        self.despawned.insert(entity);
                    } else {
                        dead_despawns += 1;
                    }
                }
            }
        }
        if cfg!(debug_assertions) {
            if dead_despawns > 0 && report.dead_despawns == 0 {
                log::warn!(
                    "system '{system}' despawned an entity that was already gone (reported once; see CommandReport)"
                );
            }
            if dead_inserts > 0 && report.dead_inserts == 0 {
                log::warn!(
                    "system '{system}' inserted into an entity that was gone (reported once; see CommandReport)"
                );
            }
        }
        report.dead_despawns += dead_despawns;
        report.dead_inserts += dead_inserts;
    }
}

/// Structural changes of a running system — spawn, insert, remove, despawn — applied when its
/// stage ends, system by system in run order, each system's in the order recorded.
///
/// A spawn reserves its [`Entity`] at once, so later commands (and hierarchy edits through
/// `ecs::HierarchyCommands`) can refer to it. Because reserving takes the next entity id, a
/// system that spawns declares it with [`System::spawns`](crate::System::spawns): spawning
/// systems never share a batch, so ids never depend on the thread count.
///
/// Despawning an entity twice, or inserting into one that is gone, does nothing, and is
/// counted in [`CommandReport`] ([`App::command_report`](crate::App::command_report)). The
/// check follows `spawn`, `insert` and `despawn` commands; an entity removed by a
/// [`queue`](Commands::queue)d closure (such as a recursive despawn) is not tracked by it.
///
/// ```
/// use runtime::{App, Stage, System};
/// struct Health(u32);
/// struct Shield;
/// let mut app = App::new();
/// app.add_system(
///     Stage::Input,
///     System::new("spawner", |ctx| {
///         if ctx.time.frame_index == 0 {
///             let entity = ctx.commands.spawn((Health(3),));
///             ctx.commands.insert_one(entity, Shield);
///         }
///     })
///     .spawns(),
/// );
/// app.run_frame();
/// assert_eq!(app.world().query::<(&Health, &Shield)>().iter().count(), 1);
/// ```
pub struct Commands<'a> {
    pub(crate) world: &'a World,
    pub(crate) queue: &'a mut CommandQueue,
    pub(crate) access: &'a Access,
    pub(crate) name: &'a str,
}

impl Commands<'_> {
    /// Spawns an entity with `components` when the stage ends; returns its id now.
    ///
    /// # Panics
    /// If the system did not declare [`System::spawns`](crate::System::spawns), or if the
    /// bundle holds a tuple inside the tuple (`(a, (b, c))`): hecs would store `(b, c)` as one
    /// component of tuple type, which no query for `b` or `c` finds. Flatten the tuple, or wrap
    /// a component that really is a tuple in a struct of its own.
    pub fn spawn<B: DynamicBundle>(&mut self, components: B) -> Entity {
        refuse_nested_tuples::<B>(self.name);
        assert!(
            self.access.allows_write(Domain::Resource, TypeId::of::<EntityIds>()),
            "system '{}' spawns through commands without declaring it (System::spawns): spawning systems must not \
             share a batch, or entity ids would depend on the thread count",
            self.name
        );
        let entity = self.world.reserve_entity();
        self.queue.buffer.insert(entity, components);
        self.queue.ops.push(LifeOp::Spawn(entity));
        self.queue.touched.push(entity);
        entity
    }

    /// Adds `components` to `entity` (replacing components of the same types).
    ///
    /// # Panics
    /// If the bundle holds a tuple inside the tuple (see [`Commands::spawn`]).
    pub fn insert<B: DynamicBundle>(&mut self, entity: Entity, components: B) {
        refuse_nested_tuples::<B>(self.name);
        self.queue.buffer.insert(entity, components);
        self.queue.ops.push(LifeOp::Insert(entity));
        self.queue.touched.push(entity);
    }

    /// Adds one component to `entity`.
    pub fn insert_one(&mut self, entity: Entity, component: impl Component) {
        self.insert(entity, (component,));
    }

    /// Removes the components of bundle `T` from `entity`, if it has them.
    pub fn remove<T: Bundle + 'static>(&mut self, entity: Entity) {
        self.queue.buffer.remove::<T>(entity);
        self.queue.touched.push(entity);
    }

    /// Removes component `T` from `entity`, if it has it.
    pub fn remove_one<T: Component>(&mut self, entity: Entity) {
        self.queue.buffer.remove_one::<T>(entity);
        self.queue.touched.push(entity);
    }

    /// Despawns `entity`. Its children (`ecs::Parent`) become roots where they stand; use
    /// `ecs::HierarchyCommands::despawn_recursive` to despawn them too.
    pub fn despawn(&mut self, entity: Entity) {
        self.queue.buffer.despawn(entity);
        self.queue.ops.push(LifeOp::Despawn(entity));
        self.queue.touched.push(entity);
    }

    /// Runs `action` on the world, in order with the other commands.
    pub fn queue(&mut self, action: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.queue.buffer.queue(action);
        self.queue.opaque = true;
    }

    /// Runs `action` on the world, in order with the other commands, where `action` lists
    /// every entity it changes (components added, removed or written, entities spawned or
    /// despawned) in the `Vec` it is given. The change log then records those entities,
    /// where a plain [`queue`](Commands::queue) must record that anything may have changed
    /// (which sends every cache over objects to a full pass the next frame).
    ///
    /// ```
    /// use runtime::{App, Stage, System};
    /// use runtime::changes::{ChangeCursor, ChangedSince};
    /// struct Health(u32);
    /// let mut app = App::new();
    /// let entity = app.world_mut().spawn((Health(3),));
    /// app.add_system(
    ///     Stage::Input,
    ///     System::new("heal", move |ctx| {
    ///         ctx.commands.queue_reporting(move |world, changed| {
    ///             world.get::<&mut Health>(entity).expect("alive").0 += 1;
    ///             changed.push(entity);
    ///         })
    ///     }),
    /// );
    /// let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    /// app.run_frame();
    /// app.changes().collect(&mut cursor, &[], &mut changed);
    /// app.run_frame();
    /// app.changes().collect(&mut cursor, &[], &mut changed);
    /// assert!(!changed.everything);
    /// assert_eq!(changed.entities, vec![entity]);
    /// ```
    pub fn queue_reporting(&mut self, action: impl FnOnce(&mut World, &mut Vec<Entity>) + Send + Sync + 'static) {
        self.queue.reporting = true;
        let sink = self.queue.reported.clone();
        self.queue.buffer.queue(move |world: &mut World| {
            let mut changed = Vec::new();
            action(world, &mut changed);
            sink.lock().extend(changed);
        });
    }

    /// The underlying hecs buffer, for engine code that records many plain inserts and
    /// removals on live entities. What is recorded here is applied in order but not checked.
    pub fn hecs_buffer(&mut self) -> &mut CommandBuffer {
        self.queue.opaque = true;
        &mut self.queue.buffer
    }
}

/// Panics, naming the system and the bundle, when bundle type `B` is a tuple holding a tuple
/// (see [`Commands::spawn`]).
fn refuse_nested_tuples<B>(system: &str) {
    let name = std::any::type_name::<B>();
    if nests_a_tuple(name) {
        panic!(
            "system '{system}' spawns or inserts the bundle {name}, which holds a tuple inside the tuple: hecs \
             would store the inner tuple as one component that no query finds; flatten it, or wrap a tuple \
             component in a struct"
        );
    }
}

/// Whether the type name `name` is a tuple with an element that is itself a tuple (generic
/// arguments, arrays and slices, `<...>` and `[...]`, are not elements).
fn nests_a_tuple(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('(').and_then(|rest| rest.strip_suffix(')')) else { return false };
    let mut depth = 0usize;
    let mut at_element_start = true;
    for character in inner.chars() {
        match character {
            '<' | '[' => depth += 1,
            '>' | ']' => depth = depth.saturating_sub(1),
            '(' if depth == 0 && at_element_start => return true,
            ',' if depth == 0 => {
                at_element_start = true;
                continue;
            }
            _ => {}
        }
        if !character.is_whitespace() {
            at_element_start = false;
        }
    }
    false
}

#[cfg(test)]
mod nested_tests {
    use super::nests_a_tuple;

    #[test]
    fn a_tuple_inside_a_tuple_is_found_and_generics_are_not_tuples() {
        assert!(nests_a_tuple("(a::A, (b::B, c::C))"));
        assert!(nests_a_tuple("((a::A, b::B),)"));
        assert!(!nests_a_tuple("(a::A, b::B)"));
        assert!(!nests_a_tuple("(core::option::Option<(a::A, b::B)>, [(u8, u8); 2])"), "inside generics or arrays");
        assert!(!nests_a_tuple("a::Struct"));
        assert!(!nests_a_tuple("(a::A,)"));
    }
}

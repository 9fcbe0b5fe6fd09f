//! Change tracking: which components may have been written, where, since a reader last looked.
//!
//! hecs keeps no change ticks, so without help a cache over a million static objects must
//! compare every input every frame. [`Changes`] records what the scheduler lends out, the way
//! chunk change versions work in other ECS engines: **a write is recorded when mutable access
//! is handed out, whether or not the system then writes.** So a reader that skips everything
//! not recorded can never miss a change; the price of a coarse declaration is extra work, not
//! a wrong answer.
//!
//! What is recorded, at the tick it happens:
//! - [`SystemContext::query`](crate::SystemContext::query) and `par_for_each` with `&mut T`:
//!   every archetype the query type matches, for `T` (filters narrow it: a
//!   `With<&mut Transform, &Car>` query marks only the archetypes holding `Car`);
//! - [`SystemContext::get_mut`](crate::SystemContext::get_mut) and `query_one` with `&mut T`:
//!   that entity, for `T`;
//! - commands (`spawn`, `insert`, `remove`, `despawn`): that entity, as a structural change;
//!   a queued closure or the raw hecs buffer: anything may have changed;
//! - [`App::world_mut`](crate::App::world_mut), [`App::replace_world`](crate::App::replace_world)
//!   and an exclusive-world system that does not report its own changes: anything may have
//!   changed;
//! - engine code that writes archetype columns or single entities through a system's
//!   [`Columns`](crate::Columns) view records its writes itself
//!   ([`Columns::record_archetype_write`](crate::Columns::record_archetype_write),
//!   [`Columns::record_entity_writes`](crate::Columns::record_entity_writes)).
//!
//! A reader keeps a [`ChangeCursor`] and asks [`Changes::collect`] for what changed since its
//! last look, for the component types it depends on. Entity entries are kept for one frame
//! after the frame they were made in; a reader that skipped more frames than that is told
//! that everything changed. The tick moves on at every stage, and a reader is given every
//! change made at or after the tick of its last look, so a change made in the same stage as
//! the reader, before or after it, is never lost (at worst seen twice).
//!
//! ```
//! use runtime::{App, Stage, System};
//! use runtime::changes::{ChangeCursor, ChangedSince};
//! use std::any::TypeId;
//! struct Position(f32);
//! struct Car;
//! let mut app = App::new();
//! app.world_mut().spawn((Position(0.0),));
//! let car = app.world_mut().spawn((Position(0.0), Car));
//! app.add_system(
//!     Stage::Input,
//!     System::new("drive", |ctx| {
//!         for position in ctx.query::<hecs::With<&mut Position, &Car>>().iter() {
//!             position.0 += 1.0;
//!         }
//!     })
//!     .query::<hecs::With<&mut Position, &Car>>(),
//! );
//! let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
//! app.run_frame();
//! app.changes().collect(&mut cursor, &[TypeId::of::<Position>()], &mut changed);
//! assert!(changed.everything, "the first look sees everything (and world_mut was lent)");
//! app.run_frame();
//! app.changes().collect(&mut cursor, &[TypeId::of::<Position>()], &mut changed);
//! assert!(!changed.everything);
//! let car_archetype = app.world().archetypes().position(|archetype| archetype.has::<Car>()).unwrap();
//! assert_eq!(changed.archetypes, vec![car_archetype as u32], "only the cars' archetype");
//! ```

use std::any::TypeId;
use std::sync::atomic::{AtomicU64, Ordering};

use hecs::{Entity, Query, World};
use parking_lot::Mutex;

use crate::schedule::QueryAccess;

/// The type index of a structural entry (spawned, despawned, gained or lost components).
const STRUCTURE: u32 = u32::MAX;

/// Entity entries beyond this many are dropped and replaced by "anything may have changed":
/// memory stays bounded whatever a game does, and readers fall back to a full pass.
const MAX_ENTITY_ENTRIES: usize = 1 << 22;

/// One entity-level entry.
#[derive(Clone, Copy, Debug)]
struct EntityEntry {
    tick: u64,
    entity: Entity,
    /// Index into [`Log::types`], or [`STRUCTURE`].
    kind: u32,
}

/// The log behind the lock.
#[derive(Debug, Default)]
struct Log {
    /// The last tick at which anything may have changed.
    everything: u64,
    /// Component types seen so far; entries refer to them by index.
    types: Vec<TypeId>,
    /// Per type of `types`: the last tick each archetype (by position in `World::archetypes`)
    /// was lent mutably, 0 for never.
    archetype_ticks: Vec<Vec<u64>>,
    /// Entity-level entries, in tick order.
    entities: Vec<EntityEntry>,
    /// Entries made before this tick were dropped: a reader whose last look is older sees
    /// everything.
    retained_from: u64,
    /// The tick the current frame started at.
    frame_start: u64,
}

impl Log {
    fn type_index(&mut self, type_id: TypeId) -> usize {
        match self.types.iter().position(|&known| known == type_id) {
            Some(index) => index,
            None => {
                self.types.push(type_id);
                self.archetype_ticks.push(Vec::new());
                self.types.len() - 1
            }
        }
    }

    fn push_entity(&mut self, entry: EntityEntry) {
        if self.entities.len() >= MAX_ENTITY_ENTRIES {
            self.entities.clear();
            self.everything = entry.tick;
            return;
        }
        self.entities.push(entry);
    }
}

/// The change log of an [`App`](crate::App) (see the module docs). Shared by every system of a
/// frame; recording takes a short lock.
#[derive(Debug)]
pub struct Changes {
    /// The current tick; starts at 1 so that 0 means "never".
    tick: AtomicU64,
    log: Mutex<Log>,
}

impl Default for Changes {
    fn default() -> Self {
        Changes { tick: AtomicU64::new(1), log: Mutex::new(Log::default()) }
    }
}

/// Where a reader of [`Changes`] stands: the tick of its last look (none before the first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChangeCursor {
    seen: Option<u64>,
}

impl ChangeCursor {
    /// A cursor that sees everything on its next look (after a reader lost its state).
    pub fn reset(&mut self) {
        self.seen = None;
    }
}

/// What changed since a reader's last look, filled by [`Changes::collect`] into a buffer the
/// reader keeps (so steady frames allocate nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangedSince {
    /// Anything may have changed: the reader must check everything it depends on.
    pub everything: bool,
    /// Archetypes (positions in `World::archetypes`) where one of the asked types was lent
    /// mutably, ascending, without repeats.
    pub archetypes: Vec<u32>,
    /// Entities where one of the asked types was written, or that changed structurally
    /// (spawned, despawned, gained or lost a component); may repeat, may be dead by now.
    pub entities: Vec<Entity>,
}

impl ChangedSince {
    /// Whether nothing the reader asked about changed.
    pub fn is_empty(&self) -> bool {
        !self.everything && self.archetypes.is_empty() && self.entities.is_empty()
    }
}

impl Changes {
    /// The current tick.
    pub fn tick(&self) -> u64 {
        self.tick.load(Ordering::Relaxed)
    }

    /// Moves the tick on (the scheduler calls it at every stage).
    pub(crate) fn advance(&self) {
        self.tick.fetch_add(1, Ordering::Relaxed);
    }

    /// Starts a frame: drops entity entries older than the previous frame's start.
    pub(crate) fn begin_frame(&self) {
        self.advance();
        let tick = self.tick();
        let mut log = self.log.lock();
        let keep_from = log.frame_start;
        log.entities.retain(|entry| entry.tick >= keep_from);
        log.retained_from = keep_from;
        log.frame_start = tick;
    }

    /// Records that anything may have changed (the world was lent mutably or replaced).
    pub fn record_everything(&self) {
        let tick = self.tick();
        let mut log = self.log.lock();
        log.everything = tick;
        log.entities.clear();
    }

    /// Records that component `type_id` of every entity of archetype `archetype` (its position
    /// in `World::archetypes`) may have been written.
    pub fn record_archetype_write(&self, type_id: TypeId, archetype: usize) {
        let tick = self.tick();
        let mut log = self.log.lock();
        let index = log.type_index(type_id);
        let ticks = &mut log.archetype_ticks[index];
        if ticks.len() <= archetype {
            ticks.resize(archetype + 1, 0);
        }
        ticks[archetype] = tick;
    }

    /// Records that component `type_id` of `entity` may have been written.
    pub fn record_entity_write(&self, type_id: TypeId, entity: Entity) {
        let tick = self.tick();
        let mut log = self.log.lock();
        let kind = log.type_index(type_id) as u32;
        log.push_entity(EntityEntry { tick, entity, kind });
    }

    /// Records that component `type_id` of each of `entities` may have been written: one lock
    /// for the lot (for a writer of thousands of entities a frame).
    pub fn record_entity_writes<'e>(&self, type_id: TypeId, entities: impl IntoIterator<Item = &'e Entity>) {
        let tick = self.tick();
        let mut log = self.log.lock();
        let kind = log.type_index(type_id) as u32;
        for &entity in entities {
            log.push_entity(EntityEntry { tick, entity, kind });
        }
    }

    /// Records structural changes of `entities` (spawned, despawned, gained or lost a
    /// component).
    pub fn record_structure(&self, entities: impl IntoIterator<Item = Entity>) {
        let tick = self.tick();
        let mut log = self.log.lock();
        for entity in entities {
            log.push_entity(EntityEntry { tick, entity, kind: STRUCTURE });
        }
    }

    /// Records the mutable borrows of query `Q` over `world`: each archetype `Q` matches, for
    /// each component `Q` borrows mutably.
    pub(crate) fn record_query<Q: Query + QueryAccess>(&self, world: &World) {
        let mut mutable = [None; 8];
        let mut count = 0;
        let mut overflow = false;
        Q::borrows(&mut |type_id, _, is_mutable| {
            if is_mutable {
                if count < mutable.len() {
                    mutable[count] = Some(type_id);
                    count += 1;
                } else {
                    overflow = true;
                }
            }
        });
        if count == 0 {
            return;
        }
        if overflow {
            self.record_everything();
            return;
        }
        let tick = self.tick();
        let mut log = self.log.lock();
        for type_id in mutable.iter().flatten() {
            let index = log.type_index(*type_id);
            let ticks = &mut log.archetype_ticks[index];
            for (position, archetype) in world.archetypes().enumerate() {
                if archetype.is_empty() || !archetype.satisfies::<Q>() {
                    continue;
                }
                if ticks.len() <= position {
                    ticks.resize(position + 1, 0);
                }
                ticks[position] = tick;
            }
        }
    }

    /// Records the mutable borrows of query `Q` on one entity.
    pub(crate) fn record_query_one<Q: QueryAccess>(&self, entity: Entity) {
        Q::borrows(&mut |type_id, _, is_mutable| {
            if is_mutable {
                self.record_entity_write(type_id, entity);
            }
        });
    }

    /// Fills `out` with what changed, for the component types `types`, since `cursor`'s last
    /// look, and moves the cursor to now. Structural entries are always included.
    pub fn collect(&self, cursor: &mut ChangeCursor, types: &[TypeId], out: &mut ChangedSince) {
        out.everything = false;
        out.archetypes.clear();
        out.entities.clear();
        let log = self.log.lock();
        let now = self.tick();
        let since = cursor.seen;
        cursor.seen = Some(now);
        let Some(since) = since else {
            out.everything = true;
            return;
        };
        if log.everything >= since || since < log.retained_from {
            out.everything = true;
            return;
        }
        let indices = || types.iter().filter_map(|type_id| log.types.iter().position(|known| known == type_id));
        for index in indices() {
            for (position, &tick) in log.archetype_ticks[index].iter().enumerate() {
                if tick >= since {
                    out.archetypes.push(position as u32);
                }
            }
        }
        out.archetypes.sort_unstable();
        out.archetypes.dedup();
        // The asked types as a bit mask of their indices, looked up once rather than per entry
        // (a writer may log tens of thousands of entities a frame); indices past 64 are rare
        // and take the slow path.
        let (mut asked, mut beyond_mask) = (0u64, false);
        for index in indices() {
            match 1u64.checked_shl(index as u32) {
                Some(bit) => asked |= bit,
                None => beyond_mask = true,
            }
        }
        let is_asked = |kind: u32| {
            1u64.checked_shl(kind).is_some_and(|bit| asked & bit != 0)
                || (beyond_mask && indices().any(|index| index as u32 == kind))
        };
        let start = log.entities.partition_point(|entry| entry.tick < since);
        for entry in &log.entities[start..] {
            if entry.kind == STRUCTURE || is_asked(entry.kind) {
                out.entities.push(entry.entity);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct A;
    struct B;

    #[test]
    fn a_cursor_sees_each_change_at_least_once_and_only_for_its_types() {
        let changes = Changes::default();
        let (mut cursor, mut out) = (ChangeCursor::default(), ChangedSince::default());
        changes.collect(&mut cursor, &[TypeId::of::<A>()], &mut out);
        assert!(out.everything, "the first look sees everything");
        changes.advance();
        changes.collect(&mut cursor, &[TypeId::of::<A>()], &mut out);
        assert!(out.is_empty(), "nothing since");
        let mut world = World::new();
        let entity = world.spawn((1u8,));
        changes.record_entity_write(TypeId::of::<B>(), entity);
        changes.record_archetype_write(TypeId::of::<A>(), 3);
        changes.collect(&mut cursor, &[TypeId::of::<A>()], &mut out);
        assert_eq!(out.archetypes, vec![3]);
        assert!(out.entities.is_empty(), "a write of another type is not asked for");
        // Same tick: the changes are seen again (a writer later in the same stage is not lost).
        changes.collect(&mut cursor, &[TypeId::of::<A>(), TypeId::of::<B>()], &mut out);
        assert_eq!(out.entities, vec![entity]);
        changes.advance();
        changes.collect(&mut cursor, &[TypeId::of::<A>()], &mut out);
        assert_eq!(out.archetypes, vec![3], "made at the tick of the last look: seen once more");
        changes.advance();
        changes.collect(&mut cursor, &[TypeId::of::<A>()], &mut out);
        assert!(out.is_empty());
        changes.record_structure([entity]);
        changes.collect(&mut cursor, &[TypeId::of::<A>()], &mut out);
        assert_eq!(out.entities, vec![entity], "structural changes reach every reader");
    }

    #[test]
    fn entity_entries_are_matched_to_the_asked_types_past_the_first_64() {
        macro_rules! type_ids {
            ($($length:literal)*) => { [$(TypeId::of::<[u8; $length]>()),*] };
        }
        let types = type_ids!(
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34
            35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67
            68 69
        );
        let changes = Changes::default();
        let mut world = World::new();
        let entities: Vec<Entity> = types.iter().map(|_| world.spawn((0u8,))).collect();
        let (mut cursor, mut out) = (ChangeCursor::default(), ChangedSince::default());
        changes.collect(&mut cursor, &[], &mut out);
        for (&type_id, &entity) in types.iter().zip(&entities) {
            changes.record_entity_writes(type_id, &[entity]);
        }
        changes.collect(&mut cursor, &[types[3], types[69]], &mut out);
        assert_eq!(out.entities, vec![entities[3], entities[69]], "one type below the mask's 64, one past it");
    }

    #[test]
    fn a_reader_that_skipped_frames_or_a_lent_world_sees_everything() {
        let changes = Changes::default();
        let (mut cursor, mut out) = (ChangeCursor::default(), ChangedSince::default());
        changes.collect(&mut cursor, &[], &mut out);
        changes.begin_frame();
        changes.collect(&mut cursor, &[], &mut out);
        assert!(out.is_empty());
        changes.begin_frame();
        changes.begin_frame();
        changes.collect(&mut cursor, &[], &mut out);
        assert!(out.everything, "entries of the frames in between were dropped");
        changes.collect(&mut cursor, &[], &mut out);
        assert!(out.is_empty());
        changes.record_everything();
        changes.collect(&mut cursor, &[], &mut out);
        assert!(out.everything);
    }

    #[test]
    fn the_scheduler_records_what_it_lends_and_commands_and_exclusive_systems() {
        use crate::{App, Stage, System};
        struct Marked;
        let mut app = App::new();
        let first = app.world_mut().spawn((A, 0u32));
        let second = app.world_mut().spawn((B, 0u32));
        app.add_system(
            Stage::Input,
            System::new("touch", move |ctx| {
                *ctx.get_mut::<u32>(first).expect("alive") += 1;
                ctx.commands.insert_one(second, Marked);
            })
            .writes::<u32>(),
        );
        let types = [TypeId::of::<u32>()];
        let (mut cursor, mut out) = (ChangeCursor::default(), ChangedSince::default());
        app.run_frame();
        app.changes().collect(&mut cursor, &types, &mut out);
        app.run_frame();
        app.changes().collect(&mut cursor, &types, &mut out);
        assert!(!out.everything && out.archetypes.is_empty());
        assert!(out.entities.contains(&first), "get_mut records the entity");
        assert!(out.entities.contains(&second), "a command records a structural change");
        app.add_system(Stage::Render, System::new_exclusive("tidy", |_| {}).reports_own_changes());
        app.run_frame();
        app.changes().collect(&mut cursor, &types, &mut out);
        assert!(!out.everything, "an exclusive system that reports its own changes");
        app.add_system(Stage::Render, System::new_exclusive("anything", |_| {}));
        app.run_frame();
        app.changes().collect(&mut cursor, &types, &mut out);
        assert!(out.everything, "an exclusive system may change anything");
        let _ = app.world_mut();
        app.changes().collect(&mut cursor, &types, &mut out);
        assert!(out.everything, "so may whoever borrows the world mutably");
    }
}

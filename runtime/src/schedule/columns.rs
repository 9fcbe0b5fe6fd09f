//! The declared-columns view: the world as engine code that walks archetype columns sees
//! it, limited to what its system declared.
//!
//! Hot loops read archetype columns rather than query items, and a few read single
//! entities without touching the world's borrow counters. [`Columns`] offers exactly those
//! accesses and compares each with the system's declared access, panicking with the system
//! and the component named:
//! - per archetype ([`ArchetypeColumns::column`], [`ArchetypeColumns::column_mut`]) and per
//!   query ([`Columns::query`]): in every build; a column borrow is checked against the
//!   declared entries' archetype filters too, a few comparisons beside the borrow itself;
//! - per entity ([`Columns::get`], [`Columns::get_mut`], [`Columns::get_unborrowed`],
//!   [`EntityColumns::get`]): in debug builds, by type, as these sit in per-object loops.
//!
//! Writes need a declared write. Lending a column or an entity's component mutably is not
//! logged by itself (a pass that stores only the values that changed logs only those):
//! record what was written with [`Columns::record_archetype_write`] or
//! [`Columns::record_entity_writes`], which the change log's readers rely on.

use std::any::{type_name, TypeId};
use std::marker::PhantomData;

use hecs::{
    Archetype, ArchetypeColumn, ArchetypeColumnMut, Component, ComponentError, Entity, EntityRef, NoSuchEntity, Query,
    QueryBorrow, QueryOne, Ref, RefMut, World,
};

use super::access::Access;
use super::query::QueryAccess;
use crate::changes::Changes;

/// What [`Columns::whole`] allows: everything.
static WHOLE_WORLD: Access =
    Access { reads: Vec::new(), writes: Vec::new(), exclusive: true, reads_all_components: false };

/// The world's archetype columns, entity look-ups and queries, limited to the components the
/// system declared: a system parameter (see [`System::with_params`](crate::System::with_params))
/// whose type `Q`, a hecs query type, declares them (`Option<&T>` for a component not every
/// archetype has, `Option<&mut T>` for one it writes). Each access is compared with the
/// system's declaration, and a miss panics naming the system and the component: a column
/// borrow ([`ArchetypeColumns::column`], [`column_mut`](ArchetypeColumns::column_mut)) or a
/// query in every build, against the declared entries' archetype filters too; a per-entity
/// access ([`get`](Self::get), [`get_mut`](Self::get_mut), [`get_unborrowed`](Self::get_unborrowed))
/// in debug builds, by type. A write must be declared and is logged by the code that makes it
/// ([`record_archetype_write`](Self::record_archetype_write),
/// [`record_entity_writes`](Self::record_entity_writes)).
///
/// ```
/// use runtime::{App, Columns, Stage, System};
/// struct Mass(f32);
/// struct Heat(f32);
/// let mut app = App::new();
/// app.world_mut().spawn((Mass(2.0), Heat(0.0)));
/// app.world_mut().spawn((Mass(3.0),));
/// app.add_system(
///     Stage::Transform,
///     System::with_params::<Columns<(&Mass, Option<&mut Heat>)>>("warm", |_, world| {
///         for (position, archetype) in world.archetypes().enumerate() {
///             // The write of Heat is declared where Mass is (`Option` in a tuple with `&Mass`).
///             if !archetype.has::<Mass>() {
///                 continue;
///             }
///             let (Some(masses), Some(mut heats)) = (archetype.column::<Mass>(), archetype.column_mut::<Heat>()) else {
///                 continue;
///             };
///             for (heat, mass) in heats.iter_mut().zip(masses.iter()) {
///                 heat.0 += mass.0;
///             }
///             world.record_archetype_write::<Heat>(position);
///         }
///     }),
/// );
/// app.run_frame();
/// assert_eq!(app.world().query::<&Heat>().iter().next().unwrap().0, 2.0);
/// ```
pub struct Columns<'a, Q> {
    world: &'a World,
    changes: Option<&'a Changes>,
    access: &'a Access,
    system: &'a str,
    declared: PhantomData<fn() -> Q>,
}

impl<Q> Clone for Columns<'_, Q> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q> Copy for Columns<'_, Q> {}

impl<Q> std::fmt::Debug for Columns<'_, Q> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Columns").field("system", &self.system).field("declared", &type_name::<Q>()).finish()
    }
}

impl<'a, Q> Columns<'a, Q> {
    pub(crate) fn new(world: &'a World, changes: Option<&'a Changes>, access: &'a Access, system: &'a str) -> Self {
        Columns { world, changes, access, system, declared: PhantomData }
    }

    /// The whole of `world`, every component allowed and no change log: for code that holds
    /// a `&World` outside the scheduler (a test, a tool, a benchmark) and calls engine code
    /// written against a system's columns.
    ///
    /// ```
    /// use runtime::Columns;
    /// let mut world = hecs::World::new();
    /// world.spawn((5u32,));
    /// let columns = Columns::<&u32>::whole(&world);
    /// let total: u32 = columns.archetypes().filter_map(|archetype| archetype.column::<u32>()).map(|column| column.iter().sum::<u32>()).sum();
    /// assert_eq!(total, 5);
    /// ```
    pub fn whole(world: &'a World) -> Self {
        Columns::new(world, None, &WHOLE_WORLD, "(whole world)")
    }

    /// The name of the system whose declarations this view checks.
    pub fn system_name(&self) -> &'a str {
        self.system
    }

    /// The archetypes, in `World::archetypes` order (a position here is a position there).
    #[inline]
    pub fn archetypes(&self) -> impl ExactSizeIterator<Item = ArchetypeColumns<'a>> + 'a {
        let (access, system) = (self.access, self.system);
        self.world.archetypes().map(move |archetype| ArchetypeColumns { archetype, access, system })
    }

    /// The archetype at `position` of [`archetypes`](Self::archetypes), if any (found in
    /// constant time).
    #[inline]
    pub fn archetype(&self, position: usize) -> Option<ArchetypeColumns<'a>> {
        let archetype = self.world.archetypes().nth(position)?;
        Some(ArchetypeColumns { archetype, access: self.access, system: self.system })
    }

    /// Whether `entity` exists.
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.world.contains(entity)
    }

    /// Whether `entity` exists and matches query `F` (what it has, not what it holds: no
    /// component is read).
    pub fn satisfies<F: Query>(&self, entity: Entity) -> bool {
        self.world.satisfies::<F>(entity)
    }

    /// The entity of id `id`, as `World::find_entity_from_id`.
    ///
    /// # Safety
    /// `id` must be the id of a live entity (an id read from an archetype of this view is).
    #[inline]
    pub unsafe fn find_entity_from_id(&self, id: u32) -> Entity {
        // SAFETY: the caller's duty (above) is hecs's.
        unsafe { self.world.find_entity_from_id(id) }
    }

    /// `entity`'s components, or an error when it does not exist.
    ///
    /// ```
    /// use runtime::Columns;
    /// let mut world = hecs::World::new();
    /// let entity = world.spawn((5u32, 'x'));
    /// let columns = Columns::<&u32>::whole(&world);
    /// let components = columns.entity(entity).unwrap();
    /// assert!(components.has::<char>());
    /// assert_eq!(*components.get::<u32>().unwrap(), 5);
    /// ```
    pub fn entity(&self, entity: Entity) -> Result<EntityColumns<'a>, NoSuchEntity> {
        let components = self.world.entity(entity)?;
        Ok(EntityColumns { components, access: self.access, system: self.system })
    }

    /// Shared borrow of `entity`'s component `T` (checked in debug builds).
    pub fn get<T: Component>(&self, entity: Entity) -> Result<Ref<'a, T>, ComponentError> {
        check_entity::<T>(self.access, self.system, false);
        self.world.get::<&T>(entity)
    }

    /// Exclusive borrow of `entity`'s component `T`, which must be a declared write
    /// (checked in debug builds). Not logged: record the write
    /// ([`record_entity_writes`](Self::record_entity_writes)).
    pub fn get_mut<T: Component>(&self, entity: Entity) -> Result<RefMut<'a, T>, ComponentError> {
        check_entity::<T>(self.access, self.system, true);
        self.world.get::<&mut T>(entity)
    }

    /// `entity`'s component `T` without the world's borrow counter, which every job reading
    /// the column would otherwise take and release: an atomic shared by all of them, whose
    /// cache line bounces between threads. Checked in debug builds.
    ///
    /// ```
    /// use runtime::Columns;
    /// let mut world = hecs::World::new();
    /// let entity = world.spawn((5u32,));
    /// let columns = Columns::<&u32>::whole(&world);
    /// // SAFETY: nothing borrows the world mutably while `value` lives.
    /// let value = unsafe { columns.get_unborrowed::<u32>(entity) };
    /// assert_eq!(value, Some(&5));
    /// ```
    ///
    /// # Safety
    /// No one may write `T` while the reference lives. In a system that declared a read of
    /// `T` and no write, the scheduler runs no writer of `T` beside it and the checked calls
    /// lend `T` to no one mutably.
    #[inline]
    pub unsafe fn get_unborrowed<T: Component>(&self, entity: Entity) -> Option<&'a T> {
        check_entity::<T>(self.access, self.system, false);
        // SAFETY: the caller's duty (above).
        unsafe { self.world.get_unchecked::<&T>(entity) }.ok()
    }

    /// A query over the world, checked against the declared access (in every build, as
    /// [`SystemContext::query`](crate::SystemContext::query)), and logged like it: a query
    /// that borrows `&mut T` records a write of `T` to every archetype it matches.
    ///
    /// # Panics
    /// When `R` borrows a component the system did not declare, or declared only with
    /// archetype filters `R` does not carry.
    pub fn query<R: Query + QueryAccess>(&self) -> QueryBorrow<'a, R> {
        self.check_query::<R>();
        if let Some(changes) = self.changes {
            changes.record_query::<R>(self.world);
        }
        self.world.query::<R>()
    }

    /// Query `R` on one entity (`get()` on it fails when the entity is gone or does not
    /// match), checked and logged like [`query`](Self::query).
    pub fn query_one<R: Query + QueryAccess>(&self, entity: Entity) -> QueryOne<'a, R> {
        self.check_query::<R>();
        if let Some(changes) = self.changes {
            changes.record_query_one::<R>(entity);
        }
        self.world.query_one::<R>(entity)
    }

    fn check_query<R: QueryAccess>(&self) {
        if let Err(undeclared) = self.access.check_query::<R>() {
            let verb = if undeclared.mutable { "writes" } else { "reads" };
            panic!(
                "system '{}' {verb} component {} in a query its declared access does not cover{}",
                self.system,
                undeclared.name,
                if undeclared.filtered { " (declared with filters the query lacks)" } else { "" }
            );
        }
    }

    /// Records in the change log that component `T` of the archetype at `position` was
    /// written (a declared write, checked in every build). Nothing is recorded on a view of
    /// the [`whole`](Self::whole) world, which has no log.
    pub fn record_archetype_write<T: Component>(&self, position: usize) {
        check_write::<T>(self.access, self.system);
        if let Some(changes) = self.changes {
            changes.record_archetype_write(TypeId::of::<T>(), position);
        }
    }

    /// Records in the change log that component `T` of each of `entities` was written (a
    /// declared write, checked in every build).
    pub fn record_entity_writes<'e, T: Component>(&self, entities: impl IntoIterator<Item = &'e Entity>) {
        check_write::<T>(self.access, self.system);
        if let Some(changes) = self.changes {
            changes.record_entity_writes(TypeId::of::<T>(), entities);
        }
    }
}

/// One archetype of a [`Columns`] view: its rows and the columns the system declared.
///
/// ```
/// use runtime::Columns;
/// let mut world = hecs::World::new();
/// world.spawn((1u32, 2.0f32));
/// let columns = Columns::<(&u32, &mut f32)>::whole(&world);
/// let archetype = columns.archetypes().find(|archetype| !archetype.is_empty()).unwrap();
/// assert_eq!((archetype.len(), archetype.has::<f32>()), (1, true));
/// archetype.column_mut::<f32>().unwrap()[0] += archetype.column::<u32>().unwrap()[0] as f32;
/// assert_eq!(*world.get::<&f32>(world.iter().next().unwrap().entity()).unwrap(), 3.0);
/// ```
#[derive(Clone, Copy)]
pub struct ArchetypeColumns<'a> {
    archetype: &'a Archetype,
    access: &'a Access,
    system: &'a str,
}

impl<'a> ArchetypeColumns<'a> {
    /// Its number of rows (entities).
    #[inline]
    pub fn len(&self) -> u32 {
        self.archetype.len()
    }

    /// Whether it has no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.archetype.is_empty()
    }

    /// Whether it has component `T` (a fact about the archetype: nothing is read).
    #[inline]
    pub fn has<T: Component>(&self) -> bool {
        self.archetype.has::<T>()
    }

    /// The ids of its entities, row by row.
    #[inline]
    pub fn ids(&self) -> &'a [u32] {
        self.archetype.ids()
    }

    /// Its column of `T`, or `None` when it has none.
    ///
    /// # Panics
    /// When no declared read (or write) of `T` covers this archetype, naming the system and
    /// `T`, whether or not the archetype has the column.
    #[inline]
    pub fn column<T: Component>(&self) -> Option<ArchetypeColumn<'a, T>> {
        if !self.access.allows_column(TypeId::of::<T>(), false, self.archetype) {
            undeclared_column(self.system, "reads", type_name::<T>());
        }
        self.archetype.get::<&T>()
    }

    /// Its column of `T`, mutably, or `None` when it has none. Not logged: record the write
    /// ([`Columns::record_archetype_write`]).
    ///
    /// # Panics
    /// When no declared write of `T` covers this archetype, naming the system and `T`.
    #[inline]
    pub fn column_mut<T: Component>(&self) -> Option<ArchetypeColumnMut<'a, T>> {
        if !self.access.allows_column(TypeId::of::<T>(), true, self.archetype) {
            undeclared_column(self.system, "writes", type_name::<T>());
        }
        self.archetype.get::<&mut T>()
    }
}

/// One entity of a [`Columns`] view (see [`Columns::entity`]): what it has, and its declared
/// components.
///
/// ```
/// use runtime::{App, Columns, Stage, System};
/// struct Health(u32);
/// struct Boss;
/// let mut app = App::new();
/// let boss = app.world_mut().spawn((Health(90), Boss));
/// app.add_system(
///     Stage::Input,
///     System::with_params::<Columns<&Health>>("inspect", move |_, world| {
///         let entity = world.entity(boss).expect("alive");
///         assert!(entity.has::<Boss>(), "what it has is not a read: Boss needs no declaration");
///         assert_eq!(entity.get::<Health>().map(|health| health.0), Some(90));
///     }),
/// );
/// app.run_frame();
/// ```
#[derive(Clone, Copy)]
pub struct EntityColumns<'a> {
    components: EntityRef<'a>,
    access: &'a Access,
    system: &'a str,
}

impl<'a> EntityColumns<'a> {
    /// The entity.
    #[inline]
    pub fn entity(&self) -> Entity {
        self.components.entity()
    }

    /// Whether it has component `T` (nothing is read).
    #[inline]
    pub fn has<T: Component>(&self) -> bool {
        self.components.has::<T>()
    }

    /// Shared borrow of its component `T`, if it has one (checked in debug builds).
    pub fn get<T: Component>(&self) -> Option<Ref<'a, T>> {
        check_entity::<T>(self.access, self.system, false);
        self.components.get::<&T>()
    }
}

#[cold]
#[inline(never)]
fn undeclared_column(system: &str, verb: &str, component: &str) -> ! {
    panic!(
        "system '{system}' {verb} component {component} in an archetype its declared access does not cover \
         (name it in the system's Columns<...> or other parameters)"
    )
}

/// Per-entity access: checked in debug builds (it sits in per-object loops).
#[inline]
fn check_entity<T: Component>(access: &Access, system: &str, mutable: bool) {
    if cfg!(debug_assertions) && !access.names_component(TypeId::of::<T>(), mutable) {
        let verb = if mutable { "writes" } else { "reads" };
        panic!("system '{system}' {verb} component {} of an entity without declaring it", type_name::<T>());
    }
}

fn check_write<T: Component>(access: &Access, system: &str) {
    if !access.names_component(TypeId::of::<T>(), true) {
        panic!("system '{system}' records a write of component {} it did not declare", type_name::<T>());
    }
}

#[cfg(test)]
#[path = "columns_tests.rs"]
mod tests;

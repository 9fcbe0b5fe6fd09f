//! A system: a named function of the frame with declared reads and writes.

use std::any::TypeId;
use std::borrow::Cow;

use hecs::{Component, ComponentError, Entity, Query, QueryBorrow, QueryOne, World};

use super::access::{Access, AccessEntry, Domain};
use super::commands::{CommandQueue, Commands, EntityIds};
use super::order::Anchor;
use super::query::QueryAccess;
use crate::app::FrameTime;
use crate::changes::Changes;
use crate::frame::FrameContext;
use crate::profiling::ZoneSite;
use crate::resources::{Res, ResMut, Resources};

/// What a system runs: on a shared world, in parallel with its batch, or alone with the
/// world exclusively borrowed.
pub(crate) enum SystemBody {
    Shared(Box<dyn FnMut(&mut SystemContext<'_>) + Send>),
    Exclusive(Box<dyn FnMut(&mut ExclusiveContext<'_>) + Send>),
}

/// A named piece of frame logic plus the data it declares to read and write.
///
/// Systems of one stage whose declarations do not conflict run at the same time. Declarations
/// are the contract, checked by [`SystemContext`] in every build: a query, resource or frame
/// access the system did not declare panics naming the system and the type, whether or not
/// another system is running beside it.
///
/// Build a system from its parameters ([`System::with_params`]): each declares what it
/// fetches, so a declaration is made once and cannot drift from the code. The builder below
/// (`reads`, `writes`, `query`, `reads_resource`, …) declares by hand, for small systems that
/// reach everything through the context.
///
/// ```
/// use runtime::{App, Stage, System};
/// struct Position(f32);
/// struct Velocity(f32);
///
/// let mut app = App::new();
/// app.world_mut().spawn((Position(0.0), Velocity(2.0)));
/// app.add_system(
///     Stage::Transform,
///     System::new("integrate", |ctx| {
///         let dt = ctx.time.delta_seconds;
///         for (position, velocity) in ctx.query::<(&mut Position, &Velocity)>().iter() {
///             position.0 += velocity.0 * dt;
///         }
///     })
///     .writes::<Position>()
///     .reads::<Velocity>(),
/// );
/// app.set_fixed_delta(Some(0.5));
/// app.run_frames(2);
/// let mut query = app.world().query::<&Position>();
/// assert_eq!(query.iter().next().unwrap().0, 2.0);
/// ```
pub struct System {
    pub(crate) name: Cow<'static, str>,
    pub(crate) access: Access,
    pub(crate) run: SystemBody,
    /// Structural changes recorded this stage; applied at its end in declaration order.
    pub(crate) commands: CommandQueue,
    /// Registers the frame slots this system declared, when it is added to an app.
    pub(crate) frame_slots: Vec<fn(&mut FrameContext)>,
    /// Names of systems of the same stage this one runs before.
    pub(crate) before: Vec<Cow<'static, str>>,
    /// Names of systems of the same stage this one runs after.
    pub(crate) after: Vec<Cow<'static, str>>,
    /// Anchored at the start or end of its stage, or neither.
    pub(crate) anchor: Anchor,
    /// Wall time of the system's last run (zero before the first).
    pub(crate) last_seconds: f64,
    /// Whether the system has run: only then does `last_seconds` predict its next run.
    pub(crate) has_run: bool,
    /// An exclusive-world system that records its own changes (see
    /// [`System::reports_own_changes`]).
    pub(crate) reports_changes: bool,
    /// Where the system was defined and its body's type: its Tracy zone's source.
    pub(crate) site: ZoneSite,
    /// Tracy builds: the name of the jobs the system spawns without a label of their own.
    #[cfg(feature = "profile")]
    pub(crate) job_label: &'static str,
}

impl System {
    /// A system named `name` that runs `body` once per frame in its stage. Its Tracy zone
    /// leads to this call and names `body`'s function.
    #[track_caller]
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        body: impl FnMut(&mut SystemContext<'_>) + Send + 'static,
    ) -> System {
        let site = ZoneSite::caller(ZoneSite::function_of(&body));
        System::from_body(name.into(), Access::default(), SystemBody::Shared(Box::new(body)), site)
    }

    /// A system of every kind, from its parts.
    pub(crate) fn from_body(name: Cow<'static, str>, access: Access, run: SystemBody, site: ZoneSite) -> System {
        #[cfg(feature = "profile")]
        let job_label: &'static str = Box::leak(format!("{name} job").into_boxed_str());
        System {
            name,
            access,
            run,
            commands: CommandQueue::default(),
            frame_slots: Vec::new(),
            last_seconds: 0.0,
            has_run: false,
            before: Vec::new(),
            after: Vec::new(),
            anchor: Anchor::Free,
            reports_changes: false,
            site,
            #[cfg(feature = "profile")]
            job_label,
        }
    }

    /// A system that borrows the world exclusively (`&mut World`) and runs alone in its batch,
    /// after every earlier system of its stage. Its structural changes take effect at once.
    ///
    /// Use it for batched structural work that a command buffer would make slow, such as
    /// inserting a tag on thousands of entities with direct `World::insert_one` calls. Like
    /// [`System::exclusive`], it conflicts with every other system.
    ///
    /// ```
    /// use runtime::{App, Stage, System};
    /// struct Marked;
    /// let mut app = App::new();
    /// let entity = app.world_mut().spawn((1u32,));
    /// app.add_system(
    ///     Stage::Visibility,
    ///     System::new_exclusive("mark", move |ctx| {
    ///         ctx.world.insert_one(entity, Marked).expect("alive");
    ///     }),
    /// );
    /// app.run_frame();
    /// assert!(app.world().get::<&Marked>(entity).is_ok());
    /// ```
    #[track_caller]
    pub fn new_exclusive(
        name: impl Into<Cow<'static, str>>,
        body: impl FnMut(&mut ExclusiveContext<'_>) + Send + 'static,
    ) -> System {
        let site = ZoneSite::caller(ZoneSite::function_of(&body));
        let access = Access { exclusive: true, ..Access::default() };
        System::from_body(name.into(), access, SystemBody::Exclusive(Box::new(body)), site)
    }

    /// Promises that this exclusive-world system records every change it makes in the change
    /// log itself ([`ExclusiveContext::changes`]), so the scheduler need not record that
    /// everything changed after it runs (see [`crate::changes`]). Without it, every
    /// exclusive-world system makes caches over static objects check everything next frame.
    pub fn reports_own_changes(mut self) -> Self {
        self.reports_changes = true;
        self
    }

    /// Whether the system borrows the world exclusively (see [`System::new_exclusive`]).
    pub fn is_exclusive_world(&self) -> bool {
        matches!(self.run, SystemBody::Exclusive(_))
    }

    /// Declares that the system reads component `T`.
    pub fn reads<T: 'static>(mut self) -> Self {
        self.access.reads.push(AccessEntry::of::<T>(Domain::Component));
        self
    }

    /// Declares that the system writes component `T`.
    pub fn writes<T: 'static>(mut self) -> Self {
        self.access.writes.push(AccessEntry::of::<T>(Domain::Component));
        self
    }

    /// Declares the component access of the hecs query type `Q`: a read of each `&T`, a write
    /// of each `&mut T`, limited to the archetypes the query's `With`/`Without` filters allow.
    ///
    /// Two systems writing the same component conflict unless their filters rule each other
    /// out (one requires a component the other excludes); then they share a batch. A query
    /// made through [`SystemContext::query`] must carry the filters its access was declared
    /// with.
    ///
    /// ```
    /// use hecs::{With, Without};
    /// use runtime::{App, Stage, System};
    /// struct Velocity(f32);
    /// struct Scout;
    /// struct Enemy;
    /// type Scouts = Without<With<&'static mut Velocity, &'static Scout>, &'static Enemy>;
    /// type Enemies = With<&'static mut Velocity, &'static Enemy>;
    /// let mut app = App::new();
    /// app.add_system(
    ///     Stage::Transform,
    ///     System::new("scouts", |ctx| ctx.query::<Scouts>().iter().for_each(|velocity| velocity.0 *= 2.0))
    ///         .query::<Scouts>(),
    /// );
    /// app.add_system(
    ///     Stage::Transform,
    ///     System::new("enemies", |ctx| ctx.query::<Enemies>().iter().for_each(|velocity| velocity.0 = 0.0))
    ///         .query::<Enemies>(),
    /// );
    /// assert_eq!(app.schedule().batches(Stage::Transform).unwrap(), vec![vec!["scouts", "enemies"]]);
    /// app.run_frame();
    /// ```
    pub fn query<Q: QueryAccess>(mut self) -> Self {
        let mut with = Vec::new();
        Q::required(&mut |type_id| with.push(type_id));
        let mut without = Vec::new();
        Q::excluded(&mut |type_id| without.push(type_id));
        let access = &mut self.access;
        Q::borrows(&mut |type_id, _, mutable| {
            let entry = AccessEntry {
                domain: Domain::Component,
                type_id,
                with: with.iter().copied().filter(|&required| required != type_id).collect(),
                without: without.clone(),
            };
            if mutable { &mut access.writes } else { &mut access.reads }.push(entry);
        });
        self
    }

    /// Declares that the system reads resource `T`.
    pub fn reads_resource<T: 'static>(mut self) -> Self {
        self.access.reads.push(AccessEntry::of::<T>(Domain::Resource));
        self
    }

    /// Declares that the system writes resource `T`.
    pub fn writes_resource<T: 'static>(mut self) -> Self {
        self.access.writes.push(AccessEntry::of::<T>(Domain::Resource));
        self
    }

    /// Declares that the system reads the frame value `T` (see [`FrameContext`]).
    pub fn reads_frame<T: Send + Sync + 'static>(mut self) -> Self {
        self.access.reads.push(AccessEntry::of::<T>(Domain::Frame));
        self.frame_slots.push(register_slot::<T>);
        self
    }

    /// Declares that the system publishes the frame value `T` (see [`FrameContext`]).
    pub fn writes_frame<T: Send + Sync + 'static>(mut self) -> Self {
        self.access.writes.push(AccessEntry::of::<T>(Domain::Frame));
        self.frame_slots.push(register_slot::<T>);
        self
    }

    /// Runs the system before every system of its stage named `name`, in an earlier batch,
    /// whatever the order they were added in. The named system must be in the stage already
    /// when this one is added (see [`ScheduleError`](crate::ScheduleError)); the engine's
    /// systems export their names (`ecs::HIERARCHY_SYSTEM`, `culling::VISIBILITY_SYSTEM`, …).
    pub fn before(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.before.push(name.into());
        self
    }

    /// Runs the system after every system of its stage named `name`, in a later batch.
    /// See [`System::before`].
    pub fn after(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.after.push(name.into());
        self
    }

    /// Declares that the system spawns entities through [`Commands::spawn`], which reserves
    /// entity ids at once. Spawning systems never share a batch, so the ids they get do not
    /// depend on the thread count.
    pub fn spawns(mut self) -> Self {
        self.access.writes.push(AccessEntry::of::<EntityIds>(Domain::Resource));
        self
    }

    /// Runs the system before every system of its stage that is not itself anchored at the
    /// start, whenever they were added, except those ordered against it explicitly with
    /// [`before`](System::before)/[`after`](System::after) (explicit order wins).
    pub fn at_stage_start(mut self) -> Self {
        self.anchor = Anchor::Start;
        self
    }

    /// Runs the system after every system of its stage that is not itself anchored at the end,
    /// whenever they were added, except those ordered against it explicitly (a system that says
    /// `after(this)` still runs after it).
    pub fn at_stage_end(mut self) -> Self {
        self.anchor = Anchor::End;
        self
    }

    /// Makes the system conflict with every other: it runs alone in its batch.
    pub fn exclusive(mut self) -> Self {
        self.access.exclusive = true;
        self
    }

    /// The system's name, as shown in profiles and messages.
    pub fn name(&self) -> &str {
        &self.name
    }
}

fn register_slot<T: Send + Sync + 'static>(frame: &mut FrameContext) {
    frame.register::<T>();
}

impl std::fmt::Debug for System {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("System").field("name", &self.name).field("access", &self.access).finish()
    }
}

/// What a running system sees: the world, resources, the frame's values, its command buffer
/// and the frame's time.
///
/// Components are reached through checked calls — [`query`](Self::query),
/// [`query_one`](Self::query_one), [`get`](Self::get), [`get_mut`](Self::get_mut) — which
/// compare what they borrow with what the system declared and panic, naming the system and the
/// component, on an undeclared access (in every build), before hecs could report a borrow
/// clash or two systems could race. Engine code that walks archetype columns receives a
/// [`Columns`](crate::Columns) view instead, checked the same way (see
/// [`System::with_params`]).
pub struct SystemContext<'a> {
    pub(crate) world: &'a World,
    pub(crate) changes: &'a Changes,
    /// Structural changes (spawn, despawn, insert, remove), applied at the end of the stage.
    pub commands: Commands<'a>,
    /// Frame counter and delta time.
    pub time: FrameTime,
    /// Incremented each time the world is replaced (cached entity ids may be stale).
    pub world_epoch: u64,
    pub(crate) resources: &'a Resources,
    pub(crate) frame: &'a FrameContext,
    pub(crate) access: &'a Access,
    pub(crate) name: &'a str,
}

impl<'a> SystemContext<'a> {
    /// The running system's name.
    pub fn system_name(&self) -> &str {
        self.name
    }

    /// Panics unless the system declared what query `Q` borrows.
    fn check_query<Q: QueryAccess>(&self) {
        if let Err(undeclared) = self.access.check_query::<Q>() {
            let (verb, declare) = if undeclared.mutable { ("writes", "writes") } else { ("reads", "reads") };
            if undeclared.filtered {
                panic!(
                    "system '{}' {verb} component {} in a query without the With/Without filters its access was declared with",
                    self.name, undeclared.name
                );
            }
            panic!(
                "system '{}' {verb} component {} without declaring it ({declare}::<{}>() or query::<Q>())",
                self.name, undeclared.name, undeclared.name
            );
        }
    }

    /// A query over the world, checked against the declared access (see the type's docs).
    ///
    /// # Panics
    /// If the query borrows a component the system did not declare, or declared only with
    /// archetype filters the query does not carry (put them in the query type:
    /// `With<&mut Velocity, &Scout>`).
    pub fn query<Q: Query + QueryAccess>(&self) -> QueryBorrow<'a, Q> {
        self.check_query::<Q>();
        self.changes.record_query::<Q>(self.world);
        self.world.query::<Q>()
    }

    /// A query of one entity (`get()` on it fails when the entity is gone or does not match),
    /// checked like [`query`](Self::query).
    pub fn query_one<Q: Query + QueryAccess>(&self, entity: Entity) -> QueryOne<'a, Q> {
        self.check_query::<Q>();
        self.changes.record_query_one::<Q>(entity);
        self.world.query_one::<Q>(entity)
    }

    /// Shared borrow of `entity`'s component `T`, checked like [`query`](Self::query).
    pub fn get<T: Component>(&self, entity: Entity) -> Result<hecs::Ref<'a, T>, ComponentError> {
        self.check_query::<&T>();
        self.world.get::<&T>(entity)
    }

    /// Exclusive borrow of `entity`'s component `T`, checked like [`query`](Self::query).
    pub fn get_mut<T: Component>(&self, entity: Entity) -> Result<hecs::RefMut<'a, T>, ComponentError> {
        self.check_query::<&mut T>();
        self.changes.record_entity_write(TypeId::of::<T>(), entity);
        self.world.get::<&mut T>(entity)
    }

    /// The change log (see [`crate::changes`]): what was lent mutably since a reader last
    /// looked.
    pub fn changes(&self) -> &'a Changes {
        self.changes
    }

    /// Whether `entity` exists.
    pub fn contains(&self, entity: Entity) -> bool {
        self.world.contains(entity)
    }

    /// Shared borrow of resource `T`.
    ///
    /// # Panics
    /// If `T` is absent or its read was not declared.
    pub fn resource<T: 'static>(&self) -> Res<'a, T> {
        self.try_resource::<T>().unwrap_or_else(|| {
            panic!("system '{}' needs resource {} but it was never inserted", self.name, std::any::type_name::<T>())
        })
    }

    /// Shared borrow of resource `T`, or `None` when absent.
    pub fn try_resource<T: 'static>(&self) -> Option<Res<'a, T>> {
        assert!(
            self.access.allows_read(Domain::Resource, TypeId::of::<T>()),
            "system '{}' reads resource {} without declaring it (reads_resource)",
            self.name,
            std::any::type_name::<T>()
        );
        self.resources.get::<T>()
    }

    /// Exclusive borrow of resource `T`.
    ///
    /// # Panics
    /// If `T` is absent or its write was not declared.
    pub fn resource_mut<T: 'static>(&self) -> ResMut<'a, T> {
        self.try_resource_mut::<T>().unwrap_or_else(|| {
            panic!("system '{}' needs resource {} but it was never inserted", self.name, std::any::type_name::<T>())
        })
    }

    /// Exclusive borrow of resource `T`, or `None` when absent.
    ///
    /// # Panics
    /// If its write was not declared.
    pub fn try_resource_mut<T: 'static>(&self) -> Option<ResMut<'a, T>> {
        assert!(
            self.access.allows_write(Domain::Resource, TypeId::of::<T>()),
            "system '{}' writes resource {} without declaring it (writes_resource)",
            self.name,
            std::any::type_name::<T>()
        );
        self.resources.get_mut::<T>()
    }

    /// The frame value `T` published this frame, if any.
    pub fn frame_value<T: Send + Sync + 'static>(&self) -> Option<Res<'a, T>> {
        assert!(
            self.access.allows_read(Domain::Frame, TypeId::of::<T>()),
            "system '{}' reads frame value {} without declaring it (reads_frame)",
            self.name,
            std::any::type_name::<T>()
        );
        self.frame.get::<T>()
    }

    /// Publishes the frame value `T` for the rest of this frame.
    pub fn publish<T: Send + Sync + 'static>(&self, value: T) {
        assert!(
            self.access.allows_write(Domain::Frame, TypeId::of::<T>()),
            "system '{}' publishes frame value {} without declaring it (writes_frame)",
            self.name,
            std::any::type_name::<T>()
        );
        self.frame.publish(value);
    }
}

/// What an exclusive system sees: the world borrowed mutably, plus everything a shared system
/// sees. It runs alone, so every resource and frame value may be borrowed.
pub struct ExclusiveContext<'a> {
    /// The ECS world, exclusively.
    pub world: &'a mut World,
    /// Frame counter and delta time.
    pub time: FrameTime,
    /// Incremented each time the world is replaced.
    pub world_epoch: u64,
    pub(crate) resources: &'a Resources,
    pub(crate) frame: &'a FrameContext,
    pub(crate) changes: &'a Changes,
    pub(crate) name: &'a str,
}

impl<'a> ExclusiveContext<'a> {
    /// The running system's name.
    pub fn system_name(&self) -> &str {
        self.name
    }

    /// The change log (see [`crate::changes`]), where a system built with
    /// [`System::reports_own_changes`] records what it changed.
    pub fn changes(&self) -> &'a Changes {
        self.changes
    }

    /// Shared borrow of resource `T`, or `None` when absent.
    pub fn try_resource<T: 'static>(&self) -> Option<Res<'a, T>> {
        self.resources.get::<T>()
    }

    /// Exclusive borrow of resource `T`, or `None` when absent.
    pub fn try_resource_mut<T: 'static>(&self) -> Option<ResMut<'a, T>> {
        self.resources.get_mut::<T>()
    }

    /// The frame value `T` published this frame, if any.
    pub fn frame_value<T: Send + Sync + 'static>(&self) -> Option<Res<'a, T>> {
        self.frame.get::<T>()
    }
}

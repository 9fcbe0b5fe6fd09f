//! Systems built from their query types: the access is declared once, by the types the body
//! receives, so the body cannot ask for what the system did not declare and the declaration
//! cannot fall out of step with the code (see [`System::with_query`]).

use std::marker::PhantomData;

use hecs::{Entity, Query, QueryBorrow, QueryOne, World};

use super::parallel::for_each_batched;
use super::query::QueryAccess;
use super::system::{System, SystemContext};
use crate::changes::Changes;
use crate::profiling::ZoneSite;

/// A query the system declared when it was built ([`System::with_query`],
/// [`System::with_queries`]), handed to its body each frame. Its calls record what they lend
/// mutably in the change log, as [`SystemContext::query`] does.
pub struct SystemQuery<'a, Q> {
    world: &'a World,
    changes: &'a Changes,
    query: PhantomData<fn() -> Q>,
}

impl<'a, Q: Query + QueryAccess> SystemQuery<'a, Q> {
    pub(crate) fn new(world: &'a World, changes: &'a Changes) -> Self {
        SystemQuery { world, changes, query: PhantomData }
    }

    /// Every entity the query matches (see `hecs::QueryBorrow`).
    pub fn borrow(&self) -> QueryBorrow<'a, Q> {
        self.changes.record_query::<Q>(self.world);
        self.world.query::<Q>()
    }

    /// The query on one entity (`get()` fails when it is gone or does not match).
    pub fn one(&self, entity: Entity) -> QueryOne<'a, Q> {
        self.changes.record_query_one::<Q>(entity);
        self.world.query_one::<Q>(entity)
    }

    /// Runs `body` on every match, in parallel on the job system in batches of about
    /// `grain` (the result must not depend on the order; see [`SystemContext::par_for_each`]).
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn par_for_each(&self, grain: usize, body: impl for<'q> Fn(Q::Item<'q>) + Sync + Send)
    where
        for<'q> Q::Item<'q>: Send,
    {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        for_each_batched(self.borrow(), grain, body);
    }
}

/// A tuple of query types a system is built from ([`System::with_queries`]): each declares
/// its access and gives the body a [`SystemQuery`].
pub trait QuerySet: 'static {
    /// The handles the body receives, one per query, in order.
    type Handles<'a>;

    /// Declares every query's access on `system`.
    fn declare(system: System) -> System;

    /// The handles over `world` for one run.
    fn handles<'a>(world: &'a World, changes: &'a Changes) -> Self::Handles<'a>;
}

macro_rules! query_set {
    ($($query:ident),+) => {
        impl<$($query: Query + QueryAccess + 'static),+> QuerySet for ($($query,)+) {
            type Handles<'a> = ($(SystemQuery<'a, $query>,)+);

            fn declare(system: System) -> System {
                $(let system = system.query::<$query>();)+
                system
            }

            fn handles<'a>(world: &'a World, changes: &'a Changes) -> Self::Handles<'a> {
                ($(SystemQuery::<$query>::new(world, changes),)+)
            }
        }
    };
}

query_set!(A);
query_set!(A, B);
query_set!(A, B, C);
query_set!(A, B, C, D);
query_set!(A, B, C, D, E);
query_set!(A, B, C, D, E, F);

impl System {
    /// A system built from its query type `Q`: the access of `Q` is declared (as with
    /// [`System::query`]) and `body` gets the query each frame, beside the context for
    /// resources, commands and time. The declaration and the code are one, so they cannot
    /// disagree; the builder form ([`System::new`] with `reads`/`writes`/`query`) stays for
    /// exclusive or unusual systems.
    ///
    /// ```
    /// use hecs::With;
    /// use runtime::{App, Stage, System};
    /// struct Position(f32);
    /// struct Velocity(f32);
    /// struct Car;
    ///
    /// let mut app = App::new();
    /// app.world_mut().spawn((Position(0.0), Velocity(2.0), Car));
    /// app.world_mut().spawn((Position(0.0), Velocity(2.0)));
    /// app.add_system(
    ///     Stage::Transform,
    ///     System::with_query::<With<(&mut Position, &Velocity), &Car>>("drive", |ctx, cars| {
    ///         let dt = ctx.time.delta_seconds;
    ///         for (position, velocity) in cars.borrow().iter() {
    ///             position.0 += velocity.0 * dt;
    ///         }
    ///     }),
    /// );
    /// app.set_fixed_delta(Some(0.5));
    /// app.run_frames(2);
    /// let moved: Vec<f32> = app.world().query::<&Position>().iter().map(|position| position.0).collect();
    /// assert!(moved.contains(&2.0) && moved.contains(&0.0), "only the car moved: {moved:?}");
    /// ```
    #[track_caller]
    pub fn with_query<Q: Query + QueryAccess + 'static>(
        name: impl Into<std::borrow::Cow<'static, str>>,
        mut body: impl FnMut(&mut SystemContext<'_>, SystemQuery<'_, Q>) + Send + 'static,
    ) -> System {
        let site = ZoneSite::caller(ZoneSite::function_of(&body));
        let mut system = System::new(name, move |ctx| {
            let query = SystemQuery::new(ctx.world, ctx.changes);
            body(ctx, query);
        });
        system.site = site;
        system.query::<Q>()
    }

    /// A system built from several query types (a tuple of up to six): each one's access is
    /// declared and `body` gets their handles, in order (see [`System::with_query`]).
    ///
    /// ```
    /// use hecs::Entity;
    /// use runtime::{App, Stage, System};
    /// struct Health(u32);
    /// struct Poison;
    /// let mut app = App::new();
    /// let victim = app.world_mut().spawn((Health(10), Poison));
    /// app.world_mut().spawn((Health(10),));
    /// app.add_system(
    ///     Stage::Input,
    ///     System::with_queries::<((Entity, &Poison), &mut Health)>("poison", |_ctx, (poisoned, health)| {
    ///         let poisoned: Vec<Entity> = poisoned.borrow().iter().map(|(entity, _)| entity).collect();
    ///         for entity in poisoned {
    ///             if let Ok(health) = health.one(entity).get() {
    ///                 health.0 -= 1;
    ///             }
    ///         }
    ///     }),
    /// );
    /// app.run_frame();
    /// assert_eq!(app.world().get::<&Health>(victim).unwrap().0, 9);
    /// ```
    #[track_caller]
    pub fn with_queries<Qs: QuerySet>(
        name: impl Into<std::borrow::Cow<'static, str>>,
        mut body: impl FnMut(&mut SystemContext<'_>, Qs::Handles<'_>) + Send + 'static,
    ) -> System {
        let site = ZoneSite::caller(ZoneSite::function_of(&body));
        let mut system = System::new(name, move |ctx| {
            let handles = Qs::handles(ctx.world, ctx.changes);
            body(ctx, handles);
        });
        system.site = site;
        Qs::declare(system)
    }
}

#[cfg(test)]
mod tests {
    use hecs::{Entity, With, Without};

    use crate::{App, Stage, System};

    struct Velocity(f32);
    struct Scout;
    struct Enemy;
    struct Tag;

    /// A system's zone leads to where it was defined, and names its body.
    #[test]
    fn a_system_knows_where_it_was_defined() {
        let system = System::with_query::<&Velocity>("defined here", |_, _| {});
        let line = line!() - 1;
        assert_eq!((system.site.location.file(), system.site.location.line()), (file!(), line));
        assert!(system.site.function.contains("a_system_knows_where_it_was_defined"), "{}", system.site.function);
    }

    #[test]
    fn a_system_built_from_its_query_declares_that_access_and_nothing_else() {
        let mut app = App::new();
        app.add_system(
            Stage::Transform,
            System::with_query::<Without<With<&mut Velocity, &Scout>, &Enemy>>("scouts", |_ctx, scouts| {
                scouts.borrow().iter().for_each(|velocity| velocity.0 *= 2.0);
            }),
        );
        app.add_system(
            Stage::Transform,
            System::with_query::<With<&mut Velocity, &Enemy>>("enemies", |_ctx, enemies| {
                enemies.borrow().iter().for_each(|velocity| velocity.0 = 0.0);
            }),
        );
        let batches = app.schedule().batches(Stage::Transform).expect("the stage exists");
        assert_eq!(batches, vec![vec!["scouts", "enemies"]], "the filters rule each other out: one batch");
        let scout = app.world_mut().spawn((Velocity(1.0), Scout));
        let enemy = app.world_mut().spawn((Velocity(1.0), Enemy));
        app.run_frame();
        assert_eq!(app.world().get::<&Velocity>(scout).expect("lives").0, 2.0);
        assert_eq!(app.world().get::<&Velocity>(enemy).expect("lives").0, 0.0);
    }

    #[test]
    #[should_panic(expected = "without declaring it")]
    fn the_body_cannot_query_what_its_types_did_not_declare() {
        let mut app = App::new();
        app.world_mut().spawn((Velocity(1.0), Tag));
        app.add_system(
            Stage::Input,
            System::with_query::<&Velocity>("reader", |ctx, _velocities| {
                let _ = ctx.query::<&mut Velocity>().iter().count();
            }),
        );
        app.run_frame();
    }

    #[test]
    fn several_queries_and_the_change_log() {
        let mut app = App::with_threads(2);
        let tagged: Vec<Entity> = (0..100).map(|index| app.world_mut().spawn((Velocity(index as f32), Tag))).collect();
        app.world_mut().spawn_batch((0..100).map(|index| (Velocity(index as f32),)));
        app.add_system(
            Stage::Input,
            System::with_queries::<(With<Entity, &Tag>, With<&mut Velocity, &Tag>)>(
                "double",
                |_ctx, (tags, velocities)| {
                    assert_eq!(tags.borrow().iter().count(), 100);
                    velocities.par_for_each(16, |velocity| velocity.0 *= 2.0);
                },
            ),
        );
        app.run_frame();
        assert_eq!(app.world().get::<&Velocity>(tagged[7]).expect("lives").0, 14.0);
        let mut cursor = crate::changes::ChangeCursor::default();
        let mut changed = crate::changes::ChangedSince::default();
        app.changes().collect(&mut cursor, &[std::any::TypeId::of::<Velocity>()], &mut changed);
        app.run_frame();
        app.changes().collect(&mut cursor, &[std::any::TypeId::of::<Velocity>()], &mut changed);
        assert!(!changed.everything);
        let tag_archetype = app.world().archetypes().position(|archetype| archetype.has::<Tag>()).expect("there");
        assert_eq!(changed.archetypes, vec![tag_archetype as u32], "the handle logs the archetypes it lends mutably");
    }

    #[test]
    #[should_panic(expected = "holds a tuple inside the tuple")]
    fn a_nested_tuple_bundle_is_refused_naming_the_system() {
        let mut app = App::new();
        app.add_system(
            Stage::Input,
            System::new("nested", |ctx| {
                ctx.commands.spawn((Velocity(1.0), (Tag, Scout)));
            })
            .spawns(),
        );
        app.run_frame();
    }
}

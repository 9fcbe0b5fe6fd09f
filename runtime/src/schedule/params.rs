//! System parameters: what a typed system's body receives, fetched before each run, each
//! declaring its own access when the system is built ([`System::with_params`]).
//!
//! A parameter is named by the type the body receives: [`Res<T>`](Res) and
//! [`ResMut<T>`](ResMut) for a resource that must be present, `Option<Res<T>>` and
//! `Option<ResMut<T>>` for one that may not be, [`Frame<T>`](Frame) (or `Option<Frame<T>>`)
//! for a frame value, [`Publish<T>`](Publish) to publish one, [`SystemQuery<Q>`](SystemQuery)
//! for a query, [`Columns<Q>`](Columns) for archetype columns, and `&World` for the whole
//! world read-only (declared as a read of every component). A tuple of them is a parameter
//! too. The declaration and the fetch come from the same type, so the body cannot use what
//! the system did not declare, and a declaration cannot outlive the code that needed it.

use std::any::type_name;
use std::marker::PhantomData;
use std::ops::Deref;

use hecs::{Query, World};

use super::columns::Columns;
use super::query::QueryAccess;
use super::system::{ExclusiveContext, System, SystemContext};
use super::typed::SystemQuery;
use crate::frame::FrameContext;
use crate::profiling::ZoneSite;
use crate::resources::{Res, ResMut};

/// Something a typed system's body receives ([`System::with_params`]): it declares its
/// access on the system once, when the system is built, and is fetched before every run.
///
/// Implemented for [`Res`], [`ResMut`], `Option<Res>`, `Option<ResMut>`, [`Frame`],
/// `Option<Frame>`, [`Publish`], [`SystemQuery`], [`Columns`], `&World`, and tuples of up to
/// twelve of them. In a parameter list the lifetimes are left out (`Res<Viewport>`): they are
/// those of the run.
///
/// ```
/// use runtime::schedule::SystemParam;
/// use runtime::{App, Res, ResMut, Stage, System};
/// struct Gravity(f32);
/// struct Fallen(f32);
/// // A tuple of parameters is a parameter: its declarations are those of its parts.
/// fn declared<P: SystemParam>(name: &'static str) -> System {
///     P::declare(System::new(name, |_| {}))
/// }
/// let mut app = App::new();
/// app.add_system(Stage::Input, declared::<(Res<Gravity>, ResMut<Fallen>)>("fall"));
/// app.add_system(Stage::Input, declared::<Res<Gravity>>("float"));
/// app.add_system(Stage::Input, declared::<Res<Fallen>>("count"));
/// let batches = app.schedule().batches(Stage::Input).unwrap();
/// assert_eq!(batches, vec![vec!["fall", "float"], vec!["count"]], "a reader of Fallen waits for its writer");
/// ```
pub trait SystemParam {
    /// What the body receives in a run whose data lives for `'a`.
    type Item<'a>;

    /// Declares the parameter's access on `system`.
    fn declare(system: System) -> System;

    /// The parameter for one run.
    ///
    /// # Panics
    /// When a parameter that must be present ([`Res`], [`ResMut`], [`Frame`]) is absent,
    /// naming the system and the type.
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Self::Item<'a>;
}

/// A [`SystemParam`] an exclusive-world system may receive
/// ([`System::exclusive_with_params`]): the ones that do not borrow the world, which the
/// system holds mutably (resources and frame values).
///
/// ```
/// use runtime::schedule::ExclusiveParam;
/// use runtime::{Frame, Res};
/// fn takes<P: ExclusiveParam>() {}
/// takes::<(Res<u32>, Option<Frame<u64>>)>();
/// ```
pub trait ExclusiveParam: SystemParam {
    /// The parameter for one run of an exclusive-world system.
    ///
    /// # Panics
    /// As [`SystemParam::fetch`].
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Self::Item<'a>;
}

/// A frame value published earlier this frame (see [`FrameContext`]), as a system parameter:
/// `Frame<T>` when the system needs it, `Option<Frame<T>>` when it copes without.
///
/// ```
/// use runtime::{App, Frame, Publish, Stage, System};
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Cursor(u32);
/// let mut app = App::new();
/// app.add_system(Stage::Input, System::with_params::<Publish<Cursor>>("read input", |_, cursor| cursor.publish(Cursor(3))));
/// app.add_system(
///     Stage::Transform,
///     System::with_params::<Frame<Cursor>>("aim", |_, cursor| assert_eq!(*cursor, Cursor(3))),
/// );
/// app.run_frame();
/// ```
pub struct Frame<'a, T: 'static>(Res<'a, T>);

impl<T> Deref for Frame<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Publishes frame value `T` for the rest of the frame (see [`FrameContext`]), as a system
/// parameter: its write is declared, so the systems that read `T` run after this one.
///
/// ```
/// use runtime::{App, Publish, Stage, System};
/// struct Tick(u64);
/// let mut app = App::new();
/// app.add_system(Stage::Input, System::with_params::<Publish<Tick>>("clock", |ctx, tick| tick.publish(Tick(ctx.time.frame_index))));
/// app.run_frame();
/// ```
pub struct Publish<'a, T> {
    frame: &'a FrameContext,
    value: PhantomData<fn(T)>,
}

impl<T: Send + Sync + 'static> Publish<'_, T> {
    /// Publishes `value` for the systems that run after this one in the frame.
    pub fn publish(&self, value: T) {
        self.frame.publish(value);
    }
}

#[cold]
#[inline(never)]
fn absent(system: &str, what: &str, type_name: &str) -> ! {
    panic!("system '{system}' needs {what} {type_name} but it is absent")
}

impl<T: Send + Sync + 'static> SystemParam for Res<'_, T> {
    type Item<'a> = Res<'a, T>;
    fn declare(system: System) -> System {
        system.reads_resource::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Res<'a, T> {
        ctx.resource::<T>()
    }
}

impl<T: Send + Sync + 'static> ExclusiveParam for Res<'_, T> {
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Res<'a, T> {
        ctx.try_resource::<T>().unwrap_or_else(|| absent(ctx.name, "resource", type_name::<T>()))
    }
}

impl<T: Send + Sync + 'static> SystemParam for ResMut<'_, T> {
    type Item<'a> = ResMut<'a, T>;
    fn declare(system: System) -> System {
        system.writes_resource::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> ResMut<'a, T> {
        ctx.resource_mut::<T>()
    }
}

impl<T: Send + Sync + 'static> ExclusiveParam for ResMut<'_, T> {
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> ResMut<'a, T> {
        ctx.try_resource_mut::<T>().unwrap_or_else(|| absent(ctx.name, "resource", type_name::<T>()))
    }
}

impl<T: Send + Sync + 'static> SystemParam for Option<Res<'_, T>> {
    type Item<'a> = Option<Res<'a, T>>;
    fn declare(system: System) -> System {
        system.reads_resource::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Option<Res<'a, T>> {
        ctx.try_resource::<T>()
    }
}

impl<T: Send + Sync + 'static> ExclusiveParam for Option<Res<'_, T>> {
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Option<Res<'a, T>> {
        ctx.try_resource::<T>()
    }
}

impl<T: Send + Sync + 'static> SystemParam for Option<ResMut<'_, T>> {
    type Item<'a> = Option<ResMut<'a, T>>;
    fn declare(system: System) -> System {
        system.writes_resource::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Option<ResMut<'a, T>> {
        ctx.try_resource_mut::<T>()
    }
}

impl<T: Send + Sync + 'static> ExclusiveParam for Option<ResMut<'_, T>> {
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Option<ResMut<'a, T>> {
        ctx.try_resource_mut::<T>()
    }
}

impl<T: Send + Sync + 'static> SystemParam for Option<Frame<'_, T>> {
    type Item<'a> = Option<Frame<'a, T>>;
    fn declare(system: System) -> System {
        system.reads_frame::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Option<Frame<'a, T>> {
        ctx.frame_value::<T>().map(Frame)
    }
}

impl<T: Send + Sync + 'static> ExclusiveParam for Option<Frame<'_, T>> {
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Option<Frame<'a, T>> {
        ctx.frame_value::<T>().map(Frame)
    }
}

impl<T: Send + Sync + 'static> SystemParam for Frame<'_, T> {
    type Item<'a> = Frame<'a, T>;
    fn declare(system: System) -> System {
        system.reads_frame::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Frame<'a, T> {
        ctx.frame_value::<T>().map(Frame).unwrap_or_else(|| absent(ctx.name, "frame value", type_name::<T>()))
    }
}

impl<T: Send + Sync + 'static> ExclusiveParam for Frame<'_, T> {
    fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Frame<'a, T> {
        ctx.frame_value::<T>().map(Frame).unwrap_or_else(|| absent(ctx.name, "frame value", type_name::<T>()))
    }
}

impl<T: Send + Sync + 'static> SystemParam for Publish<'_, T> {
    type Item<'a> = Publish<'a, T>;
    fn declare(system: System) -> System {
        system.writes_frame::<T>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Publish<'a, T> {
        Publish { frame: ctx.frame, value: PhantomData }
    }
}

impl<Q: Query + QueryAccess + 'static> SystemParam for SystemQuery<'_, Q> {
    type Item<'a> = SystemQuery<'a, Q>;
    fn declare(system: System) -> System {
        system.query::<Q>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> SystemQuery<'a, Q> {
        SystemQuery::new(ctx.world, ctx.changes)
    }
}

impl<Q: QueryAccess + 'static> SystemParam for Columns<'_, Q> {
    type Item<'a> = Columns<'a, Q>;
    fn declare(system: System) -> System {
        system.query::<Q>()
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> Columns<'a, Q> {
        Columns::new(ctx.world, Some(ctx.changes), ctx.access, ctx.name)
    }
}

/// The whole world, read-only: declares a read of every component, so the system shares no
/// batch with a system that writes one. For code that hands the world on to hooks whose
/// reads are not known (the renderer's extract hooks); everything else names its columns.
impl SystemParam for &'_ World {
    type Item<'a> = &'a World;
    fn declare(mut system: System) -> System {
        system.access.reads_all_components = true;
        system
    }
    fn fetch<'a>(ctx: &SystemContext<'a>) -> &'a World {
        ctx.world
    }
}

macro_rules! param_tuple {
    ($($param:ident),*) => {
        impl<$($param: SystemParam),*> SystemParam for ($($param,)*) {
            type Item<'a> = ($($param::Item<'a>,)*);
            #[allow(clippy::unused_unit)]
            fn declare(system: System) -> System {
                $(let system = $param::declare(system);)*
                system
            }
            #[allow(unused_variables, clippy::unused_unit)]
            fn fetch<'a>(ctx: &SystemContext<'a>) -> Self::Item<'a> {
                ($($param::fetch(ctx),)*)
            }
        }

        impl<$($param: ExclusiveParam),*> ExclusiveParam for ($($param,)*) {
            #[allow(unused_variables, clippy::unused_unit)]
            fn fetch_exclusive<'a>(ctx: &ExclusiveContext<'a>) -> Self::Item<'a> {
                ($($param::fetch_exclusive(ctx),)*)
            }
        }
    };
}

param_tuple!();
param_tuple!(A);
param_tuple!(A, B);
param_tuple!(A, B, C);
param_tuple!(A, B, C, D);
param_tuple!(A, B, C, D, E);
param_tuple!(A, B, C, D, E, F);
param_tuple!(A, B, C, D, E, F, G);
param_tuple!(A, B, C, D, E, F, G, H);
param_tuple!(A, B, C, D, E, F, G, H, I);
param_tuple!(A, B, C, D, E, F, G, H, I, J);
param_tuple!(A, B, C, D, E, F, G, H, I, J, K);
param_tuple!(A, B, C, D, E, F, G, H, I, J, K, L);

impl System {
    /// A system built from its parameters `P` (a [`SystemParam`], usually a tuple): each
    /// declares its access when the system is built and is fetched before every run, then
    /// handed to `body` beside the context (for commands, time and the change log). The
    /// declaration and the code are one, so they cannot disagree: a resource is named once,
    /// in the parameter list.
    ///
    /// ```
    /// use runtime::{App, Columns, Frame, Publish, Res, ResMut, Stage, System};
    /// struct Position(f32);
    /// struct Speed(f32);
    /// struct Moved(usize);
    /// #[derive(Clone, Copy)]
    /// struct Wind(f32);
    ///
    /// let mut app = App::new();
    /// app.insert_resource(Speed(2.0));
    /// app.insert_resource(Moved(0));
    /// app.world_mut().spawn((Position(0.0),));
    /// app.add_system(Stage::Input, System::with_params::<Publish<Wind>>("weather", |_, wind| wind.publish(Wind(1.0))));
    /// app.add_system(
    ///     Stage::Transform,
    ///     System::with_params::<(Res<Speed>, Option<Frame<Wind>>, ResMut<Moved>, Columns<&mut Position>)>(
    ///         "drift",
    ///         |_ctx, (speed, wind, mut moved, world)| {
    ///             let push = speed.0 + wind.map_or(0.0, |wind| wind.0);
    ///             for archetype in world.archetypes().filter(|archetype| archetype.has::<Position>()) {
    ///                 let mut positions = archetype.column_mut::<Position>().expect("has Position");
    ///                 positions.iter_mut().for_each(|position| position.0 += push);
    ///                 moved.0 += positions.len();
    ///             }
    ///         },
    ///     ),
    /// );
    /// app.run_frame();
    /// assert_eq!(app.world().query::<&Position>().iter().next().unwrap().0, 3.0);
    /// assert_eq!(app.resource::<Moved>().0, 1);
    /// ```
    #[track_caller]
    pub fn with_params<P: SystemParam + 'static>(
        name: impl Into<std::borrow::Cow<'static, str>>,
        mut body: impl FnMut(&mut SystemContext<'_>, P::Item<'_>) + Send + 'static,
    ) -> System {
        let site = ZoneSite::caller(ZoneSite::function_of(&body));
        let mut system = System::new(name, move |ctx| {
            let params = P::fetch(ctx);
            body(ctx, params);
        });
        system.site = site;
        P::declare(system)
    }

    /// An exclusive-world system (see [`System::new_exclusive`]) built from its parameters
    /// `P`, resources and frame values ([`ExclusiveParam`]), fetched before every run and
    /// handed to `body` beside the context that holds the world mutably.
    ///
    /// ```
    /// use runtime::{App, ResMut, Stage, System};
    /// struct Spawned(u32);
    /// let mut app = App::new();
    /// app.insert_resource(Spawned(0));
    /// app.add_system(
    ///     Stage::Input,
    ///     System::exclusive_with_params::<ResMut<Spawned>>("spawner", |ctx, mut spawned| {
    ///         ctx.world.spawn((1u8,));
    ///         spawned.0 += 1;
    ///     }),
    /// );
    /// app.run_frames(2);
    /// assert_eq!((app.world().len(), app.resource::<Spawned>().0), (2, 2));
    /// ```
    #[track_caller]
    pub fn exclusive_with_params<P: ExclusiveParam + 'static>(
        name: impl Into<std::borrow::Cow<'static, str>>,
        mut body: impl FnMut(&mut ExclusiveContext<'_>, P::Item<'_>) + Send + 'static,
    ) -> System {
        let site = ZoneSite::caller(ZoneSite::function_of(&body));
        let mut system = System::new_exclusive(name, move |ctx| {
            let params = P::fetch_exclusive(ctx);
            body(ctx, params);
        });
        system.site = site;
        P::declare(system)
    }
}

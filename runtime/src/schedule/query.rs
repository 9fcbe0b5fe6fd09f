//! What a hecs query type borrows and which archetypes it can match, read from the type, so
//! queries made through [`SystemContext`](crate::SystemContext) are checked against the
//! system's declared access, and a system may declare its access as a query type
//! ([`System::query`](crate::System::query)).

use std::any::{type_name, TypeId};

use hecs::{Component, Entity, Or, Satisfies, With, Without};

/// The component access of a hecs query type: the components it borrows, and the components an
/// archetype must have (`required`) or must not have (`excluded`) to match it.
///
/// Implemented for every hecs query shape the engine uses: `Entity`, `&T`, `&mut T`,
/// `Option<Q>`, `With<Q, R>`, `Without<Q, R>`, `Or<L, R>`, `Satisfies<Q>` and tuples of up to
/// ten of them. The visitors are called without allocating, so checking a query each frame
/// costs a few comparisons.
///
/// ```
/// use runtime::schedule::QueryAccess;
/// use hecs::{With, Without};
/// struct Velocity;
/// struct Scout;
/// struct Stunned;
/// type Q = Without<With<&'static mut Velocity, &'static Scout>, &'static Stunned>;
/// let mut borrows = Vec::new();
/// Q::borrows(&mut |_, name, mutable| borrows.push((name, mutable)));
/// assert_eq!(borrows.len(), 1);
/// assert!(borrows[0].0.ends_with("Velocity") && borrows[0].1);
/// let mut required = 0;
/// Q::required(&mut |_| required += 1);
/// assert_eq!(required, 2, "Velocity and Scout");
/// ```
pub trait QueryAccess {
    /// Calls `visit(type, type name, mutable)` for each component the query borrows.
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool));
    /// Calls `visit` for each component every matched archetype has.
    fn required(visit: &mut dyn FnMut(TypeId));
    /// Calls `visit` for each component no matched archetype has.
    fn excluded(visit: &mut dyn FnMut(TypeId));
}

impl QueryAccess for Entity {
    fn borrows(_: &mut dyn FnMut(TypeId, &'static str, bool)) {}
    fn required(_: &mut dyn FnMut(TypeId)) {}
    fn excluded(_: &mut dyn FnMut(TypeId)) {}
}

impl<T: Component> QueryAccess for &'_ T {
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
        visit(TypeId::of::<T>(), type_name::<T>(), false);
    }
    fn required(visit: &mut dyn FnMut(TypeId)) {
        visit(TypeId::of::<T>());
    }
    fn excluded(_: &mut dyn FnMut(TypeId)) {}
}

impl<T: Component> QueryAccess for &'_ mut T {
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
        visit(TypeId::of::<T>(), type_name::<T>(), true);
    }
    fn required(visit: &mut dyn FnMut(TypeId)) {
        visit(TypeId::of::<T>());
    }
    fn excluded(_: &mut dyn FnMut(TypeId)) {}
}

impl<Q: QueryAccess> QueryAccess for Option<Q> {
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
        Q::borrows(visit);
    }
    // An optional part constrains nothing.
    fn required(_: &mut dyn FnMut(TypeId)) {}
    fn excluded(_: &mut dyn FnMut(TypeId)) {}
}

impl<Q: QueryAccess, R: QueryAccess> QueryAccess for With<Q, R> {
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
        Q::borrows(visit);
    }
    fn required(visit: &mut dyn FnMut(TypeId)) {
        Q::required(visit);
        R::required(visit);
    }
    fn excluded(visit: &mut dyn FnMut(TypeId)) {
        Q::excluded(visit);
    }
}

impl<Q: QueryAccess, R: QueryAccess> QueryAccess for Without<Q, R> {
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
        Q::borrows(visit);
    }
    fn required(visit: &mut dyn FnMut(TypeId)) {
        Q::required(visit);
    }
    fn excluded(visit: &mut dyn FnMut(TypeId)) {
        Q::excluded(visit);
        // `Without<Q, R>` leaves out archetypes that match all of R: that excludes one
        // component only when R requires exactly one.
        let mut count = 0;
        R::required(&mut |_| count += 1);
        if count == 1 {
            R::required(visit);
        }
    }
}

impl<L: QueryAccess, R: QueryAccess> QueryAccess for Or<L, R> {
    fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
        L::borrows(visit);
        R::borrows(visit);
    }
    // Either side may match: no single component is promised or ruled out.
    fn required(_: &mut dyn FnMut(TypeId)) {}
    fn excluded(_: &mut dyn FnMut(TypeId)) {}
}

impl<Q: QueryAccess> QueryAccess for Satisfies<Q> {
    fn borrows(_: &mut dyn FnMut(TypeId, &'static str, bool)) {}
    fn required(_: &mut dyn FnMut(TypeId)) {}
    fn excluded(_: &mut dyn FnMut(TypeId)) {}
}

macro_rules! tuple_access {
    ($($name:ident),*) => {
        impl<$($name: QueryAccess),*> QueryAccess for ($($name,)*) {
            #[allow(unused_variables)]
            fn borrows(visit: &mut dyn FnMut(TypeId, &'static str, bool)) {
                $($name::borrows(visit);)*
            }
            #[allow(unused_variables)]
            fn required(visit: &mut dyn FnMut(TypeId)) {
                $($name::required(visit);)*
            }
            #[allow(unused_variables)]
            fn excluded(visit: &mut dyn FnMut(TypeId)) {
                $($name::excluded(visit);)*
            }
        }
    };
}

tuple_access!();
tuple_access!(A);
tuple_access!(A, B);
tuple_access!(A, B, C);
tuple_access!(A, B, C, D);
tuple_access!(A, B, C, D, E);
tuple_access!(A, B, C, D, E, F);
tuple_access!(A, B, C, D, E, F, G);
tuple_access!(A, B, C, D, E, F, G, H);
tuple_access!(A, B, C, D, E, F, G, H, I);
tuple_access!(A, B, C, D, E, F, G, H, I, J);

/// Whether query `Q` requires component `type_id`.
pub(crate) fn requires<Q: QueryAccess>(type_id: TypeId) -> bool {
    let mut found = false;
    Q::required(&mut |required| found |= required == type_id);
    found
}

/// Whether query `Q` excludes component `type_id`.
pub(crate) fn excludes<Q: QueryAccess>(type_id: TypeId) -> bool {
    let mut found = false;
    Q::excluded(&mut |excluded| found |= excluded == type_id);
    found
}

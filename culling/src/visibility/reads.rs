//! What the stage reads of the world: the components its passes read ([`CullReads`]), as
//! the archetype columns its system declares ([`CullColumns`]), and one entity's component
//! read without the borrow counter ([`read_unborrowed`]).

use ecs::{
    Culled, Lod, Mesh, Occluded, ShadowCaster, SkinnedPose, Transform, VisibilityTagged, Visible, WorldTransform,
};
use runtime::Columns;

/// The components the cull reads, declared at once: the mesh, both transforms, the flags and
/// the levels that decide what is drawn, and the tags and marker the tag step compares
/// against. The pass reads them as archetype columns (`cull.rs`) of [`CullColumns`].
pub(crate) type CullReads = (
    &'static Mesh,
    Option<&'static Transform>,
    Option<&'static WorldTransform>,
    Option<&'static Visible>,
    Option<&'static SkinnedPose>,
    Option<&'static Lod>,
    Option<&'static ShadowCaster>,
    Option<&'static Culled>,
    Option<&'static Occluded>,
    Option<&'static VisibilityTagged>,
);

/// The world as the stage's passes see it: the columns of [`CullReads`], checked against the
/// system's declaration.
pub(crate) type CullColumns<'a> = Columns<'a, CullReads>;

/// Component `T` of `entity`, read without the world's borrow counter: `EntityRef::get`
/// takes and releases the column's counter, an atomic shared by every job reading that
/// archetype, so two threads refreshing entities of one archetype bounce its cache line
/// (500 newcomers a frame on two threads: 154 -> 105 µs of refresh).
///
/// # Safety
/// No one may write `T` meanwhile. The Visibility system declares reads of every component
/// it reads this way ([`CullReads`], its [`CullColumns`]) and writes none, so the scheduler
/// runs no writer of them beside it; debug builds check the declaration.
#[inline]
pub(crate) unsafe fn read_unborrowed<'w, T: runtime::hecs::Component>(
    world: &CullColumns<'w>,
    entity: runtime::hecs::Entity,
) -> Option<&'w T> {
    // SAFETY: the caller's duty (above).
    unsafe { world.get_unborrowed::<T>(entity) }
}

//! The stage's per-object columns ([`ObjectColumns`], indexed by slot) and what each
//! object is drawn with ([`ObjectDraw`]): the part of the [`Visibility`](super::Visibility)
//! answer that its other views and passes read and write slot by slot.

use ecs::{Aabb, MaterialHandle, MeshHandle};
use glam::Mat4;
use runtime::hecs::Entity;

use super::cache::CachedBounds;

/// What an object is drawn with this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectDraw {
    /// The geometry: the level of detail chosen for the view, else the mesh's own handle.
    /// [`MeshHandle::NONE`] for an object that is not drawable.
    pub mesh: MeshHandle,
    /// The mesh's material, so the render path looks nothing up.
    pub material: MaterialHandle,
}

impl ObjectDraw {
    /// The draw of an object that is not drawable.
    pub const NONE: ObjectDraw = ObjectDraw { mesh: MeshHandle::NONE, material: MaterialHandle::NONE };
}

/// Per-object columns, indexed by object slot (see the module docs for what a slot is).
///
/// Every column has one entry per slot. For a drawable object `models` and `bounds` hold
/// this frame's world matrix and world box (the posed box for a posed skinned mesh); for an
/// object that is not drawable, and for a free slot, they hold the identity and an empty box
/// at the origin, and `draws` holds [`ObjectDraw::NONE`]. `entities` names the entity owning
/// each slot ([`Entity::DANGLING`] for a free slot).
#[derive(Clone, Debug, Default)]
pub struct ObjectColumns {
    /// World matrix of each object.
    pub models: Vec<Mat4>,
    /// World axis-aligned box of each object.
    pub bounds: Vec<Aabb>,
    /// Mesh (LOD-selected) and material of each object. In a tracked frame (see
    /// [`VisibilityStats::tracked`](super::VisibilityStats::tracked)) an object whose word of 64 slots lies wholly outside the
    /// view keeps the level it last had: it is not drawn, by the CPU or the GPU path (whose
    /// frustum test gives the same bits), and its level is picked again as it nears the view.
    pub draws: Vec<ObjectDraw>,
    /// The entity of each object.
    pub entities: Vec<Entity>,
    /// What each slot's world box was computed from, and its last verdict (see `cache.rs`).
    pub(crate) cache: Vec<CachedBounds>,
}

impl ObjectColumns {
    /// Number of slots (one past the highest slot in use).
    #[inline]
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether there are no objects.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Sets every column to `len` entries; entries past the old length get the values of an
    /// undrawable object. Allocates only when the capacity is too small.
    pub(crate) fn resize(&mut self, len: usize) {
        self.models.resize(len, Mat4::IDENTITY);
        self.bounds.resize(len, EMPTY_BOX);
        self.draws.resize(len, ObjectDraw::NONE);
        self.entities.resize(len, Entity::DANGLING);
        self.cache.resize(len, CachedBounds::EMPTY);
    }

    /// The box in the object's own space that slot `slot`'s world box was computed from: the
    /// mesh's bounds, or a skinned mesh's posed bounds (an empty box at the origin for an
    /// object that is not drawable). A renderer culling on the GPU uploads it with the world
    /// matrix, and gets the stage's world box back bit for bit (see
    /// `renderer::world_box`).
    ///
    /// # Panics
    /// When `slot >= len()`.
    pub fn local_bounds(&self, slot: usize) -> Aabb {
        *self.cache[slot].local()
    }

    /// Whether slot `slot`'s world matrix and box are finite; the culls keep an object whose
    /// are not, and so must a renderer that culls it elsewhere.
    ///
    /// # Panics
    /// When `slot >= len()`.
    pub fn is_finite(&self, slot: usize) -> bool {
        self.cache[slot].is_finite()
    }

    /// Gives slot `slot` the values of an undrawable object (a freed slot).
    pub(crate) fn reset(&mut self, slot: usize) {
        self.models[slot] = Mat4::IDENTITY;
        self.bounds[slot] = EMPTY_BOX;
        self.draws[slot] = ObjectDraw::NONE;
        self.cache[slot] = CachedBounds::EMPTY;
    }
}

/// The box written for an object that is not drawable.
pub(crate) const EMPTY_BOX: Aabb = Aabb::new(glam::Vec3::ZERO, glam::Vec3::ZERO);

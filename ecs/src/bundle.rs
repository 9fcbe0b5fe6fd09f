//! [`MeshBundle`]: everything a drawable entity needs, spawned in one call on a `World` or
//! through a system's `Commands` ([`SpawnMesh`]), so a game never writes the tuple by hand
//! (and never nests one by mistake).

use hecs::{DynamicBundle, Entity, EntityBuilder, World};
use runtime::Commands;

use crate::render::{BaseColor, Mesh, Visible};
use crate::transform::{Transform, WorldTransform};

/// A drawable mesh entity: its geometry and material ([`Mesh`]), where it stands
/// ([`Transform`], and the matching [`WorldTransform`] so it is placed before its first
/// Transform stage), whether it is shown ([`Visible`]) and its colour ([`BaseColor`]).
///
/// ```
/// use ecs::{scene, BaseColor, MeshBundle, SpawnMesh, Transform};
/// let mut world = hecs::World::new();
/// let red = MeshBundle::new(scene::unit_cube_mesh(), Transform::IDENTITY).with_color(BaseColor([1.0, 0.0, 0.0, 1.0]));
/// let cube = world.spawn_mesh(red);
/// assert!(world.get::<&ecs::WorldTransform>(cube).is_ok());
/// struct Enemy;
/// let enemy = world.spawn_mesh_with(MeshBundle::new(scene::unit_cube_mesh(), Transform::IDENTITY), (Enemy,));
/// assert!(world.get::<&Enemy>(enemy).is_ok() && world.get::<&ecs::Mesh>(enemy).is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshBundle {
    /// The geometry, material and local bounds.
    pub mesh: Mesh,
    /// Where it stands (relative to its parent, if it gets one).
    pub transform: Transform,
    /// Its colour (white by default).
    pub color: BaseColor,
    /// Whether it is shown (by default).
    pub visible: bool,
}

impl MeshBundle {
    /// A shown, white `mesh` at `transform`.
    pub fn new(mesh: Mesh, transform: Transform) -> MeshBundle {
        MeshBundle { mesh, transform, color: BaseColor::WHITE, visible: true }
    }

    /// The same bundle in `color`.
    pub fn with_color(self, color: BaseColor) -> MeshBundle {
        MeshBundle { color, ..self }
    }

    /// The same bundle, hidden (`Visible(false)`: not drawn, not culled, not tagged).
    pub fn hidden(self) -> MeshBundle {
        MeshBundle { visible: false, ..self }
    }

    /// The components, as one flat tuple.
    pub fn components(self) -> (Transform, WorldTransform, Mesh, Visible, BaseColor) {
        (self.transform, WorldTransform::from(self.transform), self.mesh, Visible(self.visible), self.color)
    }

    /// The components and `extra` in one builder (a single archetype, no move after spawn).
    fn with_extra(self, extra: impl DynamicBundle) -> EntityBuilder {
        let mut builder = EntityBuilder::new();
        builder.add_bundle(self.components()).add_bundle(extra);
        builder
    }
}

/// Spawning a [`MeshBundle`] in one call, on a `World` (setup, tools) or through a system's
/// `Commands` (declare `System::spawns`).
pub trait SpawnMesh {
    /// Spawns the drawable; returns its entity.
    fn spawn_mesh(&mut self, bundle: MeshBundle) -> Entity;

    /// Spawns the drawable with the game's own components `extra` beside it (a tuple of
    /// components, flat).
    fn spawn_mesh_with(&mut self, bundle: MeshBundle, extra: impl DynamicBundle) -> Entity;
}

impl SpawnMesh for World {
    fn spawn_mesh(&mut self, bundle: MeshBundle) -> Entity {
        self.spawn(bundle.components())
    }

    fn spawn_mesh_with(&mut self, bundle: MeshBundle, extra: impl DynamicBundle) -> Entity {
        self.spawn(bundle.with_extra(extra).build())
    }
}

impl SpawnMesh for Commands<'_> {
    fn spawn_mesh(&mut self, bundle: MeshBundle) -> Entity {
        self.spawn(bundle.components())
    }

    fn spawn_mesh_with(&mut self, bundle: MeshBundle, extra: impl DynamicBundle) -> Entity {
        self.spawn(bundle.with_extra(extra).build())
    }
}

//! A loaded glTF scene as a model to spawn any number of times (a prefab):
//! [`GltfScene::add_model`] puts its meshes, materials and textures in a [`MeshLibrary`] once
//! (and its closed meshes' occluders in the [`OccluderMeshes`]), and [`spawn_model`] spawns
//! its nodes under a root entity at a transform, sharing them: a thousand spawns add nothing
//! to the library.
//!
//! A skinned mesh is spawned animated, on an entity of its own at the model's root (its
//! joints place it, not the node drawing it, whose transform the specification ignores):
//! the entity gets the mesh's joint boxes ([`SkinnedMesh`]), a rig of its skin's skeleton
//! ([`Skin`]) and, unless the caller asks for a still model ([`ModelAnimation::Still`]), an
//! [`AnimationPlayer`] playing the first of the file's clips for that skin, looping
//! ([`ModelAnimation::First`], what [`spawn_model`] does), or the clip the caller picks
//! ([`Model::clips`], [`spawn_model_animated`]). With `animation::install` in the app, the
//! character moves.

use std::ops::Range;
use std::sync::Arc;

use animation::{AnimationClip, AnimationPlayer, JointBoxes, Skeleton, Skin, SkinnedMesh};
use culling::occlusion::{OccluderMesh, OccluderMeshes};
use ecs::hierarchy::set_parent;
use ecs::{BaseColor, Camera, Lod, MaterialHandle, Mesh, Transform, Visible, WorldTransform};
use glam::Vec3;
use hecs::{Entity, World};
use meshes::{MeshLibrary, MeshVertices, Meshlet};

use super::{materials, GltfScene, SpawnedScene};
use crate::library::{add_levels_with, add_to_library, LibraryMesh};

/// A glTF scene whose parts are in a [`MeshLibrary`]: what [`spawn_model`] spawns. Cloning
/// it is cheap (the parts are shared).
#[derive(Clone, Debug)]
pub struct Model {
    parts: Arc<ModelParts>,
}

/// What every spawn of a [`Model`] shares.
#[derive(Debug)]
struct ModelParts {
    /// Per node, parents first: its parent's position, its local transform, its camera and
    /// its meshes (indices into `meshes`).
    nodes: Vec<ModelNode>,
    /// Where each mesh of the scene went in the library.
    meshes: Vec<LibraryMesh>,
    /// Per mesh: the library's material and the base colour.
    looks: Vec<(MaterialHandle, BaseColor)>,
    /// Meshes that got an inner-box occluder.
    occluders: usize,
    /// The library's index of the scene's first material.
    material_base: u32,
    /// Per mesh: its skin's skeleton and index, and its joint boxes (`None`: rigid).
    skins: Vec<Option<MeshSkin>>,
    /// The file's clips, each with the skin it animates.
    clips: Vec<(Arc<AnimationClip>, usize)>,
}

/// What a skinned mesh's entities are rigged with.
#[derive(Debug)]
struct MeshSkin {
    skin: usize,
    skeleton: Arc<Skeleton>,
    joint_boxes: Arc<JointBoxes>,
}

/// What plays on a spawned model's skinned meshes ([`spawn_model_animated`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelAnimation {
    /// The first clip of the file made for each mesh's skin, looping from its start (no
    /// player where the file has none for that skin).
    First,
    /// Clip `n` of [`Model::clips`], looping, on the meshes of the skin it was made for
    /// (the others get none).
    Clip(usize),
    /// No player: the rigs hold their rest pose until the game adds one.
    Still,
}

#[derive(Debug)]
struct ModelNode {
    parent: Option<usize>,
    transform: Transform,
    camera: Option<Camera>,
    meshes: Vec<usize>,
    /// The level-of-detail bias: the node's world scale within the model.
    bias: f32,
}

/// What [`spawn_model`] made.
#[derive(Clone, Debug)]
pub struct SpawnedModel {
    /// The entity every root node of the model hangs under, at the spawn's transform.
    pub root: Entity,
    /// One entity per node of the model, in the scene's node order.
    pub nodes: Vec<Entity>,
    /// Entities carrying a mesh.
    pub drawables: Vec<Entity>,
    /// Entities carrying a camera.
    pub cameras: Vec<Entity>,
}

impl Model {
    /// Where each mesh of the scene is in the library (its levels, bounds and `Lod`).
    pub fn meshes(&self) -> &[LibraryMesh] {
        &self.parts.meshes
    }

    /// The library's index of the scene's first material: a drawable's `MaterialHandle` is
    /// this plus its material's index in [`GltfScene::material_list`]. A model made by
    /// [`GltfScene::add_model_with`] draws every mesh with [`MaterialHandle::PLAIN`], whose
    /// index this is then.
    pub fn material_base(&self) -> u32 {
        self.parts.material_base
    }

    /// The file's animation clips, in file order, with the skin each animates (an index into
    /// [`GltfScene::skins`]): what [`ModelAnimation::Clip`] picks from.
    pub fn clips(&self) -> impl ExactSizeIterator<Item = (&Arc<AnimationClip>, usize)> + '_ {
        self.parts.clips.iter().map(|(clip, skin)| (clip, *skin))
    }

    /// The index in [`Model::clips`] of the clip named `name`, if any.
    pub fn clip_named(&self, name: &str) -> Option<usize> {
        self.parts.clips.iter().position(|(clip, _)| clip.name() == name)
    }

    /// Meshes that got an inner-box occluder (the closed, opaque ones).
    pub fn occluders(&self) -> usize {
        self.parts.occluders
    }

    /// Nodes of the model (entities each spawn makes, the root aside).
    pub fn node_count(&self) -> usize {
        self.parts.nodes.len()
    }
}

impl GltfScene {
    /// Adds the meshes, materials and textures to `library` (and the inner-box occluders of
    /// the closed, opaque meshes to `occluders`, each level's own) once, and returns the
    /// model to [`spawn_model`] from.
    pub fn add_model(&self, library: &mut MeshLibrary, occluders: &mut OccluderMeshes) -> meshes::Result<Model> {
        let material_ids = materials::add_materials(library, &self.material_list, &self.images)?;
        let material_base = material_ids[0];
        let mut meshes = Vec::with_capacity(self.meshes.len());
        let mut occluder_count = 0;
        for (index, mesh) in self.meshes.iter().enumerate() {
            let placed = add_to_library(library, mesh)?;
            // A surface with holes (alpha mask) or that blends hides nothing behind it.
            if !self.material_of(index).alpha.lets_light_through() {
                let positions: Vec<Vec3> = mesh.positions.iter().map(|&position| Vec3::from(position)).collect();
                // Each level its own box: a coarser level's surface may lie inside the finer
                // one's, and the occluder must lie inside what is drawn.
                let mut any = false;
                for (level, id) in mesh.levels.iter().zip(placed.levels.clone()) {
                    if let Ok(occluder) = OccluderMesh::inner_box_of(&positions, &level.indices) {
                        occluders.insert(ecs::MeshHandle(id), occluder);
                        any = true;
                    }
                }
                occluder_count += usize::from(any);
            }
            meshes.push(placed);
        }
        let looks = (0..self.meshes.len())
            .map(|mesh| (MaterialHandle(material_ids[self.materials[mesh] as usize]), self.colors[mesh]))
            .collect();
        Ok(self.model_of(meshes, looks, occluder_count, material_base))
    }

    /// Hands the meshes (each with its levels of detail and meshlets) to `add_levels`, which
    /// adds them where they are drawn and returns each one's level ids, and returns the model
    /// to [`spawn_model`] from. This is how a scene loaded while the game runs reaches the
    /// renderer: `add_levels` is the renderer's `RenderMeshes::add_mesh_levels`, whose ids
    /// are valid at once (the objects draw stand-ins until the bytes are on the GPU).
    ///
    /// Only the meshes are handed over: every drawable gets [`MaterialHandle::PLAIN`]
    /// (opaque, one-sided, no texture) with its glTF material's base colour ([`BaseColor`]).
    /// [`GltfScene::add_model_to`] hands over the materials and textures too. No occluders
    /// are made (the occluder table is fixed at install). Stops at the first refusal of
    /// `add_levels`; the meshes added before it stay added.
    ///
    /// ```
    /// # use assets::{GltfScene, spawn_model};
    /// # fn game(scene: &GltfScene, world: &mut hecs::World, meshes: &mut meshes::MeshLibrary) -> meshes::Result<()> {
    /// // With a renderer: `|vertices, levels| render_meshes.add_mesh_levels(vertices, levels)`.
    /// let model = scene.add_model_with(|vertices, levels| meshes.add_mesh_levels(vertices, levels))?;
    /// let spawned = spawn_model(world, &model, ecs::Transform::IDENTITY);
    /// assert_eq!(spawned.drawables.len(), scene.meshes.len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_model_with(
        &self,
        mut add_levels: impl FnMut(MeshVertices<'_>, &[(&[u32], &[Meshlet])]) -> meshes::Result<Range<u32>>,
    ) -> meshes::Result<Model> {
        self.add_model_with_occluders(|vertices, levels, _| add_levels(vertices, levels))
    }

    /// [`GltfScene::add_model_with`], handing each mesh's occluder the loader derived
    /// ([`GltfScene::occluders`]; `None` where it derived none) along with it: with a
    /// renderer, `|vertices, levels, occluder|
    /// render_meshes.add_mesh_levels_with_occluder(vertices, levels, occluder.cloned())`, so
    /// the frame that adds the meshes does not search their inner boxes.
    pub fn add_model_with_occluders(
        &self,
        mut add_levels: impl FnMut(
            MeshVertices<'_>,
            &[(&[u32], &[Meshlet])],
            Option<&OccluderMesh>,
        ) -> meshes::Result<Range<u32>>,
    ) -> meshes::Result<Model> {
        let mut meshes = Vec::with_capacity(self.meshes.len());
        for (index, mesh) in self.meshes.iter().enumerate() {
            let occluder = self.occluders.get(index).and_then(Option::as_ref);
            meshes.push(add_levels_with(mesh, |vertices, levels| add_levels(vertices, levels, occluder))?);
        }
        let looks = self.colors.iter().map(|&color| (MaterialHandle::PLAIN, color)).collect();
        Ok(self.model_of(meshes, looks, 0, MaterialHandle::PLAIN.0))
    }

    /// Adds the textures, materials and meshes (with their levels of detail and meshlets) to
    /// `sink` and returns the model to [`spawn_model`] from: a [`MeshLibrary`] before the
    /// first frame, or the renderer's `RenderMeshes` while frames run, whose ids are valid at
    /// once (the objects draw stand-ins until the meshes are on the GPU, and sample the
    /// textures' mips that arrived; skinned meshes keep their joints and weights, so the
    /// GPU skins them). The drawables keep their materials' look: textures,
    /// alpha mask, blending, double-sidedness and sampling. Images of another size than the
    /// sink's textures are resized here, on the calling thread (a loader's, off the frame).
    /// No occluders are made (see [`GltfScene::add_model`] for a library's). Stops at the
    /// first refusal; what was added before it stays added.
    ///
    /// ```
    /// # use assets::{GltfScene, spawn_model};
    /// # fn game(scene: &GltfScene, world: &mut hecs::World, meshes: &mut meshes::MeshLibrary) -> meshes::Result<()> {
    /// // With a renderer: `scene.add_model_to(&mut render_meshes.clone())`.
    /// let model = scene.add_model_to(meshes)?;
    /// let spawned = spawn_model(world, &model, ecs::Transform::IDENTITY);
    /// assert_eq!(spawned.drawables.len(), scene.meshes.len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_model_to(&self, sink: &mut impl meshes::AssetSink) -> meshes::Result<Model> {
        let material_ids = materials::add_materials(sink, &self.material_list, &self.images)?;
        let mut meshes = Vec::with_capacity(self.meshes.len());
        for mesh in &self.meshes {
            meshes.push(add_levels_with(mesh, |vertices, levels| match &mesh.skin {
                Some(skin) => {
                    let influences = meshes::VertexSkin { joints: &skin.joints, weights: &skin.weights };
                    sink.add_skinned_mesh_levels(vertices, influences, levels)
                }
                None => sink.add_mesh_levels(vertices, levels),
            })?);
        }
        let looks = (0..self.meshes.len())
            .map(|mesh| (MaterialHandle(material_ids[self.materials[mesh] as usize]), self.colors[mesh]))
            .collect();
        Ok(self.model_of(meshes, looks, 0, material_ids[0]))
    }

    /// The model of the scene's nodes over meshes placed as `meshes` and drawn with `looks`.
    fn model_of(
        &self,
        meshes: Vec<LibraryMesh>,
        looks: Vec<(MaterialHandle, BaseColor)>,
        occluders: usize,
        material_base: u32,
    ) -> Model {
        // A level's hand-over distance is in mesh units, so an entity scaled by `s` carries
        // `bias = s`.
        let nodes = self
            .nodes
            .iter()
            .zip(self.node_worlds())
            .map(|(node, world_matrix)| {
                let scale = [world_matrix.x_axis, world_matrix.y_axis, world_matrix.z_axis]
                    .map(|axis| axis.truncate().length())
                    .into_iter()
                    .fold(0.0_f32, f32::max);
                ModelNode {
                    parent: node.parent,
                    transform: node.transform,
                    camera: node.camera,
                    meshes: node.meshes.clone(),
                    bias: if scale.is_finite() && scale > 0.0 { scale } else { 1.0 },
                }
            })
            .collect();
        let skins = (0..self.meshes.len())
            .map(|mesh| {
                let skin = self.mesh_skins.get(mesh).copied().flatten()?;
                let joint_boxes = self.joint_boxes.get(mesh).cloned().flatten()?;
                Some(MeshSkin { skin, skeleton: Arc::clone(&self.skins.get(skin)?.skeleton), joint_boxes })
            })
            .collect();
        let clips = self.animations.iter().map(|animation| (Arc::clone(&animation.clip), animation.skin)).collect();
        let parts = ModelParts { nodes, meshes, looks, occluders, material_base, skins, clips };
        Model { parts: Arc::new(parts) }
    }

    /// Adds the meshes to `library` (their inner-box occluders, for closed ones, to
    /// `occluders`, under every level's id) and spawns the nodes into `world`, roots at the
    /// world's origin: [`GltfScene::add_model`] and one spawn of it. To spawn a model more
    /// than once, add it once and call [`spawn_model`] for each.
    pub fn spawn(
        &self,
        world: &mut World,
        library: &mut MeshLibrary,
        occluders: &mut OccluderMeshes,
    ) -> meshes::Result<SpawnedScene> {
        let model = self.add_model(library, occluders)?;
        let (nodes, drawables, cameras) = spawn_nodes(world, &model, None, ModelAnimation::First);
        Ok(SpawnedScene {
            nodes,
            drawables,
            cameras,
            meshes: model.parts.meshes.clone(),
            occluders: model.parts.occluders,
            material_base: model.parts.material_base,
        })
    }
}

/// Spawns `model` into `world` at `transform`: a root entity there and, under it, one entity
/// per node with its [`Transform`], mesh ([`Mesh`], [`Lod`], [`BaseColor`], [`Visible`]) and
/// camera, sharing the meshes and materials [`GltfScene::add_model`] added. A skinned mesh
/// hangs at the root instead, rigged, and plays its skin's first clip, looping (see the
/// module docs; [`spawn_model_animated`] picks another or none).
pub fn spawn_model(world: &mut World, model: &Model, transform: Transform) -> SpawnedModel {
    spawn_model_animated(world, model, transform, ModelAnimation::First)
}

/// [`spawn_model`], with `animation` saying what plays on the skinned meshes.
pub fn spawn_model_animated(
    world: &mut World,
    model: &Model,
    transform: Transform,
    animation: ModelAnimation,
) -> SpawnedModel {
    let root = world.spawn((transform, WorldTransform::from(transform)));
    let (nodes, drawables, cameras) = spawn_nodes(world, model, Some((root, transform.to_matrix())), animation);
    SpawnedModel { root, nodes, drawables, cameras }
}

/// The player of a mesh rigged with `skin` under `animation`, if any.
fn player_for(parts: &ModelParts, skin: &MeshSkin, animation: ModelAnimation) -> Option<AnimationPlayer> {
    let clip = match animation {
        ModelAnimation::First => parts.clips.iter().find(|(_, clip_skin)| *clip_skin == skin.skin),
        ModelAnimation::Clip(index) => parts.clips.get(index).filter(|(_, clip_skin)| *clip_skin == skin.skin),
        ModelAnimation::Still => None,
    }?;
    AnimationPlayer::new(Arc::clone(&clip.0), &skin.skeleton).ok()
}

/// An entity with no transform of its own under `parent` (an entity and its world matrix),
/// or at the world's origin without one.
fn spawn_under(world: &mut World, parent: Option<(Entity, glam::Mat4)>) -> Entity {
    let placed = parent.map_or(glam::Mat4::IDENTITY, |(_, matrix)| matrix);
    let child = world.spawn((Transform::IDENTITY, WorldTransform(placed)));
    if let Some((parent, _)) = parent {
        set_parent(world, child, parent).expect("the parent was spawned first");
    }
    child
}

/// The model's nodes as entities (roots under `root` when given, placed by its matrix):
/// the nodes, the drawables and the cameras.
fn spawn_nodes(
    world: &mut World,
    model: &Model,
    root: Option<(Entity, glam::Mat4)>,
    animation: ModelAnimation,
) -> (Vec<Entity>, Vec<Entity>, Vec<Entity>) {
    let parts = &model.parts;
    let mut nodes: Vec<Entity> = Vec::with_capacity(parts.nodes.len());
    let mut worlds: Vec<glam::Mat4> = Vec::with_capacity(parts.nodes.len());
    let (mut drawables, mut cameras) = (Vec::new(), Vec::new());
    for node in &parts.nodes {
        let local = node.transform.to_matrix();
        let above = match (node.parent, root) {
            (Some(parent), _) => Some((nodes[parent], worlds[parent])),
            (None, root) => root,
        };
        let placed = above.map_or(local, |(_, matrix)| matrix * local);
        let entity = world.spawn((node.transform, WorldTransform(placed)));
        if let Some((parent, _)) = above {
            set_parent(world, entity, parent).expect("parents are spawned before their children");
        }
        if let Some(camera) = node.camera {
            world.insert_one(entity, camera).expect("the entity was just spawned");
            cameras.push(entity);
        }
        let single = node.meshes.len() == 1;
        for &mesh in &node.meshes {
            let skin = parts.skins[mesh].as_ref();
            // One primitive goes on the node itself; several get a child each. A skinned one
            // hangs at the model's root instead: its skin matrices already take its vertices
            // into the model's space (a root joint sits under its parent node's world), and
            // the specification ignores the transform of the node drawing it (gltfpack puts a
            // quantized mesh's dequantization there, and folds it into the inverse binds).
            let (holder, bias) = if skin.is_some() {
                (spawn_under(world, root), 1.0)
            } else if single {
                (entity, node.bias)
            } else {
                (spawn_under(world, Some((entity, placed))), node.bias)
            };
            let library_mesh = &parts.meshes[mesh];
            let (material, color) = parts.looks[mesh];
            let component = Mesh::new(library_mesh.finest(), material, library_mesh.bounds);
            let lod = Lod { bias, ..library_mesh.lod.clone() };
            world.insert(holder, (component, lod, color, Visible(true))).expect("the entity exists");
            if let Some(skin) = skin {
                let rig =
                    (SkinnedMesh { joint_boxes: Arc::clone(&skin.joint_boxes) }, Skin::new(Arc::clone(&skin.skeleton)));
                world.insert(holder, rig).expect("the entity exists");
                if let Some(player) = player_for(parts, skin, animation) {
                    world.insert_one(holder, player).expect("the entity exists");
                }
            }
            drawables.push(holder);
        }
        nodes.push(entity);
        worlds.push(placed);
    }
    (nodes, drawables, cameras)
}

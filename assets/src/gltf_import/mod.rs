//! glTF 2.0 scenes (.gltf with external or embedded buffers, and .glb) into the ECS.
//!
//! [`load_gltf`] reads and checks the file and processes every triangle primitive (one mesh
//! each) through [`crate::process_meshes`] on the job system; [`GltfScene::add_model`] then
//! adds the meshes, materials and textures to a [`MeshLibrary`](meshes::MeshLibrary) once, as a [`Model`] that
//! [`spawn_model`] spawns any number of times ([`GltfScene::spawn`] does both, once): one
//! entity per node with [`Transform`] and the
//! engine's [`ecs::Parent`] hierarchy, meshes with their [`Lod`](ecs::Lod) levels (biased by the node's
//! world scale) and [`BaseColor`], and
//! [`Camera`]s. A closed mesh gets its inner-box occluder; an open one none.
//!
//! A valid glTF 2.0 file loads unless it requires an extension the importer cannot
//! honour; that includes what real pipelines (gltfpack) write:
//! `KHR_mesh_quantization` attributes, `EXT_meshopt_compression` and
//! `KHR_meshopt_compression` buffer views (fallback buffers without data included),
//! `KHR_texture_transform` on the base colour texture, sparse accessors and accessors
//! without a buffer view. A required extension beyond those four is
//! [`ImportError::Unsupported`]; a used one the importer does not read is ignored with one
//! warning. docs/meshes.md has the details.
//!
//! Nothing in a file can make loading panic or hang: the container, every buffer, accessor
//! and index is checked before use, the node graph must be a forest, and each problem is an
//! [`ImportError`] naming where it is.

mod accessors;
mod animations;
mod buffers;
mod error;
mod extensions;
mod materials;
mod meshopt_views;
mod model;
mod skins;
mod views;

use std::path::Path;
use std::time::{Duration, Instant};

use culling::occlusion::OccluderMesh;
use ecs::{Camera, Projection, Transform};
use glam::{Quat, Vec3};
use hecs::Entity;

pub use animations::GltfAnimation;
pub use error::ImportError;
pub use materials::{mip_chain, AlphaMode, BaseColorTexture, GltfMaterial, TextureImage, TextureSampler, Wrap};
pub use model::{spawn_model, spawn_model_animated, Model, ModelAnimation, SpawnedModel};
pub use skins::GltfSkin;

use crate::library::LibraryMesh;
use crate::mesh::MeshData;
use crate::process::{process_skinned_meshes, ProcessOptions, ProcessedMesh};

/// The base colour of a mesh entity: its glTF material's `baseColorFactor`, white without a
/// material (the engine's component; see [`ecs::BaseColor`]).
pub use ecs::BaseColor;

/// How long each step of a load took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadTimings {
    /// Reading the file.
    pub read: Duration,
    /// Splitting the container and parsing and validating the JSON.
    pub parse: Duration,
    /// Resolving the buffers (binary chunk, data URIs, external files) and decompressing
    /// meshopt-compressed buffer views.
    pub buffers: Duration,
    /// Decoding accessors into meshes and checking the nodes.
    pub decode: Duration,
    /// meshopt processing of every mesh (in parallel).
    pub process: Duration,
}

impl LoadTimings {
    /// The whole load.
    pub fn total(&self) -> Duration {
        self.read + self.parse + self.buffers + self.decode + self.process
    }
}

/// One node of the scene, parents before children.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneNode {
    /// The glTF node index.
    pub node: usize,
    /// Its name, if any.
    pub name: Option<String>,
    /// Position of its parent in [`GltfScene::nodes`], `None` for a root.
    pub parent: Option<usize>,
    /// Its transform relative to the parent.
    pub transform: Transform,
    /// Its primitives, as indices into [`GltfScene::meshes`].
    pub meshes: Vec<usize>,
    /// Its camera, if any.
    pub camera: Option<Camera>,
}

/// A loaded scene: processed meshes and the nodes that place them.
#[derive(Clone, Debug)]
pub struct GltfScene {
    /// One processed mesh per triangle primitive.
    pub meshes: Vec<ProcessedMesh>,
    /// Per mesh: the base colour of its primitive's material.
    pub colors: Vec<BaseColor>,
    /// Per mesh: its material, an index into [`GltfScene::material_list`] (a primitive that
    /// names none has glTF's default material, the list's last entry).
    pub materials: Vec<u32>,
    /// The file's materials, then glTF's default material.
    pub material_list: Vec<GltfMaterial>,
    /// The base-colour images the materials use, decoded (RGBA8 sRGB with mips).
    pub images: Vec<TextureImage>,
    /// The nodes of the scene, parents before children.
    pub nodes: Vec<SceneNode>,
    /// The file's skins, as skeletons (see the skins module for the repairs made).
    pub skins: Vec<GltfSkin>,
    /// Per mesh: the skin that poses it (that of the first node drawing it with a skin), or
    /// `None` for a rigid mesh; its joints and weights are in [`ProcessedMesh::skin`].
    pub mesh_skins: Vec<Option<usize>>,
    /// Per mesh: the boxes of the vertices each joint moves, for a skinned mesh (see
    /// [`animation::JointBoxes`]).
    pub joint_boxes: Vec<Option<std::sync::Arc<animation::JointBoxes>>>,
    /// The file's animations that move a skin's joints, as clips.
    pub animations: Vec<GltfAnimation>,
    /// Primitives left out because they are not triangles (each logged as a warning).
    pub skipped_primitives: usize,
    /// Per mesh: one occluder inside every level, derived by the loader when
    /// [`ProcessOptions::occluders`] asked for it (`None`: open, malformed or skinned; empty
    /// when not asked), for `RenderMeshes::add_mesh_levels_with_occluder`
    /// ([`GltfScene::add_model_with_occluders`]).
    pub occluders: Vec<Option<OccluderMesh>>,
    /// How long each step took.
    pub timings: LoadTimings,
}

/// What [`GltfScene::spawn`] made.
#[derive(Clone, Debug)]
pub struct SpawnedScene {
    /// One entity per node, in the order of [`GltfScene::nodes`].
    pub nodes: Vec<Entity>,
    /// Entities carrying a mesh.
    pub drawables: Vec<Entity>,
    /// Entities carrying a camera.
    pub cameras: Vec<Entity>,
    /// Where each mesh of [`GltfScene::meshes`] went in the library.
    pub meshes: Vec<LibraryMesh>,
    /// Meshes that got an inner-box occluder (the closed ones).
    pub occluders: usize,
    /// The library's index of [`GltfScene::material_list`]'s first material: a drawable's
    /// `MaterialHandle` is this plus its material's index there.
    pub material_base: u32,
}

/// Loads a .gltf or .glb file (external buffers are found beside it) and processes its
/// meshes with `options`.
///
/// Quantized (`KHR_mesh_quantization`) and meshopt-compressed (`EXT_meshopt_compression`,
/// `KHR_meshopt_compression`) files load; the meshes keep positions in their stored units,
/// with the dequantizing scale and offset in their node's transform. A file that requires
/// another extension fails with [`ImportError::Unsupported`]; a malformed one with the
/// [`ImportError`] variant naming where.
pub fn load_gltf(path: &Path, options: &ProcessOptions) -> Result<GltfScene, ImportError> {
    let started = Instant::now();
    let bytes = std::fs::read(path)
        .map_err(|error| ImportError::Io { path: path.display().to_string(), reason: error.to_string() })?;
    let read = started.elapsed();
    let mut scene = load_gltf_bytes(&bytes, path.parent(), options)?;
    scene.timings.read = read;
    Ok(scene)
}

/// Loads a glTF document from memory; `base` is the folder external buffers are relative to
/// (`None`: a reference to an external file is an error).
pub fn load_gltf_bytes(bytes: &[u8], base: Option<&Path>, options: &ProcessOptions) -> Result<GltfScene, ImportError> {
    runtime::profile_zone!("load glTF");
    let mut timings = LoadTimings::default();
    let mut step = Instant::now();
    let mut lap = |slot: &mut Duration| {
        *slot = step.elapsed();
        step = Instant::now();
    };
    let container = buffers::split_container(bytes)?;
    let Parsed { document, declared, compressed, fallback } = {
        runtime::profile_zone!("glTF parse");
        parse_document(container.json)?
    };
    lap(&mut timings.parse);
    let buffers = {
        runtime::profile_zone!("glTF buffers");
        buffers::load_buffers(&document, container.bin, base, &fallback, &compressed)?
    };
    let views = {
        runtime::profile_zone!("glTF decompress views");
        views::resolve_views(&document, &compressed, &buffers)?
    };
    lap(&mut timings.buffers);

    let mut sources = Vec::new();
    let mut influences = Vec::new();
    let mut repairs = skins::SkinRepairs::default();
    let mut colors = Vec::new();
    let mut materials = Vec::new();
    let mut skipped_primitives = 0;
    // Per glTF mesh: its primitives' indices into `sources`.
    let mut mesh_primitives = Vec::with_capacity(document.meshes().len());
    for mesh in document.meshes() {
        let mut kept = Vec::new();
        for primitive in mesh.primitives() {
            if primitive.mode() != gltf::mesh::Mode::Triangles {
                log::warn!(
                    "mesh {} primitive {}: mode {:?} skipped, only triangles are read",
                    mesh.index(),
                    primitive.index(),
                    primitive.mode()
                );
                skipped_primitives += 1;
                continue;
            }
            let mut data = decode_primitive(&primitive, &views, declared)?;
            influences.push(skins::read_influences(&primitive, &views, data.positions.len(), &mut repairs)?);
            if let Some(transform) = base_colour_uv_transform(&primitive.material())? {
                data.uvs.iter_mut().for_each(|uv| *uv = transform.transform_point2(glam::Vec2::from(*uv)).to_array());
            }
            data.validate().map_err(|error| ImportError::Mesh {
                mesh: mesh.index(),
                primitive: primitive.index(),
                error,
            })?;
            kept.push(sources.len());
            sources.push(data);
            let material = primitive.material();
            colors.push(BaseColor(material.pbr_metallic_roughness().base_color_factor().map(|c| c.clamp(0.0, 1.0))));
            let default_material = document.materials().len();
            materials.push(material.index().unwrap_or(default_material) as u32);
        }
        mesh_primitives.push(kept);
    }
    let nodes = scene_nodes(&document, &mesh_primitives)?;
    let parent_of = parents_of(&document);
    let skins = skins::read_skins(&document, &views, &parent_of)?;
    let animations = animations::read_animations(&document, &views, &skins)?;
    let (mesh_skins, skinned) = skins::bind_mesh_skins(&document, &mesh_primitives, &influences, &skins)?;
    repairs.warn();
    let (material_list, images) = {
        runtime::profile_zone!("glTF materials");
        materials::read_materials(&document, &views, base)
    };
    lap(&mut timings.decode);

    let processed = process_skinned_meshes(&sources, &skinned, options);
    let mut meshes = Vec::with_capacity(processed.len());
    for result in processed {
        // Every source was validated above, the only way processing fails.
        meshes.push(result.map_err(|error| ImportError::Mesh { mesh: usize::MAX, primitive: usize::MAX, error })?);
    }
    let joint_boxes = meshes
        .iter()
        .zip(&mesh_skins)
        .map(|(mesh, skin)| {
            let (skin, influences) = (skin.as_ref()?, mesh.skin.as_ref()?);
            let joint_count = skins[*skin].skeleton.joint_count();
            animation::JointBoxes::from_vertices(&mesh.positions, &influences.joints, &influences.weights, joint_count)
                .map(std::sync::Arc::new)
        })
        .collect();
    let occluders = if options.occluders { meshes.iter().map(mesh_occluder).collect() } else { Vec::new() };
    lap(&mut timings.process);
    Ok(GltfScene {
        meshes,
        colors,
        materials,
        material_list,
        images,
        nodes,
        skins,
        mesh_skins,
        joint_boxes,
        animations,
        skipped_primitives,
        occluders,
        timings,
    })
}

/// The occluder of a processed mesh's levels (none for a skinned one: its pose moves its
/// surface away from any box of the bind pose).
fn mesh_occluder(mesh: &ProcessedMesh) -> Option<OccluderMesh> {
    if mesh.skin.is_some() {
        return None;
    }
    let levels: Vec<&[u32]> = mesh.levels.iter().map(|level| level.indices.as_slice()).collect();
    culling::occlusion::streamed_occluder(&mesh.positions, &levels)
}

/// The validated document and what the importer reads from the raw JSON beside it.
struct Parsed {
    document: gltf::Document,
    declared: extensions::Declared,
    /// Per buffer view, its `EXT_meshopt_compression` parameters.
    compressed: Vec<Option<meshopt_views::CompressedView>>,
    /// Per buffer, whether it is a compression fallback.
    fallback: Vec<bool>,
}

/// Parses and validates the JSON. It is read untyped first: gltf-json keeps no data of
/// extensions it does not know (the compression parameters are taken from there) and
/// refuses a few valid constructs the importer does not read (smoothed away). gltf-json's
/// validator refuses every required extension it does not implement, so the required list
/// is checked here and cleared before validation, and an accessor without a buffer view,
/// so that one rule is left out (see [`extensions::validate`]); and it indexes the accessor
/// a primitive's `POSITION` names before checking that it exists (and panics when it does
/// not), so that one reference is checked here first.
fn parse_document(json: &[u8]) -> Result<Parsed, ImportError> {
    let json_error = |error: gltf::json::Error| ImportError::Json(error.to_string());
    let mut value: gltf::json::Value = gltf::json::deserialize::from_slice(json).map_err(json_error)?;
    let compressed = meshopt_views::compressed_views(&value)?;
    let fallback = meshopt_views::fallback_buffers(&value);
    extensions::smooth_json(&mut value);
    let mut root: gltf::json::Root = gltf::json::deserialize::from_value(value).map_err(json_error)?;
    for (mesh, entry) in root.meshes.iter().enumerate() {
        for (primitive, entry) in entry.primitives.iter().enumerate() {
            let position = entry.attributes.get(&gltf::json::validation::Checked::Valid(gltf::Semantic::Positions));
            if position.is_some_and(|accessor| accessor.value() >= root.accessors.len()) {
                return Err(ImportError::Json(format!(
                    "meshes[{mesh}].primitives[{primitive}].attributes.POSITION names a missing accessor"
                )));
            }
        }
    }
    let declared = extensions::check_extensions(&root.extensions_required, &root.extensions_used)?;
    root.extensions_required.clear();
    extensions::validate(&root)?;
    let document = gltf::Document::from_json_without_validation(root);
    Ok(Parsed { document, declared, compressed, fallback })
}

fn decode_primitive(
    primitive: &gltf::Primitive<'_>,
    views: &[views::ViewBytes<'_>],
    declared: extensions::Declared,
) -> Result<MeshData, ImportError> {
    use accessors::Attribute;
    let quantized = declared.quantization;
    let positions = primitive.get(&gltf::Semantic::Positions).ok_or_else(|| ImportError::Mesh {
        mesh: usize::MAX,
        primitive: primitive.index(),
        error: crate::MeshError::NoTriangles,
    })?;
    let positions = accessors::read_vec3(&positions, views, Attribute::Position, quantized)?;
    let normals = match primitive.get(&gltf::Semantic::Normals) {
        Some(accessor) => {
            let mut normals = accessors::read_vec3(&accessor, views, Attribute::Normal, quantized)?;
            // Quantized normals are only near unit length; the extension leaves it to the
            // application to renormalize.
            if accessor.data_type() != gltf::accessor::DataType::F32 {
                normals.iter_mut().for_each(renormalize);
            }
            normals
        }
        None => Vec::new(),
    };
    let uvs = match primitive.get(&gltf::Semantic::TexCoords(0)) {
        Some(accessor) => accessors::read_vec2(&accessor, views, quantized)?,
        None => Vec::new(),
    };
    let indices = match primitive.indices() {
        Some(accessor) => accessors::read_indices(&accessor, views)?,
        None => (0..positions.len() as u32).collect(),
    };
    Ok(MeshData { positions, normals, uvs, indices })
}

/// The `KHR_texture_transform` of `material`'s base colour texture when that texture samples
/// `TEXCOORD_0`, so the coordinates are kept as the one texture the engine knows sees them
/// (quantized files store integer coordinates and scale them back this way).
fn base_colour_uv_transform(material: &gltf::Material<'_>) -> Result<Option<glam::Affine2>, ImportError> {
    let Some(info) = material.pbr_metallic_roughness().base_color_texture() else {
        return Ok(None);
    };
    let Some(transform) = info.texture_transform() else {
        return Ok(None);
    };
    if transform.tex_coord().unwrap_or(info.tex_coord()) != 0 {
        return Ok(None);
    }
    let (offset, rotation, scale) = (transform.offset(), transform.rotation(), transform.scale());
    if !offset.iter().chain(&scale).chain([&rotation]).all(|value| value.is_finite()) {
        return Err(ImportError::Json(format!(
            "materials[{}]: the base colour texture's KHR_texture_transform is not finite",
            material.index().unwrap_or(0)
        )));
    }
    // The extension's matrix: translation * rotation * scale.
    Ok(Some(
        glam::Affine2::from_translation(offset.into())
            * glam::Affine2::from_angle(rotation)
            * glam::Affine2::from_scale(scale.into()),
    ))
}

/// Scales `normal` to unit length (a zero vector stays zero).
fn renormalize(normal: &mut [f32; 3]) {
    let length = Vec3::from(*normal).length();
    if length > 0.0 {
        *normal = (Vec3::from(*normal) / length).to_array();
    }
}

/// Each node's parent (the node graph was checked to be a forest before).
fn parents_of(document: &gltf::Document) -> Vec<Option<usize>> {
    let mut parent_of = vec![None; document.nodes().len()];
    for node in document.nodes() {
        for child in node.children() {
            parent_of[child.index()] = Some(node.index());
        }
    }
    parent_of
}

/// The nodes of the default scene (else the first; else every parentless node), parents
/// first, after checking that the node graph is a forest.
fn scene_nodes(document: &gltf::Document, mesh_primitives: &[Vec<usize>]) -> Result<Vec<SceneNode>, ImportError> {
    let node_count = document.nodes().len();
    let mut parent_of: Vec<Option<usize>> = vec![None; node_count];
    for node in document.nodes() {
        for child in node.children() {
            if child.index() == node.index() {
                return Err(ImportError::NodeGraph { node: node.index(), reason: "a node is its own child (a cycle)" });
            }
            if parent_of[child.index()].replace(node.index()).is_some() {
                return Err(ImportError::NodeGraph { node: child.index(), reason: "a node has two parents" });
            }
        }
    }
    // With at most one parent each, a cycle is a walk up the parents that never ends.
    for start in 0..node_count {
        let mut at = start;
        for _ in 0..=node_count {
            match parent_of[at] {
                Some(parent) => at = parent,
                None => break,
            }
        }
        if parent_of[at].is_some() {
            return Err(ImportError::NodeGraph { node: start, reason: "the node hierarchy has a cycle" });
        }
    }
    let roots: Vec<usize> = match document.default_scene().or_else(|| document.scenes().next()) {
        Some(scene) => scene.nodes().map(|node| node.index()).collect(),
        None => (0..node_count).filter(|&node| parent_of[node].is_none()).collect(),
    };
    let gltf_nodes: Vec<gltf::Node<'_>> = document.nodes().collect();
    let mut out = Vec::new();
    let mut placed = vec![false; node_count];
    let mut stack: Vec<(usize, Option<usize>)> = roots.iter().rev().map(|&root| (root, None)).collect();
    while let Some((index, parent)) = stack.pop() {
        if std::mem::replace(&mut placed[index], true) {
            return Err(ImportError::NodeGraph {
                node: index,
                reason: "a node is reached twice from the scene's roots",
            });
        }
        let node = &gltf_nodes[index];
        let transform = node_transform(node)?;
        let camera = node.camera().map(|camera| camera_of(&camera)).transpose()?;
        let meshes = node.mesh().map(|mesh| mesh_primitives[mesh.index()].clone()).unwrap_or_default();
        let position = out.len();
        out.push(SceneNode { node: index, name: node.name().map(String::from), parent, transform, meshes, camera });
        for child in node.children().collect::<Vec<_>>().into_iter().rev() {
            stack.push((child.index(), Some(position)));
        }
    }
    Ok(out)
}

fn node_transform(node: &gltf::Node<'_>) -> Result<Transform, ImportError> {
    let (translation, rotation, scale) = node.transform().decomposed();
    let rotation = Quat::from_array(rotation);
    let finite = translation.iter().chain(&scale).all(|value| value.is_finite()) && rotation.is_finite();
    let length = rotation.length();
    if !finite || length < 1.0e-6 {
        return Err(ImportError::Transform { node: node.index() });
    }
    Ok(Transform { translation: Vec3::from(translation), rotation: rotation / length, scale: Vec3::from(scale) })
}

fn camera_of(camera: &gltf::Camera<'_>) -> Result<Camera, ImportError> {
    let fail = |reason| ImportError::Camera { camera: camera.index(), reason };
    let projection = match camera.projection() {
        gltf::camera::Projection::Perspective(perspective) => {
            let (fov_y_radians, near) = (perspective.yfov(), perspective.znear());
            if !(fov_y_radians.is_finite() && fov_y_radians > 0.0 && fov_y_radians < std::f32::consts::PI) {
                return Err(fail("the vertical field of view is not between 0 and pi"));
            }
            if !(near.is_finite() && near > 0.0) {
                return Err(fail("the near plane is not a positive distance"));
            }
            match perspective.zfar() {
                Some(far) if far.is_finite() && far > near => {
                    Projection::PerspectiveReverse { fov_y_radians, near, far }
                }
                Some(_) => return Err(fail("the far plane is not beyond the near one")),
                None => Projection::PerspectiveInfiniteReverse { fov_y_radians, near },
            }
        }
        gltf::camera::Projection::Orthographic(orthographic) => {
            let (height, near, far) = (orthographic.ymag() * 2.0, orthographic.znear(), orthographic.zfar());
            if !(height.is_finite() && height > 0.0 && near.is_finite() && far.is_finite() && far > near) {
                return Err(fail("the orthographic volume is empty or not finite"));
            }
            Projection::Orthographic { height, near, far }
        }
    };
    Ok(Camera { projection, ..Camera::default() })
}

impl GltfScene {
    /// The material of mesh `mesh` (glTF's default material for a mesh out of range).
    pub fn material_of(&self, mesh: usize) -> &GltfMaterial {
        static DEFAULT: std::sync::OnceLock<GltfMaterial> = std::sync::OnceLock::new();
        self.materials
            .get(mesh)
            .and_then(|&material| self.material_list.get(material as usize))
            .unwrap_or_else(|| DEFAULT.get_or_init(GltfMaterial::default))
    }

    /// Bytes of the decoded images, every mip included.
    pub fn image_bytes(&self) -> usize {
        self.images.iter().map(TextureImage::bytes).sum()
    }

    /// Triangles of the finest levels of all meshes.
    pub fn triangle_count(&self) -> usize {
        self.meshes.iter().map(|mesh| mesh.levels[0].triangle_count()).sum()
    }

    /// Each node's local-to-world matrix, as [`GltfScene::nodes`] orders them (parents come
    /// before their children there, so each is its parent's times its own).
    pub fn node_worlds(&self) -> Vec<glam::Mat4> {
        let mut worlds: Vec<glam::Mat4> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let local = node.transform.to_matrix();
            worlds.push(node.parent.map_or(local, |parent| worlds[parent] * local));
        }
        worlds
    }
}

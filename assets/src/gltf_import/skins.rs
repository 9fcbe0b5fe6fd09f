//! glTF skins as engine skeletons, and the skinned vertices' influences (`JOINTS_n` and
//! `WEIGHTS_n`) as four joints and weights per vertex.
//!
//! A glTF skin lists its joints in any order; the engine's [`Skeleton`] wants parents first,
//! so the joints are sorted by depth in the node forest and the vertices' joint indices are
//! renumbered to match. A joint's parent is its nearest ancestor node among the skin's joints;
//! nodes between a joint and that ancestor become extra joints of the skeleton (no vertex
//! names them; a clip may animate them), so their transforms are kept; a root joint hangs
//! under the world transform of its parent node (the skeleton's root base). Missing inverse
//! bind matrices are identities (the specification's default).
//!
//! Bad skins are errors ([`ImportError::Skin`]): fewer inverse binds than joints, a
//! non-finite or projective one, a joint listed twice, a vertex naming a joint the skin does
//! not have with a weight above 0. Two things are repaired, each with one warning per file:
//! weights that sum to 0 (full weight on the vertex's first joint), and more than four
//! influences (`JOINTS_1`/`WEIGHTS_1`: the four largest kept, renormalized).

use std::sync::Arc;

use animation::{normalize_weights, JointPose, Skeleton};
use glam::{Affine3A, Mat4, Quat, Vec3};
use gltf::accessor::{DataType, Dimensions};

use super::accessors::read_checked;
use super::error::ImportError;
use super::views::ViewBytes;
use crate::process::SkinnedVertices;

/// A skin of the file, as engine data.
#[derive(Clone, Debug)]
pub struct GltfSkin {
    /// Its skeleton (joints parents first).
    pub skeleton: Arc<Skeleton>,
    /// Per joint of the skeleton, its glTF node.
    pub joint_nodes: Vec<usize>,
    /// Per joint of the glTF skin (the numbering `JOINTS_0` uses), its joint in the skeleton.
    pub(crate) renumber: Vec<u16>,
}

/// How many repairs a file needed, for one warning each.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SkinRepairs {
    /// Vertices whose weights summed to 0.
    pub zero_weights: usize,
    /// Vertices with more than four influences.
    pub folded: usize,
}

impl SkinRepairs {
    /// Logs one warning per kind of repair made.
    pub(crate) fn warn(&self) {
        if self.zero_weights > 0 {
            log::warn!(
                "{} skinned vertices had weights summing to 0: full weight on their first joint",
                self.zero_weights
            );
        }
        if self.folded > 0 {
            log::warn!("{} skinned vertices had more than 4 influences: the 4 largest kept, renormalized", self.folded);
        }
    }
}

/// The influences of one primitive as the file numbers its joints (the skin's list), four per
/// vertex, normalized.
#[derive(Clone, Debug, Default)]
pub(crate) struct RawInfluences {
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
}

const JOINT_TYPES: &[(DataType, bool)] = &[(DataType::U8, false), (DataType::U16, false)];
const WEIGHT_TYPES: &[(DataType, bool)] = &[(DataType::F32, false), (DataType::U8, true), (DataType::U16, true)];

/// Reads a primitive's `JOINTS_0`/`WEIGHTS_0` (and `JOINTS_1`/`WEIGHTS_1`, folded into the four
/// largest), `None` for a primitive without them. `vertex_count` is its `POSITION` count.
pub(crate) fn read_influences(
    primitive: &gltf::Primitive<'_>,
    views: &[ViewBytes<'_>],
    vertex_count: usize,
    repairs: &mut SkinRepairs,
) -> Result<Option<RawInfluences>, ImportError> {
    let mut sets = Vec::new();
    for set in 0..2 {
        let (Some(joints), Some(weights)) =
            (primitive.get(&gltf::Semantic::Joints(set)), primitive.get(&gltf::Semantic::Weights(set)))
        else {
            break;
        };
        let count_error = |accessor: &gltf::Accessor<'_>| ImportError::Accessor {
            accessor: accessor.index(),
            reason: format!("has {} elements, the primitive's POSITION {vertex_count}", accessor.count()),
        };
        for accessor in [&joints, &weights] {
            if accessor.count() != vertex_count {
                return Err(count_error(accessor));
            }
        }
        let joints: Vec<[f32; 4]> = read_checked(&joints, views, Dimensions::Vec4, JOINT_TYPES, "JOINTS")?;
        let weights: Vec<[f32; 4]> = read_checked(&weights, views, Dimensions::Vec4, WEIGHT_TYPES, "WEIGHTS")?;
        sets.push((joints, weights));
    }
    let Some((first_joints, first_weights)) = sets.first() else {
        return Ok(None);
    };
    let mut influences =
        RawInfluences { joints: Vec::with_capacity(vertex_count), weights: Vec::with_capacity(vertex_count) };
    for vertex in 0..vertex_count {
        // Values of u8/u16 components are exact in f32.
        let mut joints = first_joints[vertex].map(|joint| joint as u16);
        let mut weights = first_weights[vertex];
        if let Some((more_joints, more_weights)) = sets.get(1) {
            let mut all: [(f32, u16); 8] = std::array::from_fn(|slot| match slot {
                0..4 => (weights[slot], joints[slot]),
                _ => (more_weights[vertex][slot - 4], more_joints[vertex][slot - 4] as u16),
            });
            if all[4..].iter().any(|&(weight, _)| weight > 0.0) {
                repairs.folded += 1;
            }
            all.sort_by(|left, right| right.0.total_cmp(&left.0));
            joints = std::array::from_fn(|slot| all[slot].1);
            weights = std::array::from_fn(|slot| all[slot].0);
        }
        if !normalize_weights(&mut weights) {
            repairs.zero_weights += 1;
        }
        influences.joints.push(joints);
        influences.weights.push(weights);
    }
    Ok(Some(influences))
}

/// Per primitive: its skin's index, and its influences renumbered into that skin's skeleton
/// (`None` for a rigid primitive).
pub(crate) type BoundSkins = (Vec<Option<usize>>, Vec<Option<SkinnedVertices>>);

/// Binds each primitive with influences (`influences`, by primitive) to the skin of the first
/// node that draws its mesh with a skin; `mesh_primitives` lists each glTF mesh's primitives.
pub(crate) fn bind_mesh_skins(
    document: &gltf::Document,
    mesh_primitives: &[Vec<usize>],
    influences: &[Option<RawInfluences>],
    skins: &[GltfSkin],
) -> Result<BoundSkins, ImportError> {
    let mut mesh_skins: Vec<Option<usize>> = vec![None; influences.len()];
    let mut skinned: Vec<Option<SkinnedVertices>> = vec![None; influences.len()];
    for node in document.nodes() {
        let (Some(mesh), Some(skin)) = (node.mesh(), node.skin()) else {
            continue;
        };
        for &source in &mesh_primitives[mesh.index()] {
            if mesh_skins[source].is_some() {
                continue;
            }
            if let Some(raw) = &influences[source] {
                skinned[source] = Some(bind_influences(raw, &skins[skin.index()], skin.index(), mesh.index())?);
                mesh_skins[source] = Some(skin.index());
            }
        }
    }
    Ok((mesh_skins, skinned))
}

/// The influences renumbered into `skin`'s skeleton; a joint past the skin with a weight
/// above 0 is an error naming the skin, mesh and vertex (one with weight 0 becomes joint 0).
pub(crate) fn bind_influences(
    raw: &RawInfluences,
    skin: &GltfSkin,
    skin_index: usize,
    mesh: usize,
) -> Result<SkinnedVertices, ImportError> {
    let mut joints = Vec::with_capacity(raw.joints.len());
    for (vertex, (four, weights)) in raw.joints.iter().zip(&raw.weights).enumerate() {
        let mut bound = [0_u16; 4];
        for slot in 0..4 {
            match skin.renumber.get(usize::from(four[slot])) {
                Some(&joint) => bound[slot] = joint,
                None if weights[slot] > 0.0 => {
                    return Err(ImportError::Skin {
                        skin: skin_index,
                        reason: format!(
                            "mesh {mesh} vertex {vertex} names joint {}, the skin has {}",
                            four[slot],
                            skin.renumber.len()
                        ),
                    })
                }
                None => bound[slot] = 0,
            }
        }
        joints.push(bound);
    }
    Ok(SkinnedVertices { joints, weights: raw.weights.clone() })
}

/// Every skin of the document as a skeleton; `parent_of` is each node's parent.
pub(crate) fn read_skins(
    document: &gltf::Document,
    views: &[ViewBytes<'_>],
    parent_of: &[Option<usize>],
) -> Result<Vec<GltfSkin>, ImportError> {
    check_references(document)?;
    let nodes: Vec<gltf::Node<'_>> = document.nodes().collect();
    let local = |node: usize| -> Mat4 {
        let (translation, rotation, scale) = nodes[node].transform().decomposed();
        Mat4::from_scale_rotation_translation(Vec3::from(scale), Quat::from_array(rotation), Vec3::from(translation))
    };
    let world = |node: usize| -> Mat4 {
        let mut matrix = local(node);
        let mut at = node;
        while let Some(parent) = parent_of[at] {
            matrix = local(parent) * matrix;
            at = parent;
        }
        matrix
    };
    let depth = |node: usize| std::iter::successors(parent_of[node], |&at| parent_of[at]).count();
    document.skins().map(|skin| read_skin(&skin, views, parent_of, &local, &world, &depth, &nodes)).collect()
}

fn read_skin(
    skin: &gltf::Skin<'_>,
    views: &[ViewBytes<'_>],
    parent_of: &[Option<usize>],
    local: &impl Fn(usize) -> Mat4,
    world: &impl Fn(usize) -> Mat4,
    depth: &impl Fn(usize) -> usize,
    nodes: &[gltf::Node<'_>],
) -> Result<GltfSkin, ImportError> {
    let index = skin.index();
    let fail = |reason: String| ImportError::Skin { skin: index, reason };
    let listed: Vec<usize> = skin.joints().map(|node| node.index()).collect();
    if listed.is_empty() || listed.len() > animation::MAX_JOINTS {
        return Err(fail(format!("has {} joints, 1 to {} allowed", listed.len(), animation::MAX_JOINTS)));
    }
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(fail("lists a joint twice".into()));
    }
    let inverse_binds: Vec<Mat4> = match skin.inverse_bind_matrices() {
        Some(accessor) => {
            let matrices: Vec<[f32; 16]> =
                read_checked(&accessor, views, Dimensions::Mat4, &[(DataType::F32, false)], "inverseBindMatrices")?;
            if matrices.len() < listed.len() {
                return Err(fail(format!("has {} inverse bind matrices for {} joints", matrices.len(), listed.len())));
            }
            matrices.iter().take(listed.len()).map(Mat4::from_cols_array).collect()
        }
        None => vec![Mat4::IDENTITY; listed.len()],
    };
    if let Some(joint) = inverse_binds.iter().position(|matrix| !matrix.is_finite() || matrix.row(3) != glam::Vec4::W) {
        return Err(fail(format!("inverse bind matrix {joint} is not finite and affine")));
    }
    // The skeleton's nodes: the joints, then the nodes between a joint and its nearest joint
    // ancestor, as extra joints no vertex names (so their transforms, still or animated, sit
    // between the two as the file places them).
    let skeleton_nodes = with_nodes_between(&listed, parent_of);
    // Parents first: by depth in the node forest (a parent is shallower than its child).
    let mut order: Vec<usize> = (0..skeleton_nodes.len()).collect();
    order.sort_by_key(|&entry| (depth(skeleton_nodes[entry]), entry));
    let mut position = vec![0_u16; skeleton_nodes.len()];
    for (new, &old) in order.iter().enumerate() {
        position[old] = new as u16;
    }
    let renumber = position[..listed.len()].to_vec();
    let joint_of_node =
        |node: usize| skeleton_nodes.iter().position(|&joint| joint == node).map(|old| usize::from(position[old]));
    let mut names = Vec::with_capacity(skeleton_nodes.len());
    let mut parents = Vec::with_capacity(skeleton_nodes.len());
    let mut rest = Vec::with_capacity(skeleton_nodes.len());
    let mut bases = Vec::with_capacity(skeleton_nodes.len());
    for &old in &order {
        let node = skeleton_nodes[old];
        names.push(nodes[node].name().map_or_else(|| format!("node{node}"), String::from));
        let parent_joint = std::iter::successors(parent_of[node], |&at| parent_of[at]).find_map(joint_of_node);
        parents.push(parent_joint);
        let (scale, rotation, translation) = local(node).to_scale_rotation_translation();
        rest.push(JointPose { translation, rotation: rotation.normalize(), scale });
        // A root hangs under the nodes above it; a joint with a joint parent does not use it.
        let base = match (parent_joint, parent_of[node]) {
            (None, Some(parent)) => world(parent),
            _ => Mat4::IDENTITY,
        };
        bases.push(Affine3A::from_mat4(base));
    }
    // A node between joints moves no vertex: its inverse bind is never used.
    let binds = order.iter().map(|&old| inverse_binds.get(old).copied().unwrap_or(Mat4::IDENTITY)).collect();
    let name = skin.name().map_or_else(|| format!("skin{index}"), String::from);
    let skeleton = Skeleton::new(name, names, parents, rest, binds)
        .and_then(|skeleton| skeleton.with_root_bases(bases))
        .map_err(|error| fail(error.to_string()))?;
    let joint_nodes = order.iter().map(|&old| skeleton_nodes[old]).collect();
    Ok(GltfSkin { skeleton: Arc::new(skeleton), joint_nodes, renumber })
}

/// The skin's joints `listed`, then each node between a joint and its nearest ancestor that
/// is a joint (once each, nearest first); nodes above a root joint are not included (they are
/// its root base).
fn with_nodes_between(listed: &[usize], parent_of: &[Option<usize>]) -> Vec<usize> {
    let mut member = vec![false; parent_of.len()];
    for &joint in listed {
        member[joint] = true;
    }
    let is_joint = member.clone();
    let mut nodes = listed.to_vec();
    for &joint in listed {
        let ancestors = || std::iter::successors(parent_of[joint], |&at| parent_of[at]);
        let Some(reach) = ancestors().position(|node| is_joint[node]) else {
            continue;
        };
        for between in ancestors().take(reach) {
            if !member[between] {
                member[between] = true;
                nodes.push(between);
            }
        }
    }
    nodes
}

/// Checks every index a skin names (joints, skeleton, inverse binds) and every node's skin
/// before the `gltf` crate's accessors, which panic on a dangling one, are used.
fn check_references(document: &gltf::Document) -> Result<(), ImportError> {
    let root = document.as_json();
    for (skin, entry) in root.skins.iter().enumerate() {
        let fail = |reason: &str| Err(ImportError::Skin { skin, reason: reason.to_owned() });
        if entry.joints.iter().chain(&entry.skeleton).any(|node| node.value() >= root.nodes.len()) {
            return fail("names a node the file does not have");
        }
        if entry.inverse_bind_matrices.is_some_and(|accessor| accessor.value() >= root.accessors.len()) {
            return fail("names an accessor the file does not have");
        }
    }
    if let Some(skin) = root.nodes.iter().filter_map(|node| node.skin).find(|skin| skin.value() >= root.skins.len()) {
        return Err(ImportError::Skin {
            skin: skin.value(),
            reason: "a node names this skin, which the file does not have".into(),
        });
    }
    Ok(())
}

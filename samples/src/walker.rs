//! A procedural walking character, built in code: a humanoid skeleton of 17 joints (hips,
//! spine, chest, neck, head, two arms and two legs of three joints each), a body of boxes each
//! skinned to the one joint it follows, and a looping walk clip (legs and arms swing, knees
//! bend on the swing, the hips drop so the lower foot stays on the ground). A prefab: add its
//! mesh to a [`MeshLibrary`] with [`WalkerRig::add_to`], give each character
//! [`WalkerRig::components`], and `animation::install` poses them.
//!
//! The character stands on the origin facing +Z, 1.78 m tall; every part of the body lies in
//! [`WalkerRig::BIND_BOUNDS`]. The clip is sampled at 24 keys per cycle, all LINEAR with the
//! same times, the layout the animation system samples fastest.

use std::f32::consts::TAU;
use std::ops::Range;
use std::sync::Arc;

use animation::{AnimationClip, AnimationPlayer, Interpolation, JointBoxes, JointPose, JointTracks, Skeleton, Skin};
use animation::{SkinnedMesh, Track};
use assets::{process_skinned_mesh, MeshData, ProcessOptions, ProcessedMesh, SkinnedVertices};
use ecs::{Aabb, SkinnedPose};
use glam::{Mat4, Quat, Vec3};
use renderer::VertexSkin;
use renderer::{MeshLibrary, MeshVertices, Meshlet};

/// Joints: name, parent, and bind position in the character's space (every bind rotation is
/// the identity, so a joint's inverse bind is a translation by minus its position).
const JOINTS: [(&str, Option<usize>, [f32; 3]); 17] = [
    ("hips", None, [0.0, HIP_HEIGHT, 0.0]),
    ("spine", Some(0), [0.0, 1.02, 0.0]),
    ("chest", Some(1), [0.0, 1.22, 0.0]),
    ("neck", Some(2), [0.0, 1.46, 0.0]),
    ("head", Some(3), [0.0, 1.53, 0.0]),
    ("upper_arm_l", Some(2), [0.25, 1.42, 0.0]),
    ("forearm_l", Some(5), [0.25, 1.15, 0.0]),
    ("hand_l", Some(6), [0.25, 0.91, 0.0]),
    ("upper_arm_r", Some(2), [-0.25, 1.42, 0.0]),
    ("forearm_r", Some(8), [-0.25, 1.15, 0.0]),
    ("hand_r", Some(9), [-0.25, 0.91, 0.0]),
    ("thigh_l", Some(0), [0.1, 0.9, 0.0]),
    ("shin_l", Some(11), [0.1, 0.48, 0.0]),
    ("foot_l", Some(12), [0.1, ANKLE_HEIGHT, 0.0]),
    ("thigh_r", Some(0), [-0.1, 0.9, 0.0]),
    ("shin_r", Some(14), [-0.1, 0.48, 0.0]),
    ("foot_r", Some(15), [-0.1, ANKLE_HEIGHT, 0.0]),
];

/// Height of the hips joint in the bind pose.
const HIP_HEIGHT: f32 = 0.92;
/// Height of the ankles in the bind pose (the soles are on the ground).
const ANKLE_HEIGHT: f32 = 0.07;
/// Hip joint to knee.
const THIGH: f32 = 0.9 - 0.48;
/// Knee to ankle.
const SHIN: f32 = 0.48 - ANKLE_HEIGHT;
/// The left upper arm (the first joint of its limb; the forearm and hand follow).
const ARM_L: usize = 5;
/// The right upper arm.
const ARM_R: usize = 8;
/// The left thigh (the shin and foot follow).
const THIGH_L: usize = 11;
/// The right thigh.
const THIGH_R: usize = 14;

/// The body: per part, the joint it follows and its box in the bind pose.
const PARTS: [(usize, [f32; 3], [f32; 3]); 17] = [
    (0, [-0.17, 0.86, -0.1], [0.17, 1.02, 0.1]),
    (1, [-0.18, 1.02, -0.1], [0.18, 1.22, 0.1]),
    (2, [-0.21, 1.22, -0.12], [0.21, 1.46, 0.12]),
    (3, [-0.05, 1.46, -0.05], [0.05, 1.53, 0.05]),
    (4, [-0.1, 1.53, -0.11], [0.1, 1.78, 0.11]),
    (5, [0.21, 1.15, -0.05], [0.29, 1.44, 0.05]),
    (6, [0.215, 0.91, -0.045], [0.285, 1.15, 0.045]),
    (7, [0.22, 0.78, -0.04], [0.28, 0.91, 0.04]),
    (8, [-0.29, 1.15, -0.05], [-0.21, 1.44, 0.05]),
    (9, [-0.285, 0.91, -0.045], [-0.215, 1.15, 0.045]),
    (10, [-0.28, 0.78, -0.04], [-0.22, 0.91, 0.04]),
    (11, [0.03, 0.48, -0.08], [0.17, 0.92, 0.08]),
    (12, [0.04, ANKLE_HEIGHT, -0.06], [0.16, 0.48, 0.06]),
    (13, [0.04, 0.0, -0.05], [0.16, ANKLE_HEIGHT, 0.16]),
    (14, [-0.17, 0.48, -0.08], [-0.03, 0.92, 0.08]),
    (15, [-0.16, ANKLE_HEIGHT, -0.06], [-0.04, 0.48, 0.06]),
    (16, [-0.16, 0.0, -0.05], [-0.04, ANKLE_HEIGHT, 0.16]),
];

/// Seconds per walk cycle (two steps) at speed 1.
pub const WALK_CYCLE_SECONDS: f32 = 1.1;
/// Keys of the walk clip over one cycle (the last repeats the first, so it loops smoothly).
const WALK_KEYS: usize = 25;
/// Largest swing of a thigh, radians either way.
const STRIDE: f32 = 0.45;
/// Largest bend of the swinging leg's knee, radians.
const KNEE_BEND: f32 = 0.9;

/// The walking character (see the module docs): skeleton, walk clip, mesh and its joint boxes.
#[derive(Clone, Debug)]
pub struct WalkerRig {
    /// The skeleton (17 joints, parents first).
    pub skeleton: Arc<Skeleton>,
    /// The looping walk, [`WALK_CYCLE_SECONDS`] long.
    pub walk: Arc<AnimationClip>,
    /// The body in its bind pose (boxes with normals).
    pub mesh: MeshData,
    /// Each vertex's joint (one, full weight).
    pub skin: SkinnedVertices,
    /// Per joint, the box of the vertices it moves: what the animation system bounds the
    /// posed body with.
    pub joint_boxes: Arc<JointBoxes>,
}

impl Default for WalkerRig {
    fn default() -> Self {
        WalkerRig::new()
    }
}

impl WalkerRig {
    /// The box holding the body in its bind pose.
    pub const BIND_BOUNDS: Aabb = Aabb { min: Vec3::new(-0.29, 0.0, -0.12), max: Vec3::new(0.29, 1.78, 0.16) };

    /// How far the unskinned (bind-pose) body reaches outside the posed box at most, over
    /// the whole walk (the hips drop up to 8.3 cm at full stride, so the bind-pose head
    /// stands above the posed one; tested). A renderer that draws the body unskinned culls
    /// it safely by the posed box padded by this, as a mesh's skin radius.
    pub const BIND_POSE_MARGIN: f32 = 0.1;

    /// Builds the rig.
    pub fn new() -> WalkerRig {
        let skeleton = Arc::new(skeleton());
        let walk = Arc::new(walk_clip(&skeleton));
        let (mesh, skin) = body();
        let positions = &mesh.positions;
        let joint_boxes = JointBoxes::from_vertices(positions, &skin.joints, &skin.weights, skeleton.joint_count())
            .expect("the body has vertices");
        WalkerRig { skeleton, walk, mesh, skin, joint_boxes: Arc::new(joint_boxes) }
    }

    /// The body processed as the assets pipeline processes any mesh (meshopt orders, LOD
    /// chain, meshlets), its joints and weights carried through every level.
    pub fn processed(&self, options: &ProcessOptions) -> ProcessedMesh {
        process_skinned_mesh(&self.mesh, Some(&self.skin), options).expect("the walker's body is a valid mesh")
    }

    /// Adds level `level` of `processed` (from [`WalkerRig::processed`]) to `library` as a
    /// skinned mesh; returns its id.
    pub fn add_level(library: &mut MeshLibrary, processed: &ProcessedMesh, level: usize) -> u32 {
        let vertices =
            MeshVertices { positions: &processed.positions, normals: &processed.normals, uvs: &processed.uvs };
        let skin = processed.skin.as_ref().expect("a processed skinned mesh keeps its influences");
        let influences = meshes_skin(skin);
        let data = &processed.levels[level];
        let levels: [(&[u32], &[Meshlet]); 1] = [(&data.indices, &data.meshlets)];
        library
            .add_skinned_mesh_levels(vertices, influences, &levels)
            .expect("a processed skinned mesh is a valid library mesh")
            .start
    }

    /// Adds every level of the body to `library` as one skinned LOD chain; returns the ids.
    pub fn add_to(&self, library: &mut MeshLibrary) -> Range<u32> {
        let processed = self.processed(&ProcessOptions::default());
        let vertices =
            MeshVertices { positions: &processed.positions, normals: &processed.normals, uvs: &processed.uvs };
        let skin = processed.skin.as_ref().expect("a processed skinned mesh keeps its influences");
        let levels: Vec<(&[u32], &[Meshlet])> =
            processed.levels.iter().map(|level| (&level.indices[..], &level.meshlets[..])).collect();
        library
            .add_skinned_mesh_levels(vertices, meshes_skin(skin), &levels)
            .expect("a processed skinned mesh is a valid library mesh")
    }

    /// What an entity needs to walk: the body's joint boxes, a rig, a player of the walk
    /// starting `phase` cycles in (0 to 1) at `speed` times real time, and its pose (the bind
    /// box until the animation system first runs).
    pub fn components(&self, phase: f32, speed: f32) -> (SkinnedMesh, Skin, AnimationPlayer, SkinnedPose) {
        let mut player = AnimationPlayer::new(self.walk.clone(), &self.skeleton).expect("the walk fits its skeleton");
        player.time = phase.rem_euclid(1.0) * self.walk.duration();
        player.speed = speed;
        (
            SkinnedMesh { joint_boxes: self.joint_boxes.clone() },
            Skin::new(self.skeleton.clone()),
            player,
            SkinnedPose::from_skin_box(self.joint_boxes.bind_bounds()),
        )
    }
}

/// The library's view of processed influences.
fn meshes_skin(skin: &SkinnedVertices) -> VertexSkin<'_> {
    VertexSkin { joints: &skin.joints, weights: &skin.weights }
}

fn skeleton() -> Skeleton {
    let names = JOINTS.iter().map(|(name, ..)| (*name).to_owned()).collect();
    let parents = JOINTS.iter().map(|(_, parent, _)| *parent).collect();
    let position = |joint: usize| Vec3::from(JOINTS[joint].2);
    let rest = (0..JOINTS.len())
        .map(|joint| {
            let above = JOINTS[joint].1.map_or(Vec3::ZERO, position);
            JointPose { translation: position(joint) - above, ..JointPose::IDENTITY }
        })
        .collect();
    let inverse_binds = (0..JOINTS.len()).map(|joint| Mat4::from_translation(-position(joint))).collect();
    Skeleton::new("walker", names, parents, rest, inverse_binds).expect("the walker's joints are listed parents first")
}

/// The walk's joint angles (about X; a negative angle swings a limb forward, towards +Z) and
/// hip height at `cycle` turns (0 to 1).
struct Stride {
    thighs: [f32; 2],
    knees: [f32; 2],
    arms: [f32; 2],
    twist: f32,
    hip_height: f32,
}

impl Stride {
    fn at(cycle: f32) -> Stride {
        let (sine, cosine) = (cycle * TAU).sin_cos();
        let thighs = [STRIDE * sine, -STRIDE * sine];
        // Each knee bends while its leg swings forward (its thigh angle falling).
        let knees = [KNEE_BEND * (-cosine).max(0.0), KNEE_BEND * cosine.max(0.0)];
        // The hips drop by what the longer leg's tilt and bend shorten it (the height from hip
        // to ankle), so that the lower foot stays on the ground.
        let reach = |side: usize| THIGH * thighs[side].cos() + SHIN * (thighs[side] + knees[side]).cos();
        let hip_height = HIP_HEIGHT - (THIGH + SHIN - reach(0).max(reach(1)));
        Stride { thighs, knees, arms: [0.8 * thighs[1], 0.8 * thighs[0]], twist: 0.1 * sine, hip_height }
    }
}

fn walk_clip(skeleton: &Skeleton) -> AnimationClip {
    let times: Vec<f32> = (0..WALK_KEYS).map(|key| key as f32 / (WALK_KEYS - 1) as f32 * WALK_CYCLE_SECONDS).collect();
    let strides: Vec<Stride> = (0..WALK_KEYS).map(|key| Stride::at(key as f32 / (WALK_KEYS - 1) as f32)).collect();
    let rotation_track = |angle: &dyn Fn(&Stride) -> Quat| {
        let values = strides.iter().map(angle).collect();
        Some(Track::new(Interpolation::Linear, times.clone(), values).expect("one key per time"))
    };
    let hips = Vec3::from(JOINTS[0].2);
    let mut tracks = vec![
        JointTracks {
            joint: 0,
            translation: Some(
                Track::new(
                    Interpolation::Linear,
                    times.clone(),
                    strides.iter().map(|stride| Vec3::new(hips.x, stride.hip_height, hips.z)).collect(),
                )
                .expect("one key per time"),
            ),
            ..JointTracks::default()
        },
        JointTracks {
            joint: 1,
            rotation: rotation_track(&|stride| Quat::from_rotation_y(stride.twist)),
            ..JointTracks::default()
        },
    ];
    for (side, (arm, thigh)) in [(ARM_L, THIGH_L), (ARM_R, THIGH_R)].into_iter().enumerate() {
        let limb = |joint: usize, angle: &dyn Fn(&Stride) -> f32| JointTracks {
            joint: joint as u16,
            rotation: rotation_track(&|stride| Quat::from_rotation_x(angle(stride))),
            ..JointTracks::default()
        };
        tracks.push(limb(arm, &|stride| stride.arms[side]));
        // The elbow bends forward a little, more as the arm swings forward.
        tracks.push(limb(arm + 1, &|stride| -0.25 + 0.3 * stride.arms[side].min(0.0)));
        tracks.push(limb(thigh, &|stride| stride.thighs[side]));
        tracks.push(limb(thigh + 1, &|stride| stride.knees[side]));
        // The foot stays level with the ground.
        tracks.push(limb(thigh + 2, &|stride| -(stride.thighs[side] + stride.knees[side])));
    }
    AnimationClip::new("walk", skeleton, tracks).expect("the walk's tracks name the walker's joints")
}

/// The body's boxes, each vertex on its part's joint.
fn body() -> (MeshData, SkinnedVertices) {
    let mut mesh = MeshData::default();
    let mut skin = SkinnedVertices::default();
    for (joint, min, max) in PARTS {
        cuboid(&mut mesh, Vec3::from(min), Vec3::from(max));
        let added = mesh.positions.len() - skin.joints.len();
        skin.joints.extend(std::iter::repeat_n([joint as u16, 0, 0, 0], added));
        skin.weights.extend(std::iter::repeat_n([1.0, 0.0, 0.0, 0.0], added));
    }
    (mesh, skin)
}

/// Appends a box (four vertices per face, its normal on each, counter-clockwise outside).
fn cuboid(mesh: &mut MeshData, min: Vec3, max: Vec3) {
    let corner = |x: bool, y: bool, z: bool| {
        Vec3::new(if x { max.x } else { min.x }, if y { max.y } else { min.y }, if z { max.z } else { min.z })
    };
    let faces = [
        (
            Vec3::X,
            [
                corner(true, false, true),
                corner(true, false, false),
                corner(true, true, false),
                corner(true, true, true),
            ],
        ),
        (
            Vec3::NEG_X,
            [
                corner(false, false, false),
                corner(false, false, true),
                corner(false, true, true),
                corner(false, true, false),
            ],
        ),
        (
            Vec3::Y,
            [
                corner(false, true, true),
                corner(true, true, true),
                corner(true, true, false),
                corner(false, true, false),
            ],
        ),
        (
            Vec3::NEG_Y,
            [
                corner(false, false, false),
                corner(true, false, false),
                corner(true, false, true),
                corner(false, false, true),
            ],
        ),
        (
            Vec3::Z,
            [
                corner(false, false, true),
                corner(true, false, true),
                corner(true, true, true),
                corner(false, true, true),
            ],
        ),
        (
            Vec3::NEG_Z,
            [
                corner(true, false, false),
                corner(false, false, false),
                corner(false, true, false),
                corner(true, true, false),
            ],
        ),
    ];
    for (normal, corners) in faces {
        let first = mesh.positions.len() as u32;
        for position in corners {
            mesh.positions.push(position.into());
            mesh.normals.push(normal.into());
        }
        mesh.indices.extend([first, first + 1, first + 2, first, first + 2, first + 3]);
    }
}

#[cfg(test)]
mod tests;

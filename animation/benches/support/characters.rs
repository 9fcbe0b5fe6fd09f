//! The characters the animation bench and the `cpu_per_joint` example pose: a humanoid-sized
//! skeleton of 40 joints (or as many as asked: a spine of 10 and limbs of 7), four packed
//! clips, and one mesh's joint boxes, spawned as animated entities in an app.

use std::sync::Arc;

use animation::{
    install, AnimationClip, AnimationPlayer, Interpolation, JointBoxes, JointPose, JointTracks, Skeleton, Skin,
    SkinnedMesh, Track,
};
use ecs::SkinnedPose;
use glam::{Mat4, Quat, Vec3};
use runtime::App;

/// The joints of [`Characters::new`]'s skeleton.
pub const JOINTS: usize = 40;
/// Keys per track: a 1-second clip sampled at 30 Hz.
const KEYS: usize = 31;

/// A humanoid-sized tree of `joints` (at least 10): a spine of 10, then limbs of 7 (for 40
/// joints four limbs and a head of 2), each starting at every other spine joint from the top.
fn skeleton(joints: usize) -> Skeleton {
    let parents = (0..joints)
        .map(|joint| match joint {
            0 => None,
            1..=9 => Some(joint - 1),
            // Each limb starts at the spine and runs down its own chain.
            _ if (joint - 10) % 7 == 0 => Some(9 - ((joint - 10) / 7 * 2) % 10),
            _ => Some(joint - 1),
        })
        .collect();
    let rest =
        (0..joints).map(|_| JointPose { translation: Vec3::new(0.0, 0.2, 0.05), ..JointPose::IDENTITY }).collect();
    let inverse_binds =
        (0..joints).map(|joint| Mat4::from_translation(Vec3::new(0.0, -0.2 * joint as f32, 0.0))).collect();
    Skeleton::new("humanoid", (0..joints).map(|joint| format!("j{joint}")).collect(), parents, rest, inverse_binds)
        .unwrap()
}

fn clip(skeleton: &Skeleton, phase: f32) -> AnimationClip {
    let times: Vec<f32> = (0..KEYS).map(|key| key as f32 / (KEYS - 1) as f32).collect();
    let tracks = (0..skeleton.joint_count() as u16)
        .map(|joint| {
            let angle = |key: usize| ((key as f32 * 0.4 + joint as f32 + phase).sin()) * 0.5;
            let rotation = (0..KEYS)
                .map(|key| Quat::from_rotation_x(angle(key)) * Quat::from_rotation_z(angle(key) * 0.3))
                .collect();
            let translation = (0..KEYS).map(|key| Vec3::new(0.0, 0.2, 0.05 + angle(key) * 0.01)).collect();
            JointTracks {
                joint,
                rotation: Some(Track::new(Interpolation::Linear, times.clone(), rotation).unwrap()),
                translation: Some(Track::new(Interpolation::Linear, times.clone(), translation).unwrap()),
                scale: None,
            }
        })
        .collect();
    AnimationClip::new(format!("clip{phase}"), skeleton, tracks).unwrap()
}

fn boxes(joints: usize) -> Arc<JointBoxes> {
    let positions: Vec<[f32; 3]> =
        (0..joints * 20).map(|vertex| [(vertex % 7) as f32 * 0.03, vertex as f32 * 0.01, 0.0]).collect();
    let influences: Vec<[u16; 4]> =
        (0..positions.len()).map(|vertex| [(vertex / 20) as u16, ((vertex / 20 + 1) % joints) as u16, 0, 0]).collect();
    let weights = vec![[0.7, 0.3, 0.0, 0.0]; positions.len()];
    Arc::new(JointBoxes::from_vertices(&positions, &influences, &weights, joints).unwrap())
}

/// The shared skeleton, clips and joint boxes.
pub struct Characters {
    pub skeleton: Arc<Skeleton>,
    clips: Vec<Arc<AnimationClip>>,
    pub boxes: Arc<JointBoxes>,
}

impl Characters {
    /// Characters of [`JOINTS`] joints.
    pub fn new() -> Characters {
        Characters::with_joints(JOINTS)
    }

    /// Characters of `joints` joints (at least 10).
    #[allow(dead_code, reason = "the bench's joint-count rows use it; the cpu_per_joint example shares this file")]
    pub fn with_joints(joints: usize) -> Characters {
        let skeleton = Arc::new(skeleton(joints));
        let clips = (0..4).map(|phase| Arc::new(clip(&skeleton, phase as f32))).collect();
        Characters { skeleton, clips, boxes: boxes(joints) }
    }

    /// Joints in each character's skeleton.
    #[allow(dead_code, reason = "the bench's joint-count rows use it; the cpu_per_joint example shares this file")]
    pub fn joints(&self) -> usize {
        self.skeleton.joint_count()
    }

    /// Every key value of every clip summed: reads the clips' key data once.
    #[allow(dead_code, reason = "the bench's floor reads it; the cpu_per_joint example shares this file")]
    pub fn key_sum(&self) -> f32 {
        let mut sum = glam::Vec4::ZERO;
        for clip in &self.clips {
            for joint in clip.joint_tracks() {
                let rotations =
                    joint.rotation.iter().flat_map(|track| track.values()).map(|&value| glam::Vec4::from(value));
                let translations =
                    joint.translation.iter().flat_map(|track| track.values()).map(|value| value.extend(0.0));
                sum = rotations.chain(translations).fold(sum, |sum, value| sum + value);
            }
        }
        sum.element_sum()
    }

    pub fn player(&self, character: usize) -> AnimationPlayer {
        let mut player = AnimationPlayer::new(self.clips[character % 4].clone(), &self.skeleton).unwrap();
        player.time = (character % 97) as f32 / 97.0;
        player
    }

    pub fn app(&self, threads: usize, count: usize) -> App {
        let mut app = App::with_threads(threads);
        install(&mut app);
        app.set_fixed_delta(Some(1.0 / 60.0));
        app.world_mut().spawn_batch((0..count).map(|character| {
            let pose = SkinnedPose::from_skin_box(self.boxes.bind_bounds());
            (
                SkinnedMesh { joint_boxes: self.boxes.clone() },
                Skin::new(self.skeleton.clone()),
                self.player(character),
                pose,
            )
        }));
        app.run_frames(3);
        app
    }
}

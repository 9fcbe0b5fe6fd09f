//! After warm-up, a frame of the animation system allocates nothing.

use std::sync::Arc;

use animation::{
    install, AnimationClip, AnimationPlayer, Interpolation, JointBoxes, JointPose, JointTracks, Skeleton, Skin,
    SkinnedMesh, Track,
};
use ecs::SkinnedPose;
use glam::{Mat4, Quat, Vec3};
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};
use runtime::App;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn warm_animation_frames_do_not_allocate() {
    let joints = 12;
    let skeleton = Arc::new(
        Skeleton::new(
            "chain",
            (0..joints).map(|joint| format!("j{joint}")).collect(),
            (0..joints).map(|joint: usize| joint.checked_sub(1)).collect(),
            vec![JointPose { translation: Vec3::Y, ..JointPose::IDENTITY }; joints],
            vec![Mat4::IDENTITY; joints],
        )
        .unwrap(),
    );
    let tracks = (0..joints as u16)
        .map(|joint| JointTracks {
            joint,
            rotation: Some(
                Track::new(Interpolation::Linear, vec![0.0, 1.0], vec![Quat::IDENTITY, Quat::from_rotation_x(1.0)])
                    .unwrap(),
            ),
            ..JointTracks::default()
        })
        .collect();
    let clip = Arc::new(AnimationClip::new("bend", &skeleton, tracks).unwrap());
    let positions: Vec<[f32; 3]> = (0..joints).map(|joint| [0.0, joint as f32, 0.0]).collect();
    let influences: Vec<[u16; 4]> = (0..joints as u16).map(|joint| [joint, 0, 0, 0]).collect();
    let boxes = Arc::new(
        JointBoxes::from_vertices(&positions, &influences, &vec![[1.0, 0.0, 0.0, 0.0]; joints], joints).unwrap(),
    );
    let mut app = App::with_threads(2);
    install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    for _ in 0..2000 {
        let mut player = AnimationPlayer::new(clip.clone(), &skeleton).unwrap();
        player.crossfade_to(clip.clone(), &skeleton, 0.0).unwrap();
        let pose = SkinnedPose::from_skin_box(boxes.bind_bounds());
        app.world_mut().spawn((SkinnedMesh { joint_boxes: boxes.clone() }, Skin::new(skeleton.clone()), player, pose));
    }
    app.run_frames(10);
    settle_threads();
    let ((), allocations) = count_allocations(|| app.run_frames(30));
    assert_eq!(allocations, 0, "steady-state animation frames must not allocate");
}

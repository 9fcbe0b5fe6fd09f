//! The Visibility stage culls an animated rig by the pose the animation system wrote: a shin
//! swung outside the bind box, alone in a narrow view, keeps its mesh visible; the same mesh
//! without a rig (culled by its bind box) is culled.

use std::sync::Arc;

use animation::{
    install, AnimationClip, AnimationPlayer, Interpolation, JointBoxes, JointPose, JointTracks, Skeleton, Skin,
    SkinnedMesh, Track,
};
use culling::Visibility;
use ecs::{scene, Aabb, Camera, MaterialHandle, Mesh, MeshHandle, Projection, Transform};
use glam::{Mat4, Quat, Vec3};
use runtime::hecs::Entity;
use runtime::App;
use test_assets::skinned_bar::{knee_inverse_bind, JOINTS_PARENTS_FIRST, POSITIONS, WEIGHTS};

fn is_visible(app: &App, entity: Entity) -> bool {
    let visibility = app.resource::<Visibility>();
    let index = visibility.objects().entities.iter().position(|&other| other == entity).expect("a mesh object");
    visibility.bits().is_visible(index)
}

#[test]
fn a_swung_shin_outside_the_bind_box_is_kept_in_view() {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    install(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    // A narrow view (10°) of where the shin swings to: left of the leg, 1 m up.
    let narrow = Camera::new(Projection::PerspectiveInfiniteReverse { fov_y_radians: 10f32.to_radians(), near: 0.1 });
    scene::spawn_camera(app.world_mut(), narrow, scene::look_at(Vec3::new(-0.9, 1.0, 4.0), Vec3::new(-0.9, 1.0, 0.0)));

    // The skinned bar of `test_assets`: hip at the origin, knee 1 m up; the knee bends 90°
    // about Z, swinging the shin to -X.
    let skeleton = Arc::new(
        Skeleton::new(
            "leg",
            vec!["hip".into(), "knee".into()],
            vec![None, Some(0)],
            vec![JointPose::IDENTITY, JointPose { translation: Vec3::Y, ..JointPose::IDENTITY }],
            vec![Mat4::IDENTITY, knee_inverse_bind()],
        )
        .unwrap(),
    );
    let bent = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let rotation = Track::new(Interpolation::Step, vec![0.0], vec![bent]).unwrap();
    let tracks = vec![JointTracks { joint: 1, rotation: Some(rotation), ..JointTracks::default() }];
    let clip = Arc::new(AnimationClip::new("kneel", &skeleton, tracks).unwrap());
    let boxes = Arc::new(JointBoxes::from_vertices(&POSITIONS, &JOINTS_PARENTS_FIRST, &WEIGHTS, 2).unwrap());
    let bind = boxes.bind_bounds();
    let mesh = Mesh::new(MeshHandle(1), MaterialHandle(1), Aabb::new(bind.min, bind.max + Vec3::new(0.0, 0.0, 0.01)));

    let animated = scene::spawn_mesh(app.world_mut(), mesh, Transform::IDENTITY);
    let player = AnimationPlayer::new(clip, &skeleton).unwrap();
    app.world_mut()
        .insert(animated, (SkinnedMesh { joint_boxes: boxes.clone() }, Skin::new(skeleton), player))
        .unwrap();
    let unrigged = scene::spawn_mesh(app.world_mut(), mesh, Transform::IDENTITY);
    app.world_mut().insert_one(unrigged, SkinnedMesh { joint_boxes: boxes }).unwrap();

    // The first frame inserts the pose by command at the end of the Input stage, before the
    // Visibility stage reads it; later frames write it in place.
    for _ in 0..3 {
        app.run_frame();
        assert!(is_visible(&app, animated), "the swung shin is in view: its mesh must be kept");
        assert!(!is_visible(&app, unrigged), "the bind box alone is out of this view");
    }
}

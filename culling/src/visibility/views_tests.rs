//! Tests of the other views' answers through a real `App`.

use std::sync::Arc;

use ecs::{
    scene, Aabb, Camera, CameraRect, CameraTarget, ImageFormat, ImageTarget, Lod, LodLevel, MeshHandle, RenderSettings,
    ResolvedViews, Transform, ViewId, Visible,
};
use glam::{Quat, Vec3};
use proptest::prelude::*;
use runtime::hecs::Entity;
use runtime::App;

use super::tests::{reference_keeps, Random};
use super::{ObjectState, Visibility};

fn camera_at(app: &mut App, order: i32, eye: Vec3, target: Vec3) -> Entity {
    scene::spawn_camera(app.world_mut(), Camera { order, ..Camera::default() }, scene::look_at(eye, target))
}

/// One view's answer: its id, camera, visible slots and the mesh each draws.
type Answer = (ViewId, Option<Entity>, Vec<u32>, Vec<MeshHandle>);

/// Every answered view's answer, in render order.
fn answers(app: &App) -> Vec<Answer> {
    let visibility = app.resource::<Visibility>();
    let views = app.resource::<ResolvedViews>();
    views
        .views()
        .iter()
        .filter_map(|view| {
            let answer = visibility.for_view(view.id)?;
            let draws = (0..answer.visible().len()).map(|index| answer.draw(index)).collect();
            Some((view.id, view.camera(), answer.visible().to_vec(), draws))
        })
        .collect()
}

/// Checks every view's answer against the brute-force reference, slot by slot.
fn check_against_reference(app: &App) -> Result<(), TestCaseError> {
    let visibility = app.resource::<Visibility>();
    let views = app.resource::<ResolvedViews>();
    let settings = *app.resource::<RenderSettings>();
    prop_assert!(visibility.view().is_some());
    for frame_view in views.views() {
        let answer = visibility.for_view(frame_view.id).expect("every view with an area is answered");
        prop_assert_eq!(answer.is_main(), views.main() == Some(frame_view.id));
        prop_assert_eq!(*answer.view(), frame_view.view);
        let mut expected = Vec::new();
        for slot in 0..visibility.len() {
            let entity = visibility.objects().entities[slot];
            let drawable = entity != Entity::DANGLING && visibility.is_drawable(slot);
            let keeps = drawable
                && reference_keeps(
                    &frame_view.view,
                    &settings,
                    frame_view.view.viewport.height as f32,
                    &visibility.objects().bounds[slot],
                );
            prop_assert_eq!(answer.is_visible(slot), keeps, "view {:?} slot {}", frame_view.id, slot);
            if keeps {
                expected.push(slot as u32);
            }
            if entity != Entity::DANGLING && !answer.is_main() {
                let state = match (drawable, keeps) {
                    (false, _) => ObjectState::NotDrawable,
                    (true, true) => ObjectState::Visible,
                    (true, false) => ObjectState::Culled,
                };
                prop_assert_eq!(answer.state_of(entity), Some(state));
            }
        }
        prop_assert_eq!(answer.visible(), &expected[..], "view {:?}", frame_view.id);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn every_view_equals_a_brute_force_reference(
        seed in 1u64..u64::MAX,
        count in 0usize..260,
        others in 1usize..4,
        max_distance in prop_oneof![Just(0.0f32), 5.0f32..80.0],
        min_pixels in prop_oneof![Just(0.0f32), 0.5f32..20.0],
    ) {
        let mut app = App::with_threads(2);
        super::install(&mut app);
        let mut random = Random(seed);
        let point = |random: &mut Random, spread: f32| {
            Vec3::new(random.range(-spread, spread), random.range(-spread, spread) * 0.3, random.range(-spread, spread))
        };
        let main = camera_at(&mut app, 0, point(&mut random, 40.0), Vec3::ZERO);
        app.world_mut().insert_one(main, CameraRect::new(0.0, 0.0, 0.5, 1.0)).unwrap();
        let mut cameras = Vec::new();
        for index in 0..others {
            let camera = camera_at(&mut app, index as i32 + 1, point(&mut random, 40.0), point(&mut random, 10.0));
            let target = match index {
                0 => CameraTarget::Window,
                1 => CameraTarget::Image(ImageTarget::new("monitor", 256, 96, ImageFormat::Rgba8Srgb)),
                _ => CameraTarget::Window,
            };
            app.world_mut().insert_one(camera, target).unwrap();
            app.world_mut().insert_one(camera, CameraRect::new(0.5, 0.0, 0.5, 1.0)).unwrap();
            cameras.push(camera);
        }
        *app.resource_mut::<RenderSettings>() =
            RenderSettings { cull_max_distance: max_distance, cull_min_pixels: min_pixels, ..RenderSettings::default() };
        let mut objects = Vec::new();
        for index in 0..count {
            let half = Vec3::new(random.range(0.05, 2.0), random.range(0.05, 2.0), random.range(0.05, 2.0));
            let mut mesh = scene::unit_cube_mesh();
            mesh.bounds = Aabb::from_center_half_extent(Vec3::ZERO, half);
            let rotation = Quat::from_rotation_y(random.range(-3.0, 3.0));
            let transform = Transform::from_translation_rotation(point(&mut random, 60.0), rotation);
            let entity = scene::spawn_mesh(app.world_mut(), mesh, transform);
            if index % 7 == 3 {
                app.world_mut().insert_one(entity, Visible(false)).unwrap();
            }
            objects.push(entity);
        }
        app.run_frame();
        check_against_reference(&app)?;
        // A second frame: objects leave, a camera moves (a tracked frame for the main view).
        for entity in objects.iter().step_by(5) {
            app.world_mut().despawn(*entity).unwrap();
        }
        let moved = scene::look_at(point(&mut random, 40.0), Vec3::ZERO);
        *app.world_mut().get::<&mut Transform>(cameras[0]).unwrap() = moved;
        app.run_frame();
        check_against_reference(&app)?;
    }
}

#[test]
fn a_view_through_the_main_eye_sees_what_the_main_view_sees() {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    let eye = Vec3::new(3.0, 4.0, 30.0);
    camera_at(&mut app, 0, eye, Vec3::ZERO);
    camera_at(&mut app, 1, eye, Vec3::ZERO);
    scene::spawn_mesh_grid(app.world_mut(), 400, 3.0, scene::unit_cube_mesh());
    app.run_frame();
    let answers = answers(&app);
    assert_eq!(answers.len(), 2);
    assert!(!answers[0].2.is_empty() && answers[0].2.len() < 400, "the grid is partly in view");
    assert_eq!(answers[0].2, answers[1].2, "same eye, same viewport: same answer");
    assert_eq!(answers[0].3, answers[1].3, "and the same meshes");
}

#[test]
fn the_answers_do_not_depend_on_the_number_of_threads() {
    let run = |threads: usize| {
        let mut app = App::with_threads(threads);
        super::install(&mut app);
        camera_at(&mut app, 0, Vec3::new(0.0, 5.0, 40.0), Vec3::ZERO);
        camera_at(&mut app, 1, Vec3::new(40.0, 5.0, 0.0), Vec3::ZERO);
        camera_at(&mut app, 2, Vec3::new(-30.0, 50.0, -30.0), Vec3::new(5.0, 0.0, 5.0));
        scene::spawn_mesh_grid(app.world_mut(), 3000, 2.0, scene::unit_cube_mesh());
        app.run_frames(2);
        answers(&app)
    };
    let one = run(1);
    assert_eq!(one.len(), 3);
    assert_eq!(one, run(3));
}

#[test]
fn each_view_picks_its_own_level_of_detail() {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    let near_view = camera_at(&mut app, 0, Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO);
    let far_view = camera_at(&mut app, 1, Vec3::new(0.0, 0.0, 200.0), Vec3::ZERO);
    let object = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    let levels: Arc<[LodLevel]> = Arc::from(vec![
        LodLevel { mesh: MeshHandle(10), max_distance: 20.0 },
        LodLevel { mesh: MeshHandle(11), max_distance: f32::INFINITY },
    ]);
    app.world_mut().insert_one(object, Lod { levels, bias: 1.0 }).unwrap();
    app.run_frame();
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    let draw = |camera| {
        let answer = visibility.for_view(views.of_camera(camera).unwrap().id).unwrap();
        assert_eq!(answer.visible().len(), 1);
        answer.draw(0)
    };
    assert_eq!(draw(near_view), MeshHandle(10), "near: the finest level");
    assert_eq!(draw(far_view), MeshHandle(11), "far: the coarse level");
}

#[test]
fn a_gone_camera_and_a_view_of_no_area_have_no_answer() {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    camera_at(&mut app, 0, Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO);
    let second = camera_at(&mut app, 1, Vec3::new(10.0, 0.0, 0.0), Vec3::ZERO);
    let flat = camera_at(&mut app, 2, Vec3::new(-10.0, 0.0, 0.0), Vec3::ZERO);
    app.world_mut().insert_one(flat, CameraRect::new(0.0, 0.0, 0.0, 1.0)).unwrap();
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    app.run_frame();
    {
        let views = app.resource::<ResolvedViews>();
        let visibility = app.resource::<Visibility>();
        let second_id = views.of_camera(second).unwrap().id;
        assert_eq!(visibility.for_view(second_id).unwrap().state_of(cube), Some(ObjectState::Visible));
        assert!(visibility.for_view(views.of_camera(flat).unwrap().id).is_none(), "no area, no answer");
        assert_eq!(visibility.other_views().collect::<Vec<_>>(), [second_id]);
    }
    app.world_mut().despawn(second).unwrap();
    app.run_frame();
    let views = app.resource::<ResolvedViews>();
    let visibility = app.resource::<Visibility>();
    assert!(views.of_camera(second).is_none());
    assert_eq!(visibility.other_views().count(), 0);
    assert!(visibility.for_view(ViewId(5)).is_none());
}

/// Where the moving cube stands (the system below puts it there each frame).
struct CubeAt(Vec3);

#[test]
fn an_object_moved_by_a_system_is_followed_by_every_view() {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    camera_at(&mut app, 0, Vec3::new(0.0, 0.0, 30.0), Vec3::ZERO);
    let side = camera_at(&mut app, 1, Vec3::new(100.0, 0.0, 0.0), Vec3::new(100.0, 0.0, -10.0));
    scene::spawn_mesh_grid(app.world_mut(), 50, 3.0, scene::unit_cube_mesh());
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    app.insert_resource(CubeAt(Vec3::ZERO));
    app.add_system(
        runtime::Stage::Input,
        runtime::System::new("move cube", move |ctx| {
            let at = ctx.resource::<CubeAt>().0;
            ctx.get_mut::<Transform>(cube).expect("the cube lives").translation = at;
        })
        .writes::<Transform>()
        .reads_resource::<CubeAt>(),
    );
    let side_state = |app: &App| {
        let views = app.resource::<ResolvedViews>();
        let visibility = app.resource::<Visibility>();
        visibility.for_view(views.of_camera(side).unwrap().id).unwrap().state_of(cube)
    };
    app.run_frames(3);
    assert_eq!(side_state(&app), Some(ObjectState::Culled));
    app.run_frames(2);
    assert_eq!(side_state(&app), Some(ObjectState::Culled), "still frames keep the answer");
    app.resource_mut::<CubeAt>().0 = Vec3::new(100.0, 0.0, -20.0);
    app.run_frame();
    assert!(app.resource::<Visibility>().stats().tracked, "the move is a tracked frame");
    assert_eq!(side_state(&app), Some(ObjectState::Visible), "the side view sees the cube arrive");
}

/// The levels the system below gives the cube, when set.
struct NewLevels(Option<Lod>);

#[test]
fn levels_replaced_while_everything_stands_still_reach_every_view() {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    camera_at(&mut app, 0, Vec3::new(0.0, 0.0, 200.0), Vec3::ZERO);
    let near_view = camera_at(&mut app, 1, Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO);
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    let levels = |fine: u32| Lod {
        levels: Arc::from(vec![
            LodLevel { mesh: MeshHandle(fine), max_distance: 20.0 },
            LodLevel { mesh: MeshHandle(11), max_distance: f32::INFINITY },
        ]),
        bias: 1.0,
    };
    app.world_mut().insert_one(cube, levels(10)).unwrap();
    app.insert_resource(NewLevels(None));
    app.add_system(
        runtime::Stage::Input,
        runtime::System::new("swap levels", move |ctx| {
            if let Some(lod) = ctx.resource_mut::<NewLevels>().0.take() {
                *ctx.get_mut::<Lod>(cube).expect("the cube lives") = lod;
            }
        })
        .writes::<Lod>()
        .writes_resource::<NewLevels>(),
    );
    let near_draw = |app: &App| {
        let views = app.resource::<ResolvedViews>();
        let answer = app.resource::<Visibility>();
        let answer = answer.for_view(views.of_camera(near_view).unwrap().id).unwrap();
        answer.draw(0)
    };
    app.run_frames(4);
    assert_eq!(near_draw(&app), MeshHandle(10));
    app.resource_mut::<NewLevels>().0 = Some(levels(12));
    app.run_frame();
    assert_eq!(app.resource::<Visibility>().changes().count(), 0, "the main view's draw did not change");
    assert_eq!(near_draw(&app), MeshHandle(12), "the near view draws the new level");
}

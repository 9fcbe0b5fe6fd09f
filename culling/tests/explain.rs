//! `Visibility::explain` agrees with the stage's verdict (`state_of`) for every object of a
//! scene that holds each reason: visible, off each kind of frustum plane, too far, too
//! small, occluded by the CPU occlusion, not drawable for each missing piece, kept for bad
//! numbers; and it names the level of detail and why, and for the occlusion the mip its test
//! read with the occluder depth against the object's nearest depth. Another view (a second camera) is
//! explained against its own eye, agreeing with its own answer.

use culling::occlusion::{OccluderMesh, OccluderMeshes, FOOTPRINT_TEXELS};
use culling::{Aabb, FrustumPlane, Kept, Missing, ObjectState, OcclusionVerdict, Reason, Visibility};
use ecs::{scene, Camera, Lod, LodLevel, MaterialHandle, Mesh, MeshHandle, RenderSettings, Transform, Visible};
use glam::Vec3;
use runtime::hecs::Entity;
use runtime::App;

/// Mesh 1: a wall 20 wide and high, 1 deep, whose occluder is its own box.
const WALL: MeshHandle = MeshHandle(1);

/// What each entity of the scene is there to show.
struct Scene {
    app: App,
    seen: Entity,
    behind: Entity,
    left: Entity,
    far: Entity,
    tiny: Entity,
    hidden_by_wall: Entity,
    switched_off: Entity,
    no_mesh: Entity,
    no_transform: Entity,
    not_finite: Entity,
    with_levels: Entity,
    wall: Entity,
}

fn scene() -> Scene {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    {
        let mut settings = app.resource_mut::<RenderSettings>();
        settings.cull_max_distance = 200.0;
        settings.cull_min_pixels = 4.0;
    }
    let wall_box = Aabb::new(Vec3::new(-10.0, -10.0, -0.5), Vec3::new(10.0, 10.0, 0.5));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(WALL, OccluderMesh::from_box(&wall_box).expect("a valid wall"));
    app.insert_resource(occluders);
    let world = app.world_mut();
    scene::spawn_camera(world, Camera::default(), scene::look_at(Vec3::new(0.0, 0.0, 10.0), Vec3::ZERO));
    let cube = scene::unit_cube_mesh;
    let at = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
    let wall = scene::spawn_mesh(world, Mesh::new(WALL, MaterialHandle(0), wall_box), at(30.0, 0.0, -40.0));
    let seen = scene::spawn_mesh(world, cube(), at(0.0, 0.0, 0.0));
    let behind = scene::spawn_mesh(world, cube(), at(0.0, 0.0, 30.0));
    let left = scene::spawn_mesh(world, cube(), at(-80.0, 0.0, -5.0));
    let far = scene::spawn_mesh(world, cube(), at(0.0, 0.0, -400.0));
    let tiny_transform = Transform { scale: Vec3::splat(0.002), ..at(0.0, 2.0, -60.0) };
    let tiny = scene::spawn_mesh(world, cube(), tiny_transform);
    // On the ray from the eye through the wall's centre, 30 further.
    let hidden_by_wall = scene::spawn_mesh(world, cube(), at(48.0, 0.0, -70.0));
    let switched_off = world.spawn((cube(), at(1.0, 0.0, 0.0), Visible(false)));
    let nothing = Mesh { mesh: MeshHandle::NONE, ..cube() };
    let no_mesh = scene::spawn_mesh(world, nothing, at(2.0, 0.0, 0.0));
    let no_transform = world.spawn((cube(),));
    let not_finite = scene::spawn_mesh(world, cube(), at(f32::NAN, 0.0, 0.0));
    let levels =
        vec![LodLevel { mesh: MeshHandle(0), max_distance: 5.0 }, LodLevel { mesh: MeshHandle(0), max_distance: 50.0 }];
    let lod = Lod { levels: levels.into(), bias: 1.0 };
    let with_levels = world.spawn((cube(), at(-1.0, 0.0, -10.0), lod));
    app.run_frames(2);
    Scene {
        app,
        seen,
        behind,
        left,
        far,
        tiny,
        hidden_by_wall,
        switched_off,
        no_mesh,
        no_transform,
        not_finite,
        with_levels,
        wall,
    }
}

#[test]
fn explain_agrees_with_the_stage_for_every_object_and_covers_each_reason() {
    let scene = scene();
    let app = &scene.app;
    let visibility = app.resource::<Visibility>();
    let settings = app.resource::<RenderSettings>();
    let explain = |entity| visibility.explain(app.world(), &settings, entity);
    for &entity in &visibility.objects().entities {
        if entity == Entity::DANGLING {
            continue;
        }
        let explanation = explain(entity);
        assert_eq!(explanation.reason.state(), visibility.state_of(entity), "{explanation:?}");
        assert_eq!(explanation.state, visibility.state_of(entity));
    }
    assert_eq!(explain(scene.seen).reason, Reason::Visible);
    assert_eq!(explain(scene.wall).reason, Reason::Visible);
    match explain(scene.behind).reason {
        Reason::OffFrustum { plane: FrustumPlane::Near, outside_by } => {
            assert!((outside_by - 19.5).abs() < 0.5, "the cube's nearest corner is 19.5 behind the eye: {outside_by}")
        }
        other => panic!("behind the camera: {other:?}"),
    }
    match explain(scene.left).reason {
        Reason::OffFrustum { plane: FrustumPlane::Left, outside_by } => assert!(outside_by > 1.0),
        other => panic!("far to the left: {other:?}"),
    }
    match explain(scene.far).reason {
        Reason::TooFar { distance, max_distance } => {
            assert!((distance - 410.0).abs() < 1e-2 && max_distance == 200.0, "{distance} {max_distance}")
        }
        other => panic!("far away: {other:?}"),
    }
    match explain(scene.tiny).reason {
        Reason::TooSmall { pixels, min_pixels } => assert!(pixels < min_pixels && pixels > 0.0, "{pixels}"),
        other => panic!("a speck: {other:?}"),
    }
    assert_eq!(explain(scene.hidden_by_wall).reason, Reason::Occluded);
    assert_eq!(visibility.state_of(scene.hidden_by_wall), Some(ObjectState::Occluded));
    assert_eq!(explain(scene.switched_off).reason, Reason::NotDrawable(Missing::Hidden));
    assert_eq!(explain(scene.no_mesh).reason, Reason::NotDrawable(Missing::MeshHandle));
    assert_eq!(explain(scene.no_transform).reason, Reason::NotDrawable(Missing::Transform));
    assert_eq!(explain(scene.not_finite).reason, Reason::Kept(Kept::NonFinite));
    let levelled = explain(scene.with_levels);
    let lod = levelled.lod.expect("an object with levels");
    assert_eq!((lod.level, lod.levels), (1, 2), "20 units away is past the first level's 5: {lod:?}");
    assert!(lod.scaled_distance > 5.0 && lod.scaled_distance <= lod.range, "{lod:?}");
    assert!(explain(scene.seen).lod.is_none());
}

#[test]
fn no_answer_without_a_cull() {
    let mut app = App::with_threads(1);
    culling::install(&mut app);
    let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    let explanation = visibility.explain(app.world(), &app.resource::<RenderSettings>(), cube);
    assert_eq!((explanation.reason, explanation.state), (Reason::NoAnswer, None), "no camera, no view");
}

/// A second camera across the scene, looking back at it: its answer is explained against its
/// own eye and frustum, agrees with its `state_of` for every object, and never says occluded
/// (other views have no occlusion).
#[test]
fn another_views_explanation_agrees_with_that_views_answer() {
    let mut scene = scene();
    let across = scene::look_at(Vec3::new(0.0, 0.0, -100.0), Vec3::ZERO);
    scene::spawn_camera(scene.app.world_mut(), Camera { order: 1, ..Camera::default() }, across);
    scene.app.run_frames(2);
    let app = &scene.app;
    let (visibility, settings) = (app.resource::<Visibility>(), app.resource::<RenderSettings>());
    let views = app.resource::<ecs::ResolvedViews>();
    let other = views.views().iter().find(|view| Some(view.id) != views.main()).expect("the second camera's view");
    let second = visibility.for_view(other.id).expect("an answer for the second view");
    let main = visibility.for_view(views.main().expect("a main view")).expect("the main answer");
    for &entity in &visibility.objects().entities {
        if entity == Entity::DANGLING {
            continue;
        }
        let explanation = second.explain(app.world(), &settings, entity);
        assert_eq!(explanation.reason.state(), second.state_of(entity), "{explanation:?}");
        assert_ne!(explanation.reason, Reason::Occluded, "{explanation:?}");
        assert_eq!(main.explain(app.world(), &settings, entity), visibility.explain(app.world(), &settings, entity));
    }
    assert!(matches!(visibility.explain(app.world(), &settings, scene.behind).reason, Reason::OffFrustum { .. }));
    assert_eq!(second.explain(app.world(), &settings, scene.behind).reason, Reason::Visible, "in front of it");
    assert_eq!(visibility.explain(app.world(), &settings, scene.hidden_by_wall).reason, Reason::Occluded);
}

/// Every object in the frustum of a scene with a CPU occlusion raster is explained with what
/// its test read, and that read gives the stage's verdict: the occluded ones (a row of cubes
/// behind the wall, partly past its edge) with the mip read and an occluder depth nearer than
/// their nearest depth, the others with one that is not.
#[test]
fn occluded_objects_are_explained_with_the_mip_and_depths_their_test_read() {
    let mut scene = scene();
    let world = scene.app.world_mut();
    // Behind the wall, from well inside its shadow to past its right edge.
    let row: Vec<Entity> = (0..24)
        .map(|index| {
            let position = Vec3::new(38.0 + index as f32 * 1.5, 0.0, -70.0);
            scene::spawn_mesh(world, scene::unit_cube_mesh(), Transform::from_translation(position))
        })
        .collect();
    scene.app.run_frames(2);
    let app = &scene.app;
    let visibility = app.resource::<Visibility>();
    let settings = app.resource::<RenderSettings>();
    let (mut occluded, mut read_visible) = (0, 0);
    for &entity in visibility.objects().entities.iter().filter(|&&entity| entity != Entity::DANGLING) {
        let explanation = visibility.explain(app.world(), &settings, entity);
        let in_frustum = matches!(explanation.reason, Reason::Visible | Reason::Occluded);
        assert_eq!(explanation.occlusion.is_some(), in_frustum, "{explanation:?}");
        let Some(detail) = explanation.occlusion else { continue };
        let hidden = visibility.state_of(entity) == Some(ObjectState::Occluded);
        assert_eq!(detail.verdict == OcclusionVerdict::Occluded, hidden, "{explanation:?}");
        assert_eq!(explanation.reason == Reason::Occluded, hidden);
        let Some(read) = detail.read else { continue };
        let levels = (detail.buffer[0].max(detail.buffer[1]) as f32).log2().ceil() as u32 + 1;
        assert!(read.level < levels, "{read:?} of a {:?} buffer", detail.buffer);
        assert!(read.texels.iter().all(|&side| (1..=FOOTPRINT_TEXELS as u32).contains(&side)), "{read:?}");
        assert!((0.0..=1.0).contains(&read.nearest_depth), "reversed-Z depths: {read:?}");
        if hidden {
            occluded += 1;
            assert!(read.occluder_depth > read.nearest_depth, "an occluder nearer than the box: {read:?}");
        } else {
            read_visible += 1;
            assert!(read.occluder_depth <= read.nearest_depth, "no occluder nearer everywhere: {read:?}");
        }
    }
    assert!(occluded >= 10, "the row behind the wall is hidden: {occluded}");
    assert!(read_visible >= 3, "the row's end past the wall, the wall and the cube in front are seen: {read_visible}");
    let row_hidden = row.iter().filter(|&&cube| visibility.state_of(cube) == Some(ObjectState::Occluded)).count();
    assert!(row_hidden > 0 && row_hidden < row.len(), "the row is partly hidden: {row_hidden}");
}

/// Where no CPU occlusion rasterized (occlusion off), no object is explained with a read.
#[test]
fn without_a_raster_no_occlusion_detail() {
    let mut scene = scene();
    scene.app.resource_mut::<RenderSettings>().occlusion_culling = false;
    scene.app.run_frame();
    let app = &scene.app;
    let visibility = app.resource::<Visibility>();
    let settings = app.resource::<RenderSettings>();
    for entity in [scene.seen, scene.wall, scene.hidden_by_wall] {
        let explanation = visibility.explain(app.world(), &settings, entity);
        assert_eq!(explanation.reason, Reason::Visible, "{explanation:?}");
        assert_eq!(explanation.occlusion, None);
    }
}

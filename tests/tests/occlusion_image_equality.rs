//! The proof for CPU occlusion culling: with occluders registered, the image rendered from the
//! Visibility stage's list (frustum plus occlusion) equals, pixel for pixel, the image with
//! culling off, while occlusion hid a good share of the scene.
//!
//! The scene: a row of wall segments with gaps, and boxes behind them, some peeking over a
//! wall's top or through a gap by a little, some in front. A deliberately wrong occlusion
//! rule (hide everything farther than the walls) must change the image, so the scene can
//! catch a false-hidden object. Runs on lavapipe with validation in CI; skips without Vulkan.

use culling::occlusion::{OccluderMesh, OccluderMeshes};
use culling::Visibility;
use ecs::{scene, Aabb, Camera, MaterialHandle, Mesh, MeshHandle, Transform, Viewport};
use glam::{Mat4, Quat, Vec3};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use runtime::App;
use tests::offscreen::{describe_difference, objects_drawn, OffscreenRenderer};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 256, height: 160 };

/// The walls' mesh: a unit cube that occludes (its occluder is its own box).
const WALL: MeshHandle = MeshHandle(1);

/// Depth of the wall row in front of the camera.
const WALL_Z: f32 = -20.0;

/// A small deterministic generator (64-bit LCG, high bits out).
struct Lcg(u64);

impl Lcg {
    fn range(&mut self, low: f32, high: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        low + (high - low) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }
}

fn unit_box() -> Aabb {
    Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5))
}

/// Wall segments 6 m tall across the view, with 1.5 m gaps between them.
fn walls() -> Vec<Transform> {
    (-4..4)
        .map(|segment| {
            let centre_x = segment as f32 * 6.0 + 3.0;
            Transform {
                translation: Vec3::new(centre_x, 3.0, WALL_Z),
                rotation: Quat::IDENTITY,
                scale: Vec3::new(4.5, 6.0, 1.0),
            }
        })
        .collect()
}

/// Boxes behind the walls (most hidden, some over the top or in a gap) and a few in front.
fn boxes(random: &mut Lcg) -> Vec<Transform> {
    let mut boxes = Vec::new();
    for index in 0..600 {
        let in_front = index % 10 == 0;
        let z = if in_front { random.range(-17.0, -6.0) } else { random.range(-60.0, -22.0) };
        let size = random.range(0.2, 1.6);
        let position = Vec3::new(random.range(-30.0, 30.0), random.range(size * 0.5, 9.0), z);
        let rotation = Quat::from_rotation_y(random.range(0.0, std::f32::consts::TAU));
        boxes.push(Transform { translation: position, rotation, scale: Vec3::splat(size) });
    }
    boxes
}

#[test]
fn occlusion_culling_keeps_the_image() {
    let Some(device) = gpu_test_context() else { return };
    let mut random = Lcg(0x0cc1_0de5);

    let mut app = App::with_threads(2);
    culling::install(&mut app);
    app.insert_resource(Viewport::new(EXTENT.width, EXTENT.height));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(WALL, OccluderMesh::from_box(&unit_box()).expect("a unit box is a valid occluder"));
    app.insert_resource(occluders);
    let eye = Vec3::new(0.0, 1.7, 0.0);
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, Vec3::new(0.0, 2.5, -30.0)));
    let wall_mesh = Mesh::new(WALL, MaterialHandle(0), unit_box());
    scene::spawn_meshes(app.world_mut(), walls().into_iter().map(|transform| (transform, wall_mesh)));
    scene::spawn_meshes(
        app.world_mut(),
        boxes(&mut random).into_iter().map(|transform| (transform, scene::unit_cube_mesh())),
    );
    app.run_frame();

    let visibility = app.resource::<Visibility>();
    let stats = *visibility.stats();
    let total = visibility.len();
    let worlds: Vec<Mat4> = visibility.objects().models.clone();
    let visible = visibility.visible().to_vec();
    let view_projection = visibility.view().expect("the camera gives a view").view_projection;
    assert!(
        stats.occluded * 4 >= total,
        "occlusion hid only {} of {total} objects; the test proves little",
        stats.occluded
    );

    let mut renderer = OffscreenRenderer::new(&device, EXTENT, total as u32).expect("renderer");
    renderer.set_objects(&worlds).expect("objects fit");
    let all = renderer.render(view_projection, None).expect("render with culling off");
    let culled = renderer.render(view_projection, Some(&visible)).expect("render the visible list");

    let drawn = objects_drawn(&all);
    let wrongly_hidden: Vec<usize> =
        drawn.iter().map(|&object| object as usize).filter(|&object| visibility.is_occluded(object)).collect();
    assert!(wrongly_hidden.is_empty(), "occluded objects cover pixels: {wrongly_hidden:?}");
    if let Some(difference) = describe_difference(EXTENT, &all, &culled) {
        panic!("culling off and the Visibility list (with occlusion) differ: {difference}");
    }

    // A wrong rule: hide every box whose centre lies beyond the walls. Boxes that show over
    // the walls or through the gaps then vanish, and the image must change.
    let beyond_walls: Vec<u32> = (0..total as u32)
        .filter(|&object| {
            let object = object as usize;
            visibility.objects().draws[object].mesh == WALL || worlds[object].w_axis.z > WALL_Z - 0.5
        })
        .collect();
    let wrong = renderer.render(view_projection, Some(&beyond_walls)).expect("render the wrong list");
    assert!(
        describe_difference(EXTENT, &all, &wrong).is_some(),
        "hiding everything behind the walls left the image unchanged; the scene cannot catch a false-hidden object"
    );
    println!(
        "occlusion: {total} objects, {} visible, {} occluded, {} frustum-culled, {} covering pixels",
        stats.visible,
        stats.occluded,
        stats.frustum_rejected,
        drawn.len()
    );
    drop(visibility);
    assert_no_validation_messages(&device);
}

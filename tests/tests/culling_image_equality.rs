//! The proof of conservative culling: the image rendered with culling on equals, pixel for
//! pixel, the image rendered with culling off, from the same camera.
//!
//! Each pose builds a scene of unit cubes with `ecs::scene` helpers in an `App` with
//! `culling::install`, runs one frame, and renders that frame's objects three times with the
//! standard passes (depth prepass, geometry, readback; one flat colour per object):
//!
//! - every drawable object (culling off, the brute-force reference);
//! - the Visibility stage's `visible` list;
//! - the list of a direct `Frustum::may_intersect_aabb` test of each world box.
//!
//! All three images must be identical, and culling must have removed objects (otherwise the
//! test proves nothing). Runs on lavapipe with validation in CI; skips without Vulkan.

use std::sync::Arc;

use culling::{Frustum, Visibility};
use ecs::{scene, Camera, Transform, Viewport};
use glam::{EulerRot, Mat4, Quat, Vec3, Vec4};
use render_graph::device::GpuDevice;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::vk;
use runtime::App;
use tests::offscreen::{describe_difference, objects_drawn, OffscreenRenderer};

const EXTENT: vk::Extent2D = vk::Extent2D { width: 192, height: 128 };

/// A small deterministic generator (64-bit LCG, high bits out), so the scene is the same on
/// every run and machine.
struct Lcg(u64);

impl Lcg {
    fn next_unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.next_unit()
    }

    fn rotation(&mut self) -> Quat {
        let tau = std::f32::consts::TAU;
        Quat::from_euler(EulerRot::XYZ, self.range(0.0, tau), self.range(0.0, tau), self.range(0.0, tau))
    }
}

/// One frame of the Visibility stage over `boxes`, seen from `eye` looking at `target`.
struct CulledFrame {
    worlds: Vec<Mat4>,
    visible: Vec<u32>,
    drawable: Vec<u32>,
    view_projection: Mat4,
}

fn app_with_camera(eye: Vec3, target: Vec3) -> App {
    let mut app = App::with_threads(2);
    culling::install(&mut app);
    app.insert_resource(Viewport::new(EXTENT.width, EXTENT.height));
    scene::spawn_camera(app.world_mut(), Camera::default(), scene::look_at(eye, target));
    app
}

/// The view-projection matrix the app resolves for a camera at `eye` looking at `target`.
fn view_projection_of(eye: Vec3, target: Vec3) -> Mat4 {
    let mut app = app_with_camera(eye, target);
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    visibility.view().expect("the camera gives a view").view_projection
}

fn cull(boxes: &[Transform], eye: Vec3, target: Vec3) -> CulledFrame {
    let mut app = app_with_camera(eye, target);
    scene::spawn_meshes(app.world_mut(), boxes.iter().map(|&transform| (transform, scene::unit_cube_mesh())));
    app.run_frame();
    let visibility = app.resource::<Visibility>();
    assert_eq!(visibility.len(), boxes.len(), "every box is one object");
    CulledFrame {
        worlds: visibility.objects().models.clone(),
        visible: visibility.visible().to_vec(),
        drawable: visibility.scene().to_vec(),
        view_projection: visibility.view().expect("the camera gives a view").view_projection,
    }
}

/// Boxes scattered all around the camera (many behind it), rotated and scaled, some tiny,
/// some far, some crossing the near plane.
fn scattered_boxes(eye: Vec3, random: &mut Lcg) -> Vec<Transform> {
    let mut boxes = Vec::new();
    for index in 0..360 {
        let translation = match index % 6 {
            // Far away in any direction.
            0 => {
                let direction = Vec3::new(random.range(-1.0, 1.0), random.range(-0.3, 0.3), random.range(-1.0, 1.0));
                direction.normalize_or(Vec3::X) * random.range(200.0, 1500.0)
            }
            // Right next to the camera (some straddle the near plane).
            1 => eye + Vec3::new(random.range(-2.0, 2.0), random.range(-2.0, 2.0), random.range(-2.0, 2.0)),
            // Around the camera, but not so close that one box fills the view.
            _ => loop {
                let candidate =
                    Vec3::new(random.range(-60.0, 60.0), random.range(-20.0, 20.0), random.range(-60.0, 60.0));
                if candidate.distance(eye) > 8.0 {
                    break candidate;
                }
            },
        };
        let scale = match (index % 6, index % 5) {
            (0, _) => Vec3::splat(random.range(8.0, 40.0)),
            (1, _) => Vec3::splat(random.range(0.05, 0.6)),
            (_, 0) => Vec3::splat(random.range(0.01, 0.08)),
            (_, 1) => Vec3::new(random.range(0.2, 4.0), random.range(0.2, 4.0), random.range(0.2, 4.0)),
            _ => Vec3::splat(random.range(0.5, 2.5)),
        };
        boxes.push(Transform { translation, rotation: random.rotation(), scale });
    }
    boxes
}

/// Walls of boxes lying in the side planes of the frustum of `view_projection`, seen
/// edge-on from `eye`: rows of boxes at several distances, each row stepping from fully
/// outside a plane, through straddling it, to fully inside.
fn edge_on_walls(view_projection: Mat4, eye: Vec3, forward: Vec3, random: &mut Lcg) -> Vec<Transform> {
    let frustum = Frustum::from_view_projection(view_projection);
    let mut boxes = Vec::new();
    for (plane_index, plane) in frustum.planes().iter().take(4).enumerate() {
        let normal = plane.truncate();
        let lateral = normal.cross(forward).normalize();
        for step in 0..12 {
            let distance = 3.0 + step as f32 * step as f32 * 1.5;
            let ahead = eye + forward * distance;
            let on_plane = ahead - normal * plane_distance(*plane, ahead);
            let size = 0.3 + distance * 0.05;
            // Reach of an axis-aligned box of half-size `size / 2` along the normal.
            let reach = 0.5 * size * (normal.x.abs() + normal.y.abs() + normal.z.abs());
            for offset in [-1.5, -1.02, -0.98, -0.5, 0.0, 0.5, 0.98, 1.02] {
                for side in [-1.0, 1.0] {
                    let along = lateral * side * size * (1.0 + plane_index as f32);
                    let rotated = step % 3 == 0 && offset == 0.0;
                    boxes.push(Transform {
                        translation: on_plane + normal * (offset * reach) + along,
                        rotation: if rotated { random.rotation() } else { Quat::IDENTITY },
                        scale: Vec3::splat(size),
                    });
                }
            }
        }
    }
    boxes
}

fn plane_distance(plane: Vec4, point: Vec3) -> f32 {
    plane.truncate().dot(point) + plane.w
}

/// Objects whose world box crosses at least one frustum plane.
fn straddling_count(frame: &CulledFrame) -> usize {
    let frustum = Frustum::from_view_projection(frame.view_projection);
    frame
        .worlds
        .iter()
        .filter(|world| {
            let bounds = scene::unit_cube_mesh().bounds.transformed(world);
            frustum.planes().iter().any(|plane| {
                let normal = plane.truncate();
                let reach = bounds.half_extent().dot(normal.abs());
                plane_distance(*plane, bounds.center()).abs() < reach
            })
        })
        .count()
}

/// Renders the frame with culling off, with the Visibility stage's list and with a direct
/// frustum test, and checks the three images are equal.
fn assert_culling_keeps_the_image(device: &Arc<GpuDevice>, pose: &str, frame: &CulledFrame) {
    let total = frame.worlds.len();
    assert_eq!(frame.drawable.len(), total, "{pose}: every cube is drawable");
    let culled = total - frame.visible.len();
    assert!(culled * 4 >= total, "{pose}: culling removed only {culled} of {total} objects; the test proves little");
    assert!(!frame.visible.is_empty(), "{pose}: something is visible");

    let frustum = Frustum::from_view_projection(frame.view_projection);
    let frustum_list: Vec<u32> = (0..total as u32)
        .filter(|&index| {
            frustum.may_intersect_aabb(&scene::unit_cube_mesh().bounds.transformed(&frame.worlds[index as usize]))
        })
        .collect();

    // A cull that is not conservative (it drops boxes whose centre is outside, straddling
    // or not) must change the image: the scene is sensitive to false-hidden objects.
    let centre_list: Vec<u32> = (0..total as u32)
        .filter(|&index| {
            let centre = frame.worlds[index as usize].w_axis.truncate();
            frustum.planes().iter().all(|plane| plane_distance(*plane, centre) >= 0.0)
        })
        .collect();

    let mut renderer = OffscreenRenderer::new(device, EXTENT, total as u32).expect("renderer");
    renderer.set_objects(&frame.worlds).expect("objects fit");
    let all = renderer.render(frame.view_projection, None).expect("render with culling off");
    let visible = renderer.render(frame.view_projection, Some(&frame.visible)).expect("render the visible list");
    let direct = renderer.render(frame.view_projection, Some(&frustum_list)).expect("render the frustum list");

    let centre_only = renderer.render(frame.view_projection, Some(&centre_list)).expect("render the centre list");
    let drawn = objects_drawn(&all);
    assert!(drawn.len() >= 20, "{pose}: only {} objects cover pixels; the scene is too sparse", drawn.len());
    let hidden_but_drawn: Vec<u32> =
        drawn.iter().copied().filter(|object| frame.visible.binary_search(object).is_err()).collect();
    assert!(hidden_but_drawn.is_empty(), "{pose}: culled objects cover pixels: {hidden_but_drawn:?}");
    if let Some(difference) = describe_difference(EXTENT, &all, &visible) {
        panic!("{pose}: culling off and the Visibility list differ: {difference}");
    }
    if let Some(difference) = describe_difference(EXTENT, &all, &direct) {
        panic!("{pose}: culling off and the direct frustum list differ: {difference}");
    }
    assert!(
        describe_difference(EXTENT, &all, &centre_only).is_some(),
        "{pose}: dropping straddling boxes left the image unchanged; the scene cannot catch a false-hidden cull"
    );
    println!(
        "{pose}: {total} objects, {} visible ({} by direct frustum test), {culled} culled, {} straddling a plane, \
         {} covering pixels",
        frame.visible.len(),
        frustum_list.len(),
        straddling_count(frame),
        drawn.len()
    );
}

#[test]
fn culling_on_and_off_render_identical_images() {
    let Some(device) = gpu_test_context() else { return };
    let mut random = Lcg(0x5eed_cafe);

    // Pose 1: boxes all around a camera that looks slightly down across the scene.
    let eye = Vec3::new(0.0, 2.0, 0.0);
    let target = Vec3::new(10.0, -1.0, -20.0);
    let frame = cull(&scattered_boxes(eye, &mut random), eye, target);
    assert!(straddling_count(&frame) >= 20, "pose 1: too few boxes straddle a plane");
    assert_culling_keeps_the_image(&device, "scattered", &frame);

    // Pose 2: walls of boxes lying in the frustum's side planes, seen edge-on.
    let eye = Vec3::new(5.0, 1.0, 5.0);
    let target = Vec3::new(-20.0, 3.0, -40.0);
    let forward = (target - eye).normalize();
    let view_projection = view_projection_of(eye, target);
    let frame = cull(&edge_on_walls(view_projection, eye, forward, &mut random), eye, target);
    assert_eq!(frame.view_projection, view_projection, "the walls were built for the view they are seen from");
    assert!(straddling_count(&frame) >= 150, "pose 2: the walls must straddle the planes");
    assert_culling_keeps_the_image(&device, "edge-on walls", &frame);

    assert_no_validation_messages(&device);
}

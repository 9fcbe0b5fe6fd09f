//! The kernels against a brute-force reference and against each other.
//!
//! Conservativeness: random boxes under random affine transforms, seen by random cameras of
//! every projection kind (infinite reversed-Z, finite reversed-Z, orthographic reversed-Z).
//! Points of each box (corners, centre, random interior points) go to clip space in double
//! precision; a box with a point clearly inside the clip volume (`-w <= x, y <= w`,
//! `0 <= z <= w`, `w > 0`, by a relative margin of 1e-4 that covers float rounding) must be
//! kept by every kernel, as a box and as its bounding sphere.
//!
//! Agreement: every kernel gives the same words and statistics as the scalar reference,
//! including on counts that are not a multiple of 8 or 64, on boxes placed exactly on a
//! plane (where a fused multiply-add would round differently), and on NaN and infinity.

use super::*;
use crate::kernels::coverage;
use ecs::{Aabb, Sphere};
use glam::{DMat4, DVec4, EulerRot, Mat4, Quat, Vec3};
use proptest::prelude::*;

/// Relative margin by which a sample point must be inside the clip volume to count.
const CLIP_MARGIN: f64 = 1.0e-4;

/// The three projection kinds of the engine, all reversed-Z.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Projection {
    Infinite,
    Finite,
    Orthographic,
}

#[derive(Clone, Debug)]
struct Camera {
    kind: Projection,
    view: Mat4,
    projection: Mat4,
    near: f32,
    /// Far plane distance (the finite one for the infinite projection's samples).
    far: f32,
}

impl Camera {
    fn view_projection(&self) -> Mat4 {
        self.projection * self.view
    }
}

fn camera_strategy() -> impl Strategy<Value = Camera> {
    (
        prop_oneof![Just(Projection::Infinite), Just(Projection::Finite), Just(Projection::Orthographic)],
        prop::array::uniform3(-50.0f32..50.0),
        (0.0f32..std::f32::consts::TAU, -1.4f32..1.4),
        (0.3f32..2.2, 0.5f32..2.5),
        (0.05f32..2.0, 5.0f32..400.0, 1.0f32..60.0),
    )
        .prop_map(|(kind, eye, (yaw, pitch), (fov, aspect), (near, depth, size))| {
            let eye = Vec3::from_array(eye);
            let direction = Vec3::new(yaw.cos() * pitch.cos(), pitch.sin(), yaw.sin() * pitch.cos());
            let view = Mat4::look_at_rh(eye, eye + direction, Vec3::Y);
            let projection = match kind {
                Projection::Infinite => Mat4::perspective_infinite_reverse_rh(fov, aspect, near),
                Projection::Finite => Mat4::perspective_rh(fov, aspect, near + depth, near),
                Projection::Orthographic => {
                    Mat4::orthographic_rh(-size * aspect, size * aspect, -size, size, near + depth, near)
                }
            };
            Camera { kind, view, projection, near, far: near + depth }
        })
}

/// A small deterministic generator for the many per-box numbers.
struct Random(u64);

impl Random {
    fn next_unit(&mut self) -> f32 {
        // xorshift64*; the top 24 bits give a float in [0, 1).
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        bits as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.next_unit()
    }

    fn vec3(&mut self, low: f32, high: f32) -> Vec3 {
        Vec3::new(self.range(low, high), self.range(low, high), self.range(low, high))
    }
}

/// A local box and the world matrix that places it within `spread` of `around`, its half
/// extents up to `largest`.
fn random_object(random: &mut Random, around: Vec3, spread: f32, largest: f32) -> (Aabb, Mat4) {
    let local = Aabb::from_center_half_extent(random.vec3(-largest * 0.2, largest * 0.2), random.vec3(0.01, largest));
    let rotation =
        Quat::from_euler(EulerRot::XYZ, random.range(-3.2, 3.2), random.range(-3.2, 3.2), random.range(-3.2, 3.2));
    let matrix =
        Mat4::from_scale_rotation_translation(random.vec3(0.2, 3.0), rotation, around + random.vec3(-spread, spread));
    (local, matrix)
}

/// A world point on or near a face of the camera's frustum (within about 5%), where a
/// wrong plane would cull what is visible.
fn point_near_boundary(random: &mut Random, camera: &Camera) -> Vec3 {
    let depth = match random.next_unit() {
        unit if unit < 0.2 => camera.near * random.range(0.9, 1.1),
        unit if unit < 0.4 => camera.far * random.range(0.95, 1.05),
        _ => random.range(camera.near, camera.far),
    };
    let mut ndc = [random.range(-1.05, 1.05), random.range(-1.05, 1.05)];
    let axis = (random.next_unit() * 2.0) as usize;
    ndc[axis] = ndc[axis].signum() * random.range(0.95, 1.05);
    let divide = if camera.kind == Projection::Orthographic { 1.0 } else { depth };
    let view_point =
        Vec3::new(ndc[0] * divide / camera.projection.x_axis.x, ndc[1] * divide / camera.projection.y_axis.y, -depth);
    camera.view.inverse().transform_point3(view_point)
}

/// Half the objects anywhere around the eye, half small ones on the frustum's faces.
fn scene_object(random: &mut Random, camera: &Camera, eye: Vec3) -> (Aabb, Mat4) {
    if random.next_unit() < 0.5 {
        random_object(random, eye, 150.0, 12.0)
    } else {
        let around = point_near_boundary(random, camera);
        let size = (camera.far * 0.002).max(0.02);
        random_object(random, around, size, size)
    }
}

/// Whether a world point is clearly inside the clip volume of `view_projection`.
fn clearly_inside(view_projection: &DMat4, kind: Projection, point: Vec3) -> bool {
    let clip = *view_projection * DVec4::new(point.x as f64, point.y as f64, point.z as f64, 1.0);
    let inner = clip.w * (1.0 - CLIP_MARGIN);
    // With an infinite far plane depth only tends to 0; no margin is needed there.
    let depth_floor = if kind == Projection::Infinite { 0.0 } else { clip.w * CLIP_MARGIN };
    clip.w > 0.0 && clip.x.abs() <= inner && clip.y.abs() <= inner && clip.z >= depth_floor && clip.z <= inner
}

/// Corners, centre and `interior` random points of a local box, in world space.
fn sample_points(random: &mut Random, local: &Aabb, matrix: &Mat4, interior: usize) -> Vec<Vec3> {
    let (low, high) = (local.min, local.max);
    let mut points: Vec<Vec3> = (0..8)
        .map(|corner| {
            Vec3::new(
                if corner & 1 == 0 { low.x } else { high.x },
                if corner & 2 == 0 { low.y } else { high.y },
                if corner & 4 == 0 { low.z } else { high.z },
            )
        })
        .collect();
    points.push(local.center());
    for _ in 0..interior {
        let blend = Vec3::new(random.next_unit(), random.next_unit(), random.next_unit());
        points.push(low + (high - low) * blend);
    }
    points.iter().map(|&point| matrix.transform_point3(point)).collect()
}

/// Runs every kernel on the boxes and spheres; asserts they agree; returns the reference.
/// Culls with every kernel, checks each against the scalar reference and returns the
/// reference's words and statistics; says on standard error which kernels `test` ran here.
fn cull_all_kernels(
    test: &'static str,
    frustum: &Frustum,
    boxes: &AabbSoa,
    spheres: &SphereSoa,
) -> (Vec<u64>, CullStats, Vec<u64>, CullStats) {
    let count = boxes.len();
    let mut reference_boxes = vec![0; words_for(count)];
    let box_stats = Kernel::Scalar.cull_aabbs(frustum, boxes.slices(), &mut reference_boxes);
    let mut reference_spheres = vec![0; words_for(count)];
    let sphere_stats = Kernel::Scalar.cull_spheres(frustum, spheres.slices(), &mut reference_spheres);
    let compared = [Kernel::Portable, Kernel::Avx2, Kernel::Avx512];
    coverage::report(test, &compared);
    for kernel in compared {
        let mut words = vec![u64::MAX; words_for(count)];
        let stats = kernel.cull_aabbs(frustum, boxes.slices(), &mut words);
        assert_eq!(words, reference_boxes, "{kernel:?} box bits differ from the scalar reference");
        assert_eq!(stats, box_stats, "{kernel:?} box statistics");
        let stats = kernel.cull_spheres(frustum, spheres.slices(), &mut words);
        assert_eq!(words, reference_spheres, "{kernel:?} sphere bits differ from the scalar reference");
        assert_eq!(stats, sphere_stats, "{kernel:?} sphere statistics");
    }
    (reference_boxes, box_stats, reference_spheres, sphere_stats)
}

fn bit(words: &[u64], index: usize) -> bool {
    words[index / 64] >> (index % 64) & 1 == 1
}

/// Moves each box so that its test against plane `index % planes` lands on zero, where the
/// rounding of every operation decides the bit.
fn place_on_planes(frustum: &Frustum, boxes: &mut AabbSoa) {
    let planes = frustum.planes();
    if planes.is_empty() {
        return;
    }
    for index in 0..boxes.len() {
        let plane = planes[index % planes.len()];
        let normal = plane.truncate();
        let center = Vec3::new(boxes.center_x[index], boxes.center_y[index], boxes.center_z[index]);
        let half = Vec3::new(boxes.half_x[index], boxes.half_y[index], boxes.half_z[index]);
        let reach = normal.abs().dot(half);
        let distance = normal.dot(center) + plane.w;
        let moved = center - normal * (distance + reach);
        boxes.center_x[index] = moved.x;
        boxes.center_y[index] = moved.y;
        boxes.center_z[index] = moved.z;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn kernels_never_reject_a_box_with_a_point_in_view(
        camera in camera_strategy(),
        seed in any::<u64>(),
        count in 1usize..260,
    ) {
        let mut random = Random(seed | 1);
        let view_projection = camera.view_projection();
        let frustum = Frustum::from_view_projection(view_projection);
        let expected_planes = if camera.kind == Projection::Infinite { 5 } else { 6 };
        prop_assert_eq!(frustum.planes().len(), expected_planes);
        let eye = camera.view.inverse().w_axis.truncate();
        let exact = view_projection.as_dmat4();

        let mut boxes = AabbSoa::default();
        let mut spheres = SphereSoa::default();
        let mut samples = Vec::with_capacity(count);
        for _ in 0..count {
            let (local, matrix) = scene_object(&mut random, &camera, eye);
            let world = local.transformed(&matrix);
            boxes.push(&world);
            spheres.push(&Sphere::from_aabb(&world));
            samples.push(sample_points(&mut random, &local, &matrix, 16));
        }
        let test = "kernels_never_reject_a_box_with_a_point_in_view";
        let (box_words, box_stats, sphere_words, _) = cull_all_kernels(test, &frustum, &boxes, &spheres);
        prop_assert_eq!(box_stats.non_finite, 0);
        for (index, points) in samples.iter().enumerate() {
            let seen = points.iter().any(|&point| clearly_inside(&exact, camera.kind, point));
            if seen {
                prop_assert!(bit(&box_words, index), "box {} has a point in view but was culled", index);
                prop_assert!(bit(&sphere_words, index), "sphere {} has a point in view but was culled", index);
            }
            let single = Aabb::from_center_half_extent(
                Vec3::new(boxes.center_x[index], boxes.center_y[index], boxes.center_z[index]),
                Vec3::new(boxes.half_x[index], boxes.half_y[index], boxes.half_z[index]),
            );
            prop_assert_eq!(frustum.may_intersect_aabb(&single), bit(&box_words, index));
        }
    }

    #[test]
    fn kernels_agree_bit_for_bit_on_boundaries_and_bad_numbers(
        camera in camera_strategy(),
        seed in any::<u64>(),
        count in 0usize..300,
        bad_every in 3usize..40,
    ) {
        let mut random = Random(seed | 1);
        let frustum = Frustum::from_view_projection(camera.view_projection());
        let eye = camera.view.inverse().w_axis.truncate();
        let mut boxes = AabbSoa::default();
        let mut spheres = SphereSoa::default();
        for _ in 0..count {
            let (local, matrix) = scene_object(&mut random, &camera, eye);
            boxes.push(&local.transformed(&matrix));
        }
        place_on_planes(&frustum, &mut boxes);
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, -0.0];
        let mut injected = 0;
        for index in (0..count).step_by(bad_every) {
            let value = specials[index % specials.len()];
            let array = match index % 6 {
                0 => &mut boxes.center_x,
                1 => &mut boxes.center_y,
                2 => &mut boxes.center_z,
                3 => &mut boxes.half_x,
                4 => &mut boxes.half_y,
                _ => &mut boxes.half_z,
            };
            array[index] = value;
            injected += usize::from(!value.is_finite());
        }
        for index in 0..count {
            spheres.push(&Sphere::new(
                Vec3::new(boxes.center_x[index], boxes.center_y[index], boxes.center_z[index]),
                Vec3::new(boxes.half_x[index], boxes.half_y[index], boxes.half_z[index]).length(),
            ));
        }
        let test = "kernels_agree_bit_for_bit_on_boundaries_and_bad_numbers";
        let (box_words, box_stats, _, _) = cull_all_kernels(test, &frustum, &boxes, &spheres);
        prop_assert_eq!(box_stats.non_finite, injected);
        prop_assert_eq!(box_stats.tested, count);
        if count % 64 != 0 {
            prop_assert_eq!(box_words[count / 64] >> (count % 64), 0, "bits past the count stay clear");
        }
    }
}

#[test]
fn the_random_scenes_cull_a_fair_share() {
    // Guards the property tests against a generator that never culls anything.
    let mut random = Random(0x5eed);
    let eye = Vec3::new(3.0, 1.0, -2.0);
    let view = Mat4::look_at_rh(eye, eye + Vec3::new(1.0, 0.1, 0.3), Vec3::Y);
    let projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.6, 0.1);
    let frustum = Frustum::from_view_projection(projection * view);
    let mut boxes = AabbSoa::default();
    for _ in 0..1000 {
        let (local, matrix) = random_object(&mut random, eye, 150.0, 12.0);
        boxes.push(&local.transformed(&matrix));
    }
    let mut bits = VisibilityBits::default();
    let stats = cull_aabbs(&frustum, &boxes, &mut bits);
    assert!((100..900).contains(&stats.visible), "expected a mix of kept and culled boxes, kept {}", stats.visible);
}

#[test]
fn a_non_finite_frustum_keeps_and_counts_everything() {
    let frustum = Frustum::from_view_projection(Mat4::from_cols_array(&[f32::INFINITY; 16]));
    let mut spheres = SphereSoa::default();
    for index in 0..70 {
        spheres.push(&Sphere::new(Vec3::splat(index as f32), 0.5));
    }
    coverage::report("a_non_finite_frustum_keeps_and_counts_everything", &Kernel::ALL);
    for kernel in Kernel::ALL {
        let mut words = vec![0; 2];
        let stats = kernel.cull_spheres(&frustum, spheres.slices(), &mut words);
        assert_eq!(stats, CullStats { tested: 70, visible: 70, non_finite: 70 }, "{kernel:?}");
        assert_eq!(words, vec![u64::MAX, (1 << 6) - 1], "{kernel:?}");
    }
}

#[test]
fn ranges_aligned_to_64_give_the_same_words_as_one_call() {
    let mut random = Random(42);
    let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
    let frustum = Frustum::from_view_projection(Mat4::perspective_infinite_reverse_rh(1.2, 1.0, 0.1) * view);
    let mut spheres = SphereSoa::default();
    for _ in 0..1000 {
        spheres.push(&Sphere::new(random.vec3(-100.0, 100.0), random.range(0.0, 5.0)));
    }
    let mut whole = vec![0; words_for(1000)];
    let whole_stats = Kernel::detect().cull_spheres(&frustum, spheres.slices(), &mut whole);
    let mut pieces = vec![0; words_for(1000)];
    let mut piece_stats = CullStats::default();
    for (block, words) in pieces.chunks_mut(3).enumerate() {
        let start = block * 3 * 64;
        let end = (start + 3 * 64).min(1000);
        piece_stats += Kernel::detect().cull_spheres(&frustum, spheres.slices().sub(start..end), words);
    }
    assert_eq!(whole, pieces);
    assert_eq!(whole_stats, piece_stats);
}

#[test]
#[should_panic(expected = "visibility words")]
fn a_short_word_slice_is_a_clear_panic() {
    let spheres = SphereSoa { x: vec![0.0; 65], y: vec![0.0; 65], z: vec![0.0; 65], radius: vec![1.0; 65] };
    Kernel::Scalar.cull_spheres(&Frustum::EVERYTHING, spheres.slices(), &mut [0]);
}

#[test]
fn a_frustum_without_planes_keeps_everything_in_every_kernel() {
    let frustum = Frustum::from_view_projection(Mat4::ZERO);
    assert!(frustum.is_finite() && frustum.planes().is_empty());
    let mut random = Random(7);
    let mut boxes = AabbSoa::default();
    let mut spheres = SphereSoa::default();
    for _ in 0..77 {
        let (local, matrix) = random_object(&mut random, Vec3::ZERO, 100.0, 5.0);
        let world = local.transformed(&matrix);
        boxes.push(&world);
        spheres.push(&Sphere::from_aabb(&world));
    }
    let test = "a_frustum_without_planes_keeps_everything_in_every_kernel";
    let (_, box_stats, _, sphere_stats) = cull_all_kernels(test, &frustum, &boxes, &spheres);
    assert_eq!(box_stats.visible, 77);
    assert_eq!(sphere_stats.visible, 77);
}

/// Prints which kernels this CPU runs and which tests of them were skipped, and why (run with
/// `--nocapture`; CI runs it first). Also checks that the fallbacks are what the kernels do.
#[test]
fn kernels_available() {
    for line in coverage::table() {
        eprintln!("kernels_available: {line}");
    }
    for kernel in Kernel::ALL {
        assert_eq!(kernel.missing_feature().is_none(), kernel.is_supported(), "{kernel:?}");
        assert!(kernel.runs_as().is_supported(), "{kernel:?} falls back to a kernel this CPU runs");
    }
    assert!(Kernel::detect().is_supported());
}

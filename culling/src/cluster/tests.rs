use glam::{DVec3, Mat4, Quat, Vec3};
use meshopt::VertexDataAdapter;
use proptest::prelude::*;

use super::*;

/// Meshlets (bounds and triangles) of a triangle list, built by meshopt as the assets
/// pipeline builds them.
fn meshlets_of(positions: &[[f32; 3]], indices: &[u32]) -> Vec<(ClusterBounds, Vec<[u32; 3]>)> {
    let adapter = VertexDataAdapter::new(meshopt::typed_to_bytes(positions), 12, 0).expect("positions");
    let built = meshopt::build_meshlets(indices, &adapter, 64, 124, 0.25);
    built
        .iter()
        .map(|meshlet| {
            let bounds = meshopt::compute_meshlet_bounds(meshlet, &adapter);
            let triangles: Vec<[u32; 3]> = meshlet
                .triangles
                .chunks_exact(3)
                .map(|local| [0, 1, 2].map(|corner| meshlet.vertices[usize::from(local[corner])]))
                .collect();
            let mut box_min = [f32::INFINITY; 3];
            let mut box_max = [f32::NEG_INFINITY; 3];
            for &vertex in triangles.iter().flatten() {
                for axis in 0..3 {
                    box_min[axis] = box_min[axis].min(positions[vertex as usize][axis]);
                    box_max[axis] = box_max[axis].max(positions[vertex as usize][axis]);
                }
            }
            let cluster = ClusterBounds {
                center: bounds.center,
                radius: bounds.radius,
                cone_apex: bounds.cone_apex,
                cone_axis: bounds.cone_axis,
                cone_cutoff: bounds.cone_cutoff,
                box_min,
                box_max,
            };
            (cluster, triangles)
        })
        .collect()
}

/// A bumpy square patch of `side` x `side` quads: heights from `seed`, so meshlets have
/// cones of many widths.
fn bumpy_patch(side: u32, seed: u64, bump: f32) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut state = seed | 1;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut positions = Vec::new();
    for y in 0..=side {
        for x in 0..=side {
            positions.push([x as f32 / side as f32, random() * bump, y as f32 / side as f32]);
        }
    }
    let mut indices = Vec::new();
    let row = side + 1;
    for y in 0..side {
        for x in 0..side {
            let corner = y * row + x;
            // Counter-clockwise seen from +y.
            indices.extend_from_slice(&[corner, corner + row, corner + 1, corner + 1, corner + row, corner + row + 1]);
        }
    }
    (positions, indices)
}

/// Whether a triangle faces `eye` (mesh space), in f64: `dot(n, eye - a) > 0`.
fn faces_eye(positions: &[[f32; 3]], triangle: [u32; 3], eye: DVec3) -> bool {
    let [a, b, c] = triangle.map(|vertex| Vec3::from(positions[vertex as usize]).as_dvec3());
    (b - a).cross(c - a).dot(eye - a) > 0.0
}

#[test]
fn verdict_codes_round_trip_and_unknown_codes_are_untested() {
    for verdict in ClusterVerdict::ALL {
        assert_eq!(ClusterVerdict::from_code(verdict as u32), verdict);
    }
    assert_eq!(ClusterVerdict::from_code(99), ClusterVerdict::Untested);
    assert!(ClusterVerdict::Conservative.is_drawn() && !ClusterVerdict::Occluded.is_drawn());
}

#[test]
fn the_eye_of_a_perspective_view_is_found_and_an_orthographic_view_has_none() {
    let eye = Vec3::new(3.0, 4.0, -5.0);
    let view = Mat4::look_at_rh(eye, Vec3::ZERO, Vec3::Y);
    let perspective = Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.1) * view;
    let found = view_eye(&perspective).expect("a perspective view has an eye");
    assert!(found.distance(eye) < 1.0e-4, "eye {found} instead of {eye}");
    let orthographic = Mat4::orthographic_rh(-5.0, 5.0, -5.0, 5.0, 100.0, 0.1) * view;
    assert_eq!(view_eye(&orthographic), None);
    assert_eq!(view_eye(&Mat4::from_cols_array(&[f32::NAN; 16])), None);
}

#[test]
fn spheres_outside_a_plane_are_frustum_rejects_and_crossing_ones_are_kept() {
    let view = ClusterView::new(
        Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1) * Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y),
    );
    let bounds =
        |center: [f32; 3], radius: f32| ClusterBounds { center, radius, cone_cutoff: 1.0, ..Default::default() };
    let settings = ClusterSettings { occlusion: false, ..Default::default() };
    let verdict = |world: Mat4, cluster: ClusterBounds| {
        classify_cluster(&view, &world, &cluster, None, settings, ClusterMargins::GPU)
    };
    assert_eq!(verdict(Mat4::IDENTITY, bounds([0.0, 0.0, 5.0], 1.0)), ClusterVerdict::Frustum, "behind the eye");
    assert_eq!(verdict(Mat4::IDENTITY, bounds([0.0, 0.0, -5.0], 1.0)), ClusterVerdict::Visible);
    assert_eq!(verdict(Mat4::IDENTITY, bounds([0.0, 0.0, 0.5], 1.0)), ClusterVerdict::Visible, "crosses near");
    // A sphere just outside becomes visible once the object is stretched towards the view.
    let outside = bounds([0.0, 0.0, 1.5], 1.0);
    assert_eq!(verdict(Mat4::IDENTITY, outside), ClusterVerdict::Frustum);
    assert_eq!(verdict(Mat4::from_scale(Vec3::new(1.0, 1.0, 0.2)), outside), ClusterVerdict::Visible);
}

#[test]
fn a_box_behind_a_nearer_depth_is_hidden_and_one_reaching_the_near_plane_is_undecided() {
    let view_projection =
        Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1) * Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
    // A wall at distance 2 covers the whole 16x16 view: depth near / 2 = 0.05.
    let mips: Vec<Vec<f32>> = (0..5).map(|level| vec![0.05f32; (16usize >> level).pow(2)]).collect();
    let hiz = HiZLevels { width: 16, height: 16, mips: &mips };
    let test = |min: Vec3, max: Vec3| occlusion_test(&view_projection, min, max, &hiz, 4.0e-6, 1.0e-2);
    assert_eq!(test(Vec3::new(-0.5, -0.5, -11.0), Vec3::new(0.5, 0.5, -10.0)), OcclusionAnswer::Hidden);
    assert_eq!(test(Vec3::new(-0.5, -0.5, -1.5), Vec3::new(0.5, 0.5, -1.0)), OcclusionAnswer::Visible);
    assert_eq!(test(Vec3::new(-0.5, -0.5, -11.0), Vec3::new(0.5, 0.5, 0.5)), OcclusionAnswer::Undecided);
    let nan = Vec3::new(f32::NAN, 0.0, -10.0);
    assert_eq!(test(nan, Vec3::new(0.5, 0.5, -10.0)), OcclusionAnswer::Undecided);
}

#[test]
fn a_closed_sphere_seen_from_outside_loses_its_far_side_to_the_cone_test() {
    let ecs::scene::Geometry { positions, indices, .. } = ecs::scene::uv_sphere(48);
    let meshlets = meshlets_of(&positions, &indices);
    let eye = Vec3::new(0.0, 0.0, 6.0);
    let rejected: Vec<_> =
        meshlets.iter().filter(|(bounds, _)| cone_rejects(&Mat4::IDENTITY, bounds, eye, CONE_MARGIN)).collect();
    assert!(rejected.len() * 5 > meshlets.len(), "{} of {} meshlets rejected", rejected.len(), meshlets.len());
    for (_, triangles) in &rejected {
        assert!(triangles.iter().all(|&triangle| !faces_eye(&positions, triangle, eye.as_dvec3())));
    }
    // Mirrored, the winding the rasterizer sees flips: nothing may be rejected.
    let mirror = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    assert!(meshlets.iter().all(|(bounds, _)| !cone_rejects(&mirror, bounds, eye, CONE_MARGIN)));
}

fn world_strategy() -> impl Strategy<Value = Mat4> {
    (
        (-3.0f32..3.0, -3.0f32..3.0, -3.0f32..3.0),
        (0.05f32..6.0, 0.05f32..6.0, 0.05f32..6.0),
        (-1.0f32..1.0, -1.0f32..1.0),
        (-10.0f32..10.0, -10.0f32..10.0, -10.0f32..10.0),
    )
        .prop_map(|(angles, scale, shear, translation)| {
            let rotation = Quat::from_euler(glam::EulerRot::XYZ, angles.0, angles.1, angles.2);
            let mut shear_matrix = Mat4::IDENTITY;
            shear_matrix.y_axis.x = shear.0;
            shear_matrix.z_axis.y = shear.1;
            Mat4::from_translation(Vec3::from(translation))
                * Mat4::from_quat(rotation)
                * shear_matrix
                * Mat4::from_scale(Vec3::from(scale))
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The truth for the cone: for meshopt meshlets of bumpy patches under rotation,
    /// non-uniform scale, shear and translation, and any eye, a meshlet the cone rejects has
    /// no triangle facing the eye (checked in f64 in mesh space, where facing is the same as
    /// in world space for a positive determinant).
    #[test]
    fn the_cone_never_rejects_a_meshlet_with_a_front_facing_triangle(
        seed in any::<u64>(),
        bump in 0.0f32..0.6,
        world in world_strategy(),
        eye in (-30.0f32..30.0, -30.0f32..30.0, -30.0f32..30.0),
    ) {
        let (positions, indices) = bumpy_patch(24, seed, bump);
        let eye = Vec3::from(eye);
        let local_eye = world.as_dmat4().inverse().transform_point3(eye.as_dvec3());
        for (bounds, triangles) in meshlets_of(&positions, &indices) {
            if cone_rejects(&world, &bounds, eye, CONE_MARGIN) {
                for &triangle in &triangles {
                    prop_assert!(!faces_eye(&positions, triangle, local_eye), "rejected meshlet faces the eye");
                }
            }
        }
    }

    /// `max_stretch` bounds the length any vector reaches under the upper 3x3 of `world`.
    #[test]
    fn max_stretch_bounds_the_stretch_of_every_vector(
        world in world_strategy(),
        vector in (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0),
    ) {
        let vector = Vec3::from(vector);
        let stretched = world.transform_vector3(vector).length();
        prop_assert!(stretched <= max_stretch(&world) * vector.length() * (1.0 + 1.0e-5) + 1.0e-6);
    }
}

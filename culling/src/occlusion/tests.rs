//! Tests of the whole occlusion cull against the exact reference raster.

use ecs::{Aabb, MeshHandle};
use glam::{Mat4, Vec3};
use proptest::prelude::*;

use super::reference::ReferenceRaster;
use super::*;
use crate::soa::AabbSoa;

/// Reference samples per buffer pixel and axis.
const SAMPLES: usize = 4;

fn perspective(eye: Vec3, target: Vec3) -> Mat4 {
    Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 2.0, 0.1) * Mat4::look_at_rh(eye, target, Vec3::Y)
}

fn box_meshes(boxes: &[Aabb]) -> (OccluderMeshes, Vec<OccluderInstance>) {
    let mut meshes = OccluderMeshes::new();
    let mut instances = Vec::new();
    for (index, aabb) in boxes.iter().enumerate() {
        meshes.insert(MeshHandle(index as u32), OccluderMesh::from_box(aabb).expect("test boxes are valid"));
        instances.push(OccluderInstance { mesh: MeshHandle(index as u32), world: Mat4::IDENTITY });
    }
    (meshes, instances)
}

fn wall() -> Aabb {
    Aabb::new(Vec3::new(-5.0, -5.0, -11.0), Vec3::new(5.0, 5.0, -10.0))
}

#[test]
fn a_convex_occluder_off_the_screen_is_skipped_and_one_straddling_an_edge_is_drawn() {
    // The wall moved far to the left (wholly off screen), and half across the left edge.
    let off = Aabb::new(Vec3::new(-60.0, -5.0, -11.0), Vec3::new(-50.0, 5.0, -10.0));
    let straddling = Aabb::new(Vec3::new(-15.0, -5.0, -11.0), Vec3::new(-5.0, 5.0, -10.0));
    let view_projection = perspective(Vec3::ZERO, Vec3::NEG_Z);
    let (meshes, instances) = box_meshes(&[off]);
    let mut culler = OcclusionCuller::default();
    let stats = culler.rasterize(view_projection, &meshes, &instances);
    assert_eq!((stats.silhouettes, stats.primitives), (0, 0), "nothing of an off-screen occluder is set up");
    let (meshes, instances) = box_meshes(&[straddling]);
    let stats = culler.rasterize(view_projection, &meshes, &instances);
    assert_eq!((stats.silhouettes, stats.primitives), (1, 1), "an occluder across the edge is drawn");
    assert!(culler.depth(0, 64) > 0.0, "it covers the left edge of the buffer");
}

#[test]
fn a_wall_hides_a_box_behind_it_but_not_one_in_front() {
    let (meshes, instances) = box_meshes(&[wall()]);
    let view_projection = perspective(Vec3::ZERO, Vec3::NEG_Z);
    let mut culler = OcclusionCuller::default();
    let stats = culler.rasterize(view_projection, &meshes, &instances);
    assert_eq!(stats.silhouettes, 1, "a box in front of the camera is drawn as one silhouette");
    let behind = Aabb::new(Vec3::new(-1.0, -1.0, -21.0), Vec3::new(1.0, 1.0, -20.0));
    let in_front = Aabb::new(Vec3::new(-1.0, -1.0, -6.0), Vec3::new(1.0, 1.0, -5.0));
    let beside = Aabb::new(Vec3::new(30.0, -1.0, -21.0), Vec3::new(32.0, 1.0, -20.0));
    assert_eq!(culler.test_aabb(&behind), OcclusionVerdict::Occluded, "the wall covers the box behind it");
    assert_eq!(culler.test_aabb(&in_front), OcclusionVerdict::Visible, "a box before the wall is seen");
    assert_eq!(culler.test_aabb(&beside), OcclusionVerdict::Visible, "a box beside the wall is seen");
    let reference = ReferenceRaster::new(view_projection, 256, 128, SAMPLES, &meshes, &instances);
    assert!(reference.hides(&behind), "the reference agrees the box is hidden");
}

/// The wall drawn as separate triangles (not recognised as convex) still hides a box: the
/// diagonal crack of each face is only as wide as the pixels it crosses.
#[test]
fn triangle_occluders_hide_what_they_fully_cover() {
    let boxed = OccluderMesh::from_box(&wall()).expect("valid");
    // Two faces only: an open mesh is never convex, so it is drawn triangle by triangle.
    let front = OccluderMesh::new(boxed.positions().to_vec(), boxed.indices()[24..36].to_vec()).expect("valid");
    assert!(!front.is_convex());
    let mut meshes = OccluderMeshes::new();
    meshes.insert(MeshHandle(0), front);
    let instances = [OccluderInstance { mesh: MeshHandle(0), world: Mat4::IDENTITY }];
    let view_projection = perspective(Vec3::ZERO, Vec3::NEG_Z);
    let mut culler = OcclusionCuller::default();
    let stats = culler.rasterize(view_projection, &meshes, &instances);
    assert_eq!((stats.silhouettes, stats.primitives), (0, 2), "the +z face faces the camera; the -z face does not");
    let off_diagonal = Aabb::new(Vec3::new(2.0, -3.0, -21.0), Vec3::new(3.0, -2.0, -20.0));
    assert_eq!(culler.test_aabb(&off_diagonal), OcclusionVerdict::Occluded);
}

#[test]
fn a_box_peeking_over_the_wall_by_one_reference_pixel_is_kept() {
    let (meshes, instances) = box_meshes(&[wall()]);
    let view_projection = perspective(Vec3::ZERO, Vec3::NEG_Z);
    let mut culler = OcclusionCuller::default();
    culler.rasterize(view_projection, &meshes, &instances);
    let reference = ReferenceRaster::new(view_projection, 256, 128, SAMPLES, &meshes, &instances);
    let p11 = view_projection.y_axis.y;
    // The wall's silhouette top is its front top edge, at NDC y = p11 * 5 / 10.
    let wall_top = p11 * 0.5;
    let reference_pixel = 2.0 / reference.height() as f32;
    let box_with_top_at = |ndc_y: f32| {
        // The box's projected top is its front top edge at z = -20; it is small enough (about
        // 2 x 3 pixels) that the test reads the finest level.
        let top = ndc_y * 20.0 / p11;
        Aabb::new(Vec3::new(-0.2, top - 0.4, -20.2), Vec3::new(0.2, top, -20.0))
    };
    let peeking = box_with_top_at(wall_top + reference_pixel);
    assert!(!reference.hides(&peeking), "the reference sees the top row of the peeking box");
    assert_ne!(culler.test_aabb(&peeking), OcclusionVerdict::Occluded, "one visible reference pixel keeps the box");
    let tucked = box_with_top_at(wall_top - 6.0 * reference_pixel);
    assert_eq!(culler.test_aabb(&tucked), OcclusionVerdict::Occluded, "well below the top edge the box is hidden");
}

#[test]
fn a_camera_inside_an_occluder_culls_nothing() {
    let room = Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0));
    let (meshes, instances) = box_meshes(&[room, wall()]);
    let view_projection = perspective(Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, 0.0, -5.0));
    let mut culler = OcclusionCuller::default();
    let stats = culler.rasterize(view_projection, &meshes, &instances);
    assert_eq!(stats.silhouettes, 1, "only the wall is a silhouette; the room crosses the near plane");
    let reference = ReferenceRaster::new(view_projection, 256, 128, SAMPLES, &meshes, &instances);
    // Boxes everywhere outside the room: only what the wall (inside the room) covers may go.
    let mut occluded = 0;
    for x in -4..=4 {
        for y in -2..=2 {
            let center = Vec3::new(x as f32 * 6.0, y as f32 * 6.0, -30.0);
            let object = Aabb::from_center_half_extent(center, Vec3::splat(1.0));
            if culler.test_aabb(&object) == OcclusionVerdict::Occluded {
                occluded += 1;
                assert!(reference.hides(&object), "{object:?} is culled but the reference sees it");
            }
        }
    }
    assert!(occluded > 0, "the wall inside the room still hides what is behind it");
    // Without the wall, nothing at all is hidden.
    let (room_only, room_instance) = box_meshes(&[room]);
    culler.rasterize(view_projection, &room_only, &room_instance);
    let object = Aabb::from_center_half_extent(Vec3::new(0.0, 0.0, -30.0), Vec3::ONE);
    assert_eq!(culler.test_aabb(&object), OcclusionVerdict::Visible, "the room's walls are back faces from inside");
    assert!((0..culler.height()).all(|y| (0..culler.width()).all(|x| culler.depth(x, y) == 0.0)), "nothing drawn");
}

#[test]
fn near_plane_crossings_and_non_finite_bounds_are_kept() {
    let (meshes, instances) = box_meshes(&[wall()]);
    let view_projection = perspective(Vec3::ZERO, Vec3::NEG_Z);
    let mut culler = OcclusionCuller::default();
    culler.rasterize(view_projection, &meshes, &instances);
    let crossing = Aabb::new(Vec3::new(-1.0, -1.0, -30.0), Vec3::new(1.0, 1.0, 0.5));
    assert_eq!(culler.test_aabb(&crossing), OcclusionVerdict::KeptConservatively);
    let at_near = Aabb::new(Vec3::new(-0.01, -0.01, -0.1), Vec3::new(0.01, 0.01, -0.05));
    assert_eq!(culler.test_aabb(&at_near), OcclusionVerdict::KeptConservatively);
    let not_a_number = Aabb::new(Vec3::new(f32::NAN, -1.0, -21.0), Vec3::new(1.0, 1.0, -20.0));
    assert_eq!(culler.test_aabb(&not_a_number), OcclusionVerdict::KeptConservatively);
    let infinite = Aabb::new(Vec3::new(-1.0, -1.0, f32::NEG_INFINITY), Vec3::new(1.0, 1.0, -20.0));
    assert_eq!(culler.test_aabb(&infinite), OcclusionVerdict::KeptConservatively);
    let mut broken_view = view_projection;
    broken_view.x_axis.x = f32::NAN;
    culler.rasterize(broken_view, &meshes, &instances);
    let behind = Aabb::new(Vec3::new(-1.0, -1.0, -21.0), Vec3::new(1.0, 1.0, -20.0));
    assert_eq!(culler.test_aabb(&behind), OcclusionVerdict::KeptConservatively, "a broken view judges nothing");
}

#[test]
fn a_wall_through_the_near_plane_is_clipped_and_still_occludes() {
    // A thin wall from behind the camera to far ahead, to the camera's left: it crosses the
    // near plane, so it goes the triangle way with clipping.
    let side = Aabb::new(Vec3::new(-3.0, -50.0, -100.0), Vec3::new(-2.0, 50.0, 20.0));
    let (meshes, instances) = box_meshes(&[side]);
    let view_projection = perspective(Vec3::ZERO, Vec3::NEG_Z);
    let mut culler = OcclusionCuller::default();
    let stats = culler.rasterize(view_projection, &meshes, &instances);
    assert_eq!(stats.silhouettes, 0, "a box crossing the near plane is not a silhouette");
    assert!(stats.primitives > 0, "its front faces are clipped and drawn");
    let hidden = Aabb::from_center_half_extent(Vec3::new(-20.0, 0.0, -20.0), Vec3::ONE);
    assert_eq!(culler.test_aabb(&hidden), OcclusionVerdict::Occluded, "behind the side wall");
    let reference = ReferenceRaster::new(view_projection, 256, 128, SAMPLES, &meshes, &instances);
    assert!(reference.hides(&hidden));
}

#[test]
fn bad_sizes_are_errors() {
    assert!(OcclusionCuller::new(0, 10).is_err());
    assert!(OcclusionCuller::new(100, 10).is_err(), "the width must be a multiple of 8");
    assert!(OcclusionCuller::new(64, 0).is_err());
    assert!(OcclusionCuller::new(8, 1).is_ok());
}

/// Deterministic xorshift numbers in [0, 1).
struct Random(u64);

impl Random {
    fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }

    fn vector(&mut self, low: f32, high: f32) -> Vec3 {
        Vec3::new(self.range(low, high), self.range(low, high), self.range(low, high))
    }
}

/// A random scene: box occluders, open triangle occluders, and a view.
fn random_scene(seed: u64, orthographic: bool) -> (Mat4, OccluderMeshes, Vec<OccluderInstance>) {
    let mut random = Random(seed | 1);
    let mut meshes = OccluderMeshes::new();
    let mut instances = Vec::new();
    for index in 0..12u32 {
        let mesh = if index % 3 == 2 {
            let positions: Vec<Vec3> = (0..6).map(|_| random.vector(-4.0, 4.0)).collect();
            OccluderMesh::new(positions, vec![0, 1, 2, 3, 4, 5, 0, 2, 4]).expect("valid triangles")
        } else {
            let half = Vec3::new(random.range(0.2, 4.0), random.range(0.2, 4.0), random.range(0.2, 4.0));
            OccluderMesh::from_box(&Aabb::new(-half, half)).expect("valid box")
        };
        meshes.insert(MeshHandle(index), mesh);
        let rotation = Mat4::from_axis_angle(random.vector(-1.0, 1.0).normalize_or(Vec3::Y), random.range(0.0, 6.3));
        let world = Mat4::from_translation(random.vector(-15.0, 15.0)) * rotation;
        instances.push(OccluderInstance { mesh: MeshHandle(index), world });
    }
    let eye = random.vector(-20.0, 20.0);
    let target = random.vector(-5.0, 5.0);
    let view = Mat4::look_at_rh(eye, target, Vec3::Y);
    let projection = if orthographic {
        Mat4::orthographic_rh(-20.0, 20.0, -10.0, 10.0, 60.0, 0.1)
    } else {
        Mat4::perspective_infinite_reverse_rh(random.range(0.5, 1.5), 2.0, 0.1)
    };
    (projection * view, meshes, instances)
}

#[test]
fn the_avx2_kernel_writes_the_scalar_kernels_bits() {
    crate::kernels::coverage::report_occlusion("the_avx2_kernel_writes_the_scalar_kernels_bits");
    for seed in 1..40u64 {
        let (view_projection, meshes, instances) = random_scene(seed * 7919, seed % 4 == 0);
        // 72 x 40: partial tiles in both directions.
        let mut scalar = OcclusionCuller::new(72, 40).expect("valid size");
        scalar.set_kernel(Kernel::Scalar);
        let mut simd = OcclusionCuller::new(72, 40).expect("valid size");
        simd.set_kernel(Kernel::Avx2);
        scalar.rasterize(view_projection, &meshes, &instances);
        simd.rasterize(view_projection, &meshes, &instances);
        for y in 0..40 {
            for x in 0..72 {
                assert_eq!(
                    scalar.depth(x, y).to_bits(),
                    simd.depth(x, y).to_bits(),
                    "seed {seed}: pixel ({x}, {y}) differs between kernels"
                );
            }
        }
    }
}

/// The batch test (eight-box projections and 2x2 reads, AVX2 where available) gives the
/// one-box test's verdicts, over several scenes, sizes (odd pyramid levels) and kernels.
#[test]
fn batch_verdicts_equal_the_one_box_test_in_many_scenes() {
    crate::kernels::coverage::report_occlusion("batch_verdicts_equal_the_one_box_test_in_many_scenes");
    for (seed, (width, height)) in [(64, 32), (72, 40), (256, 128), (40, 23)].into_iter().enumerate() {
        for kernel in [Kernel::Avx2, Kernel::Scalar] {
            let (view_projection, meshes, instances) = random_scene(31 + seed as u64, seed == 3);
            let mut culler = OcclusionCuller::new(width, height).expect("valid size");
            culler.set_kernel(kernel);
            culler.rasterize(view_projection, &meshes, &instances);
            let mut random = Random(77 + seed as u64);
            let mut boxes = AabbSoa::with_capacity(4001);
            for index in 0..4001 {
                let half = if index % 97 == 0 { Vec3::splat(f32::NAN) } else { random.vector(0.02, 1.5) };
                boxes.push(&Aabb::from_center_half_extent(random.vector(-25.0, 25.0), half));
            }
            let mut verdicts = vec![OcclusionVerdict::Visible; 4001];
            let stats = culler.classify(boxes.slices(), &mut verdicts);
            let mut words = vec![u64::MAX; 4001usize.div_ceil(64)];
            *words.last_mut().expect("63 words") = (1u64 << (4001 % 64)) - 1;
            let bit_stats = culler.cull_bits(boxes.slices(), &mut words);
            assert_eq!(bit_stats, stats, "seed {seed} {kernel:?}: the same counts");
            for (index, verdict) in verdicts.iter().enumerate() {
                let kept = words[index / 64] >> (index % 64) & 1 == 1;
                assert_eq!(kept, *verdict != OcclusionVerdict::Occluded, "seed {seed} {kernel:?}: box {index}");
            }
            assert!(stats.occluded > 0 && stats.occluded < 4001, "seed {seed}: the scene hides some boxes");
        }
    }
}

/// The batch test (eight-box projections, AVX2 where available, a scalar tail of three)
/// agrees with the one-box test.
#[test]
fn bits_and_verdicts_agree() {
    let (view_projection, meshes, instances) = random_scene(99, false);
    let mut culler = OcclusionCuller::new(64, 32).expect("valid size");
    culler.rasterize(view_projection, &meshes, &instances);
    let mut random = Random(1234);
    let mut boxes = AabbSoa::with_capacity(1003);
    for _ in 0..1003 {
        boxes.push(&Aabb::from_center_half_extent(random.vector(-20.0, 20.0), random.vector(0.1, 1.0)));
    }
    let mut verdicts = vec![OcclusionVerdict::Visible; 1003];
    let stats = culler.classify(boxes.slices(), &mut verdicts);
    let mut words = vec![u64::MAX; 1003usize.div_ceil(64)];
    *words.last_mut().expect("16 words") = (1u64 << (1003 % 64)) - 1;
    // Object 5 was rejected earlier (by the frustum, say): its bit stays clear and it is not tested.
    words[0] &= !(1 << 5);
    let bit_stats = culler.cull_bits(boxes.slices(), &mut words);
    assert_eq!(stats.tested, 1003);
    assert_eq!(bit_stats.tested, 1002, "only set bits are tested");
    for (index, verdict) in verdicts.iter().enumerate() {
        let kept = words[index / 64] >> (index % 64) & 1 == 1;
        assert_eq!(kept, index != 5 && *verdict != OcclusionVerdict::Occluded, "object {index}: {verdict:?}");
    }
    assert!(stats.occluded > 0, "the random scene hides something");

    // The gathered path over an array of boxes agrees with the one-box test too.
    let aabbs: Vec<Aabb> =
        (0..1003).map(|_| Aabb::from_center_half_extent(random.vector(-20.0, 20.0), random.vector(0.1, 1.0))).collect();
    let mut words = vec![u64::MAX; 1003usize.div_ceil(64)];
    *words.last_mut().expect("16 words") = (1u64 << (1003 % 64)) - 1;
    words[3] = 0x5555_5555_5555_5555;
    let expected = words.clone();
    let gathered = culler.cull_bits_aabbs(&aabbs, &mut words);
    let mut occluded = 0;
    for (index, aabb) in aabbs.iter().enumerate() {
        let was = expected[index / 64] >> (index % 64) & 1 == 1;
        let kept = words[index / 64] >> (index % 64) & 1 == 1;
        let hidden = culler.test_aabb(aabb) == OcclusionVerdict::Occluded;
        occluded += usize::from(was && hidden);
        assert_eq!(kept, was && !hidden, "box {index}: gathered path against the one-box test");
    }
    assert_eq!(gathered.occluded, occluded);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Never false-hidden: whatever the cull calls occluded, the exact 4x reference hides
    /// too (every sample of its footprint nearer than its nearest corner).
    #[test]
    fn never_hides_what_the_reference_sees(seed in any::<u64>(), orthographic in any::<bool>(), object_seed in any::<u64>()) {
        let (view_projection, meshes, instances) = random_scene(seed, orthographic);
        let mut culler = OcclusionCuller::new(64, 32).expect("valid size");
        culler.rasterize(view_projection, &meshes, &instances);
        let reference = ReferenceRaster::new(view_projection, 64, 32, SAMPLES, &meshes, &instances);
        let mut random = Random(object_seed | 1);
        for _ in 0..200 {
            let object = Aabb::from_center_half_extent(random.vector(-25.0, 25.0), random.vector(0.05, 2.0));
            if culler.test_aabb(&object) == OcclusionVerdict::Occluded {
                prop_assert!(reference.hides(&object), "{:?} is culled but the reference sees part of it", object);
            }
        }
    }
}

/// The property above, over fixed seeds, with a check that the scenes do hide things (so
/// the property is not vacuous).
#[test]
fn random_scenes_hide_objects_and_never_wrongly() {
    let mut occluded = 0;
    for seed in 1..25u64 {
        let (view_projection, meshes, instances) = random_scene(seed * 104_729, seed % 3 == 0);
        let mut culler = OcclusionCuller::new(64, 32).expect("valid size");
        culler.rasterize(view_projection, &meshes, &instances);
        let reference = ReferenceRaster::new(view_projection, 64, 32, SAMPLES, &meshes, &instances);
        let mut random = Random(seed);
        for _ in 0..300 {
            let object = Aabb::from_center_half_extent(random.vector(-25.0, 25.0), random.vector(0.05, 2.0));
            if culler.test_aabb(&object) == OcclusionVerdict::Occluded {
                occluded += 1;
                assert!(reference.hides(&object), "seed {seed}: {object:?} is culled but the reference sees it");
            }
        }
    }
    assert!(occluded > 20, "random scenes hide a fair number of objects, got {occluded}");
}

/// A generated inner box never hides what its render mesh (drawn exactly by the reference)
/// leaves visible.
#[test]
fn an_inner_box_occluder_is_conservative_against_its_render_mesh() {
    // The render mesh: a closed, outward-wound 6 x 4 x 6 block, drawn exactly by the reference.
    let render =
        OccluderMesh::from_box(&Aabb::new(Vec3::new(-3.0, 0.0, -3.0), Vec3::new(3.0, 4.0, 3.0))).expect("valid");
    let inner = OccluderMesh::inner_box_of(render.positions(), render.indices()).expect("a block has an inner box");
    let (mut exact, mut generated) = (OccluderMeshes::new(), OccluderMeshes::new());
    exact.insert(MeshHandle(0), render);
    generated.insert(MeshHandle(0), inner);
    let mut occluded = 0;
    for seed in 1..20u64 {
        let mut random = Random(seed * 31);
        let instances = [OccluderInstance {
            mesh: MeshHandle(0),
            world: Mat4::from_translation(random.vector(-3.0, 3.0))
                * Mat4::from_axis_angle(random.vector(-1.0, 1.0).normalize_or(Vec3::Y), random.range(0.0, 6.3)),
        }];
        let view_projection = perspective(random.vector(-2.0, 2.0) + Vec3::new(0.0, 0.0, 15.0), Vec3::ZERO);
        let mut culler = OcclusionCuller::new(64, 32).expect("valid size");
        culler.rasterize(view_projection, &generated, &instances);
        let reference = ReferenceRaster::new(view_projection, 64, 32, SAMPLES, &exact, &instances);
        for _ in 0..200 {
            let object =
                Aabb::from_center_half_extent(random.vector(-10.0, 10.0) - Vec3::Z * 8.0, random.vector(0.1, 1.0));
            if culler.test_aabb(&object) == OcclusionVerdict::Occluded {
                occluded += 1;
                assert!(
                    reference.hides(&object),
                    "seed {seed}: {object:?} hidden by the inner box but seen past the mesh"
                );
            }
        }
    }
    assert!(occluded > 0, "the inner box hides something");
}

/// A street: rows of box buildings on both sides ahead of a street-level camera, nearest
/// first (as the occluder selection orders them), so near buildings fill tiles and the ones
/// behind them are skipped by the tile trimming.
fn street() -> (Mat4, OccluderMeshes, Vec<OccluderInstance>) {
    let mut random = Random(0x5eed);
    let mut boxes = Vec::new();
    for row in 0..12 {
        for side in [-1.0f32, 1.0] {
            let near = -4.0 - row as f32 * 9.0;
            let x = side * random.range(4.0, 7.0);
            let height = random.range(3.0, 20.0);
            boxes.push(Aabb::new(Vec3::new(x - 3.0, 0.0, near - 7.0), Vec3::new(x + 3.0, height, near)));
        }
    }
    let (meshes, instances) = box_meshes(&boxes);
    (perspective(Vec3::new(0.0, 1.8, 0.0), Vec3::new(0.0, 1.8, -1.0)), meshes, instances)
}

/// The raster with every primitive drawn whole (all its edges, no skipping) into every tile
/// its rectangle touches, in order: what the trimmed raster must reproduce bit for bit.
fn untrimmed(culler: &OcclusionCuller) -> Vec<f32> {
    use super::raster::raster_scalar;
    use super::tile::{Shape, TILE_PIXELS};
    let (width, height) = (culler.width(), culler.height());
    let mut depth = vec![0.0f32; width * height];
    for tile_y in (0..height).step_by(TILE_HEIGHT) {
        for tile_x in (0..width).step_by(TILE_WIDTH) {
            let origin = [tile_x as i32, tile_y as i32];
            let mut tile = [0.0f32; TILE_PIXELS];
            for primitive in culler.primitives.iter().filter(|primitive| primitive.edge_count > 0) {
                let span = [
                    primitive.rect[0].max(origin[0]),
                    primitive.rect[1].max(origin[1]),
                    primitive.rect[2].min(origin[0] + TILE_WIDTH as i32),
                    primitive.rect[3].min(origin[1] + TILE_HEIGHT as i32),
                ];
                if span[0] < span[2] && span[1] < span[3] {
                    let shape = Shape {
                        edges: &primitive.edges[..primitive.edge_count as usize],
                        planes: &primitive.planes[..primitive.plane_count as usize],
                        floor: primitive.floor,
                    };
                    raster_scalar(&shape, origin, span, &mut tile);
                }
            }
            for y in tile_y..(tile_y + TILE_HEIGHT).min(height) {
                for x in tile_x..(tile_x + TILE_WIDTH).min(width) {
                    depth[y * width + x] = tile[(y - tile_y) * TILE_WIDTH + x - tile_x];
                }
            }
        }
    }
    depth
}

/// Trimming primitives to tiles (edges that cover a whole tile dropped, primitives that
/// cannot change a tile skipped) writes exactly the bits of the untrimmed raster, with both
/// kernels, in random scenes and in a street where trimming skips many primitives.
#[test]
fn tile_trimming_writes_the_untrimmed_bits() {
    crate::kernels::coverage::report_occlusion("tile_trimming_writes_the_untrimmed_bits");
    let mut scenes: Vec<_> = (1..20u64).map(|seed| random_scene(seed * 7877, seed % 4 == 0)).collect();
    scenes.push(street());
    for (index, (view_projection, meshes, instances)) in scenes.iter().enumerate() {
        for (width, height) in [(72, 40), (256, 128)] {
            for kernel in [Kernel::Scalar, Kernel::Avx2] {
                let mut culler = OcclusionCuller::new(width, height).expect("valid size");
                culler.set_kernel(kernel);
                culler.rasterize(*view_projection, meshes, instances);
                let expected = untrimmed(&culler);
                for y in 0..height {
                    for x in 0..width {
                        assert_eq!(
                            culler.depth(x, y).to_bits(),
                            expected[y * width + x].to_bits(),
                            "scene {index} {width}x{height} {kernel:?}: pixel ({x}, {y})"
                        );
                    }
                }
            }
        }
    }
    // The street is mostly filled: the far buildings lie behind the near ones.
    let (view_projection, meshes, instances) = street();
    let mut culler = OcclusionCuller::default();
    culler.rasterize(view_projection, &meshes, &instances);
    let filled = (0..128).flat_map(|y| (0..256).map(move |x| (x, y))).filter(|&(x, y)| culler.depth(x, y) > 0.0);
    assert!(filled.count() > 256 * 128 / 3, "the street's buildings cover a good part of the view");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The batch tests (the window read, then the 2x2 texel reads, then the one-box test
    /// for what they leave) give the one-box test's verdict for every box, on both the
    /// structure-of-arrays and the gathered path.
    #[test]
    fn batch_tests_equal_the_one_box_test(
        seed in any::<u64>(),
        orthographic in any::<bool>(),
        object_seed in any::<u64>(),
        size in 0usize..3,
    ) {
        let (width, height) = [(64, 32), (72, 40), (256, 128)][size];
        let (view_projection, meshes, instances) = random_scene(seed, orthographic);
        let mut culler = OcclusionCuller::new(width, height).expect("valid size");
        culler.rasterize(view_projection, &meshes, &instances);
        let mut random = Random(object_seed | 1);
        let aabbs: Vec<Aabb> =
            (0..517).map(|_| Aabb::from_center_half_extent(random.vector(-25.0, 25.0), random.vector(0.02, 2.0))).collect();
        let mut boxes = AabbSoa::with_capacity(aabbs.len());
        aabbs.iter().for_each(|aabb| boxes.push(aabb));
        let mut soa_words = vec![u64::MAX; aabbs.len().div_ceil(64)];
        *soa_words.last_mut().expect("nine words") = (1u64 << (aabbs.len() % 64)) - 1;
        let mut gathered_words = soa_words.clone();
        culler.cull_bits(boxes.slices(), &mut soa_words);
        culler.cull_bits_aabbs(&aabbs, &mut gathered_words);
        for (index, aabb) in aabbs.iter().enumerate() {
            let kept = culler.test_aabb(aabb) != OcclusionVerdict::Occluded;
            prop_assert_eq!(soa_words[index / 64] >> (index % 64) & 1 == 1, kept, "box {}: SoA path", index);
            prop_assert_eq!(gathered_words[index / 64] >> (index % 64) & 1 == 1, kept, "box {}: gathered path", index);
        }
    }
}

/// A city block grid ahead of a street-level camera: `rows` rows of eight buildings, some
/// turned about the vertical, nearest row first; objects hide behind the near rows.
fn city_grid(rows: usize, seed: u64) -> (Mat4, OccluderMeshes, Vec<OccluderInstance>) {
    let mut random = Random(seed | 1);
    let mut meshes = OccluderMeshes::new();
    let mut instances = Vec::new();
    for index in 0..rows * 8 {
        let (column, row) = ((index % 8) as f32, (index / 8) as f32);
        let half = Vec3::new(random.range(2.0, 5.0), random.range(2.0, 15.0), random.range(2.0, 5.0));
        let mesh = OccluderMesh::from_box(&Aabb::new(
            Vec3::new(-half.x, 0.0, -half.z),
            Vec3::new(half.x, 2.0 * half.y, half.z),
        ))
        .expect("valid box");
        meshes.insert(MeshHandle(index as u32), mesh);
        let place = Vec3::new((column - 3.5) * 12.0 + random.range(-1.0, 1.0), 0.0, -10.0 - row * 12.0);
        let world = Mat4::from_translation(place) * Mat4::from_rotation_y(random.range(-0.3, 0.3));
        instances.push(OccluderInstance { mesh: MeshHandle(index as u32), world });
    }
    (perspective(Vec3::new(0.0, 1.8, 0.0), Vec3::new(random.range(-0.3, 0.3), 1.8, -1.0)), meshes, instances)
}

/// The two-pass raster (the nearest quarter first, then only the occluders that pass does
/// not hide) writes the bits of drawing every occluder in one pass, with both kernels, and
/// does skip hidden occluders in a city.
#[test]
fn skipping_hidden_occluders_keeps_every_bit() {
    crate::kernels::coverage::report_occlusion("skipping_hidden_occluders_keeps_every_bit");
    let mut hidden = 0;
    for seed in 1..6u64 {
        let (view_projection, meshes, instances) = city_grid(20 + 5 * seed as usize, seed * 977);
        for kernel in [Kernel::Scalar, Kernel::Avx2] {
            let mut two_pass = OcclusionCuller::new(256, 128).expect("valid size");
            two_pass.set_kernel(kernel);
            let stats = two_pass.rasterize(view_projection, &meshes, &instances);
            hidden += stats.hidden;
            let mut one_pass = OcclusionCuller::new(256, 128).expect("valid size");
            one_pass.set_kernel(kernel);
            one_pass.view_projection = view_projection;
            let mut all = RasterStats::default();
            one_pass.draw(&meshes, &instances, true, &[], &mut all);
            assert!(stats.silhouettes + stats.hidden <= all.silhouettes, "seed {seed}: hidden ones are not drawn");
            for y in 0..128 {
                for x in 0..256 {
                    assert_eq!(
                        two_pass.depth(x, y).to_bits(),
                        one_pass.depth.at(x, y).to_bits(),
                        "seed {seed} {kernel:?}: pixel ({x}, {y})"
                    );
                }
            }
        }
    }
    assert!(hidden > 100, "the near rows hide many of the far buildings, got {hidden}");
}

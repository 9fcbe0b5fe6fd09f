//! A steady frame of the occlusion cull (raster, pyramid, batch test) allocates nothing.

use culling::occlusion::{OccluderInstance, OccluderMesh, OccluderMeshes, OcclusionCuller};
use culling::{words_for, Aabb, AabbSoa};
use ecs::MeshHandle;
use glam::{Mat4, Vec3};
use runtime::alloc_counter::{count_allocations, settle_threads, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[test]
fn a_steady_frame_allocates_nothing() {
    let mut meshes = OccluderMeshes::new();
    let mut occluders = Vec::new();
    for index in 0..64u32 {
        let corner = Vec3::new((index % 8) as f32 * 6.0 - 24.0, 0.0, -20.0 - (index / 8) as f32 * 6.0);
        let building = Aabb::new(corner, corner + Vec3::new(4.0, 8.0, 4.0));
        meshes.insert(MeshHandle(index), OccluderMesh::from_box(&building).expect("valid box"));
        occluders.push(OccluderInstance { mesh: MeshHandle(index), world: Mat4::IDENTITY });
    }
    // A triangle occluder too (nine vertices: not a silhouette), crossing the near plane.
    let wall =
        OccluderMesh::from_box(&Aabb::new(Vec3::new(-30.0, 0.0, -10.0), Vec3::new(-29.0, 10.0, 5.0))).expect("valid");
    let mut positions = wall.positions().to_vec();
    positions.push(Vec3::ZERO);
    meshes.insert(MeshHandle(100), OccluderMesh::new(positions, wall.indices().to_vec()).expect("valid"));
    occluders.push(OccluderInstance { mesh: MeshHandle(100), world: Mat4::IDENTITY });
    let mut boxes = AabbSoa::with_capacity(10_000);
    for index in 0..10_000 {
        let center = Vec3::new((index % 100) as f32 - 50.0, 1.0, -(index / 100) as f32 - 5.0);
        boxes.push(&Aabb::from_center_half_extent(center, Vec3::splat(0.3)));
    }
    let view = Mat4::look_at_rh(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0), Vec3::Y);
    let view_projection = Mat4::perspective_infinite_reverse_rh(1.2, 2.0, 0.1) * view;
    let mut culler = OcclusionCuller::default();
    let mut words = vec![0u64; words_for(boxes.len())];
    let frame = |culler: &mut OcclusionCuller, words: &mut [u64]| {
        words.fill(u64::MAX);
        *words.last_mut().expect("words") = (1u64 << (boxes.len() % 64)) - 1;
        culler.rasterize(view_projection, &meshes, &occluders);
        culler.cull_bits(boxes.slices(), words).occluded
    };
    for _ in 0..3 {
        frame(&mut culler, &mut words);
    }
    let mut occluded = 0;
    settle_threads();
    let ((), allocations) = count_allocations(|| {
        for _ in 0..3 {
            occluded += frame(&mut culler, &mut words);
        }
    });
    assert!(occluded > 0, "the buildings hide some boxes");
    assert_eq!(allocations, 0, "steady frames of the occlusion cull allocated {allocations} times");
}

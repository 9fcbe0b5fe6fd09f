//! CPU occlusion culling on a city: 1,000 building occluders (boxes of 12 triangles, about
//! 12k triangles) and 100,000 small occludees, camera at street level.
//!
//! Groups: the raster (two passes of setup, binning, tiles and pyramid, the second without
//! the occluders the first hides) and the test of the frustum survivors, each on the job
//! system and on a one-thread pool; raster plus test; and the raster of the same buildings
//! forced down the triangle path (no convex silhouettes).
//! Before timing it prints the quality: of the on-screen frustum survivors the exact 4x
//! reference would reject, the fraction the cull rejects (and checks it never rejects one
//! the reference sees).
//!
//! `cargo bench -p culling --bench occlusion` (add `-- --quick` while developing).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use culling::occlusion::reference::ReferenceRaster;
use culling::occlusion::{OccluderInstance, OccluderMesh, OccluderMeshes, OcclusionCuller, OcclusionVerdict};
use culling::{words_for, Aabb, AabbSoa, Frustum, Kernel};
use ecs::MeshHandle;
use glam::{Mat4, Vec3};
use runtime::JobSystem;

mod support;
use support::Random;

/// Occluders (buildings).
const BUILDINGS: usize = 1_000;
/// Occludees.
const OBJECTS: usize = 100_000;

struct City {
    view_projection: Mat4,
    meshes: OccluderMeshes,
    /// The same buildings with a ninth (unused) vertex, which keeps them off the silhouette
    /// path: the general triangle raster.
    triangle_meshes: OccluderMeshes,
    buildings: Vec<OccluderInstance>,
    objects: AabbSoa,
    /// The same objects as boxes, for the reference.
    boxes: Vec<Aabb>,
    /// Frustum survivors, one bit per object.
    survivors: Vec<u64>,
}

/// Buildings on a jittered grid ahead of a street-level camera, small objects among them.
fn city() -> City {
    let view = Mat4::look_at_rh(Vec3::new(0.0, 1.8, 0.0), Vec3::new(0.0, 1.8, -1.0), Vec3::Y);
    let view_projection = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 2.0, 0.1) * view;
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut meshes = OccluderMeshes::new();
    let mut triangle_meshes = OccluderMeshes::new();
    let mut buildings = Vec::with_capacity(BUILDINGS);
    for index in 0..BUILDINGS {
        // A 40 x 25 grid of 16-unit blocks, streets between them.
        let (column, row) = ((index % 40) as f32, (index / 40) as f32);
        let center = Vec3::new((column - 19.5) * 16.0 + random.range(-2.0, 2.0), 0.0, -12.0 - row * 16.0);
        let half = Vec3::new(random.range(3.0, 6.5), random.range(4.0, 30.0), random.range(3.0, 6.5));
        let aabb = Aabb::new(center - Vec3::new(half.x, 0.0, half.z), center + Vec3::new(half.x, 2.0 * half.y, half.z));
        let mesh = OccluderMesh::from_box(&aabb).expect("building boxes are valid");
        let mut positions = mesh.positions().to_vec();
        positions.push(aabb.center());
        let general = OccluderMesh::new(positions, mesh.indices().to_vec()).expect("same triangles");
        meshes.insert(MeshHandle(index as u32), mesh);
        triangle_meshes.insert(MeshHandle(index as u32), general);
        buildings.push(OccluderInstance { mesh: MeshHandle(index as u32), world: Mat4::IDENTITY });
    }
    let mut objects = AabbSoa::with_capacity(OBJECTS);
    let mut boxes = Vec::with_capacity(OBJECTS);
    for _ in 0..OBJECTS {
        let center = Vec3::new(random.range(-320.0, 320.0), random.range(0.3, 4.0), random.range(-410.0, -2.0));
        let half = Vec3::new(random.range(0.2, 1.5), random.range(0.2, 1.5), random.range(0.2, 1.5));
        boxes.push(Aabb::from_center_half_extent(center, half));
        objects.push(&boxes[boxes.len() - 1]);
    }
    let mut survivors = vec![0u64; words_for(OBJECTS)];
    Kernel::detect().cull_aabbs(&Frustum::from_view_projection(view_projection), objects.slices(), &mut survivors);
    City { view_projection, meshes, triangle_meshes, buildings, objects, boxes, survivors }
}

/// Prints the share of the reference's rejections that the cull makes, for the silhouette
/// path and the triangle path, and checks that it never rejects what the reference sees.
fn report_quality(city: &City) {
    let reference = ReferenceRaster::new(city.view_projection, 256, 128, 4, &city.meshes, &city.buildings);
    for (path, meshes) in [("silhouettes", &city.meshes), ("triangles", &city.triangle_meshes)] {
        let mut culler = OcclusionCuller::default();
        let raster = culler.rasterize(city.view_projection, meshes, &city.buildings);
        let mut verdicts = vec![OcclusionVerdict::Visible; OBJECTS];
        culler.classify(city.objects.slices(), &mut verdicts);
        let (mut survivors, mut reference_rejects, mut both, mut false_hidden) = (0usize, 0usize, 0usize, 0usize);
        for (index, verdict) in verdicts.iter().enumerate() {
            let aabb = city.boxes[index];
            if city.survivors[index / 64] >> (index % 64) & 1 == 0 || !reference.on_screen(&aabb) {
                continue;
            }
            survivors += 1;
            let hidden = reference.hides(&aabb);
            let occluded = *verdict == OcclusionVerdict::Occluded;
            reference_rejects += usize::from(hidden);
            both += usize::from(hidden && occluded);
            false_hidden += usize::from(occluded && !hidden);
        }
        println!(
            "occlusion quality ({path}): {survivors} on-screen frustum survivors, the exact 4x reference rejects \
             {reference_rejects}, the cull rejects {both} of them ({:.1}%), false-hidden {false_hidden}; \
             {} primitives rasterized, {} occluders hidden by nearer ones and not set up",
            100.0 * both as f64 / reference_rejects.max(1) as f64,
            raster.primitives,
            raster.hidden,
        );
        assert_eq!(false_hidden, 0, "the cull rejected objects the exact reference sees");
    }
}

fn bench_occlusion(criterion: &mut Criterion) {
    let city = city();
    report_quality(&city);
    let one_thread = JobSystem::new(1);
    let pools: [(&str, &JobSystem); 2] = [("jobs", JobSystem::global()), ("one_thread", &one_thread)];
    let mut group = criterion.benchmark_group("occlusion");
    for (name, pool) in pools {
        let mut culler = OcclusionCuller::default();
        group.bench_function(format!("raster/{name}"), |bencher| {
            bencher.iter(|| {
                pool.install(|| black_box(culler.rasterize(city.view_projection, &city.meshes, &city.buildings)))
            })
        });
        let mut words = city.survivors.clone();
        group.bench_function(format!("test/{name}"), |bencher| {
            bencher.iter(|| {
                words.copy_from_slice(&city.survivors);
                pool.install(|| black_box(culler.cull_bits(city.objects.slices(), &mut words)))
            })
        });
        group.bench_function(format!("raster_and_test/{name}"), |bencher| {
            bencher.iter(|| {
                words.copy_from_slice(&city.survivors);
                pool.install(|| {
                    culler.rasterize(city.view_projection, &city.meshes, &city.buildings);
                    black_box(culler.cull_bits(city.objects.slices(), &mut words))
                })
            })
        });
        group.bench_function(format!("raster_triangles/{name}"), |bencher| {
            bencher.iter(|| {
                pool.install(|| {
                    black_box(culler.rasterize(city.view_projection, &city.triangle_meshes, &city.buildings))
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_occlusion);
criterion_main!(benches);

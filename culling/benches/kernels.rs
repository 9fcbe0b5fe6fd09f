//! Frustum kernels on one million objects: scalar reference, portable, AVX2 and AVX-512
//! (those the CPU runs; the detected kernel is the widest), the detected kernel on the job
//! system, and a streaming read of the same bytes as the physical floor. One group for
//! spheres, one for boxes.
//!
//! `cargo bench -p culling --bench kernels` (add `-- --quick` while developing).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use culling::{words_for, Aabb, AabbSoa, Frustum, Kernel, Sphere, SphereSoa, DEFAULT_GRAIN};
use glam::{Mat4, Vec3};
use runtime::JobSystem;

mod support;
use support::Random;

/// Objects per benchmark.
const OBJECTS: usize = 1_000_000;

/// A camera at the origin looking down -z through a 70° infinite reversed-Z projection; a
/// city-like spread of objects around it, about a fifth of them in view.
fn scene() -> (Frustum, AabbSoa, SphereSoa) {
    let view = Mat4::look_at_rh(Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 2.0, -1.0), Vec3::Y);
    let projection = Mat4::perspective_infinite_reverse_rh(70f32.to_radians(), 16.0 / 9.0, 0.1);
    let frustum = Frustum::from_view_projection(projection * view);
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut boxes = AabbSoa::with_capacity(OBJECTS);
    let mut spheres = SphereSoa::with_capacity(OBJECTS);
    for _ in 0..OBJECTS {
        let center = Vec3::new(random.range(-500.0, 500.0), random.range(0.0, 40.0), random.range(-500.0, 500.0));
        let half = Vec3::new(random.range(0.2, 6.0), random.range(0.2, 10.0), random.range(0.2, 6.0));
        let aabb = Aabb::from_center_half_extent(center, half);
        boxes.push(&aabb);
        spheres.push(&Sphere::from_aabb(&aabb));
    }
    (frustum, boxes, spheres)
}

/// The kernels each group times: the scalar reference, portable, and every SIMD kernel this
/// CPU runs natively (the detected one last), so AVX2 and AVX-512 are compared in one run.
fn simd_rows() -> Vec<Kernel> {
    let mut rows = vec![Kernel::Scalar, Kernel::Portable];
    rows.extend([Kernel::Avx2, Kernel::Avx512].into_iter().filter(|kernel| kernel.is_supported()));
    if !rows.contains(&Kernel::detect()) {
        rows.push(Kernel::detect());
    }
    rows
}

/// Sums the bit patterns of every array (integer adds, which the compiler vectorises), so
/// the loop is bound by memory like the kernels.
fn stream_sum(arrays: &[&[f32]]) -> u32 {
    arrays
        .iter()
        .map(|array| array.iter().fold(0u32, |sum, value| sum.wrapping_add(value.to_bits())))
        .fold(0, u32::wrapping_add)
}

fn spheres(criterion: &mut Criterion) {
    let (frustum, _, spheres) = scene();
    let pool = JobSystem::global();
    let mut words = vec![0u64; words_for(OBJECTS)];
    let mut group = criterion.benchmark_group("spheres_1m");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    for kernel in simd_rows() {
        group.bench_function(format!("{kernel:?}"), |bench| {
            bench.iter(|| kernel.cull_spheres(&frustum, black_box(spheres.slices()), &mut words))
        });
    }
    group.bench_function("detected_parallel", |bench| {
        bench.iter(|| {
            Kernel::detect().cull_spheres_parallel(
                pool,
                &frustum,
                black_box(spheres.slices()),
                &mut words,
                DEFAULT_GRAIN,
            )
        })
    });
    let arrays = [&spheres.x[..], &spheres.y, &spheres.z, &spheres.radius];
    group.bench_function("stream_read", |bench| bench.iter(|| stream_sum(black_box(&arrays))));
    group.finish();
}

fn aabbs(criterion: &mut Criterion) {
    let (frustum, boxes, _) = scene();
    let pool = JobSystem::global();
    let mut words = vec![0u64; words_for(OBJECTS)];
    let mut group = criterion.benchmark_group("aabbs_1m");
    group.throughput(Throughput::Elements(OBJECTS as u64));
    for kernel in simd_rows() {
        group.bench_function(format!("{kernel:?}"), |bench| {
            bench.iter(|| kernel.cull_aabbs(&frustum, black_box(boxes.slices()), &mut words))
        });
    }
    group.bench_function("detected_parallel", |bench| {
        bench.iter(|| {
            Kernel::detect().cull_aabbs_parallel(pool, &frustum, black_box(boxes.slices()), &mut words, DEFAULT_GRAIN)
        })
    });
    let arrays = [&boxes.center_x[..], &boxes.center_y, &boxes.center_z, &boxes.half_x, &boxes.half_y, &boxes.half_z];
    group.bench_function("stream_read", |bench| bench.iter(|| stream_sum(black_box(&arrays))));
    group.finish();
}

criterion_group!(benches, spheres, aabbs);
criterion_main!(benches);

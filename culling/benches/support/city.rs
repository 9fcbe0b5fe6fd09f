//! The 1M-object city of the `visibility_city_1m` benchmark, shared with the
//! `city_probe` example (which times the same scene on a chosen thread count).

use culling::occlusion::{OccluderMesh, OccluderMeshes};
use culling::Aabb;
use ecs::{scene, Camera, MaterialHandle, Mesh, MeshHandle, RenderSettings, Transform, VisibilityTags, WorldTransform};
use glam::{Mat4, Quat, Vec3};
use runtime::hecs::{Entity, With};
use runtime::{App, Stage, System};

use crate::support::Random;

/// The frame counter the motion systems read (a resource: setting it marks no component).
#[derive(Default)]
pub struct Clock(pub u64);

/// Blocks per side of the 1M-object city.
pub const CITY_BLOCKS: usize = 100;
/// Props per block (lamps, benches, trees: small boxes along the block's edges).
pub const CITY_PROPS: usize = 99;
/// Block pitch in metres: a 24 m building lot and an 8 m street.
pub const CITY_PITCH: f32 = 32.0;
/// The building mesh handle, registered as an occluder.
pub const BUILDING: MeshHandle = MeshHandle(7);

/// Marks the city's cars.
pub struct Car;

/// The 1M-object city: one building per block and `CITY_PROPS` props; every 50th prop is a
/// car that moves every frame (about 2%). A system in the Input stage drives the camera along
/// the street and the cars (through a query of `Car`), from the [`Clock`] resource, so the
/// change log names only what moves. `tags` is the tag policy, `threads` the job threads (the
/// job system's default without). Returns the app, its camera and the car count.
pub fn city_app(tags: VisibilityTags, threads: Option<usize>) -> (App, Entity, usize) {
    let mut app = threads.map_or_else(App::new, App::with_threads);
    culling::install(&mut app);
    app.resource_mut::<RenderSettings>().visibility_tags = tags;
    let unit = Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(BUILDING, OccluderMesh::from_box(&unit).expect("the unit box is a valid occluder"));
    app.insert_resource(occluders);
    app.insert_resource(Clock::default());
    let building = Mesh::new(BUILDING, MaterialHandle(1), unit);
    let prop = scene::unit_cube_mesh();
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let origin = -(CITY_BLOCKS as f32) * CITY_PITCH / 2.0;
    let world = app.world_mut();
    let mut buildings = Vec::with_capacity(CITY_BLOCKS * CITY_BLOCKS);
    let mut props = Vec::with_capacity(CITY_BLOCKS * CITY_BLOCKS * CITY_PROPS);
    let mut cars = Vec::with_capacity(CITY_BLOCKS * CITY_BLOCKS * CITY_PROPS / 50 + 1);
    for block in 0..CITY_BLOCKS * CITY_BLOCKS {
        let corner = Vec3::new(
            origin + (block % CITY_BLOCKS) as f32 * CITY_PITCH,
            0.0,
            origin + (block / CITY_BLOCKS) as f32 * CITY_PITCH,
        );
        let height = random.range(8.0, 60.0);
        let lot = Vec3::new(20.0, height, 20.0);
        let center = corner + Vec3::new(12.0, height / 2.0, 12.0);
        buildings.push((WorldTransform(Mat4::from_scale_rotation_translation(lot, Quat::IDENTITY, center)), building));
        for index in 0..CITY_PROPS {
            // Along the lot's four edges, on the pavement between the building and the street.
            let along = random.range(0.0, 22.0);
            let offset = match index % 4 {
                0 => Vec3::new(1.0 + along, 0.0, 1.0),
                1 => Vec3::new(1.0 + along, 0.0, 23.0),
                2 => Vec3::new(1.0, 0.0, 1.0 + along),
                _ => Vec3::new(23.0, 0.0, 1.0 + along),
            };
            let size = random.range(0.3, 1.5);
            let place = Mat4::from_scale_rotation_translation(
                Vec3::splat(size),
                Quat::IDENTITY,
                corner + offset + Vec3::Y * size / 2.0,
            );
            if (block * CITY_PROPS + index).is_multiple_of(50) {
                cars.push((WorldTransform(place), prop, Car));
            } else {
                props.push((WorldTransform(place), prop));
            }
        }
    }
    let car_count = cars.len();
    world.spawn_batch(buildings);
    world.spawn_batch(props);
    world.spawn_batch(cars);
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), street_view(0));
    app.add_system(
        Stage::Input,
        System::new("drive", move |ctx| {
            let frame = ctx.resource::<Clock>().0;
            *ctx.get_mut::<Transform>(camera).expect("the camera has a Transform") = street_view(frame);
            let step = if frame % 2 == 0 { 0.25 } else { -0.25 };
            ctx.par_for_each::<With<&mut WorldTransform, &Car>>(4096, |world| world.0.w_axis.x += step);
        })
        .query::<With<&mut WorldTransform, &Car>>()
        .writes::<Transform>()
        .reads_resource::<Clock>(),
    );
    for _ in 0..4 {
        app.resource_mut::<Clock>().0 += 1;
        app.run_frame();
    }
    (app, camera, car_count)
}

/// The camera `frame` steps along the street between two block columns, at eye height,
/// looking down the street.
pub fn street_view(frame: u64) -> Transform {
    let origin = -(CITY_BLOCKS as f32) * CITY_PITCH / 2.0;
    // 1 m per frame, over and over along 2 km of street.
    let z = origin + CITY_BLOCKS as f32 * CITY_PITCH - 10.0 - (frame % 2_000) as f32;
    Transform::from_translation_rotation(Vec3::new(origin + 50.0 * CITY_PITCH - 4.0, 1.8, z), Quat::IDENTITY)
}

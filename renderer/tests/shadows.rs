//! Shadows on lavapipe with validation, on both culling backends: a caster darkens the
//! ground where the sun, a spot light or a point light cannot see it; the shadow atlas
//! drawn with caster culling equals the one drawn with every caster in every view, texel
//! for texel, and so do the final images (casters behind the camera and outside every view
//! among them); a world without lights looks as it does without shadows.

mod lit_cube;

use std::sync::Arc;

use culling::CullingBackend;
use ecs::{
    scene, Aabb, Camera, DirectionalLight, MaterialHandle, Mesh, MeshHandle, PointLight, ShadowCaster, ShadowSettings,
    SpotLight, Transform,
};
use glam::{Quat, Vec3};
use lit_cube::lit_cube;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{vk, GpuDevice};
use renderer::{install_render, BitsReadback, RenderReport, RenderSetup};

const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;

/// What a scene holds.
#[derive(Clone, Copy, Debug)]
enum Light {
    Sun(Vec3),
    Spot { position: Vec3, direction: Vec3 },
    Point(Vec3),
}

struct Shot {
    color: Vec<u8>,
    atlas: Vec<u8>,
    report: RenderReport,
}

/// The camera of every scene.
fn camera() -> Transform {
    scene::look_at(Vec3::new(0.0, 9.0, 11.0), Vec3::ZERO)
}

/// The pixel (x, y) a world point lands on.
fn pixel_of(point: Vec3) -> (u32, u32) {
    let projection = Camera::default().projection_matrix(WIDTH as f32 / HEIGHT as f32);
    let clip = projection * camera().to_matrix().inverse() * point.extend(1.0);
    let (x, y) = (clip.x / clip.w, clip.y / clip.w);
    (((x * 0.5 + 0.5) * WIDTH as f32) as u32, ((0.5 - y * 0.5) * HEIGHT as f32) as u32)
}

fn brightness(image: &[u8], (x, y): (u32, u32)) -> u32 {
    let at = ((y * WIDTH + x) * 4) as usize;
    image[at..at + 3].iter().map(|&byte| u32::from(byte)).sum()
}

/// Renders the ground (a wide flat box whose top is y = 0), the `boxes` (centre, size;
/// casters when `cast`), the lights, for four frames; returns the last image, the atlas and
/// the report.
fn render(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    lights: &[Light],
    boxes: &[(Vec3, Vec3)],
    cast: bool,
    configure: impl Fn(&mut ShadowSettings),
) -> Shot {
    let mut app = shadow_app(device, backend, 256, configure);
    scene::spawn_camera(app.world_mut(), Camera::default(), camera());
    spawn_cube(&mut app, Vec3::new(0.0, -0.5, 0.0), Vec3::new(60.0, 1.0, 60.0), true);
    for &(center, size) in boxes {
        spawn_cube(&mut app, center, size, cast);
    }
    for light in lights {
        let towards = |direction: Vec3| Quat::from_rotation_arc(Vec3::NEG_Z, direction.normalize());
        match *light {
            Light::Sun(direction) => {
                let pose = Transform::from_translation_rotation(Vec3::ZERO, towards(direction));
                app.world_mut().spawn((pose, DirectionalLight::default()));
            }
            Light::Spot { position, direction } => {
                let pose = Transform::from_translation_rotation(position, towards(direction));
                let spot = SpotLight {
                    range: 30.0,
                    intensity: 60.0,
                    outer_angle: 0.9,
                    inner_angle: 0.7,
                    ..SpotLight::default()
                };
                app.world_mut().spawn((pose, spot));
            }
            Light::Point(position) => {
                let point = PointLight { range: 30.0, intensity: 60.0, ..PointLight::default() };
                app.world_mut().spawn((Transform::from_translation(position), point));
            }
        }
    }
    let mut last = None;
    for _ in 0..4 {
        last = Some(atlas_and_color(&mut app));
    }
    let (atlas, color) = last.expect("four frames");
    let report = app.resource::<RenderReport>().clone();
    Shot { color, atlas, report }
}

/// An app with the renderer on `backend` (shadows on, room for `capacity` objects) and the
/// test scenes' shadow settings (a 1024-texel atlas, 256-texel cascades to 40 units), then
/// `configure`'s changes.
fn shadow_app(
    device: &Arc<GpuDevice>,
    backend: CullingBackend,
    capacity: u32,
    configure: impl Fn(&mut ShadowSettings),
) -> runtime::App {
    let setup = RenderSetup {
        backend,
        device: Some(Arc::clone(device)),
        extent: vk::Extent2D { width: WIDTH, height: HEIGHT },
        capacity,
        meshes: lit_cube(),
        clear_color: [0.0, 0.0, 0.0, 1.0],
        bits: BitsReadback::Wait,
        passes: Vec::new(),
        shadows: true,
    };
    let mut app = runtime::App::with_threads(2);
    app.insert_resource(ecs::Viewport { width: WIDTH, height: HEIGHT });
    ecs::install(&mut app);
    {
        let mut settings = app.resource_mut::<ShadowSettings>();
        settings.atlas_resolution = 1024;
        settings.cascade_resolution = 256;
        settings.max_distance = 40.0;
        configure(&mut settings);
    }
    install_render(&mut app, setup).expect("a device is there");
    app
}

/// A unit cube at `center` scaled to `size`, a shadow caster when `caster`.
fn spawn_cube(app: &mut runtime::App, center: Vec3, size: Vec3, caster: bool) {
    let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
    let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(center).with_scale(size));
    if caster {
        app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
    }
}

/// Where a box at `center` throws the shadow of its centre on the ground, for light
/// travelling along `direction`.
fn shadow_point(center: Vec3, direction: Vec3) -> Vec3 {
    let direction = direction.normalize();
    center + direction * (center.y / -direction.y)
}

#[test]
fn a_caster_darkens_the_ground_the_sun_cannot_see() {
    let Some(device) = gpu_test_context() else { return };
    let sun = Vec3::new(0.5, -1.0, 0.0);
    let block = (Vec3::new(-4.0, 2.0, 0.0), Vec3::splat(2.0));
    let dark = pixel_of(shadow_point(block.0, sun));
    let open = pixel_of(Vec3::new(3.0, 0.0, 3.0));
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let lit = render(&device, backend, &[Light::Sun(sun)], &[block], false, |_| {});
        let shadowed = render(&device, backend, &[Light::Sun(sun)], &[block], true, |_| {});
        assert!(
            brightness(&shadowed.color, dark) * 10 < brightness(&lit.color, dark) * 7,
            "{backend:?}: no shadow at {dark:?}"
        );
        assert_eq!(brightness(&shadowed.color, open), brightness(&lit.color, open), "{backend:?}: open ground");
        let views = &shadowed.report.shadows.views;
        assert_eq!(views.len(), 4, "four cascades");
        assert!(shadowed.report.shadows.draws() >= 2);
    }
    assert_no_validation_messages(&device);
}

#[test]
fn spot_and_point_lights_cast_shadows_too() {
    let Some(device) = gpu_test_context() else { return };
    let block = (Vec3::new(0.0, 1.5, 0.0), Vec3::splat(1.5));
    for light in [
        Light::Spot { position: Vec3::new(-3.0, 6.0, 0.0), direction: Vec3::new(0.5, -1.0, 0.0) },
        Light::Point(Vec3::new(-3.0, 6.0, 0.0)),
    ] {
        let dark = pixel_of(shadow_point(block.0, block.0 - Vec3::new(-3.0, 6.0, 0.0)));
        for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
            let lit = render(&device, backend, &[light], &[block], false, |_| {});
            let shadowed = render(&device, backend, &[light], &[block], true, |_| {});
            let (bright, dim) = (brightness(&lit.color, dark), brightness(&shadowed.color, dark));
            assert!(dim * 10 < bright * 7, "{light:?} {backend:?}: {dim} against {bright} at {dark:?}");
        }
    }
    assert_no_validation_messages(&device);
}

#[test]
fn culled_shadow_maps_equal_the_unculled_ones_texel_for_texel() {
    let Some(device) = gpu_test_context() else { return };
    // Casters all around, far behind the camera towards the sun among them, and a lamp
    // inside a building.
    let mut boxes = Vec::new();
    for i in 0..40 {
        let angle = i as f32 * 0.7;
        let radius = 3.0 + (i % 7) as f32 * 4.0;
        let height = 1.0 + (i % 5) as f32 * 2.0;
        boxes.push((Vec3::new(angle.cos() * radius, height / 2.0, angle.sin() * radius), Vec3::new(1.5, height, 1.5)));
    }
    boxes.push((Vec3::new(0.0, 20.0, 60.0), Vec3::new(6.0, 40.0, 6.0)));
    let lights = [
        Light::Sun(Vec3::new(0.3, -0.6, -1.0)),
        Light::Spot { position: Vec3::new(2.0, 5.0, -2.0), direction: Vec3::NEG_Y },
        Light::Point(Vec3::new(0.0, 1.0, -40.0)),
        Light::Point(boxes[3].0),
    ];
    for backend in [CullingBackend::Cpu, CullingBackend::Gpu] {
        let culled = render(&device, backend, &lights, &boxes, true, |_| {});
        let unculled = render(&device, backend, &lights, &boxes, true, |settings| settings.caster_culling = false);
        let report = &culled.report.shadows;
        assert_eq!(report.views.len(), 4 + 1 + 6 + 6, "{backend:?}");
        assert!(report.draws() < unculled.report.shadows.draws(), "{backend:?}: culling drew fewer casters");
        let differing = culled.atlas.chunks(4).zip(unculled.atlas.chunks(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "{backend:?}: atlas texels that differ with caster culling");
        assert_eq!(culled.color, unculled.color, "{backend:?}: the final image");
    }
    assert_no_validation_messages(&device);
}

#[test]
fn a_world_without_lights_looks_as_without_shadows() {
    let Some(device) = gpu_test_context() else { return };
    let boxes = [(Vec3::new(-2.0, 1.0, 0.0), Vec3::splat(2.0))];
    let with = render(&device, CullingBackend::Cpu, &[], &boxes, true, |_| {});
    let without = render(&device, CullingBackend::Cpu, &[], &boxes, true, |settings| settings.enabled = false);
    assert_eq!(with.color, without.color);
    assert!(with.report.shadows.views.is_empty());
    assert_no_validation_messages(&device);
}

/// A small deterministic generator for the scenes below.
struct Lcg(u64);

impl Lcg {
    /// A number in `[low, high)`.
    fn range(&mut self, low: f32, high: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        low + (high - low) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }
}

#[test]
fn the_gpus_caster_bits_equal_the_hosts_in_every_light_view() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = shadow_app(&device, CullingBackend::Gpu, 512, |settings| {
        settings.cascade_resolution = 128;
        settings.max_distance = 60.0;
        // The frustum's bits alone: occlusion would clear some cascades' bits further.
        settings.caster_occlusion = false;
    });
    assert!(app.resource::<culling::ShadowViews>().device_culling(), "the GPU culls the casters");
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera());
    // Boxes everywhere, behind the camera and far outside its view among them, some rotated,
    // some not casters; lamps inside and between them.
    let mut random = Lcg(7);
    for index in 0..300 {
        let center = Vec3::new(random.range(-80.0, 80.0), random.range(0.0, 12.0), random.range(-80.0, 80.0));
        let size = Vec3::new(random.range(0.2, 4.0), random.range(0.2, 9.0), random.range(0.2, 4.0));
        let rotation = Quat::from_rotation_y(random.range(0.0, 6.3));
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        let pose = Transform::from_translation_rotation(center, rotation).with_scale(size);
        let entity = scene::spawn_mesh(app.world_mut(), mesh, pose);
        if index % 5 != 0 {
            app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
        }
    }
    let sun = app.world_mut().spawn((Transform::IDENTITY, DirectionalLight::default()));
    for (index, position) in [Vec3::new(5.0, 6.0, 5.0), Vec3::new(-20.0, 3.0, 10.0)].into_iter().enumerate() {
        let pose = Transform::from_translation_rotation(position, Quat::from_rotation_x(-1.2 - index as f32 * 0.2));
        app.world_mut().spawn((pose, SpotLight { range: 40.0, ..SpotLight::default() }));
    }
    app.world_mut().spawn((Transform::from_translation(Vec3::new(0.0, 2.0, -6.0)), PointLight::default()));
    let mut host = culling::VisibilityBits::default();
    let mut views_seen = 0;
    // The camera and the sun each turn half a circle over the run.
    for frame in 0..6 {
        let turn = frame as f32 / 5.0 * std::f32::consts::PI;
        let eye = Vec3::new(11.0 * turn.sin(), 9.0, 11.0 * turn.cos());
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = scene::look_at(eye, Vec3::ZERO);
        let sun_pose = Quat::from_rotation_y(turn) * Quat::from_rotation_x(-0.9);
        *app.world_mut().get::<&mut Transform>(sun).expect("the sun") =
            Transform::from_translation_rotation(Vec3::ZERO, sun_pose);
        app.run_frame();
        let report = app.resource::<RenderReport>().clone();
        assert!(report.error.is_none(), "{:?}", report.error);
        let shadows = &report.shadows;
        assert!(shadows.on_device, "frame {frame}: counted on the GPU");
        let slots = app.resource::<culling::Visibility>().len();
        let mut views = app.resource_mut::<culling::ShadowViews>();
        assert_eq!(views.views().len(), shadows.views.len(), "frame {frame}");
        views.cull_on_host();
        for view in 0..shadows.views.len() {
            views.slot_bits_into(view, slots, &mut host);
            let device = shadows.view_bits(view);
            assert!(device.len() >= host.words().len(), "frame {frame} view {view}: every slot has a bit");
            assert_eq!(&device[..host.words().len()], host.words(), "frame {frame} view {view}: the bits");
            assert!(device[host.words().len()..].iter().all(|&word| word == 0), "frame {frame} view {view}");
            let kept = views.stats(view).kept as u32;
            assert_eq!(shadows.views[view].count, kept, "frame {frame} view {view}: the draws");
            assert!(kept < views.stats(view).casters as u32 || view >= 4, "frame {frame} view {view}: culled");
        }
        views_seen += shadows.views.len();
        if device.capabilities().timestamps {
            assert!(shadows.views.iter().all(|view| view.gpu_ms.is_some()), "frame {frame}: a GPU zone per view");
            assert!(shadows.gpu_ms.iter().all(Option::is_some), "frame {frame}: cull, atlas and pyramid timed");
        }
    }
    assert_eq!(views_seen, 6 * (4 + 1 + 1 + 6), "every frame had the sun's, two spots' and a lamp's views");
    assert_no_validation_messages(&device);
}

#[test]
fn the_cascades_leave_out_casters_hidden_from_the_sun_and_their_maps_stay_exact() {
    let Some(device) = gpu_test_context() else { return };
    // A roof high above a field of small boxes: the sun, straight above, sees the roof only.
    let mut boxes = vec![(Vec3::new(0.0, 9.0, 0.0), Vec3::new(16.0, 1.0, 16.0))];
    for x in -3..=3 {
        for z in -3..=3 {
            boxes.push((Vec3::new(x as f32 * 2.0, 0.5, z as f32 * 2.0), Vec3::splat(0.8)));
        }
    }
    // And a few boxes beside the roof, in the sun.
    boxes.extend([Vec3::new(12.0, 1.0, 0.0), Vec3::new(-12.0, 1.0, 4.0)].map(|center| (center, Vec3::splat(2.0))));
    let sun = [Light::Sun(Vec3::new(0.05, -1.0, 0.02))];
    let culled = render(&device, CullingBackend::Gpu, &sun, &boxes, true, |_| {});
    let frustum_only =
        render(&device, CullingBackend::Gpu, &sun, &boxes, true, |settings| settings.caster_occlusion = false);
    let unculled = render(&device, CullingBackend::Gpu, &sun, &boxes, true, |settings| settings.caster_culling = false);
    let report = &culled.report.shadows;
    assert!(report.on_device);
    // Slots: the ground first, the roof, the 49 boxes under it, the two in the sun.
    let roof = 1usize;
    let under = 2..2 + 49;
    let in_sun = [2 + 49, 2 + 50];
    let bit = |words: &[u64], slot: usize| words.get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1);
    let mut occluded_somewhere = 0;
    for view in 0..4 {
        let (with, without) = (report.view_bits(view), frustum_only.report.shadows.view_bits(view));
        for slot in under.clone() {
            assert!(!bit(with, slot) || bit(without, slot), "view {view} slot {slot}: occlusion only removes");
            if bit(without, slot) && !bit(with, slot) {
                occluded_somewhere += 1;
            }
        }
        if bit(without, roof) {
            assert!(bit(with, roof), "view {view}: the roof is in the sun");
        }
        for slot in in_sun {
            assert_eq!(bit(with, slot), bit(without, slot), "view {view} slot {slot}: in the sun");
        }
    }
    assert!(occluded_somewhere > 0, "the boxes under the roof are hidden from the sun in some cascade");
    assert!(report.draws() < frustum_only.report.shadows.draws(), "occlusion drew fewer casters");
    for other in [&frustum_only, &unculled] {
        let differing = culled.atlas.chunks(4).zip(other.atlas.chunks(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "atlas texels that differ with occlusion culling");
        assert_eq!(culled.color, other.color, "the final image");
    }
    assert_no_validation_messages(&device);
}

/// The atlas and the image of a frame (the last screenshots taken).
fn atlas_and_color(app: &mut runtime::App) -> (Vec<u8>, Vec<u8>) {
    let mut shots = app.resource_mut::<renderer::Screenshots>();
    shots.request(renderer::COLOR);
    shots.request(renderer::SHADOW_ATLAS);
    drop(shots);
    app.run_frame();
    let report = app.resource::<RenderReport>();
    assert!(report.error.is_none(), "{:?}", report.error);
    drop(report);
    let shots = app.resource_mut::<renderer::Screenshots>().take();
    let last = |name: &str| shots.iter().rev().find(|shot| shot.image == name).expect("taken").clone();
    (last(renderer::SHADOW_ATLAS).texels, last(renderer::COLOR).rgba8)
}

#[test]
fn turning_the_camera_and_the_sun_keeps_every_culled_map_exact() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = shadow_app(&device, CullingBackend::Gpu, 512, |_| {});
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), camera());
    // Towers and the small boxes around their feet (hidden from a high sun), boxes at the
    // cascades' split distances all around, a lamp inside a tower.
    let mut random = Lcg(11);
    let spawn = |app: &mut runtime::App, center: Vec3, size: Vec3| spawn_cube(app, center, size, true);
    spawn(&mut app, Vec3::new(0.0, -0.5, 0.0), Vec3::new(120.0, 1.0, 120.0));
    for _ in 0..24 {
        let tower = Vec3::new(random.range(-30.0, 30.0), 0.0, random.range(-30.0, 30.0));
        let height = random.range(4.0, 14.0);
        spawn(&mut app, tower + Vec3::Y * height / 2.0, Vec3::new(3.0, height, 3.0));
        for _ in 0..3 {
            let foot = tower + Vec3::new(random.range(-2.5, 2.5), 0.3, random.range(-2.5, 2.5));
            spawn(&mut app, foot, Vec3::splat(0.6));
        }
    }
    for end in [2.5f32, 6.0, 14.0, 40.0] {
        for side in 0..8 {
            let angle = side as f32 * std::f32::consts::FRAC_PI_4;
            spawn(&mut app, Vec3::new(angle.sin() * end, 1.0, angle.cos() * end), Vec3::splat(1.2));
        }
    }
    let sun = app.world_mut().spawn((Transform::IDENTITY, DirectionalLight::default()));
    let lamp = Transform::from_translation_rotation(Vec3::new(3.0, 2.0, 3.0), Quat::from_rotation_x(-1.0));
    app.world_mut().spawn((lamp, SpotLight { range: 25.0, ..SpotLight::default() }));
    for pose in 0..5 {
        let turn = pose as f32 / 4.0 * std::f32::consts::PI;
        let eye = Vec3::new(11.0 * turn.sin(), 9.0, 11.0 * turn.cos());
        *app.world_mut().get::<&mut Transform>(camera).expect("the camera") = scene::look_at(eye, Vec3::ZERO);
        let sun_pose = Quat::from_rotation_y(turn) * Quat::from_rotation_x(-1.2);
        *app.world_mut().get::<&mut Transform>(sun).expect("the sun") =
            Transform::from_translation_rotation(Vec3::ZERO, sun_pose);
        app.run_frame();
        let (atlas, color) = atlas_and_color(&mut app);
        let culled = app.resource::<RenderReport>().shadows.clone();
        app.resource_mut::<ShadowSettings>().caster_culling = false;
        let (every_atlas, every_color) = atlas_and_color(&mut app);
        let every = app.resource::<RenderReport>().shadows.clone();
        app.resource_mut::<ShadowSettings>().caster_culling = true;
        let differing = atlas.chunks(4).zip(every_atlas.chunks(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "pose {pose}: atlas texels that differ with caster culling");
        assert_eq!(color, every_color, "pose {pose}: the final image");
        assert!(culled.draws() < every.draws(), "pose {pose}: culling drew fewer casters");
    }
    assert_no_validation_messages(&device);
}

#[test]
fn movers_spawns_and_despawns_every_frame_keep_every_culled_map_exact() {
    let Some(device) = gpu_test_context() else { return };
    let mut app = shadow_app(&device, CullingBackend::Gpu, 512, |_| {});
    scene::spawn_camera(app.world_mut(), Camera::default(), camera());
    spawn_cube(&mut app, Vec3::new(0.0, -0.5, 0.0), Vec3::new(120.0, 1.0, 120.0), true);
    let sun = Quat::from_rotation_arc(Vec3::NEG_Z, Vec3::new(0.4, -1.0, 0.3).normalize());
    app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), DirectionalLight::default()));
    let lamp = Transform::from_translation_rotation(Vec3::new(-4.0, 6.0, 2.0), Quat::from_rotation_x(-1.3));
    app.world_mut().spawn((lamp, SpotLight { range: 25.0, ..SpotLight::default() }));
    app.world_mut().spawn((Transform::from_translation(Vec3::new(5.0, 3.0, -3.0)), PointLight::default()));
    let mut random = Lcg(23);
    let place =
        |random: &mut Lcg| Vec3::new(random.range(-35.0, 35.0), random.range(0.3, 6.0), random.range(-35.0, 35.0));
    let mut movers = Vec::new();
    for _ in 0..200 {
        let at = place(&mut random);
        let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
        let entity =
            scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(at).with_scale(Vec3::splat(1.5)));
        app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
        movers.push(entity);
    }
    for frame in 0..6 {
        // A third of the boxes move; ten die (the newest among them, the highest slots) and
        // ten are born.
        for &entity in movers.iter().step_by(3) {
            let at = place(&mut random);
            app.world_mut().get::<&mut Transform>(entity).expect("alive").translation = at;
        }
        for _ in 0..5 {
            let oldest = movers.remove(0);
            let newest = movers.pop().expect("boxes");
            app.world_mut().despawn(oldest).expect("alive");
            app.world_mut().despawn(newest).expect("alive");
        }
        for _ in 0..10 {
            let at = place(&mut random);
            let mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5)));
            let entity = scene::spawn_mesh(app.world_mut(), mesh, Transform::from_translation(at));
            app.world_mut().insert_one(entity, ShadowCaster).expect("spawned");
            movers.push(entity);
        }
        let (atlas, color) = atlas_and_color(&mut app);
        app.resource_mut::<ShadowSettings>().caster_culling = false;
        let (every_atlas, every_color) = atlas_and_color(&mut app);
        app.resource_mut::<ShadowSettings>().caster_culling = true;
        assert!(app.resource::<RenderReport>().shadows.on_device, "frame {frame}: culled on the GPU");
        let differing = atlas.chunks(4).zip(every_atlas.chunks(4)).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "frame {frame}: atlas texels that differ with caster culling");
        assert_eq!(color, every_color, "frame {frame}: the final image");
    }
    assert_no_validation_messages(&device);
}

//! Tests of the answer on request: the same world run twice in step, once answered every
//! frame and once on request, gives the same `state_of` for every entity on every frame.

use ecs::{scene, Camera, CpuAnswers, Culled, Occluded, RenderSettings, ShadowCaster, Transform, Visible};
use glam::{Quat, Vec3};
use runtime::hecs::Entity;
use runtime::App;

use super::{ListsRefused, ObjectState, Visibility};
use crate::backend::{CullingBackend, CullingChoice, GpuFeedback};

/// One of the two worlds: an app with a camera and its mesh entities, in spawn order.
struct Run {
    app: App,
    camera: Entity,
    meshes: Vec<Entity>,
}

impl Run {
    fn new(answers: CpuAnswers, on_device: bool) -> Run {
        let mut app = App::with_threads(2);
        super::install(&mut app);
        {
            let mut settings = app.resource_mut::<RenderSettings>();
            settings.cpu_answers = answers;
            settings.cull_max_distance = 70.0;
            settings.cull_min_pixels = 2.0;
        }
        if on_device {
            app.insert_resource(CullingChoice { requested: CullingBackend::Gpu, on_device: true, reason: None });
            app.insert_resource(GpuFeedback::default());
        }
        let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
        let mut run = Run { app, camera, meshes: Vec::new() };
        for index in 0..1500 {
            run.spawn(index);
        }
        run
    }

    /// Spawns the `index`-th object of the pattern: a grid of cubes of several sizes, some
    /// casters, some hidden.
    fn spawn(&mut self, index: u32) {
        let position = Vec3::new(
            (index % 40) as f32 * 3.0 - 60.0,
            (index / 40 % 5) as f32 * 2.0,
            (index / 200) as f32 * -9.0 - 3.0,
        );
        let scale = 0.05 + (index % 7) as f32 * 0.3;
        let transform = Transform { translation: position, scale: Vec3::splat(scale), ..Transform::IDENTITY };
        let world = self.app.world_mut();
        let entity = scene::spawn_mesh(world, scene::unit_cube_mesh(), transform);
        if index.is_multiple_of(5) {
            world.insert_one(entity, ShadowCaster).expect("just spawned");
        }
        if index.is_multiple_of(31) {
            world.insert_one(entity, Visible(false)).expect("just spawned");
        }
        self.meshes.push(entity);
    }

    /// Frame `frame` of the path: the camera turns and flies, a few objects are despawned
    /// and spawned, one moves; on the GPU backend the fed-back bits follow a pattern.
    fn step(&mut self, frame: u32) {
        self.fly(frame, frame as f32 * 0.5);
        if let Some(mut feedback) = self.app.resources().get_mut::<GpuFeedback>() {
            feedback.frame = Some(u64::from(frame));
            feedback.visible = gpu_pattern(frame);
            feedback.in_view = (0..WORDS).map(|word| !(0x5555u64 << (word % 48))).collect();
        }
        self.app.run_frame();
    }

    /// The world's part of frame `frame`: the camera turns and stands `flown` metres along
    /// its path, a few objects are despawned and spawned, one moves (returned).
    fn fly(&mut self, frame: u32, flown: f32) -> Entity {
        let yaw = Quat::from_rotation_y(frame as f32 * 0.07);
        let eye = Vec3::new((flown * 0.6).sin() * 20.0, 2.0, 10.0 - flown);
        *self.app.world_mut().get::<&mut Transform>(self.camera).expect("the camera lives") =
            Transform { translation: eye, rotation: yaw, ..Transform::IDENTITY };
        if frame % 3 == 1 {
            let gone = self.meshes.remove((frame as usize * 37) % self.meshes.len());
            self.app.world_mut().despawn(gone).expect("a live mesh");
            self.spawn(1500 + frame);
        }
        let mover = self.meshes[(frame as usize * 11) % self.meshes.len()];
        self.app.world_mut().get::<&mut Transform>(mover).expect("a live mesh").translation.x += 5.0;
        mover
    }

    fn states(&self) -> Vec<Option<ObjectState>> {
        let visibility = self.app.resource::<Visibility>();
        self.meshes.iter().map(|&entity| visibility.state_of(entity)).collect()
    }
}

/// Words of fed-back bits the tests give (more than the slots they use).
const WORDS: usize = 1600usize.div_ceil(64);

/// The GPU's visible bits of frame `frame` in the tests: a pattern setting about half.
fn gpu_pattern(frame: u32) -> Vec<u64> {
    (0..WORDS).map(|word| 0x9E37_79B9_7F4A_7C15u64.rotate_left(frame + word as u32)).collect()
}

fn answers_agree_over_a_flight(on_device: bool) {
    let mut every = Run::new(CpuAnswers::EveryFrame, on_device);
    let mut asked = Run::new(CpuAnswers::OnRequest, on_device);
    let mut seen = [0usize; 4];
    for frame in 0..60 {
        every.step(frame);
        asked.step(frame);
        let (expected, got) = (every.states(), asked.states());
        assert_eq!(expected, got, "frame {frame}: the answers on request differ from every frame's");
        for state in expected.into_iter().flatten() {
            seen[state as usize] += 1;
        }
        assert!(asked.app.world().query::<&Culled>().iter().next().is_none(), "no tags on request");
        assert!(asked.app.world().query::<&Occluded>().iter().next().is_none(), "no tags on request");
    }
    let occluded = if on_device { 1 } else { 0 };
    assert!(seen[0] > 0 && seen[1] > 0 && seen[2] >= occluded && seen[3] > 0, "every answer is met: {seen:?}");
}

#[test]
fn answers_on_request_equal_every_frames_on_the_cpu_path() {
    answers_agree_over_a_flight(false);
}

#[test]
fn answers_on_request_equal_every_frames_with_the_gpu_bits() {
    answers_agree_over_a_flight(true);
}

#[test]
fn lists_are_refused_by_name_and_tags_removed_on_request() {
    let mut run = Run::new(CpuAnswers::EveryFrame, false);
    run.step(0);
    {
        let visibility = run.app.resource::<Visibility>();
        assert!(visibility.try_visible().is_ok_and(|visible| !visible.is_empty()));
        assert!(visibility.try_scene().is_ok() && visibility.try_casters().is_ok());
    }
    assert!(run.app.world().query::<&Culled>().iter().next().is_some(), "every frame tags");
    run.app.resource_mut::<RenderSettings>().cpu_answers = CpuAnswers::OnRequest;
    run.step(1);
    {
        let visibility = run.app.resource::<Visibility>();
        assert_eq!(visibility.try_visible(), Err(ListsRefused::OnRequest));
        assert_eq!(visibility.try_scene(), Err(ListsRefused::OnRequest));
        assert_eq!(visibility.try_casters(), Err(ListsRefused::OnRequest));
        assert!(visibility.visible().is_empty() && visibility.scene().is_empty(), "no stale list");
    }
    assert!(run.app.world().query::<&Culled>().iter().next().is_none(), "the tags are removed");
    run.app.resource_mut::<RenderSettings>().cpu_answers = CpuAnswers::None;
    run.step(2);
    {
        let visibility = run.app.resource::<Visibility>();
        assert_eq!(visibility.try_visible(), Err(ListsRefused::NotAnswered));
        assert_eq!(visibility.state_of(run.meshes[0]), Some(ObjectState::NotAnswered));
    }
    // Back to every frame: the lists and the tags come back, truthfully.
    run.app.resource_mut::<RenderSettings>().cpu_answers = CpuAnswers::EveryFrame;
    run.step(3);
    let visibility = run.app.resource::<Visibility>();
    assert!(visibility.try_visible().is_ok_and(|visible| !visible.is_empty()));
    let culled = run.meshes.iter().filter(|&&entity| visibility.state_of(entity) == Some(ObjectState::Culled)).count();
    drop(visibility);
    assert_eq!(run.app.world().query::<&Culled>().iter().count(), culled, "every culled entity is tagged again");
}

/// The fed-back bits as the renderer gives them: one frame late, with the CPU's bits in view
/// of that frame when it was answered every frame and none (all in view) on request. An
/// answer on request tests the box against that frame's view instead, so every entity but
/// the one moved since reads the same.
#[test]
fn answers_on_request_equal_every_frames_with_bits_a_frame_late() {
    let mut every = Run::new(CpuAnswers::EveryFrame, true);
    let mut asked = Run::new(CpuAnswers::OnRequest, true);
    let mut every_in_view: Vec<u64> = Vec::new();
    let mut occluded = 0;
    for frame in 0..40 {
        let mover = every.fly(frame, frame as f32 * 0.5);
        asked.fly(frame, frame as f32 * 0.5);
        for (run, in_view) in [(&mut every, every_in_view.clone()), (&mut asked, Vec::new())] {
            let mut feedback = run.app.resource_mut::<GpuFeedback>();
            feedback.frame = frame.checked_sub(1).map(u64::from);
            feedback.visible = if frame == 0 { Vec::new() } else { gpu_pattern(frame - 1) };
            feedback.in_view = in_view;
        }
        every.app.run_frame();
        asked.app.run_frame();
        {
            let visibility = every.app.resource::<Visibility>();
            let occluded_words = visibility.occluded_words();
            every_in_view.clear();
            every_in_view.extend(
                visibility
                    .bits()
                    .words()
                    .iter()
                    .enumerate()
                    .map(|(index, word)| word | occluded_words.get(index).copied().unwrap_or(0)),
            );
            assert!(
                asked.app.resource::<Visibility>().stats().objects_culled != visibility.stats().tracked,
                "frame {frame}: only the full passes cull every object on request"
            );
        }
        let (expected, got) = (every.states(), asked.states());
        for ((entity, expected), got) in every.meshes.iter().zip(expected).zip(got) {
            if *entity != mover {
                assert_eq!(expected, got, "frame {frame}: entity {entity:?} answers differently on request");
            }
            occluded += usize::from(got == Some(ObjectState::Occluded));
        }
    }
    assert!(occluded > 0, "the fed-back bits occlude some objects");
}

/// Where the camera of [`levels_app`] stands and looks, and which mesh moves: set by the
/// test, applied by a system (so frames stay tracked).
#[derive(Clone, Copy)]
struct Pose {
    eye: Vec3,
    yaw: f32,
    mover: Option<Entity>,
}

/// An app of cubes with levels of detail (the distance rule) under `answers` on the GPU
/// backend, its camera and one object moved each frame by a system from [`Pose`].
fn levels_app(answers: CpuAnswers) -> (App, Vec<Entity>) {
    let mut app = App::with_threads(2);
    super::install(&mut app);
    app.resource_mut::<RenderSettings>().cpu_answers = answers;
    app.insert_resource(CullingChoice { requested: CullingBackend::Gpu, on_device: true, reason: None });
    app.insert_resource(GpuFeedback::default());
    let levels: Vec<ecs::LodLevel> = [(1, 12.0), (2, 30.0), (3, f32::INFINITY)]
        .into_iter()
        .map(|(mesh, max_distance)| ecs::LodLevel { mesh: ecs::MeshHandle(mesh), max_distance })
        .collect();
    let lod = ecs::Lod { levels: levels.into(), bias: 1.0 };
    let camera = scene::spawn_camera(app.world_mut(), Camera::default(), Transform::IDENTITY);
    let meshes: Vec<Entity> = (0..1200u32)
        .map(|index| {
            let position = Vec3::new((index % 40) as f32 * 3.0 - 60.0, 0.0, (index / 40) as f32 * -3.0 + 40.0);
            let entity =
                scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(position));
            app.world_mut().insert_one(entity, lod.clone()).expect("just spawned");
            entity
        })
        .collect();
    app.insert_resource(Pose { eye: Vec3::new(0.0, 2.0, 10.0), yaw: 0.0, mover: None });
    app.add_system(
        runtime::Stage::Input,
        runtime::System::new("pose", move |ctx| {
            let pose = *ctx.resource::<Pose>();
            *ctx.get_mut::<Transform>(camera).expect("the camera") =
                Transform { translation: pose.eye, rotation: Quat::from_rotation_y(pose.yaw), ..Transform::IDENTITY };
            if let Some(mover) = pose.mover {
                ctx.get_mut::<Transform>(mover).expect("a mesh").translation.x += 0.5;
            }
        })
        .writes::<Transform>()
        .reads_resource::<Pose>(),
    );
    (app, meshes)
}

/// A camera that turns, then flies, then turns again over objects with levels of detail
/// while one object moves each frame: on request, the frames that only turn cull no object
/// (only the mover is refreshed), and every object in view draws the level the answer every
/// frame picks, the mover's included.
#[test]
fn levels_on_request_equal_every_frames_while_the_camera_turns_and_flies() {
    let (mut every, meshes) = levels_app(CpuAnswers::EveryFrame);
    let (mut asked, _) = levels_app(CpuAnswers::OnRequest);
    let mut eye = Vec3::new(0.0, 2.0, 10.0);
    let mut levels_seen = std::collections::BTreeSet::new();
    let mut skipped = 0;
    for frame in 0..45u32 {
        // Turns only, then flies, then turns only again.
        let flying = (15..30).contains(&frame);
        if flying {
            eye += Vec3::new(0.7, 0.0, -1.5);
        }
        let pose = Pose { eye, yaw: frame as f32 * 0.15, mover: Some(meshes[(frame as usize * 7) % meshes.len()]) };
        for app in [&mut every, &mut asked] {
            *app.resource_mut::<Pose>() = pose;
            app.run_frame();
        }
        let (every_answer, asked_answer) = (every.resource::<Visibility>(), asked.resource::<Visibility>());
        for &slot in every_answer.visible() {
            let (expected, got) =
                (every_answer.objects().draws[slot as usize], asked_answer.objects().draws[slot as usize]);
            assert_eq!(expected, got, "frame {frame}: slot {slot} draws another level on request");
            levels_seen.insert(got.mesh.0);
        }
        let stats = asked_answer.stats();
        assert!(stats.tracked || frame < 2, "frame {frame}: the frames after the first two are tracked");
        if flying {
            assert!(stats.objects_culled, "frame {frame}: a moving eye picks the levels again");
        }
        skipped += usize::from(!stats.objects_culled);
    }
    // Every turning frame but the first three (two full passes, then the first pick of
    // levels on request); the eye stands where the flight left it, so the turn after the
    // flight culls nothing either.
    assert_eq!(skipped, 45 - 15 - 3, "the frames that only turn cull no object on request");
    assert!(levels_seen.len() >= 2, "several levels are drawn: {levels_seen:?}");
}

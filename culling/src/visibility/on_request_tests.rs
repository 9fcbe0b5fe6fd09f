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
        let yaw = Quat::from_rotation_y(frame as f32 * 0.07);
        let eye = Vec3::new((frame as f32 * 0.3).sin() * 20.0, 2.0, 10.0 - frame as f32 * 0.5);
        *self.app.world_mut().get::<&mut Transform>(self.camera).expect("the camera lives") =
            Transform { translation: eye, rotation: yaw, ..Transform::IDENTITY };
        if frame % 3 == 1 {
            let gone = self.meshes.remove((frame as usize * 37) % self.meshes.len());
            self.app.world_mut().despawn(gone).expect("a live mesh");
            self.spawn(1500 + frame);
        }
        let mover = self.meshes[(frame as usize * 11) % self.meshes.len()];
        self.app.world_mut().get::<&mut Transform>(mover).expect("a live mesh").translation.x += 5.0;
        if let Some(mut feedback) = self.app.resources().get_mut::<GpuFeedback>() {
            let words = 1600usize.div_ceil(64);
            feedback.frame = Some(u64::from(frame));
            feedback.visible =
                (0..words).map(|word| 0x9E37_79B9_7F4A_7C15u64.rotate_left(frame + word as u32)).collect();
            feedback.in_view = (0..words).map(|word| !(0x5555u64 << (word % 48))).collect();
        }
        self.app.run_frame();
    }

    fn states(&self) -> Vec<Option<ObjectState>> {
        let visibility = self.app.resource::<Visibility>();
        self.meshes.iter().map(|&entity| visibility.state_of(entity)).collect()
    }
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

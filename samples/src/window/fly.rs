//! The windowed city's fly camera, moved in the Input stage from the keys and mouse the
//! window saw since the last frame ([`FlyInput`]): WASD to move, Space/Ctrl up and down,
//! Shift faster, the mouse (left button held) to look; F1 toggles culling, F2 pins the
//! culling view (the "pinned view": culling keeps answering for the camera's pose at that
//! moment while the drawing camera flies out to see what it kept).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ecs::{Camera, RenderSettings, Transform, Viewport};
use glam::{Mat4, Quat, Vec2, Vec3};
use renderer::GpuCullControl;
use runtime::System;

/// Name of the system [`fly_system`] makes.
pub const FLY_SYSTEM: &str = "fly camera";

/// Metres per second; Shift multiplies by [`FAST`].
pub const SPEED: f32 = 20.0;

/// Shift's speed factor.
pub const FAST: f32 = 5.0;

/// Radians per pixel of mouse motion.
pub const LOOK: f32 = 0.003;

/// Movement keys held, as bits of [`FlyInput::held`].
pub mod keys {
    /// W.
    pub const FORWARD: u8 = 1;
    /// S.
    pub const BACK: u8 = 2;
    /// A.
    pub const LEFT: u8 = 4;
    /// D.
    pub const RIGHT: u8 = 8;
    /// Space.
    pub const UP: u8 = 16;
    /// Ctrl.
    pub const DOWN: u8 = 32;
    /// Shift.
    pub const FAST: u8 = 64;
}

/// What the window saw since the last frame: a resource the window writes between frames
/// and [`fly_system`] consumes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlyInput {
    /// Keys held ([`keys`]).
    pub held: u8,
    /// Mouse motion while looking, in pixels (x right, y down).
    pub look: Vec2,
    /// F1 was pressed.
    pub toggle_culling: bool,
    /// F2 was pressed: pin or release the culling view.
    pub toggle_pin: bool,
}

/// The view to draw with while the culling view is pinned (shared with the window's
/// frame target); `None` draws the culling camera's view.
pub type DrawView = Arc<Mutex<Option<[[f32; 4]; 4]>>>;

/// The fly camera's state, a resource.
#[derive(Debug)]
pub struct FlyCamera {
    /// Eye position, metres.
    pub position: Vec3,
    /// Radians; 0 looks along -Z, positive turns left.
    pub yaw: f32,
    /// Radians; positive looks up.
    pub pitch: f32,
    /// The user has moved: until then the camera follows its path (`--camera-path` or the
    /// built-in flight) and the fly camera copies it.
    pub engaged: bool,
    /// F2, the culling "pinned view": the scene camera (the view culling answers for)
    /// stays at its pose while the drawing camera flies on, so what culling kept can be
    /// looked at from outside.
    pub pinned: bool,
    /// F1: culling is off.
    pub culling_off: bool,
    /// The frustum and occlusion switches before F1 turned them off.
    saved: (bool, bool),
    last: Option<Instant>,
    draw_view: DrawView,
}

impl FlyCamera {
    /// A fly camera that publishes its view to `draw_view` while the culling view is pinned.
    pub fn new(draw_view: DrawView) -> FlyCamera {
        FlyCamera {
            position: Vec3::ZERO,
            yaw: 0.0,
            pitch: 0.0,
            engaged: false,
            pinned: false,
            culling_off: false,
            saved: (true, true),
            last: None,
            draw_view,
        }
    }

    /// The pose as a transform: yaw about +Y, then pitch about the turned X axis.
    pub fn transform(&self) -> Transform {
        let rotation = Quat::from_rotation_y(self.yaw) * Quat::from_rotation_x(self.pitch);
        Transform { translation: self.position, rotation, ..Transform::IDENTITY }
    }

    /// Takes the pose of `transform` (the path's camera), so flying starts from it.
    pub fn follow(&mut self, transform: &Transform) {
        let forward = transform.rotation * Vec3::NEG_Z;
        self.position = transform.translation;
        self.yaw = (-forward.x).atan2(-forward.z);
        self.pitch = forward.y.clamp(-1.0, 1.0).asin();
    }

    /// Applies one frame of input over `seconds`.
    pub fn apply(&mut self, input: &FlyInput, seconds: f32) {
        if input.held & !keys::FAST != 0 || input.look != Vec2::ZERO {
            self.engaged = true;
        }
        self.yaw -= input.look.x * LOOK;
        self.pitch = (self.pitch - input.look.y * LOOK).clamp(-1.55, 1.55);
        let rotation = Quat::from_rotation_y(self.yaw) * Quat::from_rotation_x(self.pitch);
        let axis = |plus: u8, minus: u8| f32::from(input.held & plus != 0) - f32::from(input.held & minus != 0);
        let direction = rotation * Vec3::NEG_Z * axis(keys::FORWARD, keys::BACK)
            + rotation * Vec3::X * axis(keys::RIGHT, keys::LEFT)
            + Vec3::Y * axis(keys::UP, keys::DOWN);
        let speed = if input.held & keys::FAST != 0 { SPEED * FAST } else { SPEED };
        self.position += direction.normalize_or_zero() * speed * seconds;
    }
}

/// The Input-stage system: applies [`FlyInput`] to [`FlyCamera`], moves the scene camera
/// (unless pinned), publishes the drawn view while pinned, and toggles culling on F1 (the
/// GPU's switches through [`GpuCullControl`], the CPU's through [`RenderSettings`]). Add it
/// after the camera path's system so a flying user wins over the path.
pub fn fly_system() -> System {
    System::new(FLY_SYSTEM, |ctx| {
        let mut input = ctx.resource_mut::<FlyInput>();
        let mut fly = ctx.resource_mut::<FlyCamera>();
        let now = Instant::now();
        let seconds = fly.last.map_or(0.0, |last| now.duration_since(last).as_secs_f32().min(0.25));
        fly.last = Some(now);
        if input.toggle_culling {
            fly.culling_off = !fly.culling_off;
            let mut settings = ctx.resource_mut::<RenderSettings>();
            if fly.culling_off {
                fly.saved = (settings.frustum_culling, settings.occlusion_culling);
                (settings.frustum_culling, settings.occlusion_culling) = (false, false);
            } else {
                (settings.frustum_culling, settings.occlusion_culling) = fly.saved;
            }
            if let Some(control) = ctx.try_resource::<GpuCullControl>() {
                let mut gpu = control.settings.lock().unwrap_or_else(PoisonError::into_inner);
                gpu.frustum = !fly.culling_off;
                gpu.occlusion = !fly.culling_off;
            }
        }
        if input.toggle_pin {
            fly.pinned = !fly.pinned;
        }
        fly.apply(&input, seconds);
        let aspect = ctx.resource::<Viewport>().aspect();
        let mut drawn = None;
        for (transform, camera) in ctx.query::<(&mut Transform, &Camera)>().iter() {
            if !camera.active {
                continue;
            }
            if !fly.engaged {
                fly.follow(transform);
            } else if !fly.pinned {
                *transform = fly.transform();
            }
            if fly.pinned {
                let view = fly.transform().to_matrix().inverse();
                drawn = Some((camera.projection_matrix(aspect) * view).to_cols_array_2d());
            }
            break;
        }
        *fly.draw_view.lock().unwrap_or_else(PoisonError::into_inner) = drawn;
        *input = FlyInput { held: input.held, ..FlyInput::default() };
    })
    .writes::<Transform>()
    .reads::<Camera>()
    .writes_resource::<FlyInput>()
    .writes_resource::<FlyCamera>()
    .writes_resource::<RenderSettings>()
    .reads_resource::<GpuCullControl>()
    .reads_resource::<Viewport>()
}

/// The view-projection `Mat4` of a [`DrawView`] entry, for tests.
pub fn draw_view_matrix(view: &DrawView) -> Option<Mat4> {
    view.lock().unwrap_or_else(PoisonError::into_inner).map(|columns| Mat4::from_cols_array_2d(&columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn following_a_pose_and_back_gives_the_same_pose() {
        let mut fly = FlyCamera::new(DrawView::default());
        let pose = Transform {
            translation: Vec3::new(1.0, 2.0, 3.0),
            rotation: Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3),
            ..Transform::IDENTITY
        };
        fly.follow(&pose);
        let again = fly.transform();
        assert!(again.translation.abs_diff_eq(pose.translation, 1e-5));
        assert!(again.rotation.abs_diff_eq(pose.rotation, 1e-5) || again.rotation.abs_diff_eq(-pose.rotation, 1e-5));
    }

    /// Through the Input stage: moving takes the camera over from its path, F2 pins the
    /// culling view (the scene camera) while the drawn view flies on, F1 turns culling off and back.
    #[test]
    fn the_input_stage_flies_the_camera_pins_the_culling_view_and_toggles_culling() {
        let mut app = runtime::App::with_threads(1);
        ecs::install(&mut app);
        app.insert_resource(RenderSettings::default());
        app.insert_resource(Viewport { width: 64, height: 32 });
        let draw_view = DrawView::default();
        app.insert_resource(FlyInput::default());
        app.insert_resource(FlyCamera::new(Arc::clone(&draw_view)));
        app.add_system(runtime::Stage::Input, fly_system());
        let start = Transform::from_translation(Vec3::new(0.0, 2.0, 0.0));
        let camera = ecs::scene::spawn_camera(app.world_mut(), Camera::default(), start);
        let position = |app: &runtime::App| app.world().get::<&Transform>(camera).expect("the camera").translation;
        app.run_frame();
        assert_eq!(position(&app), start.translation, "no input: the camera stays on its path");
        assert!(!app.resource::<FlyCamera>().engaged);

        app.resource_mut::<FlyInput>().held = keys::FORWARD;
        std::thread::sleep(std::time::Duration::from_millis(20));
        app.run_frame();
        let moved = position(&app);
        assert!(moved.z < start.translation.z, "W flies along -Z: {moved}");
        assert!(draw_view_matrix(&draw_view).is_none(), "not pinned: the culling view is drawn");

        app.resource_mut::<FlyInput>().toggle_pin = true;
        std::thread::sleep(std::time::Duration::from_millis(20));
        app.run_frame();
        std::thread::sleep(std::time::Duration::from_millis(20));
        app.run_frame();
        assert_eq!(position(&app), moved, "pinned: the scene camera (culling's) stays");
        assert!(app.resource::<FlyCamera>().position.z < moved.z, "while the fly camera goes on");
        assert!(draw_view_matrix(&draw_view).is_some(), "and its view is the one drawn");

        app.resource_mut::<FlyInput>().toggle_culling = true;
        app.run_frame();
        let settings = *app.resource::<RenderSettings>();
        assert!(!settings.frustum_culling && !settings.occlusion_culling, "F1 turns culling off");
        app.resource_mut::<FlyInput>().toggle_culling = true;
        app.run_frame();
        let settings = *app.resource::<RenderSettings>();
        assert!(settings.frustum_culling && settings.occlusion_culling, "and back on");
    }

    #[test]
    fn w_moves_along_the_view_and_shift_is_faster() {
        let mut fly = FlyCamera::new(DrawView::default());
        fly.apply(&FlyInput { held: keys::FORWARD, ..FlyInput::default() }, 1.0);
        assert!(fly.engaged);
        assert!(fly.position.abs_diff_eq(Vec3::new(0.0, 0.0, -SPEED), 1e-4), "{}", fly.position);
        let mut fast = FlyCamera::new(DrawView::default());
        fast.apply(&FlyInput { held: keys::FORWARD | keys::FAST, ..FlyInput::default() }, 1.0);
        assert!((fast.position.length() - SPEED * FAST).abs() < 1e-3);
        // Mouse right turns right (negative yaw); pitch stops short of straight up.
        let mut look = FlyCamera::new(DrawView::default());
        look.apply(&FlyInput { look: Vec2::new(100.0, -10_000.0), ..FlyInput::default() }, 0.0);
        assert!(look.yaw < 0.0 && look.pitch <= 1.55 && look.pitch > 1.5, "{} {}", look.yaw, look.pitch);
    }
}

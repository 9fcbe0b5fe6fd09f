//! Camera paths read from JSON (`city --camera-path FILE`), so a flight can be written for a
//! city whose bounds the demo prints.
//!
//! ```json
//! {"keyframes":[{"frame":0,"position":[0,2,0],"yaw":0,"pitch":0,"fov":60},
//!               {"frame":120,"position":[0,2,-200],"yaw":90,"pitch":-10,"fov":60}]}
//! ```
//!
//! Angles are degrees. Yaw 0 looks along -Z; positive yaw turns left (about +Y); positive
//! pitch looks up; `fov` is the vertical field of view. Between two keyframes every value
//! interpolates linearly; two keyframes on consecutive frames make a cut. Before the first
//! keyframe the camera holds the first, after the last it holds the last.

use std::path::Path;

use ecs::{Camera, Projection, Transform};
use glam::{Quat, Vec3};
use runtime::System;
use serde::Deserialize;

/// One pose of the camera at one frame.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keyframe {
    /// The frame (the app's frame index) this pose is reached at.
    pub frame: u64,
    /// Eye position, metres.
    pub position: [f32; 3],
    /// Degrees; 0 looks along -Z, positive turns left.
    #[serde(default)]
    pub yaw: f32,
    /// Degrees; positive looks up.
    #[serde(default)]
    pub pitch: f32,
    /// Vertical field of view, degrees.
    #[serde(default = "default_fov")]
    pub fov: f32,
}

fn default_fov() -> f32 {
    60.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    keyframes: Vec<Keyframe>,
}

/// A camera path: keyframes sorted by frame. A component of the camera entity; the system
/// from [`CameraKeyframes::system`] poses the camera from it every frame.
#[derive(Clone, Debug, PartialEq)]
pub struct CameraKeyframes {
    keyframes: Vec<Keyframe>,
}

/// The camera's pose at one frame of a [`CameraKeyframes`] path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraPose {
    /// Eye position, metres.
    pub position: Vec3,
    /// Degrees, as in [`Keyframe::yaw`].
    pub yaw: f32,
    /// Degrees, as in [`Keyframe::pitch`].
    pub pitch: f32,
    /// Vertical field of view, degrees.
    pub fov: f32,
}

impl CameraPose {
    /// The pose as a transform: yaw about +Y, then pitch about the turned X axis.
    pub fn transform(&self) -> Transform {
        let rotation = Quat::from_rotation_y(self.yaw.to_radians()) * Quat::from_rotation_x(self.pitch.to_radians());
        Transform { translation: self.position, rotation, ..Transform::IDENTITY }
    }
}

impl CameraKeyframes {
    /// Parses a path from JSON text. Errors name the line and column of the fault (for
    /// syntax and type errors) or the keyframe (for frames out of order and bad values).
    pub fn parse(text: &str) -> Result<CameraKeyframes, String> {
        let file: File = serde_json::from_str(text)
            .map_err(|error| format!("line {}, column {}: {error}", error.line(), error.column()))?;
        if file.keyframes.is_empty() {
            return Err(String::from("the path has no keyframes (\"keyframes\" is empty)"));
        }
        let line_of = |index: usize| keyframe_line(text, index).map_or(String::new(), |line| format!("line {line}: "));
        for (index, keyframe) in file.keyframes.iter().enumerate() {
            let values = keyframe.position.iter().chain([&keyframe.yaw, &keyframe.pitch, &keyframe.fov]);
            if values.into_iter().any(|value| !value.is_finite()) {
                return Err(format!("{}keyframe {index}: every value must be a finite number", line_of(index)));
            }
            if !(keyframe.fov > 0.0 && keyframe.fov < 180.0) {
                return Err(format!(
                    "{}keyframe {index}: fov {} is not between 0 and 180 degrees",
                    line_of(index),
                    keyframe.fov
                ));
            }
            if index > 0 && keyframe.frame <= file.keyframes[index - 1].frame {
                return Err(format!(
                    "{}keyframe {index}: frame {} does not come after the previous keyframe's frame {}",
                    line_of(index),
                    keyframe.frame,
                    file.keyframes[index - 1].frame
                ));
            }
        }
        Ok(CameraKeyframes { keyframes: file.keyframes })
    }

    /// Reads and parses a path file; errors name the file and the line.
    pub fn load(path: &Path) -> Result<CameraKeyframes, String> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
        CameraKeyframes::parse(&text).map_err(|error| format!("{}: {error}", path.display()))
    }

    /// The keyframes, sorted by frame.
    pub fn keyframes(&self) -> &[Keyframe] {
        &self.keyframes
    }

    /// The pose at `frame`, interpolated linearly between the keyframes around it.
    pub fn pose_at(&self, frame: u64) -> CameraPose {
        let after = self.keyframes.partition_point(|keyframe| keyframe.frame <= frame);
        let pose = |keyframe: &Keyframe| CameraPose {
            position: Vec3::from(keyframe.position),
            yaw: keyframe.yaw,
            pitch: keyframe.pitch,
            fov: keyframe.fov,
        };
        if after == 0 {
            return pose(&self.keyframes[0]);
        }
        if after == self.keyframes.len() {
            return pose(&self.keyframes[after - 1]);
        }
        let (a, b) = (&self.keyframes[after - 1], &self.keyframes[after]);
        let t = (frame - a.frame) as f32 / (b.frame - a.frame) as f32;
        // `x + (y - x) * t`, not `lerp`'s `x * (1 - t) + y * t`: a span whose ends are equal
        // holds the camera bit for bit (what the Visibility stage tells a still camera by).
        let mix = |x: f32, y: f32| x + (y - x) * t;
        let (from, to) = (a.position, b.position);
        CameraPose {
            position: Vec3::new(mix(from[0], to[0]), mix(from[1], to[1]), mix(from[2], to[2])),
            yaw: mix(a.yaw, b.yaw),
            pitch: mix(a.pitch, b.pitch),
            fov: mix(a.fov, b.fov),
        }
    }

    /// The `Input`-stage system that poses every camera carrying a path at the frame's index
    /// (its transform and its vertical field of view).
    pub fn system() -> System {
        System::with_query::<(&mut Transform, &mut Camera, &CameraKeyframes)>("camera keyframes", |ctx, cameras| {
            let frame = ctx.time.frame_index;
            for (transform, camera, path) in cameras.borrow().iter() {
                let pose = path.pose_at(frame);
                *transform = pose.transform();
                let fov = pose.fov.to_radians();
                match &mut camera.projection {
                    Projection::PerspectiveInfiniteReverse { fov_y_radians, .. }
                    | Projection::PerspectiveReverse { fov_y_radians, .. } => *fov_y_radians = fov,
                    _ => {}
                }
            }
        })
    }
}

/// The line (1-based) where keyframe `index` starts: the `index`-th `{` after `"keyframes"`
/// at the array's nesting depth. Only used for messages; `None` when the text is unusual.
fn keyframe_line(text: &str, index: usize) -> Option<usize> {
    let start = text.find("\"keyframes\"")?;
    let mut depth = 0i32;
    let mut seen = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, character) in text[start..].char_indices() {
        if in_string {
            match (escaped, character) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match character {
            '"' => in_string = true,
            '[' => depth += 1,
            ']' => depth -= 1,
            '{' if depth == 1 => {
                if seen == index {
                    return Some(text[..start + offset].matches('\n').count() + 1);
                }
                seen += 1;
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = r#"{"keyframes":[
        {"frame":0,"position":[0,2,0],"yaw":0,"pitch":0,"fov":60},
        {"frame":10,"position":[10,2,-20],"yaw":90,"pitch":-30,"fov":40},
        {"frame":11,"position":[100,50,0],"yaw":-90,"pitch":0,"fov":60}
    ]}"#;

    #[test]
    fn interpolates_linearly_and_cuts_between_consecutive_frames() {
        let path = CameraKeyframes::parse(PATH).expect("a valid path");
        let middle = path.pose_at(5);
        assert_eq!(middle.position, Vec3::new(5.0, 2.0, -10.0));
        assert_eq!((middle.yaw, middle.pitch, middle.fov), (45.0, -15.0, 50.0));
        assert_eq!(path.pose_at(10).position, Vec3::new(10.0, 2.0, -20.0));
        assert_eq!(path.pose_at(11).position, Vec3::new(100.0, 50.0, 0.0), "a cut: no in-between frame");
        assert_eq!(path.pose_at(500).position, Vec3::new(100.0, 50.0, 0.0), "holds the last keyframe");
    }

    #[test]
    fn yaw_zero_looks_along_minus_z_positive_yaw_turns_left_positive_pitch_looks_up() {
        let forward = |yaw: f32, pitch: f32| {
            let pose = CameraPose { position: Vec3::ZERO, yaw, pitch, fov: 60.0 };
            pose.transform().rotation * Vec3::NEG_Z
        };
        assert!(forward(0.0, 0.0).abs_diff_eq(Vec3::NEG_Z, 1e-6));
        assert!(forward(90.0, 0.0).abs_diff_eq(Vec3::NEG_X, 1e-6), "left of -Z (with +Y up) is -X");
        assert!(forward(0.0, 30.0).y > 0.49);
        assert!(forward(90.0, 30.0).x < -0.8 && forward(90.0, 30.0).y > 0.49);
    }

    #[test]
    fn malformed_files_name_the_line() {
        let syntax = "{\"keyframes\":[\n  {\"frame\":0,\"position\":[0,2,0]},\n  {\"frame\":1,\"position\":[0,2,]}\n]}";
        let error = CameraKeyframes::parse(syntax).expect_err("a trailing comma");
        assert!(error.starts_with("line 3,"), "{error}");
        let wrong_type = "{\"keyframes\":[\n{\"frame\":0,\n\"position\":\"here\"}]}";
        let error = CameraKeyframes::parse(wrong_type).expect_err("a string position");
        assert!(error.starts_with("line 3,"), "{error}");
        let order = "{\"keyframes\":[\n{\"frame\":5,\"position\":[0,0,0]},\n{\"frame\":5,\"position\":[1,0,0]}]}";
        let error = CameraKeyframes::parse(order).expect_err("frames out of order");
        assert!(error.starts_with("line 3: keyframe 1: frame 5"), "{error}");
        let error = CameraKeyframes::parse("{\"keyframes\":[]}").expect_err("no keyframes");
        assert!(error.contains("no keyframes"), "{error}");
        let error = CameraKeyframes::parse("{\"keyframes\":[{\"frame\":0,\"position\":[0,0,0],\"fov\":0}]}")
            .expect_err("a zero fov");
        assert!(error.contains("fov 0"), "{error}");
    }
}

//! The city: a procedural scene large enough to make culling matter, and the systems that
//! move it (traffic, skinned pedestrians playing a walk, a camera on a flight path).
//!
//! Everything is deterministic for a given [`CityConfig`], so two runs see the same frames.

pub mod bounds;
pub mod check;
pub mod classify;
pub mod districts;
pub mod keyframes;
pub mod lights;
pub mod memory;
mod meshes;
pub mod monitor;
mod motion;
pub mod options;
pub mod rendering;
pub mod run;
mod scene;
mod shapes;
pub mod stream;
pub mod summary;
pub mod views;

pub use crate::mesh_render::RenderError;
pub use keyframes::{CameraKeyframes, CameraPose, Keyframe};
pub use meshes::{attach_lods, building_occluder, city_color, CityLibrary};
pub use motion::{camera_path_system, install as install_motion, install_still, Bobbing, CameraPath, Traffic};
pub use options::{CheckChoice, CityOptions, CullChoice, PresentChoice, RenderChoice, Switch, TagChoice};
pub use scene::{build_city, City, CityConfig, CityMeshes};

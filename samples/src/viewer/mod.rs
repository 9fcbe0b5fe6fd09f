//! The glTF viewer's scene logic, apart from its binary (`src/bin/viewer.rs`) so it can be
//! tested without a device: where several files' models go ([`layout`]) and the camera that
//! frames whatever was loaded ([`framing`]).

pub mod framing;
pub mod layout;

pub use framing::{frame_bounds, Framing};
pub use layout::{place_models, scene_bounds, Placement};

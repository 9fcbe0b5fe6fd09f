//! The glTF viewer's scene logic, apart from its binary (`src/bin/viewer.rs`) so it can be
//! tested without a device: where several files' models go ([`layout`]) and the camera that
//! frames whatever was loaded ([`framing`]), and `--stream`'s loads while frames run ([`stream`]).

pub mod framing;
pub mod layout;
pub mod stream;

pub use framing::{frame_bounds, Framing};
pub use layout::{place_models, scene_bounds, Placement};

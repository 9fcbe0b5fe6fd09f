//! Integration tests that cross crates live in `tests/`; this library holds their shared
//! helpers.
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod cluster_scene;
pub mod offscreen;

//! Engine components, the transform hierarchy and camera/host-view resolution.
#![warn(missing_docs)]
pub mod bounds;
pub use bounds::{Aabb, Sphere};

//! GPU culling passes on top of [`render_graph`] (cargo feature `gpu`, on by default).
//!
//! - [`HiZBuildPass`] reduces `depth_prepass` into the depth pyramid `hiz_depth`.
//!
//! Passes find each other's resources by the stable names of [`render_graph::passes`] and
//! [`HIZ_DEPTH`].

mod hiz;

pub use hiz::{reduce_depth_pyramid, HiZBuildPass, HIZ_DEPTH, HIZ_FORMAT, HIZ_GROUP};

//! How a pass may use a resource: the access kinds it declares, each with what it means for
//! synchronization2 (`kind.rs`), and the mip ranges of an image it declares them on
//! (`mips.rs`). The rest of the crate speaks this vocabulary; it depends on nothing else of
//! the crate.

mod kind;
mod mips;

pub(crate) use kind::Applies;
pub use kind::{Access, ShaderStage};
pub use mips::MipRange;

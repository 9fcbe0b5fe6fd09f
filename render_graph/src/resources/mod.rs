//! The physical resources behind a compiled graph: transient memory shared by aliasing,
//! double buffers for history (kept across recompiles), imports, where each resource's first
//! barrier of a frame takes its source from, and which physical resource a pass sees in a
//! given frame.

// The aliasing plan (`alias.rs`), the compiled graph with its backings (`compiled.rs`), made
// by `allocate.rs` with `history.rs` and `entry.rs`; imports (`imports.rs`) and what passes
// see of a resource this frame (`resolved.rs`).
mod alias;
mod allocate;
mod compiled;
mod entry;
mod history;
mod imports;
mod resolved;

pub use alias::{plan_aliasing, AliasBlock, AliasItem, AliasPlan};
pub(crate) use compiled::{assign_range_views, check_mip_ranges, Compiled};
pub(crate) use entry::EntrySource;
pub(crate) use imports::{Import, ImportedResource, PresentSync};
pub(crate) use resolved::Resolved;
pub use resolved::{ResolvedBuffer, ResolvedImage};

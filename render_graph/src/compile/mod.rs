//! From declarations to a compiled graph: what passes declare in `register`, checked,
//! ordered, culled, with each resource's lifetime, usage and residency and the barriers
//! between the passes. Nothing here touches the GPU.

// The handles passes hold (`handles.rs`: names, read and write handles), resource
// descriptions (`desc.rs`), the registry passes declare through and
// the declarations it fills (`registry.rs`), then the compiler (`compiler.rs`) with its
// steps: checks (`validate.rs`), versions, order and culling (`order.rs`) and barriers
// (`barriers.rs`); `dot.rs` draws the result.
mod barriers;
mod compiler;
mod desc;
mod dot;
mod handles;
mod order;
mod registry;
mod validate;

pub use barriers::{BarrierPlan, BarrierSource, PlannedBarrier, SyncState};
pub use compiler::{compile, CompiledGraph, CompiledResource, Residency};
pub use desc::{AttachmentLoad, BufferDesc, ImageDesc, ImageSize, ResourceKind};
pub(crate) use dot::compiled_to_dot;
pub(crate) use handles::raw_handle;
pub use handles::{
    AccessedBuffer, AccessedImage, BufferHandle, BufferRead, BufferWrite, ImageHandle, ImageRead, ImageWrite,
};
pub(crate) use registry::{AccessDecl, Origin, PassDecl};
pub use registry::{GraphDecl, Registry};
pub(crate) use validate::check_mip_ranges;

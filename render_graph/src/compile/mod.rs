//! From declarations to a compiled graph: what passes declare in `register`, checked,
//! ordered, culled, with each resource's lifetime, usage and residency and the barriers
//! between the passes. Nothing here touches the GPU.

// The handles passes hold (`handles.rs`: names, read and write handles), resource
// descriptions (`desc.rs`), the registry passes declare through (`registry.rs`) and
// the declarations it fills (`decl.rs`), then the compiler (`compiler.rs`) with its
// steps: checks (`validate.rs`), versions, order and culling (`order.rs`) and barriers
// (`barriers.rs`); `dot.rs` draws the result. Who may write what is `owner.rs`.
mod barriers;
mod compiler;
mod decl;
mod desc;
mod dot;
mod handles;
mod order;
mod owner;
mod registry;
mod validate;

pub use barriers::{BarrierPlan, BarrierSource, PlannedBarrier, SyncState};
pub use compiler::{compile, compile_shuffled, CompiledGraph, CompiledResource, Residency};
pub use decl::GraphDecl;
pub(crate) use decl::{AccessDecl, Origin, PassDecl, PassMeta};
pub use desc::{AttachmentLoad, BufferDesc, ImageDesc, ImageSize, ResourceKind};
pub(crate) use dot::compiled_to_dot;
pub(crate) use handles::raw_handle;
pub use handles::{
    AccessedBuffer, AccessedImage, BufferHandle, BufferRead, BufferWrite, ImageHandle, ImageRead, ImageWrite, Named,
};
pub use owner::Owner;
pub use registry::Registry;
pub(crate) use validate::{check_mip_ranges, check_ownership, engine_write_claims};

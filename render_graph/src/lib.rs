//! Vulkan device, memory and a Register/Prepare/Execute render graph with automatic barriers.
//!
//! - [`device`]: the Vulkan loader is loaded at run time (no loader gives an error, not a
//!   panic); the best device is chosen (discrete, integrated, virtual, CPU); Vulkan 1.3 with
//!   synchronization2 and dynamic rendering is required; validation with synchronization
//!   validation turns on by [`DeviceConfig::validation`], `ENGINE_VALIDATION=1`, or a layer
//!   forced by the loader; kept messages name the pass that was recording.
//! - [`memory`]: buffers, images, aliased memory blocks, a staging ring and readback buffers,
//!   all through gpu-allocator.
//! - [`RenderGraph`]: passes implement [`Pass`]; every read sees the version of its resource
//!   written before it in declaration order ([`RenderGraph::add_pass`]); the compiler orders
//!   passes accordingly, culls unused ones, places every barrier and layout transition,
//!   aliases transient memory and keeps last frame's versions of resources that some pass
//!   reads as history (across recompiles, when their description is unchanged).
//! - Misuse is a [`GraphError`] naming the pass and the resource (or binding slot): duplicate
//!   names, undeclared or mismatched bindings, draws outside `record_draw`, a zero output
//!   extent, reading back a frame that has not finished. Under validation, transient
//!   resources a pass only writes are poison-filled first ([`POISON_WORD`]), so a declared
//!   write that never happens shows in the output.
//! - The executor keeps two frames in flight, measures every pass with timestamp queries
//!   ([`GraphStats`]), labels passes for capture tools, dumps the compiled graph with
//!   [`RenderGraph::to_dot`], and with the feature `profile` shows passes as Tracy CPU and
//!   GPU zones.
//! - [`passes`]: the standard passes (object upload, depth prepass, geometry, readback)
//!   over a GPU scene of object records.
//! - [`swapchain`]: a window's surface and swapchain, the swapchain image imported into the
//!   graph each frame ([`RenderGraph::import_swapchain_image`]) and presented.
//! - [`testing`]: a validated device for GPU tests that skips where there is no Vulkan.
#![warn(missing_docs)]

mod access;
mod alias;
mod barriers;
mod commands;
mod compiler;
mod context;
pub mod device;
mod dot;
mod error;
mod executor;
#[cfg(feature = "profile")]
mod gpu_profiler;
mod graph;
pub mod memory;
mod pass;
pub mod passes;
mod pipeline;
mod recording;
mod registry;
mod stats;
pub mod swapchain;
pub mod testing;
mod validation;

/// The Vulkan bindings the graph is built on, re-exported so passes use the same version.
pub use ash;
/// Vulkan types (`vk::Format`, `vk::Extent2D`, …).
pub use ash::vk;

pub use access::{Access, ShaderStage};
pub use alias::{plan_aliasing, AliasBlock, AliasItem, AliasPlan};
pub use barriers::{BarrierPlan, BarrierSource, PlannedBarrier, SyncState};
pub use commands::{DISPATCH_INDIRECT_COMMAND_BYTES, DRAW_INDEXED_INDIRECT_COMMAND_BYTES, DRAW_INDIRECT_COMMAND_BYTES};
pub use compiler::{compile, CompiledGraph, CompiledResource, Residency};
pub use context::{Binding, ExecuteContext, PrepareContext, ResolvedBuffer, ResolvedImage, ResourceRef};
pub use device::{DeviceCapabilities, DeviceConfig, GpuDevice};
pub use error::{GraphError, Result};
pub use graph::{AliasReport, RenderGraph, FRAMES_IN_FLIGHT};
pub use memory::{full_mip_chain, GpuBuffer, GpuImage, ImageInfo, ReadbackBuffer, StagingRing, MAX_MIP_LEVELS};
pub use pass::Pass;
pub use pipeline::{BindingKind, ComputePipeline, GraphicsPipeline, GraphicsPipelineDesc, MAX_BINDINGS};
pub use recording::{POISON_COLOR, POISON_DEPTH, POISON_WORD};
pub use registry::{
    AttachmentLoad, BufferDesc, BufferHandle, GraphDecl, ImageDesc, ImageHandle, ImageSize, Registry, ResourceKind,
};
pub use stats::{GraphStats, PassStats};
pub use validation::{ValidationCounts, ValidationLog};

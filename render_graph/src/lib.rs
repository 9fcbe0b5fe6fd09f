//! Vulkan device, memory and a Register/Prepare/Execute render graph with automatic barriers:
//! a generic library, with no knowledge of any scene (the engine's renderer, its GPU scene
//! and its passes are the `renderer` crate).
//!
//! - [`device`]: the Vulkan loader is loaded at run time (no loader gives an error, not a
//!   panic); the best device is chosen (discrete, integrated, virtual, CPU); Vulkan 1.3 with
//!   synchronization2 and dynamic rendering is required; validation with synchronization
//!   validation turns on by [`DeviceConfig::validation`], `ENGINE_VALIDATION=1`, or a layer
//!   forced by the loader; kept messages name the pass that was recording.
//! - [`memory`]: buffers, images, aliased memory blocks, a staging ring and readback buffers,
//!   all through gpu-allocator.
//! - [`RenderGraph`]: passes implement [`TypedPass`] (the graph runs them as [`Pass`]); every
//!   read sees the version of its resource written before it in declaration order
//!   ([`RenderGraph::add_typed_pass`]); the compiler orders
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
//! - [`readback`]: passes that copy an image or a buffer of the graph to the host, at once
//!   or into a ring of regions read without waiting.
//! - [`swapchain`]: a window's surface and swapchain, the swapchain image imported into the
//!   graph each frame ([`RenderGraph::import_swapchain_image`]) and presented.
//! - `testing` (feature `test-support`): a validated device for GPU tests that skips where
//!   there is no Vulkan.
//!
//! # A pass
//!
//! A pass declares in `register` every resource it uses and how, and gets a handle per
//! access: a *read* handle ([`BufferRead`], [`ImageRead`]: `Copy`) for a read, a *write*
//! handle ([`BufferWrite`], [`ImageWrite`]: neither `Copy` nor `Clone`) for a write, which it
//! lends (`&ImageWrite`) to whatever records the write. `register` returns them, and
//! `prepare`, `execute` and `record_draw` receive them. Values the host hands the frame (a
//! camera, settings) are the frame's parameters ([`RenderGraph::set_param`]), read with
//! [`ExecuteContext::param`] or [`ExecuteContext::require_param`]:
//!
//! ```no_run
//! use render_graph::{Binding, BufferRead, ComputePipeline, ExecuteContext, ImageDesc, ImageSize, ImageWrite,
//!     Registry, ShaderStage, TypedPass};
//! use ash::vk;
//!
//! /// The host's value for the frame: `graph.set_param(Tint([1.0, 0.5, 0.5, 1.0]))`.
//! struct Tint([f32; 4]);
//!
//! struct Shade {
//!     pipeline: ComputePipeline,
//! }
//!
//! impl TypedPass for Shade {
//!     /// The lights it reads, the image it writes.
//!     type Handles = (BufferRead, ImageWrite);
//!
//!     fn name(&self) -> &str {
//!         "shade"
//!     }
//!
//!     fn register(&mut self, registry: &mut Registry) -> Self::Handles {
//!         let lights = registry.buffer("lights");
//!         let image = registry.create_image("shaded", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
//!         (registry.read_storage_buffer(lights, ShaderStage::Compute), registry.write_storage_image(image, ShaderStage::Compute))
//!     }
//!
//!     fn execute(&mut self, (lights, shaded): &Self::Handles, context: &mut ExecuteContext) {
//!         let tint = match context.require_param::<Tint>() {
//!             Ok(tint) => tint.0,
//!             Err(error) => return context.fail(error),
//!         };
//!         let extent = context.image(shaded).extent;
//!         context.bind_compute(&self.pipeline, &[Binding::buffer(*lights), Binding::image(shaded)]);
//!         context.push_constants(&tint.map(f32::to_bits));
//!         context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
//!     }
//! }
//! ```
//!
//! Add it with [`RenderGraph::add_typed_pass`]. The graph checks each descriptor against the
//! shader: one made from a read handle at a slot the shader may write (`writeonly`, or a
//! storage binding without `readonly`) is a [`GraphError::BindingMismatch`] naming the pass,
//! the slot and the resource. [`Pass`] is the untyped trait the graph runs, for the rare pass
//! that needs it.
//!
//! # Declaring mip access
//!
//! A pass may declare one mip or a range of mips ([`MipRange`]) of an image instead of the
//! whole image: [`Registry::write_storage_image_mip`], [`Registry::read_storage_image_mip`],
//! [`Registry::read_sampled_image_mips`], or any access with [`Registry::read_image_mips`] and
//! [`Registry::write_image_mips`].
//! The barrier planner then tracks every image per mip segment (the disjoint ranges its
//! declarations delimit): a pass writing mip `k` waits for, and transitions, mip `k` only,
//! and a later read of many mips gets barriers from each mip's own last access and layout
//! ([`PlannedBarrier::mips`]; neighbouring mips with the same state share one barrier).
//! Whole-image declarations keep working as before and mix freely with per-mip ones.
//! Imported and double-buffered images end the frame with every mip in one layout.
//!
//! The pass gets a view per declared range: [`ExecuteContext::image_view_mips`], or in a
//! descriptor [`Binding::image_mips`] (one level, every level, or exactly a declared range).
//! Views of several levels are made on first use and destroyed with the image.
//!
//! Compiling fails, naming the pass and the image, when a range does not fit the image's
//! mips ([`GraphError::MipRangeOutOfBounds`]; a full chain is checked at the output extent
//! it resolves to, an import at its own mip count), is empty, or overlaps another
//! declaration of the same pass on that image ([`GraphError::InvalidAccess`]). Pass order
//! still follows versions of the whole image: passes writing different mips of one image
//! run in the order they were added.
//!
//! A reduction of mip `k - 1` into mip `k` (one pass per level; `mip_gather` in
//! `tests/mip_access.rs` then samples mips `0..=n` through one view):
//!
//! ```no_run
//! use render_graph::{Binding, ComputePipeline, ExecuteContext, ImageRead, ImageWrite, Registry, ShaderStage, TypedPass};
//!
//! struct ReduceMip {
//!     mip: u32,
//!     pipeline: ComputePipeline,
//! }
//!
//! impl TypedPass for ReduceMip {
//!     /// Mip `mip - 1`, read; mip `mip`, written.
//!     type Handles = (ImageRead, ImageWrite);
//!
//!     fn name(&self) -> &str {
//!         "reduce"
//!     }
//!
//!     fn register(&mut self, registry: &mut Registry) -> Self::Handles {
//!         let pyramid = registry.image("pyramid");
//!         (
//!             registry.read_storage_image_mip(pyramid, self.mip - 1, ShaderStage::Compute),
//!             registry.write_storage_image_mip(pyramid, self.mip, ShaderStage::Compute),
//!         )
//!     }
//!
//!     fn execute(&mut self, (source, target): &Self::Handles, context: &mut ExecuteContext) {
//!         let bindings = [Binding::image_mip(*source, self.mip - 1), Binding::image_mip(target, self.mip)];
//!         context.bind_compute(&self.pipeline, &bindings);
//!         let extent = context.image(target).mip_extent(self.mip);
//!         context.dispatch(extent.width.div_ceil(8), extent.height.div_ceil(8), 1);
//!     }
//! }
//! ```
//!
//! One pass may also reduce a whole chain in *steps*: [`Registry::next_step`] between the
//! declarations of each mip (read `k - 1`, write `k`; [`Registry::output_extent`] tells how
//! many mips a full chain has), and [`ExecuteContext::next_step`] in `execute` before each
//! mip's dispatch; the graph records the barriers each step needs when it begins
//! ([`PlannedBarrier::step`]). The renderer's Hi-Z build works this way. A pass may still
//! declare the image read-write and record its own mip-to-mip barriers
//! ([`ExecuteContext::mip_barrier`]).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The parts, lowest first; each imports only from the parts below it: `access` (what a pass
// may do to a resource), `error`, `device`, then `memory` and `pipeline` on the device,
// `compile` (declarations to a compiled graph), `resources` (what backs each resource),
// `execute` (a frame's run and what passes see of it), `graph` (the RenderGraph that ties
// them together), and the passes and presentation users add: `readback`, `swapchain`.
mod access;
mod compile;
pub mod device;
mod error;
mod execute;
mod graph;
pub mod memory;
mod pipeline;
pub mod readback;
mod resources;
pub mod swapchain;
#[cfg(feature = "test-support")]
pub mod testing;

/// The Vulkan bindings the graph is built on, re-exported so passes use the same version.
pub use ash;
/// Vulkan types (`vk::Format`, `vk::Extent2D`, …).
pub use ash::vk;
/// Where a buffer's memory lives ([`GpuBuffer::new`]): the allocator's type, re-exported so
/// passes need no dependency of their own on it.
pub use gpu_allocator::MemoryLocation;

pub use access::{Access, MipRange, ShaderStage};
pub use compile::{
    compile, compile_shuffled, AccessedBuffer, AccessedImage, AttachmentLoad, BarrierPlan, BarrierSource, BufferDesc,
    BufferHandle, BufferRead, BufferWrite, CompiledGraph, CompiledResource, GraphDecl, ImageDesc, ImageHandle,
    ImageRead, ImageSize, ImageWrite, Named, Owner, PlannedBarrier, Registry, Residency, ResourceKind, SyncState,
};
pub use device::validation::{ValidationCounts, ValidationLog};
pub use device::{DeviceCapabilities, DeviceConfig, GpuDevice, HeapBudget};
pub use error::{GraphError, Result};
pub use execute::{
    Binding, ExecuteContext, GraphStats, Pass, PassStats, PassWarning, PrepareContext, ResourceRef, Typed, TypedPass,
    ZoneStats, DISPATCH_INDIRECT_COMMAND_BYTES, DRAW_INDEXED_INDIRECT_COMMAND_BYTES, DRAW_INDIRECT_COMMAND_BYTES,
    FRAMES_IN_FLIGHT, MAX_GPU_ZONES, POISON_COLOR, POISON_DEPTH, POISON_WORD,
};
pub use graph::{AliasReport, DroppedPass, RenderGraph, SHUFFLE_ENV};
pub use memory::{
    full_mip_chain, GpuBuffer, GpuImage, ImageInfo, ReadbackBuffer, StagingRing, MAX_ARRAY_LAYERS, MAX_MIP_LEVELS,
};
pub use pipeline::{
    hot_reload_asked, BindingKind, ColorBlend, ComputePipeline, GraphicsPipeline, GraphicsPipelineDesc, HotPipeline,
    HotSource, HOT_RELOAD_ENV, HOT_RETIRE_FRAMES, MAX_BINDINGS,
};
pub use resources::{plan_aliasing, AliasBlock, AliasItem, AliasPlan, ResolvedBuffer, ResolvedImage};

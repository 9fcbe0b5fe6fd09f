//! The render graph: passes, imports, compilation on change, and the physical resources of
//! the compiled graph (with transient aliasing and double-buffered history resources).

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::alias::{plan_aliasing, AliasItem, AliasPlan};
use crate::barriers::SyncState;
use crate::compiler::{compile, CompiledGraph, Residency};
use crate::context::{Resolved, ResolvedBuffer, ResolvedImage};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::executor::Executor;
use crate::memory::{GpuBuffer, GpuImage, ImageInfo, MemoryBlock};
use crate::mips::MipRange;
use crate::pass::Pass;
use crate::registry::{GraphDecl, ImageSize, Origin, ResourceKind};
use crate::stats::{GraphStats, PassStats};

/// Frames the CPU may record ahead of the GPU.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// A resource owned outside the graph.
#[derive(Clone)]
pub(crate) enum ImportedResource {
    Image(Arc<GpuImage>),
    Buffer(Arc<GpuBuffer>),
}

/// The swapchain image the next frame renders to and presents, with its semaphores.
pub(crate) struct PresentSync {
    pub(crate) name: String,
    pub(crate) acquired: vk::Semaphore,
    pub(crate) rendered: vk::Semaphore,
}

pub(crate) struct Import {
    pub(crate) resource: ImportedResource,
    /// State left by the last frame that used it.
    pub(crate) state: SyncState,
}

/// Where the source scope of a resource's first barrier in a frame comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntrySource {
    /// The previous occupant of aliased memory, earlier in the same frame.
    SameFrame(SyncState),
    /// The last use of the same memory in the previous frame (none in the first frame).
    PreviousFrame(SyncState),
    /// Last frame's version of a double-buffered resource: keeps its contents.
    HistoryPrevious(SyncState),
    /// An imported resource: its tracked state.
    Imported,
}

/// Physical backing of one graph resource.
pub(crate) enum Backing {
    None,
    Image(GpuImage),
    Buffer(GpuBuffer),
    ImagePair([GpuImage; 2]),
    BufferPair([GpuBuffer; 2]),
}

/// The compiled graph with its physical resources.
pub(crate) struct Compiled {
    pub(crate) decl: GraphDecl,
    pub(crate) graph: CompiledGraph,
    pub(crate) backings: Vec<Backing>,
    pub(crate) entry: Vec<EntrySource>,
    pub(crate) labels: Vec<CString>,
    pub(crate) alias: AliasPlan,
    /// Resource index of each alias item.
    pub(crate) alias_resources: Vec<u32>,
    pub(crate) transient_bytes: u64,
    pub(crate) first_frame: bool,
    /// Transient resources a pass writes blindly are filled with poison first (validation).
    pub(crate) poison: bool,
    /// Per resource (history and base alike): last frame's version restarts from zero in the
    /// first frame, because its double buffer was created by this compilation.
    pub(crate) history_reset: Vec<bool>,
    /// Per resource: the layout a kept previous copy was left in by the last graph.
    pub(crate) kept_layouts: Vec<vk::ImageLayout>,
    /// The distinct `(image, mips)` ranges passes declared, each with a view per frame
    /// (`AccessDecl::view` indexes it).
    pub(crate) view_ranges: Vec<(u32, MipRange)>,
    _blocks: Vec<Arc<MemoryBlock>>,
}

/// What a double-buffered resource is created from; a recompile keeps the pair (and last
/// frame's contents) when this is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HistoryKey {
    Image(ImageInfo),
    Buffer { size: u64, usage: vk::BufferUsageFlags },
}

/// A double buffer taken from the previous compilation.
pub(crate) struct KeptHistory {
    key: HistoryKey,
    backing: Backing,
    /// Layout of the copy that holds the last frame's contents.
    previous_layout: vk::ImageLayout,
}

impl Compiled {
    /// Takes the double buffers out of a compiled graph whose frames have all finished,
    /// keyed by resource name. A graph that never ran a frame has nothing worth keeping.
    fn into_history(self) -> HashMap<String, KeptHistory> {
        let mut kept = HashMap::new();
        if self.first_frame {
            return kept;
        }
        let Compiled { decl, graph, backings, .. } = self;
        for (index, backing) in backings.into_iter().enumerate() {
            let final_state = graph.barriers.final_state[index];
            let key = match &backing {
                Backing::ImagePair(pair) => HistoryKey::Image(*pair[0].info()),
                Backing::BufferPair(pair) => HistoryKey::Buffer { size: pair[0].size(), usage: pair[0].usage() },
                _ => continue,
            };
            let Some(state) = final_state else { continue };
            if matches!(key, HistoryKey::Image(_)) && state.layout == vk::ImageLayout::UNDEFINED {
                continue;
            }
            let name = decl.resources[index].name.clone();
            kept.insert(name, KeptHistory { key, backing, previous_layout: state.layout });
        }
        kept
    }
}

/// What aliasing achieved in the compiled graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AliasReport {
    /// Bytes allocated for transient resources.
    pub transient_bytes: u64,
    /// Bytes saved against one allocation per transient resource.
    pub bytes_saved: u64,
    /// Names of resources sharing one block, for every block with more than one occupant.
    pub shared: Vec<Vec<String>>,
}

/// A render graph of passes with the Register → Prepare → Execute lifecycle.
///
/// Add passes with [`RenderGraph::add_pass`], import outside resources by name, then call
/// [`RenderGraph::execute_frame`] once per frame. The graph compiles on the first frame and
/// again only after it changes (a pass added, the output extent, an import's kind or an
/// imported image's mip count changed).
pub struct RenderGraph {
    pub(crate) device: Arc<GpuDevice>,
    pub(crate) passes: Vec<Box<dyn Pass>>,
    pub(crate) output_extent: vk::Extent2D,
    pub(crate) imports: HashMap<String, Import>,
    pub(crate) dirty: bool,
    pub(crate) compiled: Option<Compiled>,
    pub(crate) compile_count: u64,
    pub(crate) executor: Executor,
    pub(crate) resolved: Vec<Resolved>,
    /// This frame's views of declared mip ranges (see `Compiled::view_ranges`).
    pub(crate) range_views: Vec<vk::ImageView>,
    pub(crate) frame_index: u64,
    pub(crate) stats: GraphStats,
    /// Set by [`RenderGraph::import_swapchain_image`] for the next frame only.
    pub(crate) present: Option<PresentSync>,
}

impl RenderGraph {
    /// Creates an empty graph whose relative sizes refer to `output_extent`.
    pub fn new(device: Arc<GpuDevice>, output_extent: vk::Extent2D) -> Result<RenderGraph> {
        let executor = Executor::new(&device)?;
        Ok(RenderGraph {
            device,
            passes: Vec::new(),
            output_extent,
            imports: HashMap::new(),
            dirty: true,
            compiled: None,
            compile_count: 0,
            executor,
            resolved: Vec::new(),
            range_views: Vec::new(),
            frame_index: 0,
            stats: GraphStats::default(),
            present: None,
        })
    }

    /// The device the graph runs on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// Adds a pass. Declaration order is the order of the program:
    ///
    /// - every write of a resource makes a new *version*; a pass that reads it sees the
    ///   version written last by a pass added *before* it (a reader added before every writer
    ///   sees the first version), never a later modification;
    /// - so a pass runs after the writer of each version it reads, writers of one resource run
    ///   in the order added, and readers of a version run before the next write replaces it;
    /// - passes with no dependency between them run in the order added; history reads
    ///   ([`crate::Registry::history_image`]) see last frame's final version and add no
    ///   dependency.
    ///
    /// Write `x` → read `x` → modify `x` in place runs in exactly that order, and the reader
    /// sees the first write. Dependencies that contradict each other across resources are a
    /// [`GraphError::Cycle`] naming the passes. Names must be unique
    /// ([`GraphError::DuplicatePass`]).
    pub fn add_pass(&mut self, pass: impl Pass) {
        self.passes.push(Box::new(pass));
        self.dirty = true;
    }

    /// Changes the extent relative sizes refer to (recompiles when it differs).
    pub fn set_output_extent(&mut self, extent: vk::Extent2D) {
        if extent != self.output_extent {
            self.output_extent = extent;
            self.dirty = true;
        }
    }

    /// The extent relative sizes refer to.
    pub fn output_extent(&self) -> vk::Extent2D {
        self.output_extent
    }

    fn import(&mut self, name: &str, resource: ImportedResource) {
        let same_kind = matches!(
            (self.imports.get(name).map(|import| &import.resource), &resource),
            (Some(ImportedResource::Image(_)), ImportedResource::Image(_))
                | (Some(ImportedResource::Buffer(_)), ImportedResource::Buffer(_))
        );
        // Declared mip ranges are checked against an imported image's mips when compiling.
        let same_mips = match (self.imports.get(name).map(|import| &import.resource), &resource) {
            (Some(ImportedResource::Image(old)), ImportedResource::Image(new)) => {
                old.info().mip_levels == new.info().mip_levels
            }
            _ => true,
        };
        if !same_kind || !same_mips {
            self.dirty = true;
        }
        self.imports.insert(name.to_owned(), Import { resource, state: SyncState::NONE });
    }

    /// Makes an image owned outside the graph available to passes under `name`. The graph
    /// keeps it alive and tracks its layout and pending accesses from frame to frame.
    pub fn import_image(&mut self, name: &str, image: Arc<GpuImage>) {
        self.import(name, ImportedResource::Image(image));
    }

    /// Like [`RenderGraph::import_image`] for an image whose contents must be kept: it is in
    /// `layout` and every earlier GPU access to it has completed (e.g. it was filled with
    /// [`crate::GpuDevice::submit_and_wait`]). A plain import starts from undefined contents.
    pub fn import_image_in_layout(&mut self, name: &str, image: Arc<GpuImage>, layout: vk::ImageLayout) {
        self.import(name, ImportedResource::Image(image));
        if let Some(import) = self.imports.get_mut(name) {
            import.state = SyncState { layout, ..SyncState::NONE };
        }
    }

    /// Imports a swapchain image for the next frame only: the frame waits for `acquired`
    /// (signalled by `vkAcquireNextImageKHR`) before any stage, leaves the image in
    /// `PRESENT_SRC_KHR` and signals `rendered`, which `vkQueuePresentKHR` waits for. Its
    /// contents start undefined: a pass must write all of it (e.g. a blit of `color`). A
    /// frame that leaves the image unused is an error ([`GraphError::InvalidDescription`]).
    pub fn import_swapchain_image(
        &mut self,
        name: &str,
        image: Arc<GpuImage>,
        acquired: vk::Semaphore,
        rendered: vk::Semaphore,
    ) {
        self.import(name, ImportedResource::Image(image));
        if let Some(import) = self.imports.get_mut(name) {
            // The first barrier's source scope is every stage, so it chains with the
            // semaphore wait (which blocks every stage) and the layout change follows it.
            import.state = SyncState { stages: vk::PipelineStageFlags2::ALL_COMMANDS, ..SyncState::NONE };
        }
        self.present = Some(PresentSync { name: name.to_owned(), acquired, rendered });
    }

    /// Makes a buffer owned outside the graph available to passes under `name`. When its
    /// memory is host visible, the frame ends with a barrier that makes GPU writes visible to
    /// the host once the frame's fence signals.
    pub fn import_buffer(&mut self, name: &str, buffer: Arc<GpuBuffer>) {
        self.import(name, ImportedResource::Buffer(buffer));
    }

    /// How many times the graph compiled.
    pub fn compile_count(&self) -> u64 {
        self.compile_count
    }

    /// Number of frames submitted.
    pub fn frame_index(&self) -> u64 {
        self.frame_index
    }

    /// Statistics of the latest completed frame.
    pub fn stats(&self) -> &GraphStats {
        &self.stats
    }

    /// Names of the passes that run, in order (compiles if needed).
    pub fn execution_order(&mut self) -> Result<Vec<String>> {
        self.compile()?;
        let compiled = self.compiled.as_ref().expect("compile succeeded");
        Ok(compiled.graph.order_names(&compiled.decl).into_iter().map(str::to_owned).collect())
    }

    /// Names of the passes that do not run (compiles if needed).
    pub fn culled_passes(&mut self) -> Result<Vec<String>> {
        self.compile()?;
        let compiled = self.compiled.as_ref().expect("compile succeeded");
        Ok(compiled.graph.culled_names(&compiled.decl).into_iter().map(str::to_owned).collect())
    }

    /// Barriers in the compiled plan (entry barriers included).
    pub fn barrier_count(&mut self) -> Result<usize> {
        self.compile()?;
        Ok(self.compiled.as_ref().expect("compile succeeded").graph.barriers.count())
    }

    /// What transient aliasing achieved (compiles if needed).
    pub fn alias_report(&mut self) -> Result<AliasReport> {
        self.compile()?;
        let compiled = self.compiled.as_ref().expect("compile succeeded");
        let shared = compiled
            .alias
            .blocks
            .iter()
            .filter(|block| block.occupants.len() > 1)
            .map(|block| {
                block
                    .occupants
                    .iter()
                    .map(|&item| compiled.decl.resource_name(compiled.alias_resources[item]).to_owned())
                    .collect()
            })
            .collect();
        Ok(AliasReport { transient_bytes: compiled.transient_bytes, bytes_saved: compiled.alias.bytes_saved, shared })
    }

    /// Compiles the graph if it changed since the last compilation. Waits for the GPU first
    /// when resources must be recreated.
    pub fn compile(&mut self) -> Result<()> {
        if !self.dirty && self.compiled.is_some() {
            return Ok(());
        }
        runtime::profile_zone!("render graph compile");
        let mut decl = GraphDecl::default();
        decl.set_output_extent(self.output_extent);
        for pass in &mut self.passes {
            let name = pass.name().to_owned();
            decl.declare_pass(&name, |registry| pass.register(registry));
        }
        let imports = &self.imports;
        let is_imported = |name: &str, kind: ResourceKind| match imports.get(name).map(|import| &import.resource) {
            Some(ImportedResource::Image(_)) => kind == ResourceKind::Image,
            Some(ImportedResource::Buffer(_)) => kind == ResourceKind::Buffer,
            None => false,
        };
        let graph = compile(&decl, &is_imported)?;
        self.check_mip_ranges(&decl)?;
        let view_ranges = assign_range_views(&mut decl);
        // Old resources may be in use by frames in flight.
        self.executor.wait_all(&self.device, &mut self.stats)?;
        let mut kept = self.compiled.take().map(Compiled::into_history).unwrap_or_default();
        let mut compiled = self.allocate(decl, graph, &mut kept)?;
        compiled.view_ranges = view_ranges;
        self.resolved = vec![Resolved::None; compiled.decl.resource_count()];
        self.range_views = vec![vk::ImageView::null(); compiled.view_ranges.len()];
        self.executor.prepare_for(&self.device, &compiled)?;
        self.stats = GraphStats {
            transient_bytes: compiled.transient_bytes,
            aliased_bytes_saved: compiled.alias.bytes_saved,
            passes: compiled
                .graph
                .order
                .iter()
                .map(|&pass| PassStats { name: compiled.decl.passes[pass].name.clone(), ..PassStats::default() })
                .collect(),
            ..GraphStats::default()
        };
        self.compiled = Some(compiled);
        // The GPU is idle (waited above): only the layouts remain.
        for import in self.imports.values_mut() {
            import.state = SyncState { layout: import.state.layout, ..SyncState::NONE };
        }
        self.dirty = false;
        self.compile_count += 1;
        Ok(())
    }

    fn allocate(
        &self,
        decl: GraphDecl,
        graph: CompiledGraph,
        kept: &mut HashMap<String, KeptHistory>,
    ) -> Result<Compiled> {
        let device = &self.device;
        // Per resource: whether its history restarts from zero, and the layout its kept
        // previous copy was left in.
        let mut history_reset = vec![false; decl.resource_count()];
        let mut kept_layouts = vec![vk::ImageLayout::UNDEFINED; decl.resource_count()];
        // Poison fills need transient resources to be transfer destinations.
        let poison = device.validation_enabled();
        let (poison_image_usage, poison_buffer_usage) = if poison {
            (vk::ImageUsageFlags::TRANSFER_DST, vk::BufferUsageFlags::TRANSFER_DST)
        } else {
            (vk::ImageUsageFlags::empty(), vk::BufferUsageFlags::empty())
        };
        let mut backings: Vec<Backing> = Vec::with_capacity(decl.resource_count());
        let mut alias_items = Vec::new();
        let mut alias_resources = Vec::new();
        for (index, declared) in decl.resources.iter().enumerate() {
            let compiled = &graph.resources[index];
            let name = declared.name.as_str();
            let backing = match (compiled.residency, declared.origin) {
                (Residency::Transient | Residency::HistoryCurrent, Origin::CreatedImage(desc)) => {
                    let zero_output = self.output_extent.width == 0 || self.output_extent.height == 0;
                    let extent = desc.size.resolve(self.output_extent).ok_or_else(|| match desc.size {
                        ImageSize::Relative { .. } if zero_output => GraphError::ZeroOutputExtent {
                            pass: declared
                                .creators
                                .first()
                                .map_or_else(String::new, |&pass| decl.passes[pass].name.clone()),
                            resource: name.to_owned(),
                        },
                        _ => GraphError::InvalidDescription {
                            resource: name.to_owned(),
                            reason: "the size resolves to zero or is not finite",
                        },
                    })?;
                    let info = ImageInfo {
                        format: desc.format,
                        extent,
                        mip_levels: desc.resolve_mips(extent),
                        usage: if compiled.residency == Residency::Transient {
                            compiled.image_usage | poison_image_usage
                        } else {
                            compiled.image_usage
                        },
                    };
                    if compiled.residency == Residency::Transient {
                        let image = GpuImage::new_unbound(device, name, info)?;
                        let requirements = image.requirements();
                        alias_items.push(alias_item(compiled.lifetime, requirements, true));
                        alias_resources.push(index as u32);
                        Backing::Image(image)
                    } else {
                        let key = HistoryKey::Image(info);
                        match kept.remove(name).filter(|history| history.key == key) {
                            Some(history) => {
                                kept_layouts[index] = history.previous_layout;
                                history.backing
                            }
                            None => {
                                history_reset[index] = true;
                                Backing::ImagePair([
                                    GpuImage::new(device, &format!("{name} [0]"), info)?,
                                    GpuImage::new(device, &format!("{name} [1]"), info)?,
                                ])
                            }
                        }
                    }
                }
                (Residency::Transient | Residency::HistoryCurrent, Origin::CreatedBuffer(desc)) => {
                    let usage = if compiled.residency == Residency::Transient {
                        compiled.buffer_usage | poison_buffer_usage
                    } else {
                        compiled.buffer_usage
                    };
                    if compiled.residency == Residency::Transient {
                        let buffer = GpuBuffer::new_unbound(device, name, desc.size, usage)?;
                        alias_items.push(alias_item(compiled.lifetime, buffer.requirements(), false));
                        alias_resources.push(index as u32);
                        Backing::Buffer(buffer)
                    } else {
                        let key = HistoryKey::Buffer { size: desc.size, usage };
                        match kept.remove(name).filter(|history| history.key == key) {
                            Some(history) => history.backing,
                            None => {
                                history_reset[index] = true;
                                let location = MemoryLocation::GpuOnly;
                                Backing::BufferPair([
                                    GpuBuffer::new(device, &format!("{name} [0]"), desc.size, usage, location)?,
                                    GpuBuffer::new(device, &format!("{name} [1]"), desc.size, usage, location)?,
                                ])
                            }
                        }
                    }
                }
                _ => Backing::None,
            };
            backings.push(backing);
        }
        let alias = plan_aliasing(&alias_items);
        let mut blocks = Vec::with_capacity(alias.blocks.len());
        for (block_index, block) in alias.blocks.iter().enumerate() {
            let requirements = vk::MemoryRequirements {
                size: block.size,
                alignment: block.alignment,
                memory_type_bits: block.type_bits,
            };
            let name = format!("transient block {block_index}");
            let memory =
                Arc::new(MemoryBlock::new(device, &name, requirements, MemoryLocation::GpuOnly, !block.is_image)?);
            for &item in &block.occupants {
                let resource = alias_resources[item] as usize;
                match &mut backings[resource] {
                    Backing::Image(image) => image.bind_shared(&memory, decl.resource_name(resource as u32))?,
                    Backing::Buffer(buffer) => buffer.bind_shared(&memory)?,
                    _ => unreachable!("alias items are unbound transient resources"),
                }
            }
            blocks.push(memory);
        }
        let transient_bytes = alias.blocks.iter().map(|block| block.size).sum();
        let entry = entry_sources(&decl, &graph, &alias, &alias_resources);
        // Last frame's version answers for its base resource.
        for (index, declared) in decl.resources.iter().enumerate() {
            if let Origin::History { of } = declared.origin {
                history_reset[index] = history_reset[of as usize];
                kept_layouts[index] = kept_layouts[of as usize];
            }
        }
        let labels = graph
            .order
            .iter()
            .map(|&pass| CString::new(decl.passes[pass].name.replace('\0', " ")).unwrap_or_default())
            .collect();
        Ok(Compiled {
            decl,
            graph,
            backings,
            entry,
            labels,
            alias,
            alias_resources,
            transient_bytes,
            first_frame: true,
            poison,
            history_reset,
            kept_layouts,
            view_ranges: Vec::new(),
            _blocks: blocks,
        })
    }

    /// Checks declared mip ranges against the mips images will have: created images at the
    /// current output extent (full chains follow it), imported images as imported.
    fn check_mip_ranges(&self, decl: &GraphDecl) -> Result<()> {
        let output = self.output_extent;
        let base_of = |resource: u32| match decl.resources[resource as usize].origin {
            Origin::History { of } => of,
            _ => resource,
        };
        let mip_levels = |resource: u32| {
            let declared = &decl.resources[base_of(resource) as usize];
            match declared.origin {
                Origin::CreatedImage(desc) => desc.size.resolve(output).map(|extent| desc.resolve_mips(extent)),
                _ => match self.imports.get(&declared.name).map(|import| &import.resource) {
                    Some(ImportedResource::Image(image)) => Some(image.info().mip_levels),
                    _ => None,
                },
            }
        };
        crate::compiler::check_mip_ranges(decl, &mip_levels)
    }

    /// Points every graph resource at its physical resource for frame `frame_index`
    /// (double-buffered resources swap copies each frame), and every declared mip range at
    /// its view (made on first use, then found without allocating).
    pub(crate) fn resolve(&mut self) -> Result<()> {
        let Some(compiled) = &self.compiled else { return Ok(()) };
        let current = (self.frame_index % 2) as usize;
        for index in 0..compiled.decl.resources.len() {
            self.resolved[index] = match physical(compiled, &self.imports, index, current) {
                Physical::Image(image) => resolve_image(image),
                Physical::Buffer(buffer) => resolve_buffer(buffer),
                Physical::None => Resolved::None,
            };
        }
        for (slot, &(resource, mips)) in compiled.view_ranges.iter().enumerate() {
            self.range_views[slot] = match physical(compiled, &self.imports, resource as usize, current) {
                Physical::Image(image) => image.range_view(mips).map_err(|error| match error {
                    GraphError::InvalidDescription { reason, .. } => GraphError::InvalidDescription {
                        resource: compiled.decl.resource_name(resource).to_owned(),
                        reason,
                    },
                    other => other,
                })?,
                _ => vk::ImageView::null(),
            };
        }
        Ok(())
    }
}

/// What a graph resource is backed by this frame.
enum Physical<'graph> {
    Image(&'graph GpuImage),
    Buffer(&'graph GpuBuffer),
    None,
}

fn physical<'graph>(
    compiled: &'graph Compiled,
    imports: &'graph HashMap<String, Import>,
    index: usize,
    current: usize,
) -> Physical<'graph> {
    let declared = &compiled.decl.resources[index];
    let (backing_index, copy) = match declared.origin {
        Origin::History { of } => (of as usize, 1 - current),
        _ => (index, current),
    };
    match &compiled.backings[backing_index] {
        Backing::Image(image) => Physical::Image(image),
        Backing::ImagePair(pair) => Physical::Image(&pair[copy]),
        Backing::Buffer(buffer) => Physical::Buffer(buffer),
        Backing::BufferPair(pair) => Physical::Buffer(&pair[copy]),
        Backing::None => match imports.get(&declared.name).map(|import| &import.resource) {
            Some(ImportedResource::Image(image)) => Physical::Image(image),
            Some(ImportedResource::Buffer(buffer)) => Physical::Buffer(buffer),
            None => Physical::None,
        },
    }
}

/// Numbers the distinct mip ranges declared on images (whole-image declarations use the
/// image's own view) and points each declaration at its range's view.
fn assign_range_views(decl: &mut GraphDecl) -> Vec<(u32, MipRange)> {
    let mut ranges: Vec<(u32, MipRange)> = Vec::new();
    for pass in &mut decl.passes {
        for access in pass.accesses.iter_mut().filter(|access| !access.mips.is_all()) {
            let key = (access.resource, access.mips);
            access.view = match ranges.iter().position(|&range| range == key) {
                Some(slot) => slot as u32,
                None => {
                    ranges.push(key);
                    (ranges.len() - 1) as u32
                }
            };
        }
    }
    ranges
}

impl Drop for RenderGraph {
    fn drop(&mut self) {
        // Resources and passes (with their pipelines) must outlive the frames using them.
        if self.device.wait_idle().is_ok() {
            self.executor.clock.finish_all();
        }
    }
}

fn resolve_image(image: &GpuImage) -> Resolved {
    let info = image.info();
    Resolved::Image(ResolvedImage {
        image: image.raw(),
        view: image.view(),
        format: info.format,
        extent: info.extent,
        mip_levels: info.mip_levels,
        mip_views: *image.mip_views(),
    })
}

fn resolve_buffer(buffer: &GpuBuffer) -> Resolved {
    Resolved::Buffer(ResolvedBuffer { buffer: buffer.raw(), size: buffer.size() })
}

fn alias_item(lifetime: Option<(usize, usize)>, requirements: vk::MemoryRequirements, is_image: bool) -> AliasItem {
    AliasItem {
        lifetime: lifetime.unwrap_or((0, 0)),
        size: requirements.size,
        alignment: requirements.alignment,
        type_bits: requirements.memory_type_bits,
        is_image,
    }
}

/// Decides where each resource's entry barrier takes its source from.
fn entry_sources(
    decl: &GraphDecl,
    graph: &CompiledGraph,
    alias: &AliasPlan,
    alias_resources: &[u32],
) -> Vec<EntrySource> {
    let final_state = |resource: usize| graph.barriers.final_state[resource].unwrap_or(SyncState::NONE);
    let mut entry: Vec<EntrySource> = (0..decl.resource_count())
        .map(|resource| match (graph.resources[resource].residency, decl.resources[resource].origin) {
            (Residency::Imported, _) => EntrySource::Imported,
            (Residency::HistoryPrevious, Origin::History { of }) => {
                EntrySource::HistoryPrevious(final_state(of as usize))
            }
            _ => EntrySource::PreviousFrame(SyncState::NONE),
        })
        .collect();
    // A double-buffered resource's current copy was last frame's previous copy.
    for (index, declared) in decl.resources.iter().enumerate() {
        if let (Origin::History { of }, Residency::HistoryPrevious) =
            (declared.origin, graph.resources[index].residency)
        {
            entry[of as usize] = EntrySource::PreviousFrame(final_state(index));
        }
    }
    // Aliased memory: each occupant waits for the previous one; the first waits for the last
    // occupant of the previous frame.
    for block in &alias.blocks {
        let occupants: Vec<usize> = block.occupants.iter().map(|&item| alias_resources[item] as usize).collect();
        for (position, &resource) in occupants.iter().enumerate() {
            entry[resource] = if position == 0 {
                let last = *occupants.last().expect("a block has an occupant");
                EntrySource::PreviousFrame(final_state(last))
            } else {
                EntrySource::SameFrame(final_state(occupants[position - 1]))
            };
        }
    }
    entry
}

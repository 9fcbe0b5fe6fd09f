//! The compiled graph with its physical resources: what backs each resource (transient
//! memory shared by aliasing, double buffers for history, imports), where each resource's
//! first barrier of a frame takes its source from, and which physical resource a pass sees
//! in a given frame.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::access::MipRange;
use crate::alias::{plan_aliasing, AliasItem, AliasPlan};
use crate::compile::{CompiledGraph, GraphDecl, ImageSize, Origin, Residency, SyncState};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::{GpuBuffer, GpuImage, ImageInfo, MemoryBlock};
use crate::resolved::Resolved;

/// A resource owned outside the graph.
#[derive(Clone)]
pub(crate) enum ImportedResource {
    Image(Arc<GpuImage>),
    Buffer(Arc<GpuBuffer>),
}

/// The swapchain image the next frame renders to and presents, with its semaphores.
#[derive(Clone)]
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
    pub(crate) fn into_history(self) -> HashMap<String, KeptHistory> {
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

    /// Creates the physical resources of a freshly compiled graph: transient resources
    /// aliased into shared blocks, double buffers (taken from `kept` when their description
    /// is unchanged, so last frame's contents survive a recompile), and where each
    /// resource's first barrier of a frame takes its source from.
    pub(crate) fn allocate(
        device: &Arc<GpuDevice>,
        output_extent: vk::Extent2D,
        decl: GraphDecl,
        graph: CompiledGraph,
        kept: &mut HashMap<String, KeptHistory>,
    ) -> Result<Compiled> {
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
                    let zero_output = output_extent.width == 0 || output_extent.height == 0;
                    let extent = desc.size.resolve(output_extent).ok_or_else(|| match desc.size {
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

    /// Points every graph resource at its physical resource for frame `frame_index`
    /// (double-buffered resources swap copies each frame), and every declared mip range at
    /// its view (made on first use, then found without allocating).
    pub(crate) fn resolve(
        &self,
        imports: &HashMap<String, Import>,
        frame_index: u64,
        resolved: &mut [Resolved],
        range_views: &mut [vk::ImageView],
    ) -> Result<()> {
        let compiled = self;
        let current = (frame_index % 2) as usize;
        for (index, resolved) in resolved.iter_mut().enumerate() {
            *resolved = match physical(compiled, imports, index, current) {
                Physical::Image(image) => Resolved::image(image),
                Physical::Buffer(buffer) => Resolved::buffer(buffer),
                Physical::None => Resolved::None,
            };
        }
        for (slot, &(resource, mips)) in compiled.view_ranges.iter().enumerate() {
            range_views[slot] = match physical(compiled, imports, resource as usize, current) {
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

/// Checks declared mip ranges against the mips images will have: created images at the
/// current output extent (full chains follow it), imported images as imported.
pub(crate) fn check_mip_ranges(
    decl: &GraphDecl,
    imports: &HashMap<String, Import>,
    output: vk::Extent2D,
) -> Result<()> {
    let base_of = |resource: u32| match decl.resources[resource as usize].origin {
        Origin::History { of } => of,
        _ => resource,
    };
    let mip_levels = |resource: u32| {
        let declared = &decl.resources[base_of(resource) as usize];
        match declared.origin {
            Origin::CreatedImage(desc) => desc.size.resolve(output).map(|extent| desc.resolve_mips(extent)),
            _ => match imports.get(&declared.name).map(|import| &import.resource) {
                Some(ImportedResource::Image(image)) => Some(image.info().mip_levels),
                _ => None,
            },
        }
    };
    crate::compile::check_mip_ranges(decl, &mip_levels)
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
pub(crate) fn assign_range_views(decl: &mut GraphDecl) -> Vec<(u32, MipRange)> {
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

//! The physical resources of a freshly compiled graph: transient resources are made unbound
//! and bound into the memory blocks the aliasing plan shares out, double buffers are made or
//! taken over from the last compilation, and each resource's first barrier of a frame gets
//! its source.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use super::alias::{plan_aliasing, AliasItem, AliasPlan};
use super::compiled::{Backing, Compiled};
use super::entry::entry_sources;
use super::history::{HistoryKey, KeptHistory};
use crate::compile::{CompiledGraph, CompiledResource, GraphDecl, ImageDesc, ImageSize, Origin, Residency};
use crate::device::GpuDevice;
use crate::error::{GraphError, Result};
use crate::memory::{GpuBuffer, GpuImage, ImageInfo, MemoryBlock};

impl Compiled {
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
        let mut made = Backings::new(device, decl.resource_count());
        for (index, compiled) in graph.resources.iter().enumerate() {
            let backing = made.create(&decl, index, compiled, output_extent, kept)?;
            made.backings.push(backing);
        }
        let Backings {
            mut backings, alias_items, alias_resources, mut history_reset, mut kept_layouts, poison, ..
        } = made;
        let alias = plan_aliasing(&alias_items);
        let blocks = bind_to_blocks(device, &decl, &alias, &alias_resources, &mut backings)?;
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
}

/// The backings made so far, one per resource in order, with what aliasing and history need
/// to know of them.
struct Backings<'device> {
    device: &'device Arc<GpuDevice>,
    backings: Vec<Backing>,
    /// The unbound transient resources, for the aliasing plan.
    alias_items: Vec<AliasItem>,
    /// Resource index of each alias item.
    alias_resources: Vec<u32>,
    /// Per resource: its history restarts from zero (its double buffer is new).
    history_reset: Vec<bool>,
    /// Per resource: the layout its kept previous copy was left in.
    kept_layouts: Vec<vk::ImageLayout>,
    /// Poison fills (under validation) need transient resources to be transfer destinations.
    poison: bool,
}

impl<'device> Backings<'device> {
    fn new(device: &'device Arc<GpuDevice>, resource_count: usize) -> Backings<'device> {
        Backings {
            device,
            backings: Vec::with_capacity(resource_count),
            alias_items: Vec::new(),
            alias_resources: Vec::new(),
            history_reset: vec![false; resource_count],
            kept_layouts: vec![vk::ImageLayout::UNDEFINED; resource_count],
            poison: device.validation_enabled(),
        }
    }

    /// The backing of resource `index`: an unbound transient image or buffer, a double
    /// buffer, or none (imported, last frame's version, unused).
    fn create(
        &mut self,
        decl: &GraphDecl,
        index: usize,
        compiled: &CompiledResource,
        output_extent: vk::Extent2D,
        kept: &mut HashMap<String, KeptHistory>,
    ) -> Result<Backing> {
        let name = decl.resources[index].name.as_str();
        let transient = compiled.residency == Residency::Transient;
        match (compiled.residency, decl.resources[index].origin) {
            (Residency::Transient | Residency::HistoryCurrent, Origin::CreatedImage(desc)) => {
                let mut info = image_info(decl, index, desc, compiled.image_usage, output_extent)?;
                if transient && self.poison {
                    info.usage |= vk::ImageUsageFlags::TRANSFER_DST;
                }
                if transient {
                    self.transient_image(index, name, info, compiled.lifetime)
                } else {
                    self.image_pair(index, name, info, kept)
                }
            }
            (Residency::Transient | Residency::HistoryCurrent, Origin::CreatedBuffer(desc)) => {
                let mut usage = compiled.buffer_usage;
                if transient && self.poison {
                    usage |= vk::BufferUsageFlags::TRANSFER_DST;
                }
                if transient {
                    self.transient_buffer(index, name, desc.size, usage, compiled.lifetime)
                } else {
                    self.buffer_pair(index, name, desc.size, usage, kept)
                }
            }
            _ => Ok(Backing::None),
        }
    }

    /// An unbound image, bound later to the block the aliasing plan gives it.
    fn transient_image(
        &mut self,
        index: usize,
        name: &str,
        info: ImageInfo,
        lifetime: Option<(usize, usize)>,
    ) -> Result<Backing> {
        let image = GpuImage::new_unbound(self.device, name, info)?;
        self.alias_items.push(alias_item(lifetime, image.requirements(), true));
        self.alias_resources.push(index as u32);
        Ok(Backing::Image(image))
    }

    /// An unbound buffer, bound later to the block the aliasing plan gives it.
    fn transient_buffer(
        &mut self,
        index: usize,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        lifetime: Option<(usize, usize)>,
    ) -> Result<Backing> {
        let buffer = GpuBuffer::new_unbound(self.device, name, size, usage)?;
        self.alias_items.push(alias_item(lifetime, buffer.requirements(), false));
        self.alias_resources.push(index as u32);
        Ok(Backing::Buffer(buffer))
    }

    /// The pair of images a double-buffered resource swaps each frame: kept from the last
    /// compilation when `info` is unchanged (with the layout its previous copy was left in),
    /// otherwise new, and then its history restarts from zero.
    fn image_pair(
        &mut self,
        index: usize,
        name: &str,
        info: ImageInfo,
        kept: &mut HashMap<String, KeptHistory>,
    ) -> Result<Backing> {
        let key = HistoryKey::Image(info);
        match kept.remove(name).filter(|history| history.key == key) {
            Some(history) => {
                self.kept_layouts[index] = history.previous_layout;
                Ok(history.backing)
            }
            None => {
                self.history_reset[index] = true;
                Ok(Backing::ImagePair([
                    GpuImage::new(self.device, &format!("{name} [0]"), info)?,
                    GpuImage::new(self.device, &format!("{name} [1]"), info)?,
                ]))
            }
        }
    }

    /// The pair of buffers a double-buffered resource swaps each frame (kept or new, as
    /// [`Backings::image_pair`]).
    fn buffer_pair(
        &mut self,
        index: usize,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        kept: &mut HashMap<String, KeptHistory>,
    ) -> Result<Backing> {
        let key = HistoryKey::Buffer { size, usage };
        match kept.remove(name).filter(|history| history.key == key) {
            Some(history) => Ok(history.backing),
            None => {
                self.history_reset[index] = true;
                let location = MemoryLocation::GpuOnly;
                Ok(Backing::BufferPair([
                    GpuBuffer::new(self.device, &format!("{name} [0]"), size, usage, location)?,
                    GpuBuffer::new(self.device, &format!("{name} [1]"), size, usage, location)?,
                ]))
            }
        }
    }
}

/// What created image `index` is made with at the output extent: a relative size of a zero
/// output extent is an error naming the pass that creates it.
fn image_info(
    decl: &GraphDecl,
    index: usize,
    desc: ImageDesc,
    usage: vk::ImageUsageFlags,
    output_extent: vk::Extent2D,
) -> Result<ImageInfo> {
    let declared = &decl.resources[index];
    let name = declared.name.as_str();
    let zero_output = output_extent.width == 0 || output_extent.height == 0;
    let extent = desc.size.resolve(output_extent).ok_or_else(|| match desc.size {
        ImageSize::Relative { .. } if zero_output => GraphError::ZeroOutputExtent {
            pass: declared.creators.first().map_or_else(String::new, |&pass| decl.passes[pass].name.clone()),
            resource: name.to_owned(),
        },
        _ => GraphError::InvalidDescription {
            resource: name.to_owned(),
            reason: "the size resolves to zero or is not finite",
        },
    })?;
    // Every image gets views; an image only copied, cleared or filled (transfers need none)
    // must still have a usage a view may be made for.
    let viewable = vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::COLOR_ATTACHMENT
        | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    let usage = if usage.intersects(viewable) { usage } else { usage | vk::ImageUsageFlags::SAMPLED };
    Ok(ImageInfo { format: desc.format, extent, mip_levels: desc.resolve_mips(extent), usage })
}

/// Makes the memory blocks of the aliasing plan and binds each block's occupants to it.
fn bind_to_blocks(
    device: &Arc<GpuDevice>,
    decl: &GraphDecl,
    alias: &AliasPlan,
    alias_resources: &[u32],
    backings: &mut [Backing],
) -> Result<Vec<Arc<MemoryBlock>>> {
    let mut blocks = Vec::with_capacity(alias.blocks.len());
    for (block_index, block) in alias.blocks.iter().enumerate() {
        let requirements =
            vk::MemoryRequirements { size: block.size, alignment: block.alignment, memory_type_bits: block.type_bits };
        let name = format!("transient block {block_index}");
        let memory = Arc::new(MemoryBlock::new(device, &name, requirements, MemoryLocation::GpuOnly, !block.is_image)?);
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
    Ok(blocks)
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

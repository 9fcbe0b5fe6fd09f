//! The compiled graph with its physical resources: what backs each resource (transient
//! memory shared by aliasing, double buffers for history, imports), and which physical
//! resource a pass sees in a given frame.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;

use super::alias::AliasPlan;
use super::entry::EntrySource;
use super::imports::{Import, ImportedResource};
use super::resolved::Resolved;
use crate::access::MipRange;
use crate::compile::{CompiledGraph, GraphDecl, Origin};
use crate::error::{GraphError, Result};
use crate::memory::{GpuBuffer, GpuImage, MemoryBlock};

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
    /// The transient resources' memory blocks, alive as long as the resources bound to them.
    pub(super) _blocks: Vec<Arc<MemoryBlock>>,
}

impl Compiled {
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

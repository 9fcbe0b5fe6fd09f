//! The declarations the passes make in `register` (filled through the `Registry`,
//! `registry.rs`): named resources (created, imported or last frame's version), each pass's
//! accesses, and what the graph knows of each pass (owner, insertion point, site).

use std::collections::HashMap;

use ash::vk;

use super::desc::{AttachmentLoad, BufferDesc, ImageDesc, ResourceKind};
use super::owner::Owner;
use crate::access::{Access, MipRange};

/// Where a declared resource comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Origin {
    /// Only referred to so far; compile fails unless it is imported.
    Referenced,
    /// Created by the graph from a description.
    CreatedImage(ImageDesc),
    /// Created by the graph from a description.
    CreatedBuffer(BufferDesc),
    /// Last frame's version of resource `of`.
    History { of: u32 },
}

/// One named resource of the graph.
#[derive(Clone, Debug)]
pub(crate) struct ResourceDecl {
    pub(crate) name: String,
    pub(crate) kind: ResourceKind,
    pub(crate) origin: Origin,
    /// The first pass that mentioned the resource (for error messages).
    pub(crate) first_user: usize,
    /// Number of creations (more than one is an error).
    pub(crate) creations: u32,
    /// The passes that create it, in declaration order.
    pub(crate) creators: Vec<usize>,
    /// Whether some pass needs it: it created it or referred to it other than with
    /// [`Registry::optional_image`] / [`Registry::optional_buffer`]. A resource that no pass
    /// needs and nobody creates or imports is absent: the accesses to it are dropped.
    pub(crate) required: bool,
}

/// One declared access of a pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AccessDecl {
    pub(crate) resource: u32,
    pub(crate) access: Access,
    pub(crate) load: Option<AttachmentLoad>,
    /// The mips it covers ([`MipRange::ALL`] for buffers and whole-image accesses).
    pub(crate) mips: MipRange,
    /// Index of its view among the graph's per-range views ([`NO_VIEW`] when the image's own
    /// views serve); set when the graph compiles.
    pub(crate) view: u32,
    /// The step of the pass it belongs to (see [`Registry::next_step`]).
    pub(crate) step: u32,
}

/// [`AccessDecl::view`] of an access without a per-range view.
pub(crate) const NO_VIEW: u32 = u32::MAX;

/// What one pass declared.
#[derive(Clone, Debug, Default)]
pub(crate) struct PassDecl {
    pub(crate) name: String,
    pub(crate) accesses: Vec<AccessDecl>,
    pub(crate) side_effect: bool,
    /// Not running when nobody reads its writes is expected (not logged).
    pub(crate) optional: bool,
    /// A problem found while registering (reported by the compiler).
    pub(crate) invalid: Option<(u32, &'static str)>,
    /// The last step declared (0 for a pass without steps).
    pub(crate) last_step: u32,
    /// Who added the pass (see [`Owner`]).
    pub(crate) owner: Owner,
    /// The insertion point it was placed at, if any: such a pass never moves to satisfy a
    /// read (see `bind_versions`).
    pub(crate) point: Option<String>,
    /// Where it was added (`file:line`), for error messages; empty when unknown.
    pub(crate) site: String,
    /// Engine resources the pass asked to write ([`Registry::claim_engine_write`]).
    pub(crate) claims: Vec<u32>,
}

/// What the graph knows of a pass besides its declarations: its owner, the point it was
/// placed at, where it was added.
#[derive(Clone, Debug, Default)]
pub(crate) struct PassMeta {
    pub(crate) owner: Owner,
    pub(crate) point: Option<String>,
    pub(crate) site: String,
}

/// All declarations of a graph, input of the compiler.
#[derive(Clone, Debug, Default)]
pub struct GraphDecl {
    pub(crate) passes: Vec<PassDecl>,
    pub(crate) resources: Vec<ResourceDecl>,
    names: HashMap<(String, bool), u32>,
    pub(super) output_extent: vk::Extent2D,
}

impl GraphDecl {
    /// Number of declared passes.
    pub fn pass_count(&self) -> usize {
        self.passes.len()
    }

    /// Number of declared resources.
    pub fn resource_count(&self) -> usize {
        self.resources.len()
    }

    /// Name of resource `index`.
    pub fn resource_name(&self, index: u32) -> &str {
        &self.resources[index as usize].name
    }

    /// Sets the extent [`Registry::output_extent`](super::Registry::output_extent) reports to
    /// passes declared afterwards ([`crate::RenderGraph`] sets its output extent; zero by
    /// default).
    pub fn set_output_extent(&mut self, extent: vk::Extent2D) {
        self.output_extent = extent;
    }

    /// Whether a resource of this name is created by some pass (a name as passes spell it,
    /// not a history version).
    pub(crate) fn creates(&self, name: &str) -> bool {
        self.names.get(&(name.to_owned(), false)).is_some_and(|&index| self.resources[index as usize].creations > 0)
    }

    /// Drops every access to a resource no pass needs ([`ResourceDecl::required`]) that
    /// nobody creates and `is_imported` does not know: what an optional reference to a
    /// resource absent this frame leaves. Returns how many accesses were dropped.
    pub(crate) fn drop_absent(&mut self, is_imported: &dyn Fn(&str, ResourceKind) -> bool) -> usize {
        let absent: Vec<bool> = self
            .resources
            .iter()
            .map(|resource| {
                let base_absent = !resource.required && resource.creations == 0;
                base_absent && !is_imported(&resource.name, resource.kind)
            })
            .collect();
        let mut dropped = 0;
        for pass in &mut self.passes {
            let before = pass.accesses.len();
            pass.accesses.retain(|access| !absent[access.resource as usize]);
            dropped += before - pass.accesses.len();
        }
        dropped
    }

    pub(super) fn intern(&mut self, name: &str, kind: ResourceKind, history: bool, pass: usize) -> u32 {
        if let Some(&index) = self.names.get(&(name.to_owned(), history)) {
            return index;
        }
        let index = self.resources.len() as u32;
        let display = if history { format!("{name} (previous frame)") } else { name.to_owned() };
        self.resources.push(ResourceDecl {
            name: display,
            kind,
            origin: Origin::Referenced,
            first_user: pass,
            creations: 0,
            creators: Vec::new(),
            required: false,
        });
        self.names.insert((name.to_owned(), history), index);
        index
    }
}

//! The graph compiler: validates declarations, binds every read to the version of its
//! resource written before it in declaration order, orders passes by the dependencies that
//! follow (declaration order breaks ties), reports cycles, culls passes whose results nobody reads,
//! and computes each resource's lifetime and usage. Barriers are planned in `barriers.rs`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ash::vk;

use crate::barriers::{plan_barriers, BarrierPlan};
use crate::error::{GraphError, Result};
use crate::registry::{AttachmentLoad, GraphDecl, Origin, ResourceKind};

/// How a resource lives in the compiled graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    /// Not used by any pass that runs.
    Unused,
    /// Created by the graph, alive only during its lifetime in the frame; may share memory.
    Transient,
    /// Created by the graph and double-buffered because some pass reads last frame's version.
    HistoryCurrent,
    /// Last frame's version of a `HistoryCurrent` resource.
    HistoryPrevious,
    /// Owned outside the graph.
    Imported,
}

/// Per-resource results of compilation.
#[derive(Clone, Debug)]
pub struct CompiledResource {
    /// How it lives.
    pub residency: Residency,
    /// First and last position (in execution order) of the passes using it.
    pub lifetime: Option<(usize, usize)>,
    /// Image usage collected from every access.
    pub image_usage: vk::ImageUsageFlags,
    /// Buffer usage collected from every access.
    pub buffer_usage: vk::BufferUsageFlags,
}

/// The result of compiling a [`GraphDecl`].
#[derive(Clone, Debug)]
pub struct CompiledGraph {
    /// Declared pass indices in execution order (culled passes left out).
    pub order: Vec<usize>,
    /// Declared pass indices that do not run.
    pub culled: Vec<usize>,
    /// Per resource.
    pub resources: Vec<CompiledResource>,
    /// The barriers before each pass, and each resource's entry and final states.
    pub barriers: BarrierPlan,
}

/// Compiles declarations. `is_imported(name, kind)` tells which names the graph imports.
pub fn compile(decl: &GraphDecl, is_imported: &dyn Fn(&str, ResourceKind) -> bool) -> Result<CompiledGraph> {
    validate(decl, is_imported)?;
    let pass_count = decl.passes.len();
    let resource_count = decl.resources.len();

    // Writers of each resource in declaration order.
    let mut writers: Vec<Vec<usize>> = vec![Vec::new(); resource_count];
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        for access in &pass.accesses {
            // A pass writing several mips of one image is one writer.
            let writers = &mut writers[access.resource as usize];
            if access.access.is_write() && writers.last() != Some(&pass_index) {
                writers.push(pass_index);
            }
        }
    }

    // Dependency edges from versions in declaration order (see `bind_versions`). History
    // reads add no edge (they read last frame's version).
    let versions = bind_versions(decl, &writers);
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); pass_count];
    let mut predecessor_count = vec![0_usize; pass_count];
    for &(from, to) in &versions.edges {
        if from != to && !successors[from].contains(&to) {
            successors[from].push(to);
            predecessor_count[to] += 1;
        }
    }

    let full_order = topological_order(decl, &successors, predecessor_count)?;
    let kept = kept_passes(decl, &writers, &versions.read_version, is_imported);
    let order: Vec<usize> = full_order.iter().copied().filter(|&pass| kept[pass]).collect();
    let culled: Vec<usize> = (0..pass_count).filter(|&pass| !kept[pass]).collect();

    let mut resources: Vec<CompiledResource> = decl
        .resources
        .iter()
        .map(|_| CompiledResource {
            residency: Residency::Unused,
            lifetime: None,
            image_usage: vk::ImageUsageFlags::empty(),
            buffer_usage: vk::BufferUsageFlags::empty(),
        })
        .collect();
    for (position, &pass_index) in order.iter().enumerate() {
        for access in &decl.passes[pass_index].accesses {
            let resource = &mut resources[access.resource as usize];
            resource.lifetime = Some(match resource.lifetime {
                None => (position, position),
                Some((first, _)) => (first, position),
            });
            resource.image_usage |= access.access.image_usage();
            resource.buffer_usage |= access.access.buffer_usage();
        }
    }
    for (index, declared) in decl.resources.iter().enumerate() {
        if resources[index].lifetime.is_none() {
            continue;
        }
        resources[index].residency = match declared.origin {
            Origin::History { of } => {
                resources[of as usize].residency = Residency::HistoryCurrent;
                // The first frame clears last frame's version.
                resources[index].image_usage |= vk::ImageUsageFlags::TRANSFER_DST;
                resources[index].buffer_usage |= vk::BufferUsageFlags::TRANSFER_DST;
                Residency::HistoryPrevious
            }
            _ if is_imported(&declared.name, declared.kind) => Residency::Imported,
            _ if resources[index].residency == Residency::HistoryCurrent => Residency::HistoryCurrent,
            _ => Residency::Transient,
        };
    }
    // Both copies of a double-buffered resource serve as current and previous: same usage.
    for (index, declared) in decl.resources.iter().enumerate() {
        if let (Origin::History { of }, Some(_)) = (declared.origin, resources[index].lifetime) {
            let (image, buffer) = (
                resources[index].image_usage | resources[of as usize].image_usage,
                resources[index].buffer_usage | resources[of as usize].buffer_usage,
            );
            for target in [index, of as usize] {
                resources[target].image_usage = image;
                resources[target].buffer_usage = buffer;
            }
        }
    }
    // Images whose contents outlive the frame end it in one layout, whatever their mips did.
    let keep_layout: Vec<bool> = resources
        .iter()
        .map(|resource| matches!(resource.residency, Residency::Imported | Residency::HistoryCurrent))
        .collect();
    let barriers = plan_barriers(decl, &order, &keep_layout);
    Ok(CompiledGraph { order, culled, resources, barriers })
}

/// Checks every declared mip range against `mip_levels(resource)` (`None`: not known yet).
pub(crate) fn check_mip_ranges(decl: &GraphDecl, mip_levels: &dyn Fn(u32) -> Option<u32>) -> Result<()> {
    for pass in &decl.passes {
        for access in pass.accesses.iter().filter(|access| !access.mips.is_all()) {
            let Some(levels) = mip_levels(access.resource) else { continue };
            if !access.mips.fits(levels) {
                return Err(GraphError::MipRangeOutOfBounds {
                    pass: pass.name.clone(),
                    resource: decl.resource_name(access.resource).to_owned(),
                    base: access.mips.base,
                    count: access.mips.count,
                    mip_levels: levels,
                });
            }
        }
    }
    Ok(())
}

/// The mip count of a created image whose description fixes it (not a full chain).
fn declared_mip_levels(decl: &GraphDecl, resource: u32) -> Option<u32> {
    match decl.resources[resource as usize].origin {
        Origin::CreatedImage(desc) if desc.mip_levels != crate::registry::ImageDesc::FULL_MIP_CHAIN => {
            Some(desc.mip_levels)
        }
        Origin::History { of } => declared_mip_levels(decl, of),
        _ => None,
    }
}

fn validate(decl: &GraphDecl, is_imported: &dyn Fn(&str, ResourceKind) -> bool) -> Result<()> {
    for pass in &decl.passes {
        if let Some((resource, reason)) = pass.invalid {
            return Err(GraphError::InvalidAccess {
                pass: pass.name.clone(),
                resource: decl.resource_name(resource).to_owned(),
                reason,
            });
        }
    }
    for (index, pass) in decl.passes.iter().enumerate() {
        if decl.passes[..index].iter().any(|earlier| earlier.name == pass.name) {
            return Err(GraphError::DuplicatePass(pass.name.clone()));
        }
    }
    for resource in &decl.resources {
        let imported = is_imported(&resource.name, resource.kind);
        if resource.creations > 1 || (resource.creations == 1 && imported) {
            return Err(GraphError::DuplicateResource {
                resource: resource.name.clone(),
                passes: resource.creators.iter().map(|&pass| decl.passes[pass].name.clone()).collect(),
                imported,
            });
        }
        if resource.origin == Origin::Referenced && !imported {
            return Err(GraphError::MissingResource {
                pass: decl.passes[resource.first_user].name.clone(),
                resource: resource.name.clone(),
                nearest: None,
            });
        }
        if let Origin::History { of } = resource.origin {
            let base = &decl.resources[of as usize];
            if base.creations == 0 {
                return Err(GraphError::InvalidAccess {
                    pass: decl.passes[resource.first_user].name.clone(),
                    resource: base.name.clone(),
                    reason: "last frame's version is kept only for resources the graph creates",
                });
            }
        }
    }
    let written: Vec<bool> = {
        let mut written = vec![false; decl.resources.len()];
        for pass in &decl.passes {
            for access in pass.accesses.iter().filter(|access| access.access.is_write()) {
                written[access.resource as usize] = true;
            }
        }
        written
    };
    for pass in &decl.passes {
        for access in &pass.accesses {
            let resource = &decl.resources[access.resource as usize];
            let source = match resource.origin {
                Origin::History { of } => of,
                _ => access.resource,
            };
            let source_resource = &decl.resources[source as usize];
            let created = source_resource.creations == 1;
            let reads = access.access.is_read() && !access.access.is_write();
            let is_history = matches!(resource.origin, Origin::History { .. });
            if (reads || is_history) && created && !written[source as usize] {
                return Err(GraphError::ReadWithoutWriter {
                    pass: pass.name.clone(),
                    resource: source_resource.name.clone(),
                });
            }
            if is_history && access.access.is_write() {
                return Err(GraphError::InvalidAccess {
                    pass: pass.name.clone(),
                    resource: resource.name.clone(),
                    reason: "last frame's version is read-only",
                });
            }
        }
    }
    check_mip_ranges(decl, &|resource| declared_mip_levels(decl, resource))
}

/// Kahn's algorithm; among ready passes the earliest declared goes first.
fn topological_order(
    decl: &GraphDecl,
    successors: &[Vec<usize>],
    mut predecessor_count: Vec<usize>,
) -> Result<Vec<usize>> {
    let pass_count = successors.len();
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..pass_count).filter(|&pass| predecessor_count[pass] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(pass_count);
    while let Some(Reverse(pass)) = ready.pop() {
        order.push(pass);
        for &next in &successors[pass] {
            predecessor_count[next] -= 1;
            if predecessor_count[next] == 0 {
                ready.push(Reverse(next));
            }
        }
    }
    if order.len() == pass_count {
        return Ok(order);
    }
    Err(GraphError::Cycle(find_cycle(decl, successors, &predecessor_count)))
}

/// Names the passes of one cycle among the passes Kahn's algorithm could not order.
fn find_cycle(decl: &GraphDecl, successors: &[Vec<usize>], remaining: &[usize]) -> Vec<String> {
    let stuck = |pass: usize| remaining[pass] > 0;
    let Some(start) = (0..successors.len()).find(|&pass| stuck(pass)) else {
        return Vec::new();
    };
    // Walk forward through stuck passes: every stuck pass has a stuck successor or lies
    // upstream of a cycle, so a walk from a pass on a cycle returns to a visited pass.
    let mut position_of = vec![usize::MAX; successors.len()];
    let mut path = Vec::new();
    let mut current = start;
    loop {
        if position_of[current] != usize::MAX {
            let mut names: Vec<String> =
                path[position_of[current]..].iter().map(|&pass: &usize| decl.passes[pass].name.clone()).collect();
            names.push(decl.passes[current].name.clone());
            return names;
        }
        position_of[current] = path.len();
        path.push(current);
        match successors[current].iter().copied().find(|&next| stuck(next)) {
            Some(next) => current = next,
            None => return path.iter().map(|&pass| decl.passes[pass].name.clone()).collect(),
        }
    }
}

/// A pass runs when it has a side effect, writes an imported resource, or writes a version
/// that a running pass reads (including last frame's version, written by every writer). A
/// read of version `v` keeps the writers of versions up to `v`.
fn kept_passes(
    decl: &GraphDecl,
    writers: &[Vec<usize>],
    read_version: &[Vec<Option<usize>>],
    is_imported: &dyn Fn(&str, ResourceKind) -> bool,
) -> Vec<bool> {
    let mut kept = vec![false; decl.passes.len()];
    let mut work = Vec::new();
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        let writes_import = pass.accesses.iter().any(|access| {
            let resource = &decl.resources[access.resource as usize];
            access.access.is_write() && is_imported(&resource.name, resource.kind)
        });
        if pass.side_effect || writes_import {
            kept[pass_index] = true;
            work.push(pass_index);
        }
    }
    while let Some(pass_index) = work.pop() {
        for (slot, access) in decl.passes[pass_index].accesses.iter().enumerate() {
            let (source, last_writer) = match decl.resources[access.resource as usize].origin {
                Origin::History { of } => (of, writers[of as usize].len()),
                _ => match read_version[pass_index][slot] {
                    Some(version) => (access.resource, version + 1),
                    None => continue,
                },
            };
            for &writer in &writers[source as usize][..last_writer] {
                if !kept[writer] {
                    kept[writer] = true;
                    work.push(writer);
                }
            }
        }
    }
    kept
}

/// How declaration order binds reads to versions.
struct Versions {
    /// Must-run-before pairs of passes.
    edges: Vec<(usize, usize)>,
    /// Per pass and declared access: the index (into the resource's writers) of the write
    /// whose result the access reads, or `None` when it reads nothing of this frame.
    read_version: Vec<Vec<Option<usize>>>,
}

/// Binds every read to a version of its resource by declaration order: each write makes a
/// new version, and a read sees the version written last *before* it in declaration order
/// (a reader declared before every writer sees the first version). Then:
/// - the writer of the version read runs before the reader (read after write);
/// - every reader of a version runs before the write that replaces it (write after read);
/// - writes of one resource run in declaration order (write after write).
fn bind_versions(decl: &GraphDecl, writers: &[Vec<usize>]) -> Versions {
    let mut edges = Vec::new();
    let mut read_version: Vec<Vec<Option<usize>>> =
        decl.passes.iter().map(|pass| vec![None; pass.accesses.len()]).collect();
    // Per resource: writes seen so far and the readers of the current version.
    let mut written = vec![0_usize; decl.resources.len()];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); decl.resources.len()];
    // Readers declared before the first writer read the first version.
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        let is_history = |resource: usize| matches!(decl.resources[resource].origin, Origin::History { .. });
        // Reads first: a pass that reads one mip of an image and writes another reads the
        // version before its own write.
        for (slot, access) in pass.accesses.iter().enumerate() {
            let resource = access.resource as usize;
            let reads = access.access.is_read() || access.load == Some(AttachmentLoad::Load);
            if is_history(resource) || !reads || writers[resource].is_empty() {
                continue;
            }
            let version = written[resource].saturating_sub(1);
            read_version[pass_index][slot] = Some(version);
            edges.push((writers[resource][version], pass_index));
            if !access.access.is_write() {
                readers[resource].push(pass_index);
            }
        }
        for (slot, access) in pass.accesses.iter().enumerate() {
            let resource = access.resource as usize;
            let written_before = pass.accesses[..slot]
                .iter()
                .any(|earlier| earlier.resource == access.resource && earlier.access.is_write());
            if is_history(resource) || !access.access.is_write() || written_before {
                continue;
            }
            if let Some(&previous) = written[resource].checked_sub(1).and_then(|last| writers[resource].get(last)) {
                edges.push((previous, pass_index));
            }
            if written[resource] > 0 {
                for &reader in &readers[resource] {
                    edges.push((reader, pass_index));
                }
                readers[resource].clear();
            }
            written[resource] += 1;
        }
    }
    Versions { edges, read_version }
}

impl CompiledGraph {
    /// Names of the passes in execution order.
    pub fn order_names<'decl>(&self, decl: &'decl GraphDecl) -> Vec<&'decl str> {
        self.order.iter().map(|&pass| decl.passes[pass].name.as_str()).collect()
    }

    /// Names of the culled passes.
    pub fn culled_names<'decl>(&self, decl: &'decl GraphDecl) -> Vec<&'decl str> {
        self.culled.iter().map(|&pass| decl.passes[pass].name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{MipRange, ShaderStage};
    use crate::registry::{BufferDesc, ImageDesc, ImageHandle, ImageSize, Registry};

    const COMPUTE: ShaderStage = ShaderStage::Compute;

    fn no_imports(_: &str, _: ResourceKind) -> bool {
        false
    }

    #[test]
    fn readers_run_after_writers_declared_later() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("consumer", |registry| {
            let data = registry.buffer("data");
            registry.read_storage_buffer(data, COMPUTE);
            registry.side_effect();
        });
        decl.declare_pass("producer", |registry| {
            let data = registry.create_buffer("data", BufferDesc { size: 64 });
            registry.write_storage_buffer(data, COMPUTE);
        });
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["producer", "consumer"]);
    }

    #[test]
    fn a_reader_sees_the_version_written_before_it_not_a_later_modification() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("write", |registry| {
            let data = registry.create_buffer("data", BufferDesc { size: 64 });
            registry.write_storage_buffer(data, COMPUTE);
        });
        decl.declare_pass("read", |registry| {
            let data = registry.buffer("data");
            registry.read_storage_buffer(data, COMPUTE);
            registry.side_effect();
        });
        decl.declare_pass("modify", |registry| {
            let data = registry.buffer("data");
            registry.read_write_storage_buffer(data, COMPUTE);
            registry.side_effect();
        });
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["write", "read", "modify"], "the reader must run before the modify");
    }

    #[test]
    fn a_modification_nobody_reads_is_culled_and_readers_keep_only_earlier_versions() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("write", |registry| {
            let data = registry.create_buffer("data", BufferDesc { size: 64 });
            registry.write_storage_buffer(data, COMPUTE);
        });
        decl.declare_pass("read", |registry| {
            let data = registry.buffer("data");
            registry.read_storage_buffer(data, COMPUTE);
            registry.side_effect();
        });
        decl.declare_pass("modify", |registry| {
            let data = registry.buffer("data");
            registry.read_write_storage_buffer(data, COMPUTE);
        });
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["write", "read"]);
        assert_eq!(compiled.culled_names(&decl), ["modify"]);
    }

    #[test]
    fn duplicate_pass_names_and_resources_name_the_passes() {
        let mut decl = GraphDecl::default();
        for _ in 0..2 {
            decl.declare_pass("twin", |registry| registry.side_effect());
        }
        let error = compile(&decl, &no_imports).expect_err("names are unique");
        assert!(matches!(&error, GraphError::DuplicatePass(name) if name == "twin"), "{error}");

        let mut decl = GraphDecl::default();
        for name in ["first", "second"] {
            decl.declare_pass(name, |registry| {
                let data = registry.create_buffer("data", BufferDesc { size: 4 });
                registry.write_storage_buffer(data, COMPUTE);
                registry.side_effect();
            });
        }
        let error = compile(&decl, &no_imports).expect_err("one creator per resource");
        assert!(
            matches!(&error, GraphError::DuplicateResource { resource, passes, imported: false }
                if resource == "data" && passes == &["first", "second"]),
            "{error}"
        );
        let error = compile(&decl, &|name, _| name == "data").expect_err("created and imported");
        assert!(matches!(&error, GraphError::DuplicateResource { imported: true, .. }), "{error}");
    }

    #[test]
    fn declaration_order_breaks_ties() {
        let mut decl = GraphDecl::default();
        for name in ["c", "a", "b"] {
            decl.declare_pass(name, |registry| registry.side_effect());
        }
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["c", "a", "b"]);
    }

    #[test]
    fn cycle_names_the_passes() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("first", |registry| {
            let a = registry.create_buffer("a", BufferDesc { size: 4 });
            registry.write_storage_buffer(a, COMPUTE);
            let b = registry.buffer("b");
            registry.read_storage_buffer(b, COMPUTE);
            registry.side_effect();
        });
        decl.declare_pass("second", |registry| {
            let b = registry.create_buffer("b", BufferDesc { size: 4 });
            registry.write_storage_buffer(b, COMPUTE);
            let a = registry.buffer("a");
            registry.read_storage_buffer(a, COMPUTE);
        });
        match compile(&decl, &no_imports) {
            Err(GraphError::Cycle(names)) => {
                assert!(names.contains(&"first".to_owned()) && names.contains(&"second".to_owned()), "{names:?}");
                assert_eq!(names.first(), names.last(), "a cycle ends where it starts: {names:?}");
            }
            other => panic!("expected a cycle error, got {other:?}"),
        }
    }

    #[test]
    fn unread_outputs_are_culled_with_their_producers() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("unused", |registry| {
            let scratch = registry.create_buffer("scratch", BufferDesc { size: 4 });
            registry.write_storage_buffer(scratch, COMPUTE);
        });
        decl.declare_pass("output", |registry| registry.side_effect());
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["output"]);
        assert_eq!(compiled.culled_names(&decl), ["unused"]);
        assert_eq!(compiled.resources[0].residency, Residency::Unused);
    }

    #[test]
    fn missing_and_unwritten_resources_are_errors() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("reader", |registry| {
            let ghost = registry.buffer("ghost");
            registry.read_storage_buffer(ghost, COMPUTE);
        });
        let error = compile(&decl, &no_imports).expect_err("ghost is never declared");
        assert!(
            matches!(&error, GraphError::MissingResource { pass, resource, .. } if pass == "reader" && resource == "ghost")
        );

        let mut decl = GraphDecl::default();
        decl.declare_pass("reader", |registry| {
            let lonely = registry.create_buffer("lonely", BufferDesc { size: 4 });
            registry.read_storage_buffer(lonely, COMPUTE);
        });
        let error = compile(&decl, &no_imports).expect_err("lonely is never written");
        assert!(matches!(&error, GraphError::ReadWithoutWriter { resource, .. } if resource == "lonely"), "{error}");
    }

    #[test]
    fn history_read_keeps_the_writer_without_an_edge() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("hiz", |registry| {
            let previous = registry.history_buffer("depth");
            registry.read_storage_buffer(previous, COMPUTE);
            registry.side_effect();
        });
        decl.declare_pass("prepass", |registry| {
            let depth = registry.create_buffer("depth", BufferDesc { size: 4 });
            registry.write_storage_buffer(depth, COMPUTE);
        });
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["hiz", "prepass"], "history reads do not wait for this frame");
        assert_eq!(compiled.resources[1].residency, Residency::HistoryCurrent);
        assert_eq!(compiled.resources[0].residency, Residency::HistoryPrevious);
    }

    fn pyramid_pass(decl: &mut GraphDecl, name: &str, register: impl FnOnce(&mut Registry<'_>, ImageHandle)) {
        decl.declare_pass(name, |registry| {
            let pyramid = registry.image("pyramid");
            register(registry, pyramid);
        });
    }

    fn pyramid_decl(mips: u32) -> GraphDecl {
        let mut decl = GraphDecl::default();
        decl.declare_pass("create", |registry| {
            let desc = ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::Absolute { width: 16, height: 16 });
            let pyramid = registry.create_image("pyramid", desc.with_mips(mips));
            registry.write_storage_image(pyramid, COMPUTE);
        });
        decl
    }

    #[test]
    fn a_mip_range_past_the_image_is_a_named_error() {
        let mut decl = pyramid_decl(4);
        pyramid_pass(&mut decl, "reduce", |registry, pyramid| {
            registry.read_storage_image_mip(pyramid, 2, COMPUTE);
            registry.write_storage_image_mip(pyramid, 4, COMPUTE);
            registry.side_effect();
        });
        let error = compile(&decl, &no_imports).expect_err("mip 4 of 4 mips");
        assert!(
            matches!(&error, GraphError::MipRangeOutOfBounds { pass, resource, base: 4, count: 1, mip_levels: 4 }
                if pass == "reduce" && resource == "pyramid"),
            "{error}"
        );

        let mut decl = pyramid_decl(4);
        pyramid_pass(&mut decl, "sample", |registry, pyramid| {
            registry.read_sampled_image_mips(pyramid, 1..6, COMPUTE);
            registry.side_effect();
        });
        let error = compile(&decl, &no_imports).expect_err("mips 1..6 of 4");
        assert_eq!(error.to_string(), "pass `sample` declares mips 1..6 of `pyramid`, which has 4 mips");
    }

    #[test]
    fn empty_and_conflicting_mip_declarations_are_named_errors() {
        let mut decl = pyramid_decl(4);
        pyramid_pass(&mut decl, "empty", |registry, pyramid| {
            registry.read_sampled_image_mips(pyramid, 2..2, COMPUTE);
            registry.side_effect();
        });
        let error = compile(&decl, &no_imports).expect_err("an empty range");
        assert!(
            matches!(&error, GraphError::InvalidAccess { pass, reason, .. }
            if pass == "empty" && reason.contains("empty")),
            "{error}"
        );

        let mut decl = pyramid_decl(4);
        pyramid_pass(&mut decl, "overlap", |registry, pyramid| {
            registry.read_sampled_image_mips(pyramid, 0..3, COMPUTE);
            registry.write_storage_image_mip(pyramid, 2, COMPUTE);
            registry.side_effect();
        });
        let error = compile(&decl, &no_imports).expect_err("mip 2 read and written");
        assert!(
            matches!(&error, GraphError::InvalidAccess { pass, resource, reason }
            if pass == "overlap" && resource == "pyramid" && reason.contains("overlapping mips")),
            "{error}"
        );

        let mut decl = pyramid_decl(4);
        pyramid_pass(&mut decl, "attach", |registry, pyramid| {
            registry.access_image_mips(pyramid, MipRange::level(1), crate::Access::ColorAttachment);
            registry.side_effect();
        });
        let error = compile(&decl, &no_imports).expect_err("attachments are whole images");
        assert!(matches!(&error, GraphError::InvalidAccess { .. }), "{error}");
    }

    #[test]
    fn a_chain_of_per_mip_passes_runs_in_declaration_order_and_feeds_the_reader() {
        let mut decl = pyramid_decl(4);
        for mip in 1..4 {
            pyramid_pass(&mut decl, &format!("reduce {mip}"), |registry, pyramid| {
                registry.write_storage_image_mip(pyramid, mip, COMPUTE);
                registry.read_storage_image_mip(pyramid, mip - 1, COMPUTE);
            });
        }
        pyramid_pass(&mut decl, "unread", |registry, pyramid| {
            registry.write_storage_image_mip(pyramid, 3, COMPUTE);
        });
        // Declared after `unread`: versions are per image, so it reads `unread`'s write too.
        pyramid_pass(&mut decl, "sample", |registry, pyramid| {
            registry.read_sampled_image_mips(pyramid, 0..4, COMPUTE);
            registry.side_effect();
        });
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.order_names(&decl), ["create", "reduce 1", "reduce 2", "reduce 3", "unread", "sample"]);
        let mut decl = pyramid_decl(4);
        pyramid_pass(&mut decl, "reduce 1", |registry, pyramid| {
            registry.read_storage_image_mip(pyramid, 0, COMPUTE);
            registry.write_storage_image_mip(pyramid, 1, COMPUTE);
        });
        let compiled = compile(&decl, &no_imports).expect("the graph is valid");
        assert_eq!(compiled.culled_names(&decl), ["create", "reduce 1"], "nobody reads the pyramid");
    }
}

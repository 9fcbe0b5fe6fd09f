//! The graph compiler: validates declarations (`validate.rs`), binds every read to the
//! version of its resource written before it in declaration order, orders passes by the
//! dependencies that follow and culls passes whose results nobody reads (`order.rs`),
//! computes each resource's lifetime, usage and residency, and plans the barriers
//! (`barriers.rs`).

use ash::vk;

use super::barriers::{plan_barriers, BarrierPlan};
use super::decl::{GraphDecl, Origin};
use super::desc::ResourceKind;
use super::order::{bind_versions, execution_order, kept_passes, writers_of};
use super::validate::validate;
use crate::error::Result;

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
    compile_shuffled(decl, is_imported, None)
}

/// [`compile`], with the passes that do not depend on each other in an order picked by a
/// generator seeded with `shuffle` instead of declaration order (see
/// [`crate::RenderGraph::shuffle_independent`]).
pub fn compile_shuffled(
    decl: &GraphDecl,
    is_imported: &dyn Fn(&str, ResourceKind) -> bool,
    shuffle: Option<u64>,
) -> Result<CompiledGraph> {
    validate(decl, is_imported)?;
    let writers = writers_of(decl);
    // Dependency edges from versions in declaration order (see `bind_versions`). History
    // reads add no edge (they read last frame's version).
    let versions = bind_versions(decl, &writers)?;
    let full_order = execution_order(decl, &versions.edges, shuffle)?;
    let kept = kept_passes(decl, &writers, &versions.read_version, is_imported);
    let order: Vec<usize> = full_order.iter().copied().filter(|&pass| kept[pass]).collect();
    let culled: Vec<usize> = (0..decl.passes.len()).filter(|&pass| !kept[pass]).collect();
    let resources = resource_lives(decl, &order, is_imported);
    // Images whose contents outlive the frame end it in one layout, whatever their mips did.
    let keep_layout: Vec<bool> = resources
        .iter()
        .map(|resource| matches!(resource.residency, Residency::Imported | Residency::HistoryCurrent))
        .collect();
    let barriers = plan_barriers(decl, &order, &keep_layout);
    Ok(CompiledGraph { order, culled, resources, barriers })
}

/// Each resource's lifetime and usage over the running passes `order`, and its residency.
fn resource_lives(
    decl: &GraphDecl,
    order: &[usize],
    is_imported: &dyn Fn(&str, ResourceKind) -> bool,
) -> Vec<CompiledResource> {
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
    resources
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
    use crate::access::{Access, MipRange, ShaderStage};
    use crate::compile::{BufferDesc, ImageDesc, ImageHandle, ImageSize, Registry};
    use crate::error::GraphError;

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
        assert!(matches!(&error, GraphError::DuplicatePass { name, .. } if name == "twin"), "{error}");

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
            registry.write_image_mips(pyramid, MipRange::level(1), Access::ColorAttachment);
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

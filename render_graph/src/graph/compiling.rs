//! Compiling a graph: the declarations of every pass with its owner and point, ownership
//! checked, the compiler's order (shuffled in the test mode), the resources allocated; a user
//! pass that does not compile is dropped with its group and the compile tried again.

use std::collections::HashMap;

use ash::vk;

use super::{AliasReport, DroppedPass, RenderGraph};
use crate::compile::{
    check_ownership, compile_shuffled, compiled_to_dot, engine_write_claims, GraphDecl, PassMeta, ResourceKind,
    SyncState,
};
use crate::error::{nearest_name, GraphError, Result};
use crate::execute::{GraphStats, PassStats};
use crate::resources::{assign_range_views, check_mip_ranges, Compiled, Import, ImportedResource, Resolved};

impl RenderGraph {
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
    /// when resources must be recreated. A user pass ([`Owner::User`](crate::Owner::User)) that does not compile
    /// is dropped with its group (logged, [`RenderGraph::dropped_passes`]) and the rest
    /// compiles; an error of the engine's own passes is returned.
    pub fn compile(&mut self) -> Result<()> {
        if !self.dirty && self.compiled.is_some() {
            return Ok(());
        }
        runtime::profile_zone!("render graph compile");
        loop {
            let (error, decl) = match self.compile_once() {
                Ok(()) => return Ok(()),
                Err(failure) => *failure,
            };
            let Some(culprit) = self.user_culprit(&error, decl.as_ref()) else { return Err(error) };
            let origin = self.origins[culprit].clone();
            self.drop_group(Some(culprit), &origin, None, error);
        }
    }

    /// The declarations of every pass, with what the graph knows of each (owner, point,
    /// site) and the accesses to absent optional resources dropped.
    fn declare(&mut self) -> GraphDecl {
        let mut decl = GraphDecl::default();
        decl.set_output_extent(self.output_extent);
        for (pass, origin) in self.passes.iter_mut().zip(&self.origins) {
            let name = pass.name().to_owned();
            let meta = PassMeta { owner: origin.owner, point: origin.point.clone(), site: origin.location() };
            decl.declare_pass_of(&name, meta, |registry| pass.register(registry));
        }
        let imports = &self.imports;
        decl.drop_absent(&|name, kind| is_imported(imports, name, kind));
        decl
    }

    /// One try at compiling: the error, with the declarations when they were made.
    fn compile_once(&mut self) -> std::result::Result<(), Box<(GraphError, Option<GraphDecl>)>> {
        let mut decl = self.declare();
        let imports = &self.imports;
        let import_owners = &self.import_owners;
        let shared = &self.shared;
        let checked = check_ownership(&decl, &|name| import_owners.get(name).copied(), &|name| {
            shared.iter().any(|open| open == name)
        });
        if let Err(error) = checked {
            return Err(Box::new((error, Some(decl))));
        }
        let graph = match compile_shuffled(&decl, &|name, kind| is_imported(imports, name, kind), self.shuffle) {
            Ok(graph) => graph,
            Err(error) => return Err(Box::new((suggest_resource(error, &decl, imports), Some(decl)))),
        };
        if let Err(error) = check_mip_ranges(&decl, &self.imports, self.output_extent) {
            return Err(Box::new((error, Some(decl))));
        }
        let view_ranges = assign_range_views(&mut decl);
        // Old resources may be in use by frames in flight; so may the dropped passes.
        self.executor.wait_all(&self.device, &mut self.stats).map_err(|error| Box::new((error, None)))?;
        self.retired.clear();
        let mut kept = self.compiled.take().map(Compiled::into_history).unwrap_or_default();
        let mut compiled = Compiled::allocate(&self.device, self.output_extent, decl, graph, &mut kept)
            .map_err(|error| Box::new((error, None)))?;
        compiled.view_ranges = view_ranges;
        self.resolved = vec![Resolved::None; compiled.decl.resource_count()];
        self.range_views = vec![vk::ImageView::null(); compiled.view_ranges.len()];
        self.executor.prepare_for(&self.device, &compiled).map_err(|error| Box::new((error, None)))?;
        let origins = &self.origins;
        self.stats = GraphStats {
            transient_bytes: compiled.transient_bytes,
            aliased_bytes_saved: compiled.alias.bytes_saved,
            passes: compiled
                .graph
                .order
                .iter()
                .map(|&pass| PassStats {
                    name: compiled.decl.passes[pass].name.clone(),
                    owner: origins[pass].owner,
                    ..PassStats::default()
                })
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
        self.zone_names.clear();
        self.log_unused_passes();
        self.log_claims();
        Ok(())
    }

    /// Logs, once each, the engine resources user passes claimed to write (the audit of
    /// [`crate::Registry::claim_engine_write`]).
    fn log_claims(&mut self) {
        let Some(compiled) = &self.compiled else { return };
        for (pass, site, resource) in engine_write_claims(&compiled.decl) {
            if self.logged_claims.iter().any(|(logged, claimed)| logged == pass && claimed == resource) {
                continue;
            }
            log::warn!(
                "render graph `{}`: user pass `{pass}` (added at {site}) writes the engine's `{resource}` \
                 (Registry::claim_engine_write)",
                self.name
            );
            self.logged_claims.push((pass.to_owned(), resource.to_owned()));
        }
    }

    /// The user passes dropped so far, in the order they were dropped, each with its group
    /// and error (see [`Owner`](crate::Owner)).
    pub fn dropped_passes(&self) -> &[DroppedPass] {
        &self.dropped
    }

    /// Orders the passes the graph considers independent (no dependency between them, in
    /// either direction) by a generator seeded with `seed` instead of declaration order, from
    /// the next compilation on (`None`: declaration order again). A test mode: a frame whose
    /// result changes with the seed, or that validation's synchronization checks fault,
    /// depends on an order it never declared. The environment variable
    /// [`SHUFFLE_ENV`](crate::SHUFFLE_ENV) sets a seed for every graph of the process.
    pub fn shuffle_independent(&mut self, seed: Option<u64>) {
        if seed != self.shuffle {
            self.shuffle = seed;
            self.dirty = true;
        }
    }

    /// Whether a resource named `name` exists in the frame as the graph stands: some pass
    /// creates it or it is imported. A host asks before adding passes that need it (one set
    /// of passes serving a frame with GPU culling and one without); a pass asks with
    /// [`crate::ExecuteContext::exists`] of an optional reference
    /// ([`crate::Registry::optional_image`]).
    pub fn resource_exists(&mut self, name: &str) -> bool {
        if self.imports.contains_key(name) {
            return true;
        }
        match &self.compiled {
            Some(compiled) if !self.dirty => {
                compiled.decl.resources.iter().any(|resource| resource.name == name && resource.creations > 0)
            }
            // The graph recompiles before its next frame anyway: registering now costs nothing
            // more than the declarations.
            _ => self.declare().creates(name),
        }
    }

    /// Logs, once per pass, each pass that does not run because nothing reads what it writes,
    /// unless it is [`crate::Registry::optional`]: usually a mistake (an output declared as a
    /// read, a reader added before its writer).
    fn log_unused_passes(&mut self) {
        let Some(compiled) = &self.compiled else { return };
        for name in compiled.graph.culled_names(&compiled.decl) {
            let optional = compiled.decl.passes.iter().any(|pass| pass.name == name && pass.optional);
            if optional || self.logged_unused.iter().any(|logged| logged == name) {
                continue;
            }
            log::warn!(
                "render graph `{}`: pass `{name}` does not run, since no pass reads what it writes and it has no \
                 side effect (declare what it writes, or Registry::side_effect if it must run)",
                self.name
            );
            self.logged_unused.push(name.to_owned());
        }
    }

    /// The compiled graph in Graphviz DOT: boxes for passes (dashed when culled, labelled
    /// with their position and barriers), ellipses for images, rectangles with rounded
    /// corners for buffers, and one edge per access (writes point at the resource).
    pub fn to_dot(&mut self) -> Result<String> {
        self.compile()?;
        let compiled = self.compiled.as_ref().expect("compile succeeded");
        Ok(compiled_to_dot(&compiled.decl, &compiled.graph))
    }
}

/// Whether `name` is imported as a resource of kind `kind`.
fn is_imported(imports: &HashMap<String, Import>, name: &str, kind: ResourceKind) -> bool {
    match imports.get(name).map(|import| &import.resource) {
        Some(ImportedResource::Image(_)) => kind == ResourceKind::Image,
        Some(ImportedResource::Buffer(_)) => kind == ResourceKind::Buffer,
        None => false,
    }
}

/// Adds the nearest created or imported name to a missing-resource error (a typo's fix).
fn suggest_resource(error: GraphError, decl: &GraphDecl, imports: &HashMap<String, Import>) -> GraphError {
    match error {
        GraphError::MissingResource { pass, resource, nearest: None } => {
            let created = decl.resources.iter().filter(|known| known.creations > 0).map(|known| known.name.as_str());
            let nearest = nearest_name(&resource, created.chain(imports.keys().map(String::as_str)));
            GraphError::MissingResource { pass, resource, nearest }
        }
        other => other,
    }
}

//! The render graph: passes, imports, compilation on change, and one frame's run (wait for
//! the frame slot, resolve this frame's physical resources, hand the rest to the executor).

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;
use runtime::profiling::ZoneSite;

use crate::compile::{compile, compiled_to_dot, GraphDecl, ResourceKind, SyncState};
use crate::device::GpuDevice;
use crate::error::{nearest_name, GraphError, Result};
use crate::execute::{Executor, Frame, FrameParams, GraphStats, Pass, PassStats, Typed, TypedPass};
use crate::memory::{GpuBuffer, GpuImage};
use crate::resources::{
    assign_range_views, check_mip_ranges, Compiled, Import, ImportedResource, PresentSync, Resolved,
};

/// Graphs made in the process, for their default names.
static GRAPHS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
/// Add passes with [`RenderGraph::add_typed_pass`], import outside resources by name, set the
/// frame's parameters ([`RenderGraph::set_param`]), then call
/// [`RenderGraph::execute_frame`] once per frame. The graph compiles on the first frame and
/// again only after it changes (a pass added, the output extent, an import's kind or an
/// imported image's mip count changed).
pub struct RenderGraph {
    device: Arc<GpuDevice>,
    passes: Vec<Box<dyn Pass>>,
    /// Per pass: its type and where it was added (its Tracy zones' source).
    pass_sites: Vec<ZoneSite>,
    /// Named places in the pass order, in order (see [`RenderGraph::add_insertion_point`]).
    points: Vec<InsertionPoint>,
    /// Passes already logged as not running (each is logged once per graph).
    logged_unused: Vec<String>,
    /// Per pass of the compiled graph (in declaration order): its Tracy zones' name,
    /// `graph: pass`, so that two graphs with a pass of the same name (a renderer and a
    /// reference render, say) give zones of distinct names. Empty until the graph compiles or
    /// after a rename (remade then).
    zone_names: Vec<String>,
    /// The graph's name (its Tracy GPU context's).
    name: String,
    output_extent: vk::Extent2D,
    imports: HashMap<String, Import>,
    dirty: bool,
    compiled: Option<Compiled>,
    compile_count: u64,
    executor: Executor,
    resolved: Vec<Resolved>,
    /// This frame's views of declared mip ranges (see `Compiled::view_ranges`).
    range_views: Vec<vk::ImageView>,
    frame_index: u64,
    stats: GraphStats,
    /// Set by [`RenderGraph::import_swapchain_image`] for the next frame only.
    present: Option<PresentSync>,
    /// The frame's parameters (see [`RenderGraph::set_param`]).
    params: FrameParams,
}

impl RenderGraph {
    /// Creates an empty graph whose relative sizes refer to `output_extent`.
    pub fn new(device: Arc<GpuDevice>, output_extent: vk::Extent2D) -> Result<RenderGraph> {
        let executor = Executor::new(&device)?;
        let number = GRAPHS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        Ok(RenderGraph {
            device,
            passes: Vec::new(),
            pass_sites: Vec::new(),
            points: Vec::new(),
            logged_unused: Vec::new(),
            zone_names: Vec::new(),
            name: format!("render graph {number}"),
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
            params: FrameParams::default(),
        })
    }

    /// The device the graph runs on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// Adds a [`TypedPass`](crate::TypedPass). Declaration order is the order of the program:
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
    /// [`GraphError::Cycle`](crate::GraphError::Cycle) naming the passes. Names must be unique
    /// ([`GraphError::DuplicatePass`](crate::GraphError::DuplicatePass)).
    #[track_caller]
    pub fn add_typed_pass<P: TypedPass>(&mut self, pass: P) {
        self.pass_sites.push(ZoneSite::caller(std::any::type_name::<P>()));
        self.passes.push(Box::new(Typed::new(pass)));
        self.dirty = true;
    }

    /// Adds an untyped [`Pass`] (for the rare pass that needs the untyped form; see
    /// [`RenderGraph::add_typed_pass`], whose rules of declaration order hold).
    #[track_caller]
    pub fn add_pass<P: Pass>(&mut self, pass: P) {
        self.pass_sites.push(ZoneSite::caller(std::any::type_name::<P>()));
        self.passes.push(Box::new(pass));
        self.dirty = true;
    }

    /// Adds a [`TypedPass`](crate::TypedPass) at insertion point `point` (see
    /// [`RenderGraph::add_pass_at`], which places an untyped pass the same way).
    #[track_caller]
    pub fn add_typed_pass_at<P: TypedPass>(&mut self, point: &str, pass: P) -> Result<()> {
        self.add_pass_at(point, Typed::new(pass))
    }

    /// Adds a named insertion point after the passes added so far: a place where passes can
    /// be put later with [`RenderGraph::add_typed_pass_at`], however many passes are appended after
    /// it meanwhile. An engine builds its frame with points between its passes (the renderer's
    /// are in `renderer::points`) so that a user's pass can run before, between or after them
    /// without rebuilding the frame. A point is not a pass: it costs nothing at run time.
    ///
    /// ```
    /// # fn main() -> render_graph::Result<()> {
    /// # let Some(device) = render_graph::testing::gpu_test_context() else { return Ok(()) };
    /// # struct Named(&'static str);
    /// # impl render_graph::TypedPass for Named {
    /// #     type Handles = ();
    /// #     fn name(&self) -> &str { self.0 }
    /// #     fn register(&mut self, registry: &mut render_graph::Registry) { registry.side_effect(); }
    /// # }
    /// let mut graph = render_graph::RenderGraph::new(device, render_graph::vk::Extent2D { width: 8, height: 8 })?;
    /// graph.add_typed_pass(Named("upload"));
    /// graph.add_insertion_point("after upload")?;
    /// graph.add_typed_pass(Named("draw"));
    /// graph.add_typed_pass_at("after upload", Named("animate"))?;
    /// assert_eq!(graph.execution_order()?, ["upload", "animate", "draw"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_insertion_point(&mut self, name: impl Into<String>) -> Result<()> {
        let name = name.into();
        if self.points.iter().any(|point| point.name == name) {
            return Err(GraphError::DuplicateInsertionPoint(name));
        }
        self.points.push(InsertionPoint { name, index: self.passes.len() });
        Ok(())
    }

    /// Adds an untyped [`Pass`] at insertion point `point`: after every pass added before the point
    /// (engine passes and earlier passes placed at this point or earlier points) and before
    /// every pass added after it. What the pass writes is seen by the passes after it in the
    /// same frame, as for [`RenderGraph::add_typed_pass`]'s declaration order. An unknown point is
    /// [`GraphError::UnknownInsertionPoint`], naming the points there are and the nearest.
    #[track_caller]
    pub fn add_pass_at<P: Pass>(&mut self, point: &str, pass: P) -> Result<()> {
        let Some(position) = self.points.iter().position(|known| known.name == point) else {
            let known: Vec<String> = self.points.iter().map(|known| known.name.clone()).collect();
            let nearest = nearest_name(point, known.iter().map(String::as_str));
            return Err(GraphError::UnknownInsertionPoint {
                pass: pass.name().to_owned(),
                point: point.to_owned(),
                known,
                nearest,
            });
        };
        let index = self.points[position].index;
        self.pass_sites.insert(index, ZoneSite::caller(std::any::type_name::<P>()));
        self.passes.insert(index, Box::new(pass));
        // This point and every later one now lie one pass further; earlier points (at the
        // same index or before) stay before the new pass.
        for later in &mut self.points[position..] {
            later.index += 1;
        }
        self.dirty = true;
        Ok(())
    }

    /// Removes the pass named `name` and returns it (`None` when there is none); the graph
    /// recompiles at its next frame, and insertion points keep their places among the others.
    pub fn remove_pass(&mut self, name: &str) -> Option<Box<dyn Pass>> {
        let index = self.passes.iter().position(|pass| pass.name() == name)?;
        self.pass_sites.remove(index);
        for point in &mut self.points {
            if point.index > index {
                point.index -= 1;
            }
        }
        self.dirty = true;
        Some(self.passes.remove(index))
    }

    /// The graph's insertion points, in order.
    pub fn insertion_points(&self) -> impl Iterator<Item = &str> {
        self.points.iter().map(|point| point.name.as_str())
    }

    /// Names the graph: the name of its Tracy GPU context (`render graph N` by default, N
    /// counting the graphs of the process), so that the contexts of two graphs (a renderer
    /// and a reference render, say) can be told apart, and the prefix of its passes' zone
    /// names (`graph: pass`, CPU and GPU). Zones take a new name from the next frame; the
    /// context keeps the name it was made with (at the first frame a Tracy client runs).
    pub fn set_name(&mut self, name: impl Into<String>) {
        self.name = name.into();
        self.zone_names.clear();
    }

    /// The graph's name (see [`RenderGraph::set_name`]).
    pub fn name(&self) -> &str {
        &self.name
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
    /// frame that leaves the image unused is an error ([`GraphError::InvalidDescription`](crate::GraphError::InvalidDescription)).
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

    /// Sets the frame parameter of type `T`: a value the host hands the passes (the camera,
    /// settings), which they read in `prepare` and `execute` with
    /// [`PrepareContext::param`](crate::PrepareContext::param) and
    /// [`ExecuteContext::param`](crate::ExecuteContext::param) (or `require_param`, which is
    /// [`GraphError::MissingParam`](crate::GraphError::MissingParam) naming the pass and the
    /// type when it was never set). One value per type: setting it again replaces the
    /// previous value in place (no allocation once a type was set), and it stays until
    /// replaced, for every later frame. An example is at
    /// [`ExecuteContext::require_param`](crate::ExecuteContext::require_param).
    pub fn set_param<T: Send + 'static>(&mut self, value: T) {
        self.params.set(value);
    }

    /// The frame parameter of type `T`, if one was set ([`RenderGraph::set_param`]).
    pub fn param<T: 'static>(&self) -> Option<&T> {
        self.params.get()
    }

    /// The frame parameter of type `T` to change in place (a large value the host rewrites
    /// each frame, without moving it), if one was set.
    pub fn param_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.params.get_mut()
    }

    /// Removes the frame parameter of type `T` and returns it: passes that require it fail
    /// their frames until it is set again.
    pub fn remove_param<T: 'static>(&mut self) -> Option<T> {
        self.params.remove()
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
        let graph = compile(&decl, &is_imported).map_err(|error| suggest_resource(error, &decl, imports))?;
        check_mip_ranges(&decl, &self.imports, self.output_extent)?;
        let view_ranges = assign_range_views(&mut decl);
        // Old resources may be in use by frames in flight.
        self.executor.wait_all(&self.device, &mut self.stats)?;
        let mut kept = self.compiled.take().map(Compiled::into_history).unwrap_or_default();
        let mut compiled = Compiled::allocate(&self.device, self.output_extent, decl, graph, &mut kept)?;
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
        self.zone_names.clear();
        self.log_unused_passes();
        Ok(())
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

    /// Runs one frame: compiles if the graph changed, waits for the frame slot, calls every
    /// running pass's `prepare`, records all passes with their barriers and submits.
    pub fn execute_frame(&mut self) -> Result<()> {
        runtime::profile_zone!("render graph frame");
        // Kept until the frame is submitted: a frame that fails before (a compile error the
        // caller fixes and retries) still waits for the acquire and signals the present.
        let present = self.present.clone();
        self.compile()?;
        self.executor.wait_for_slot(&self.device, self.frame_index, &mut self.stats)?;
        let compiled = self.compiled.as_mut().expect("compiled above");
        if self.zone_names.len() != compiled.decl.passes.len() {
            self.zone_names.clear();
            let name = &self.name;
            self.zone_names.extend(compiled.decl.passes.iter().map(|pass| format!("{name}: {}", pass.name)));
        }
        compiled.resolve(&self.imports, self.frame_index, &mut self.resolved, &mut self.range_views)?;
        self.executor.run_frame(Frame {
            compiled,
            passes: &mut self.passes,
            pass_sites: &self.pass_sites,
            zone_names: &self.zone_names,
            graph_name: &self.name,
            imports: &mut self.imports,
            resolved: &self.resolved,
            range_views: &self.range_views,
            present,
            index: self.frame_index,
            output_extent: self.output_extent,
            params: &self.params,
        })?;
        self.present = None;
        self.frame_index += 1;
        Ok(())
    }

    /// Whether submitted frame `frame` (counted as [`RenderGraph::frame_index`] counts) has
    /// finished on the GPU, asked without waiting (`vkGetFenceStatus`). Once it answers
    /// `true`, host-visible buffers imported into the graph hold what that frame wrote (the
    /// frame ends with a host-read barrier; invalidate non-coherent memory before reading).
    ///
    /// # Panics
    ///
    /// When `frame` was not submitted yet.
    pub fn frame_complete(&self, frame: u64) -> Result<bool> {
        assert!(frame < self.frame_index, "frame {frame} was not submitted (next is {})", self.frame_index);
        self.executor.frame_complete(&self.device, frame)
    }

    /// Names of the Tracy GPU zones the last submitted frame opened, one per pass that ran,
    /// in order (empty until a Tracy client runs and the queue has timestamps): `graph: pass`,
    /// with the graph's name ([`RenderGraph::name`]) and the names [`RenderGraph::stats`]
    /// gives the passes.
    #[cfg(feature = "profile")]
    pub fn gpu_zone_names(&self) -> &[String] {
        let Some(last) = self.frame_index.checked_sub(1) else { return &[] };
        self.executor.gpu_zone_names(last)
    }

    /// Waits until the frame slot the next [`RenderGraph::execute_frame`] uses is free (the
    /// frame [`crate::FRAMES_IN_FLIGHT`] before it has finished): per-slot objects of the caller,
    /// such as a swapchain's acquire semaphores, may then be reused.
    pub fn wait_for_free_slot(&mut self) -> Result<()> {
        self.executor.wait_for_slot(&self.device, self.frame_index, &mut self.stats)
    }

    /// Waits until every submitted frame has finished on the GPU; afterwards readback
    /// buffers hold the last frame's results and [`RenderGraph::stats`] is up to date.
    pub fn wait_idle(&mut self) -> Result<()> {
        self.executor.wait_all(&self.device, &mut self.stats)
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

impl Drop for RenderGraph {
    fn drop(&mut self) {
        // The frames in flight finish and give their Tracy GPU zones their times (a zone
        // without one keeps Tracy waiting at exit).
        let _ = self.executor.wait_all(&self.device, &mut self.stats);
        // Resources and passes (with their pipelines) must outlive the frames using them.
        if self.device.wait_idle().is_ok() {
            self.executor.clock.finish_all();
        }
    }
}

/// A named place in a graph's pass order: passes placed there go before pass `index`.
struct InsertionPoint {
    name: String,
    index: usize,
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

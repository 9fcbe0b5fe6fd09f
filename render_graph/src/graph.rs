//! The render graph: passes, imports, compilation on change, and one frame's run (wait for
//! the frame slot, resolve this frame's physical resources, hand the rest to the executor).

// Adding passes, points, owners and groups (`adding.rs`), compiling with the user passes that
// fail dropped (`compiling.rs`, `isolation.rs`).
mod adding;
mod compiling;
mod isolation;

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;

use crate::compile::{Owner, SyncState};
use crate::device::GpuDevice;
use crate::error::Result;
use crate::execute::{Executor, Frame, FrameParams, GraphStats, Pass, PassOrigin, PassWarning};
use crate::memory::{GpuBuffer, GpuImage};
use crate::resources::{Compiled, Import, ImportedResource, PresentSync, Resolved};

pub use isolation::DroppedPass;

/// The environment variable that makes every graph of the process shuffle the passes it
/// considers independent, seeded with its value (see [`RenderGraph::shuffle_independent`]).
pub const SHUFFLE_ENV: &str = "ENGINE_SHUFFLE_PASSES";

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
    /// Per pass: where it was added (its Tracy zones' source), its owner and group.
    origins: Vec<PassOrigin>,
    /// Who owns the passes added and resources imported now (see [`RenderGraph::set_owner`]).
    owner: Owner,
    /// The group passes added now join ([`RenderGraph::add_group`]); `None`: each its own.
    open_group: Option<u64>,
    /// The last group number given.
    next_group: u64,
    /// Per imported name: who imported it.
    import_owners: HashMap<String, Owner>,
    /// Engine resources every pass may write ([`RenderGraph::share_resource`]).
    shared: Vec<String>,
    /// The user passes dropped so far, and why.
    dropped: Vec<DroppedPass>,
    /// Dropped passes, kept until no frame in flight may use their pipelines.
    retired: Vec<Box<dyn Pass>>,
    /// Claims of engine resources already logged, as `(pass, resource)`.
    logged_claims: Vec<(String, String)>,
    /// The seed of the shuffled order of independent passes, if shuffled.
    shuffle: Option<u64>,
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
            origins: Vec::new(),
            owner: Owner::Engine,
            open_group: None,
            next_group: 0,
            import_owners: HashMap::new(),
            shared: Vec::new(),
            dropped: Vec::new(),
            retired: Vec::new(),
            logged_claims: Vec::new(),
            shuffle: std::env::var(SHUFFLE_ENV).ok().and_then(|seed| seed.trim().parse().ok()),
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

    /// Compiles the graph again at its next frame, though no pass or import changed: for
    /// passes whose declarations follow state outside the graph (the sizes of buffers that
    /// grow with a scene), which then declare again. Like any compile, it first waits for
    /// the frames in flight.
    pub fn invalidate(&mut self) {
        self.dirty = true;
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
        if self.import_owners.insert(name.to_owned(), self.owner) != Some(self.owner) {
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

    /// Warnings of work that did nothing (a dispatch of zero workgroups, a draw of zero
    /// vertices or instances), per pass and kind, counted over every frame so far; each was
    /// logged once.
    pub fn pass_warnings(&self) -> &[PassWarning] {
        &self.executor.warnings.list
    }

    /// The number of [`RenderGraph::pass_warnings`] over every frame so far.
    pub fn warning_count(&self) -> u64 {
        self.executor.warnings.total()
    }

    /// Statistics of the latest completed frame.
    pub fn stats(&self) -> &GraphStats {
        &self.stats
    }

    /// Runs one frame: compiles if the graph changed, waits for the frame slot, calls every
    /// running pass's `prepare`, records all passes with their barriers and submits.
    ///
    /// A user pass ([`Owner::User`]) that fails or panics in `prepare`, `execute` or
    /// `record_draw` does not fail the frame: the rest of its group skips its work this
    /// frame, the frame is submitted (and counted: frame numbers and history advance once per
    /// submitted frame), and the group is dropped from the next frame on, logged and kept in
    /// [`RenderGraph::dropped_passes`]. An engine pass's failure returns the error and
    /// submits nothing; the frame number does not advance.
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
        let ran = self.executor.run_frame(Frame {
            compiled,
            passes: &mut self.passes,
            origins: &self.origins,
            zone_names: &self.zone_names,
            graph_name: &self.name,
            imports: &mut self.imports,
            resolved: &self.resolved,
            range_views: &self.range_views,
            present,
            index: self.frame_index,
            output_extent: self.output_extent,
            params: &self.params,
        });
        // The user passes that failed are dropped from the next frame on: this one went on
        // without them (their groups skipped the rest of their work).
        self.drop_failed_passes();
        ran?;
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

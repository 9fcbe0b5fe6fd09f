//! The camera's object cull on the GPU, [`GpuCullPass`]: the two-phase skeleton
//! ([`TwoPhaseCull`]) specialised to the object slots of the shared `object_records` and
//! `object_transforms` and the camera's view (or every window view of a split-screen frame,
//! a row of workgroups each, with its own bits, lists and counters; with
//! [`GpuCullSettings::per_view_dispatch`] a dispatch and a GPU zone each), one thread per
//! object and view, compacted into
//! `draw_commands` + `draw_count` (and `draw_instances` when batched); and [`CullResetPass`],
//! which creates and zeroes the draw buffers each frame. Shaders: `gpu_cull.h` with
//! `gpu_cull_early.comp` and `gpu_cull_late.comp`.
//!
//! - [`CullPhase::Early`]: objects visible last frame (the history of `visibility_bits`)
//!   that pass this frame's frustum are appended to the early list; the depth prepass draws
//!   them and the Hi-Z build reduces that depth.
//! - [`CullPhase::Late`]: every object is tested against the frustum, then against
//!   `hiz_depth`; the answer is written to `visibility_bits` (next frame's history) and the
//!   objects visible now that the early phase did not draw are appended to the late list,
//!   which the late depth prepass draws alone.
//!
//! Batched (the scene's [`GpuScene::batch_draws`](crate::GpuScene::batch_draws), the
//! default), each list holds one instanced command per batch (mesh, level, material) that
//! [`DrawBatchPass`](crate::DrawBatchPass) laid out, and a kept object's slot is appended to its
//! batch's run of `draw_instances`; unbatched, one command per object (`firstInstance` its
//! slot).
//!
//! Each thread computes its object's world box from the record's local box and the transform
//! as the CPU's `Aabb::transformed_center_half` does, and the frustum test repeats the CPU
//! reference step for step, both with `precise` arithmetic, so its bits equal the CPU
//! kernels' on the Visibility stage's boxes. Every test keeps what it is unsure of: non-finite
//! boxes, boxes reaching the near or camera plane, boxes partly off-screen for occlusion.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::names::{DRAW_COMMANDS, DRAW_COUNT, DRAW_INSTANCES, LOD_ENTRIES, OBJECT_BATCHES, OBJECT_LOD_LEVELS};
use crate::passes::hiz::HIZ_DEPTH;
use crate::scene::{lock_scene, FrameView, SharedScene, WindowViews, DRAW_COMMAND_BYTES, LOD_INSTANCE_ROOM};
use render_graph::{
    Binding, BindingKind, BufferDesc, BufferWrite, ExecuteContext, GpuDevice, PrepareContext, Registry, ShaderStage,
};

use super::skeleton::{CullKind, CullPhase, CullResetPass, TwoPhaseCull};
use super::view::{CullConstants, CullView};

/// Name of the per-object visibility bits the late phase writes (**contract**): bit `i` of
/// little-endian word `i / 64` set when object `i` may be visible (u64 words, as
/// [`VisibilityBits`](culling::VisibilityBits)); last frame's version is the early phase's
/// history.
pub const VISIBILITY_BITS: &str = "visibility_bits";

/// Name of the frame's cull counters (`CullStats` in `gpu_cull.h`): [`CULL_STAT_WORDS`] u32s,
/// zeroed by [`CullResetPass`], added to by both phases; see [`GpuCullStats`].
pub const CULL_STATS: &str = "cull_stats";

/// u32 counters in [`CULL_STATS`] (`STAT_COUNT` in `config.h`).
pub const CULL_STAT_WORDS: usize = 12;

/// Levels of the GPU's LOD histogram ([`GpuCullStats::lod_levels`], `LOD_STAT_LEVELS` in
/// `config.h`).
pub const LOD_STAT_LEVELS: usize = 4;

/// What GPU culling counted in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuCullStats {
    /// Objects the late phase tested (`STAT_OBJECTS`).
    pub objects: u32,
    /// Objects outside the frustum (or without a mesh) (`STAT_FRUSTUM_REJECTED`).
    pub frustum_rejected: u32,
    /// Objects the early phase drew (visible last frame, in the frustum now).
    pub early_drawn: u32,
    /// Objects in the frustum the late phase found occluded.
    pub occlusion_rejected: u32,
    /// Objects the late phase drew (visible now, not drawn early).
    pub late_drawn: u32,
    /// Triangles of every drawn command (both phases; each is drawn by a depth prepass and
    /// the geometry pass).
    pub triangles: u32,
    /// Commands of the early list that draw something: [`GpuCullStats::early_drawn`]
    /// unbatched, the batches with an instance in the list when batched.
    pub early_commands: u32,
    /// Commands of the late list that draw something (as [`GpuCullStats::early_commands`]).
    pub late_commands: u32,
    /// Objects drawn (both phases) at each level of detail the cull chose, the last entry
    /// counting that level and every coarser one; objects whose level the CPU chose (no
    /// chain on the GPU, or no LOD view) count at level 0.
    pub lod_levels: [u32; LOD_STAT_LEVELS],
    /// GPU milliseconds of the early cull, Hi-Z build and late cull passes (`None` where the
    /// device has no timestamps or the frame is not known finished).
    pub gpu_ms: [Option<f64>; 3],
    /// Whether the GPU did the culling (false on the CPU fallback).
    pub culled_on_device: bool,
}

impl GpuCullStats {
    /// Decodes the counters read back from [`CULL_STATS`] (little-endian u32s) and takes the
    /// pass times from `graph`'s last finished frame.
    pub fn from_counters(bytes: &[u8], graph: &render_graph::GraphStats) -> GpuCullStats {
        let word = |index: usize| {
            bytes.get(index * 4..index * 4 + 4).map_or(0, |word| u32::from_le_bytes(word.try_into().expect("4 bytes")))
        };
        let gpu_ms = |name: &str| graph.pass_gpu_ms(name);
        GpuCullStats {
            objects: word(0),
            frustum_rejected: word(1),
            early_drawn: word(2),
            occlusion_rejected: word(3),
            late_drawn: word(4),
            triangles: word(5),
            early_commands: word(6),
            late_commands: word(7),
            lod_levels: [word(8), word(9), word(10), word(11)],
            gpu_ms: [
                gpu_ms(GpuCullPass::EARLY_NAME),
                gpu_ms(crate::passes::HiZBuildPass::NAME),
                gpu_ms(GpuCullPass::LATE_NAME),
            ],
            culled_on_device: true,
        }
    }
}

/// The GPU zone of each window view's dispatch in the cull passes (static: a frame allocates
/// nothing in steady state).
const VIEW_ZONES: [&str; crate::scene::MAX_WINDOW_VIEWS] = ["view 0", "view 1", "view 2", "view 3"];

/// Threads per workgroup of the cull shaders (`CULL_GROUP` in `gpu_cull.h`): one 64-bit word
/// of [`VISIBILITY_BITS`] per workgroup.
pub const CULL_GROUP: u32 = 64;

/// Which tests the GPU culling runs; shared by both phases through [`SharedCullSettings`],
/// so the host may change it between frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuCullSettings {
    /// Frustum test on.
    pub frustum: bool,
    /// Occlusion test (late phase) on.
    pub occlusion: bool,
    /// A split-screen frame's window views are culled by one dispatch each inside each
    /// phase's pass, each in a GPU zone `view N` of its own, so each view's share of the
    /// cull's GPU time is known ([`RenderReport::view_gpu`](crate::RenderReport::view_gpu));
    /// off (the default), one dispatch culls every view (a row of workgroups each) and only
    /// the views' total is timed. Off by default: on lavapipe the dispatches one by one cost
    /// 0.08-0.38 ms more per phase (a barrier and two timestamps per further view;
    /// `docs/architecture.md`, "Split-screen on the GPU"). A single view is always one
    /// dispatch. The passes read it when the graph compiles (the further views' steps are
    /// declared only when it is on); the Render stage compiles the graph again at the next
    /// frame after it changes.
    pub per_view_dispatch: bool,
}

impl Default for GpuCullSettings {
    fn default() -> Self {
        GpuCullSettings { frustum: true, occlusion: true, per_view_dispatch: false }
    }
}

/// [`GpuCullSettings`] shared between the host and the cull passes.
pub type SharedCullSettings = Arc<Mutex<GpuCullSettings>>;

/// The settings as they are, a poisoned lock's included (a setter that panicked leaves
/// whole switches).
pub(crate) fn lock_settings(settings: &SharedCullSettings) -> MutexGuard<'_, GpuCullSettings> {
    settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Bytes of [`VISIBILITY_BITS`] for `capacity` objects (whole 64-bit words).
pub fn visibility_bits_bytes(capacity: u32) -> u64 {
    u64::from(capacity.div_ceil(64)) * 8
}

impl CullResetPass {
    /// The reset of the object cull for `views` views (window views culled on the GPU, at
    /// least one): creates `draw_commands` (an early and a late list per view, room for
    /// `capacity` commands each: view `v`'s lists `2v` and `2v + 1`), `draw_count` (a count per
    /// list), `draw_instances` (two runs of [`LOD_INSTANCE_ROOM`] places per slot: a batched
    /// object of a LOD chain holds a place in every level's run; only a cull of one view
    /// batches) and [`CULL_STATS`] ([`CULL_STAT_WORDS`] per view), and zeroes the counts and the
    /// counters each frame (and, with `zero_commands`, every command, for draw modes that draw
    /// up to the maximum without the count: unused commands then draw nothing).
    pub fn objects(capacity: u32, views: u32, zero_commands: bool) -> CullResetPass {
        let lists = 2 * u64::from(views.max(1));
        let commands = lists * u64::from(capacity.max(1)) * DRAW_COMMAND_BYTES;
        let buffers = vec![
            (DRAW_COMMANDS, commands, zero_commands),
            (DRAW_COUNT, lists * 4, true),
            (DRAW_INSTANCES, 2 * u64::from(capacity.max(1)) * u64::from(LOD_INSTANCE_ROOM) * 4, false),
            (CULL_STATS, u64::from(views.max(1)) * CULL_STAT_WORDS as u64 * 4, true),
        ];
        CullResetPass::new(CullResetPass::OBJECTS, buffers)
    }
}

/// The camera's object cull: the [`CullKind`] of [`GpuCullPass`].
pub struct ObjectCull {
    scene: SharedScene,
    settings: SharedCullSettings,
    capacity: u32,
    draw_from: u32,
    /// Commands each list has room for (the late list starts there); `None`: the scene's
    /// capacity.
    list_room: Option<u32>,
    /// Whether the lists may be batched (not when meshlet commands share the lists). The
    /// levels of detail are chosen either way: the cluster cull draws the meshlets of the
    /// level this cull's rule chooses (`cluster_cull.h`).
    may_batch: bool,
    /// Whether `draw_from` and `list_room` follow the scene's cluster tables at each
    /// compile ([`GpuCullPass::drawing_after_clusters`]).
    follows_clusters: bool,
    /// Views the buffers declared at the last compile have room for
    /// ([`GpuScene::gpu_view_room`](crate::GpuScene::gpu_view_room)).
    view_room: u32,
    /// [`GpuCullSettings::per_view_dispatch`] at the last compile: the further views' steps
    /// are declared only then (the Render stage compiles the graph again when it changes).
    per_view: bool,
}

/// The object cull's own resources: the bits (the late phase writes them; the early phase
/// has none), the draw lists, their counts, the counters, each slot's batch and the
/// instances.
pub struct ObjectCullHandles {
    bits: Option<BufferWrite>,
    commands: BufferWrite,
    count: BufferWrite,
    stats: BufferWrite,
    batches: render_graph::BufferRead,
    instances: BufferWrite,
    lod_entries: render_graph::BufferRead,
    lod_history: render_graph::BufferRead,
    /// The slots' levels for next frame (the late phase writes them).
    lod_levels: Option<BufferWrite>,
}

/// The cull pass of one phase of the camera's objects (see the module docs).
pub type GpuCullPass = TwoPhaseCull<ObjectCull>;

impl TwoPhaseCull<ObjectCull> {
    /// Name of the early pass in the graph.
    pub const EARLY_NAME: &'static str = "gpu cull early";
    /// Name of the late pass in the graph.
    pub const LATE_NAME: &'static str = "gpu cull late";

    /// A cull pass of `phase` over the objects of `scene`, with the tests `settings` asks
    /// for.
    pub fn new(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        settings: SharedCullSettings,
        phase: CullPhase,
    ) -> render_graph::Result<GpuCullPass> {
        let capacity = lock_scene(&scene).capacity();
        let kind = ObjectCull {
            scene,
            settings,
            capacity,
            draw_from: 0,
            list_room: None,
            may_batch: true,
            follows_clusters: false,
            view_room: 1,
            per_view: false,
        };
        TwoPhaseCull::with_kind(device, kind, phase)
    }

    /// The same pass appending only objects from `first` on, one command per object, to
    /// lists of `list_room` commands each: cluster culling draws the objects its table covers
    /// (those below `first`) meshlet by meshlet into the same lists, and this pass still
    /// writes every object's bit.
    pub fn drawing_from(mut self, first: u32, list_room: u32) -> GpuCullPass {
        let kind = self.kind_mut();
        kind.draw_from = first;
        kind.list_room = Some(list_room);
        kind.may_batch = false;
        self
    }

    /// [`GpuCullPass::drawing_from`] the objects past those the scene's cluster tables cover,
    /// into lists of the tables' room ([`GpuScene::track_clusters`](crate::GpuScene::track_clusters)),
    /// both read again at each compile: the tables change with the objects.
    pub fn drawing_after_clusters(self) -> GpuCullPass {
        let mut pass = self.drawing_from(0, 0);
        pass.kind_mut().follows_clusters = true;
        pass
    }
}

impl CullKind for ObjectCull {
    type Handles = ObjectCullHandles;

    const HISTORY: &'static str = VISIBILITY_BITS;
    const PYRAMID: &'static str = HIZ_DEPTH;

    fn name(&self, phase: CullPhase) -> &'static str {
        match phase {
            CullPhase::Early => GpuCullPass::EARLY_NAME,
            CullPhase::Late => GpuCullPass::LATE_NAME,
        }
    }

    fn shader(&self, phase: CullPhase) -> (&'static [u32], &'static [BindingKind]) {
        // The bits (late), the commands, counts, counters, batches, instances, LOD entries,
        // last frame's levels and (late) this frame's.
        const OUTPUTS: [BindingKind; 9] = [BindingKind::StorageBuffer; 9];
        match phase {
            CullPhase::Early => (shaders::GPU_CULL_EARLY_COMP.words(), &OUTPUTS[2..]),
            CullPhase::Late => (shaders::GPU_CULL_LATE_COMP.words(), &OUTPUTS),
        }
    }

    fn register(&mut self, phase: CullPhase, registry: &mut Registry<'_>) -> ObjectCullHandles {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        // The scene may have grown since the last compile.
        {
            let scene = lock_scene(&self.scene);
            self.capacity = scene.capacity();
            // Cluster culling culls the main view alone.
            self.view_room = if self.list_room.is_none() { scene.gpu_view_room() } else { 1 };
            if self.follows_clusters {
                let layout = scene.cluster_layout();
                self.draw_from = layout.objects;
                self.list_room = Some(layout.list_room);
            }
        }
        self.per_view = lock_settings(&self.settings).per_view_dispatch;
        let late = phase == CullPhase::Late;
        let bits_size = visibility_bits_bytes(self.capacity) * u64::from(self.view_room);
        let bits_buffer = late.then(|| registry.create_buffer(VISIBILITY_BITS, BufferDesc { size: bits_size }));
        let bits = bits_buffer.map(|bits| registry.write_storage_buffer(bits, COMPUTE));
        let commands = registry.buffer(DRAW_COMMANDS);
        let count = registry.buffer(DRAW_COUNT);
        let stats = registry.buffer(CULL_STATS);
        let batches = registry.buffer(OBJECT_BATCHES);
        let instances = registry.buffer(DRAW_INSTANCES);
        let lod_entries = registry.buffer(LOD_ENTRIES);
        let lod_history = registry.history_buffer(OBJECT_LOD_LEVELS);
        let levels_size = u64::from(self.capacity) * 4;
        let levels_buffer = late.then(|| registry.create_buffer(OBJECT_LOD_LEVELS, BufferDesc { size: levels_size }));
        let lod_levels = levels_buffer.map(|levels| registry.write_storage_buffer(levels, COMPUTE));
        let handles = ObjectCullHandles {
            lod_entries: registry.read_storage_buffer(lod_entries, COMPUTE),
            lod_history: registry.read_storage_buffer(lod_history, COMPUTE),
            lod_levels,
            bits,
            commands: registry.read_write_storage_buffer(commands, COMPUTE),
            count: registry.read_write_storage_buffer(count, COMPUTE),
            stats: registry.read_write_storage_buffer(stats, COMPUTE),
            batches: registry.read_storage_buffer(batches, COMPUTE),
            instances: registry.read_write_storage_buffer(instances, COMPUTE),
        };
        // A step per further view dispatched on its own: each view's dispatch writes the same
        // buffers (its own parts of them, which the graph cannot tell), so the graph orders it
        // after the last. One dispatch for every view wants no step, and no barrier after it.
        for _ in 0..self.steps() {
            registry.next_step();
            for buffer in [commands, count, stats, instances] {
                registry.read_write_storage_buffer(buffer, COMPUTE);
            }
            for written in [bits_buffer, levels_buffer].into_iter().flatten() {
                registry.write_storage_buffer(written, COMPUTE);
            }
        }
        handles
    }

    fn prepare(
        &mut self,
        _phase: CullPhase,
        context: &mut PrepareContext<'_>,
        views: &mut Vec<CullView>,
    ) -> Option<CullConstants> {
        let view = match context.require_param::<FrameView>() {
            Ok(view) => view,
            Err(error) => {
                context.fail(error);
                return None;
            }
        };
        // A split-screen frame culls each window view (the Render stage made room for them).
        let split = context
            .param::<WindowViews>()
            .filter(|windows| windows.is_split() && windows.views().len() <= self.view_room as usize);
        let (object_count, batched, lod, every_object) = {
            let mut scene = lock_scene(&self.scene);
            // The lists of several views are not batched (the templates are one view's).
            let batched = self.may_batch && scene.batches_fit() && split.is_none();
            // The scene passes draw what this cull writes, whatever list the host set last.
            scene.set_gpu_list_instanced(batched);
            let lod = scene.lod_view();
            (scene.object_count(), batched, lod, scene.lod_every_object())
        };
        let settings = *lock_settings(&self.settings);
        let extent = context.output_extent();
        let camera = CullView::camera(view, extent, settings.frustum, settings.occlusion);
        views.push(camera.with_lod(lod, every_object));
        if let Some(windows) = split {
            // View `list` of the cull is the window view of that list (0 the main view).
            views.resize(windows.views().len(), views[0]);
            for window in windows.views() {
                let Some(slot) = views.get_mut(window.list as usize) else { continue };
                let view_projection = glam::Mat4::from_cols_array_2d(&window.view_projection);
                let cull = CullView::window(view_projection, window.rect, extent, settings.frustum, settings.occlusion);
                let by_distance = window.lod_distance;
                *slot =
                    cull.with_lod(window.lod.filter(|_| lod.is_some()), every_object).with_distance_lod(by_distance);
            }
        }
        Some(CullConstants {
            item_count: object_count.min(self.capacity),
            words_per_view: self.capacity.div_ceil(64) * 2,
            region: self.list_room.unwrap_or(self.capacity),
            draw_from: self.draw_from,
            batched: u32::from(batched),
            ..CullConstants::default()
        })
    }

    fn bind(&self, handles: &ObjectCullHandles, bind: &mut dyn FnMut(Binding)) {
        if let Some(bits) = &handles.bits {
            bind(Binding::buffer(bits));
        }
        bind(Binding::buffer(&handles.commands));
        bind(Binding::buffer(&handles.count));
        bind(Binding::buffer(&handles.stats));
        bind(Binding::buffer(handles.batches));
        bind(Binding::buffer(&handles.instances));
        bind(Binding::buffer(handles.lod_entries));
        bind(Binding::buffer(handles.lod_history));
        if let Some(levels) = &handles.lod_levels {
            bind(Binding::buffer(levels));
        }
    }

    fn dispatch(&self, _handles: &ObjectCullHandles, constants: &CullConstants, context: &mut ExecuteContext<'_>) {
        let groups = constants.item_count.div_ceil(CULL_GROUP);
        let views = constants.view_count.max(1);
        if views == 1 || !self.per_view {
            // One row of workgroups per view (`gl_WorkGroupID.y`).
            if groups > 0 {
                context.dispatch(groups, views, 1);
            }
            return;
        }
        // Each view on its own, in a zone of its own, a step after the last view's.
        for view in 0..views.min(self.view_room) {
            if view > 0 {
                context.next_step();
                context.push_constants(&CullConstants { first_view: view, ..*constants }.words());
            }
            context.begin_gpu_zone(VIEW_ZONES.get(view as usize).copied().unwrap_or("view"));
            if groups > 0 {
                context.dispatch(groups, 1, 1);
            }
        }
        context.end_gpu_zone();
    }

    fn steps(&self) -> u32 {
        if self.per_view {
            self.view_room - 1
        } else {
            0
        }
    }
}

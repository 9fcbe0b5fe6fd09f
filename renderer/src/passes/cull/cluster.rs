//! The meshlet (cluster) cull on the GPU, [`ClusterCullPass`]: the two-phase skeleton
//! ([`TwoPhaseCull`]) specialised to the pairs of the scene's [`ClusterTable`] (a meshlet of an
//! object, or an object drawn whole), one thread per pair, one view (the camera's), two
//! phases like the object pass (`cluster_cull.h`); [`CullResetPass::clusters`] creates and
//! zeroes the frame's draw buffers, and [`ClusterSurvivorPass`](super::ClusterSurvivorPass)
//! lists the objects the object pass kept between the phases.
//!
//! - [`CullPhase::Early`] (`cluster_cull_early.comp`): pairs visible last frame (the history
//!   of [`CLUSTER_BITS`]) that pass this frame's sphere-frustum and cone tests are appended
//!   to `draw_commands`; the depth prepass draws them and the Hi-Z build reduces that depth.
//! - [`CullPhase::Late`] (`cluster_cull_late.comp`), after the object pass has written
//!   `visibility_bits`: every meshlet of every surviving object is tested (sphere against
//!   the frustum, normal cone, box against `hiz_depth`); its verdict goes to
//!   [`CLUSTER_VERDICTS`], its bit to [`CLUSTER_BITS`], and the newly visible are appended.
//!
//! Each command is a meshlet's own index range with `firstInstance` = the object, so the
//! standard depth and geometry passes draw it unchanged (`vkCmdDrawIndexedIndirectCount`).
//! The tests are the CPU reference's ([`culling::cluster`]), step for step.
//!
//! The table is the scene's ([`GpuScene::track_clusters`](crate::GpuScene::track_clusters)):
//! every pass reads its counts from the scene at each compile and sizes its buffers from
//! them; a table built again ([`GpuScene::refresh_clusters`](crate::GpuScene::refresh_clusters))
//! moves the scene's generation, so the graph that follows it imports the new tables and
//! compiles again, and the counts, the sizes and the imported tables always match.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use render_graph::{
    Binding, BindingKind, BufferRead, BufferWrite, ExecuteContext, GpuDevice, PrepareContext, Registry, ShaderStage,
};

use super::camera::{CULL_STATS, CULL_STAT_WORDS};
use super::skeleton::{CullKind, CullPhase, CullResetPass, TwoPhaseCull};
use super::view::{CullConstants, CullView};
use crate::names::{DRAW_COMMANDS, DRAW_COUNT, DRAW_INSTANCES, LOD_ENTRIES, OBJECT_LOD_LEVELS};
use crate::passes::hiz::HIZ_DEPTH;
#[cfg(doc)]
use crate::scene::ClusterTable;
use crate::scene::{lock_scene, ClusterLayout, FrameView, SharedScene, DRAW_COMMAND_BYTES};
use crate::scene::{CLUSTER_MESHLETS, CLUSTER_OBJECTS, CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS};
use culling::cluster::{ClusterSettings, CLUSTER_STAT_WORDS};

/// Name of the per-pair visibility bits the late phase writes (bit `i` of little-endian u32
/// word `i / 32` = pair `i`); last frame's version is the early phase's history.
pub const CLUSTER_BITS: &str = "cluster_visibility_bits";
/// Name of the per-pair verdicts the late phase writes (one u32
/// [`ClusterVerdict`](culling::cluster::ClusterVerdict) code per pair).
pub const CLUSTER_VERDICTS: &str = "cluster_verdicts";
/// Name of the survivor list [`ClusterSurvivorPass`](super::ClusterSurvivorPass) writes for the late phase: word 0 the
/// count, then the covered objects the object pass kept.
pub const CLUSTER_SURVIVORS: &str = "cluster_survivors";
/// Name of the late phase's `VkDispatchIndirectCommand` (one workgroup per survivor, at most
/// 65,535: past that each group strides over the survivors), written by
/// [`ClusterSurvivorPass`](super::ClusterSurvivorPass).
pub const CLUSTER_DISPATCH: &str = "cluster_dispatch";
/// Name of the frame's cluster counters ([`CLUSTER_STAT_WORDS`] u32s,
/// [`ClusterStats`](culling::cluster::ClusterStats)).
pub const CLUSTER_STATS: &str = "cluster_stats";

/// Threads per workgroup of the cluster shaders: one 64-bit word of [`CLUSTER_BITS`].
pub const CLUSTER_GROUP: u32 = 64;

/// Most workgroups of one dimension a dispatch is guaranteed (Vulkan's minimum limit).
pub const CLUSTER_MAX_GROUPS: u32 = 65_535;

/// The shared width, in workgroups, of one row of the cluster passes' direct dispatches (the
/// early phase's pairs, the survivor pass's objects); 0 or past [`CLUSTER_MAX_GROUPS`] is
/// [`CLUSTER_MAX_GROUPS`]. Tests narrow it so that small scenes run on several rows
/// ([`ClusterCulledScene::set_dispatch_row`](crate::ClusterCulledScene::set_dispatch_row)).
pub type ClusterRowWidth = Arc<AtomicU32>;

/// The workgroups `(x, y)` of a direct cluster dispatch of `groups` groups in rows of at most
/// `row` (0: [`CLUSTER_MAX_GROUPS`]): one dimension holds at most [`CLUSTER_MAX_GROUPS`], so
/// bigger counts (a million chained objects have 8.7M pairs, 136,311 groups) take several
/// rows, and the shader's index is `(y * row + x) * 64 + thread` (`cluster_thread` in
/// `cluster_cull.h`; the threads past the count return). The row widens where `row` would
/// need more than [`CLUSTER_MAX_GROUPS`] rows, so every `u32` count has a shape.
pub fn cluster_dispatch_shape(groups: u32, row: u32) -> (u32, u32) {
    if groups == 0 {
        return (0, 0);
    }
    let row = if row == 0 { CLUSTER_MAX_GROUPS } else { row.min(CLUSTER_MAX_GROUPS) };
    let row = row.max(groups.div_ceil(CLUSTER_MAX_GROUPS));
    (groups.min(row), groups.div_ceil(row))
}

/// Dispatches `groups` workgroups in rows of the width `row` holds ([`cluster_dispatch_shape`]).
pub(crate) fn dispatch_rows(context: &mut ExecuteContext<'_>, groups: u32, row: &ClusterRowWidth) {
    let (x, y) = cluster_dispatch_shape(groups, row.load(Ordering::Relaxed));
    if x > 0 {
        context.dispatch(x, y, 1);
    }
}

/// Bytes of [`CLUSTER_BITS`] for `pairs` pairs (whole 64-bit words).
pub fn cluster_bits_bytes(pairs: u32) -> u64 {
    u64::from(pairs.max(1).div_ceil(64)) * 8
}

/// [`ClusterSettings`] shared between the host and the cluster passes.
pub type SharedClusterSettings = Arc<Mutex<ClusterSettings>>;

pub(crate) fn lock_cluster_settings(settings: &SharedClusterSettings) -> MutexGuard<'_, ClusterSettings> {
    settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl CullResetPass {
    /// The reset of the cluster cull: creates `draw_commands` (two lists of room for
    /// `capacity` commands each), `draw_count` (two counts), `cull_stats`, [`CLUSTER_STATS`],
    /// [`CLUSTER_BITS`] (for `pairs` pairs), [`CLUSTER_SURVIVORS`] (for `objects` objects),
    /// [`CLUSTER_DISPATCH`] and `draw_instances` (unused: the lists hold one command per
    /// meshlet or object), and zeroes them each frame (the commands only with
    /// `zero_commands`, for draw modes that draw every command without the count).
    pub fn clusters(capacity: u32, pairs: u32, objects: u32, zero_commands: bool) -> CullResetPass {
        let buffers = vec![
            (DRAW_COUNT, 8, true),
            (DRAW_INSTANCES, 4, false),
            (CULL_STATS, CULL_STAT_WORDS as u64 * 4, true),
            (CLUSTER_STATS, CLUSTER_STAT_WORDS as u64 * 4, true),
            (CLUSTER_BITS, cluster_bits_bytes(pairs), true),
            (CLUSTER_SURVIVORS, (u64::from(objects) + 1) * 4, true),
            (CLUSTER_DISPATCH, 12, true),
            (DRAW_COMMANDS, 2 * u64::from(capacity.max(1)) * DRAW_COMMAND_BYTES, zero_commands),
        ];
        CullResetPass::new(CullResetPass::CLUSTERS, buffers)
    }
}

/// The meshlet cull: the [`CullKind`] of [`ClusterCullPass`] and, between its phases, of
/// [`ClusterSurvivorPass`](super::ClusterSurvivorPass).
pub struct ClusterCull {
    settings: SharedClusterSettings,
    /// The scene whose cluster tables are culled.
    scene: SharedScene,
    /// Whether the pass draws: the late phase appends to the late list, from the scene's
    /// list room on (the survivor pass draws nothing).
    draws: bool,
    /// The counts of the scene's table at the last compile.
    layout: ClusterLayout,
    /// The width of the direct dispatch's rows.
    pub(crate) row: ClusterRowWidth,
}

impl ClusterCull {
    /// The cull of the pairs of `scene`'s cluster tables (imported with the scene).
    pub(crate) fn new(settings: SharedClusterSettings, scene: SharedScene) -> ClusterCull {
        let layout = lock_scene(&scene).cluster_layout();
        ClusterCull { settings, scene, draws: false, layout, row: ClusterRowWidth::default() }
    }

    /// Dispatches `groups` workgroups in rows of the shared width.
    pub(crate) fn dispatch_rows(&self, context: &mut ExecuteContext<'_>, groups: u32) {
        dispatch_rows(context, groups, &self.row);
    }

    /// Reads the counts of the scene's table (at each compile: the graph imported the
    /// tables of the same generation).
    pub(crate) fn follow_table(&mut self) {
        self.layout = lock_scene(&self.scene).cluster_layout();
    }

    /// Declares the cluster tables, read by every pass of the cull.
    pub(crate) fn register_tables(registry: &mut Registry<'_>) -> [BufferRead; 3] {
        [CLUSTER_MESHLETS, CLUSTER_PAIRS, CLUSTER_OBJECTS].map(|name| {
            let buffer = registry.buffer(name);
            registry.read_storage_buffer(buffer, ShaderStage::Compute)
        })
    }

    /// The camera's view for meshlets (of the frame's [`FrameView`] parameter) and the
    /// constants of the scene's table at the last compile; the same for every pass of the
    /// cull. `None`, the
    /// frame failed, without a view.
    pub(crate) fn prepare_view(
        &self,
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
        let settings = *lock_cluster_settings(&self.settings);
        let (lod, every_object) = {
            let scene = lock_scene(&self.scene);
            (scene.lod_view(), scene.lod_every_object())
        };
        // The camera's levels, as the object cull chooses them (`cluster_cull.h`).
        views.push(CullView::cluster(view, context.output_extent(), settings).with_lod(lod, every_object));
        let layout = self.layout;
        Some(CullConstants {
            item_count: layout.pairs,
            words_per_view: layout.pairs.div_ceil(64) * 2,
            meshlet_pairs: layout.meshlet_pairs,
            object_count: layout.objects,
            region: if self.draws { layout.list_room } else { 0 },
            ..CullConstants::default()
        })
    }

    /// Pairs of the scene's table at the last compile.
    pub(crate) fn pair_count(&self) -> u32 {
        self.layout.pairs
    }
}

/// The cluster cull's own resources, in binding order: the tables; late, the bits and
/// verdicts the survivor pass began; the draw list, its count and the counters; late, the
/// survivors and the pair ranges it reads, and the indirect dispatch (not bound).
pub struct ClusterCullHandles {
    tables: [BufferRead; 3],
    late_outputs: Option<[BufferWrite; 2]>,
    outputs: [BufferWrite; 3],
    late_inputs: Option<([BufferRead; 2], BufferRead)>,
    /// `lod_entries`.
    entries: BufferRead,
    /// Early, last frame's state of every slot (`object_lod_levels`' history).
    history: Option<BufferRead>,
}

/// The cluster cull pass of one phase (see the module docs).
pub type ClusterCullPass = TwoPhaseCull<ClusterCull>;

impl TwoPhaseCull<ClusterCull> {
    /// Name of the early pass in the graph.
    pub const EARLY_NAME: &'static str = "cluster cull early";
    /// Name of the late pass in the graph.
    pub const LATE_NAME: &'static str = "cluster cull late";

    /// A cluster pass of `phase` over the pairs of `scene`'s cluster tables (kept by the
    /// scene: [`GpuScene::track_clusters`](crate::GpuScene::track_clusters)), drawing into
    /// the lists of the scene's list room each (`draw_commands` holds two: the late phase's
    /// meshlets go to the late list).
    pub fn new(
        device: &Arc<GpuDevice>,
        settings: SharedClusterSettings,
        scene: SharedScene,
        phase: CullPhase,
    ) -> render_graph::Result<ClusterCullPass> {
        let kind = ClusterCull { draws: true, ..ClusterCull::new(settings, scene) };
        TwoPhaseCull::with_kind(device, kind, phase)
    }

    /// The pass, its direct dispatch in rows of the width `row` holds (shared with the other
    /// cluster passes of the frame; the late phase's indirect dispatch strides instead).
    pub fn with_row_width(mut self, row: &ClusterRowWidth) -> ClusterCullPass {
        self.kind_mut().row = Arc::clone(row);
        self
    }
}

impl CullKind for ClusterCull {
    type Handles = ClusterCullHandles;

    const HISTORY: &'static str = CLUSTER_BITS;
    const PYRAMID: &'static str = HIZ_DEPTH;

    fn name(&self, phase: CullPhase) -> &'static str {
        match phase {
            CullPhase::Early => ClusterCullPass::EARLY_NAME,
            CullPhase::Late => ClusterCullPass::LATE_NAME,
        }
    }

    fn shader(&self, phase: CullPhase) -> (&'static [u32], &'static [BindingKind]) {
        // The tables, then three outputs early; late two more before them and the survivors,
        // the pair ranges; then the chains and, early, the slots' states.
        const OWN: [BindingKind; 11] = [BindingKind::StorageBuffer; 11];
        match phase {
            CullPhase::Early => (shaders::CLUSTER_CULL_EARLY_COMP.words(), &OWN[..8]),
            CullPhase::Late => (shaders::CLUSTER_CULL_LATE_COMP.words(), &OWN),
        }
    }

    fn register(&mut self, phase: CullPhase, registry: &mut Registry<'_>) -> ClusterCullHandles {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        self.follow_table();
        let tables = ClusterCull::register_tables(registry);
        let late = phase == CullPhase::Late;
        let mut read_write = |name: &str| {
            let buffer = registry.buffer(name);
            registry.read_write_storage_buffer(buffer, COMPUTE)
        };
        // The survivor pass wrote the verdicts of the culled objects' pairs.
        let late_outputs = late.then(|| [CLUSTER_BITS, CLUSTER_VERDICTS].map(&mut read_write));
        let outputs = [DRAW_COMMANDS, DRAW_COUNT, CLUSTER_STATS].map(read_write);
        let late_inputs = late.then(|| {
            let inputs = [CLUSTER_SURVIVORS, CLUSTER_OBJECT_PAIRS].map(|name| {
                let buffer = registry.buffer(name);
                registry.read_storage_buffer(buffer, COMPUTE)
            });
            let dispatch = registry.buffer(CLUSTER_DISPATCH);
            (inputs, registry.indirect_buffer(dispatch))
        });
        // The chains, and early last frame's states (the rule chooses from them); the late
        // phase's levels come with the survivors (this frame's states).
        let entries = registry.buffer(LOD_ENTRIES);
        let entries = registry.read_storage_buffer(entries, COMPUTE);
        let history = (!late).then(|| {
            let states = registry.history_buffer(OBJECT_LOD_LEVELS);
            registry.read_storage_buffer(states, COMPUTE)
        });
        ClusterCullHandles { tables, late_outputs, outputs, late_inputs, entries, history }
    }

    fn prepare(
        &mut self,
        _phase: CullPhase,
        context: &mut PrepareContext<'_>,
        views: &mut Vec<CullView>,
    ) -> Option<CullConstants> {
        self.prepare_view(context, views)
    }

    fn bind(&self, handles: &ClusterCullHandles, bind: &mut dyn FnMut(Binding)) {
        for &table in &handles.tables {
            bind(Binding::buffer(table));
        }
        for output in handles.late_outputs.iter().flatten().chain(&handles.outputs) {
            bind(Binding::buffer(output));
        }
        if let Some((inputs, _)) = handles.late_inputs {
            for input in inputs {
                bind(Binding::buffer(input));
            }
        }
        bind(Binding::buffer(handles.entries));
        if let Some(history) = handles.history {
            bind(Binding::buffer(history));
        }
    }

    fn dispatch(&self, handles: &ClusterCullHandles, constants: &CullConstants, context: &mut ExecuteContext<'_>) {
        if let Some((_, dispatch)) = handles.late_inputs {
            // One workgroup per object the object pass kept (the survivor pass's count).
            context.dispatch_indirect(dispatch, 0);
            return;
        }
        // Past 65,535 groups the pairs take several rows.
        self.dispatch_rows(context, constants.item_count.div_ceil(CLUSTER_GROUP));
    }
}

#[cfg(test)]
mod tests {
    use super::{cluster_dispatch_shape, CLUSTER_GROUP, CLUSTER_MAX_GROUPS};

    /// Every shape covers its groups with no dimension past the guaranteed limit, and no
    /// more rows than one past the count needs.
    fn check(groups: u32, row: u32) -> (u32, u32) {
        let (x, y) = cluster_dispatch_shape(groups, row);
        assert!(x <= CLUSTER_MAX_GROUPS && y <= CLUSTER_MAX_GROUPS, "{groups} groups, row {row}: ({x}, {y})");
        assert!(u64::from(x) * u64::from(y) >= u64::from(groups), "{groups} groups, row {row}: ({x}, {y}) covers");
        assert!(groups == 0 || u64::from(x) * u64::from(y - 1) < u64::from(groups), "({x}, {y}): a spare row");
        (x, y)
    }

    #[test]
    fn counts_past_one_dimension_run_in_rows() {
        assert_eq!(check(0, 0), (0, 0));
        assert_eq!(check(1, 0), (1, 1));
        assert_eq!(check(CLUSTER_MAX_GROUPS, 0), (CLUSTER_MAX_GROUPS, 1));
        assert_eq!(check(CLUSTER_MAX_GROUPS + 1, 0), (CLUSTER_MAX_GROUPS, 2));
        // A million chained objects' pairs (the city's chains counted at 982,714 objects).
        let pairs: u32 = 8_723_893;
        assert_eq!(check(pairs.div_ceil(CLUSTER_GROUP), 0), (CLUSTER_MAX_GROUPS, 3));
        // The most pairs a u32 counts.
        assert_eq!(check(u32::MAX.div_ceil(CLUSTER_GROUP), 0), (CLUSTER_MAX_GROUPS, 1025));
    }

    #[test]
    fn narrow_rows_widen_only_past_the_rows_limit() {
        assert_eq!(check(190, 3), (3, 64));
        assert_eq!(check(2, 3), (2, 1));
        assert_eq!(check(10, 1), (1, 10));
        assert_eq!(check(100, CLUSTER_MAX_GROUPS + 7), (100, 1));
        // Rows of one group would need 67,108,864 rows: the row widens to 1,025.
        let (x, y) = check(u32::MAX.div_ceil(CLUSTER_GROUP), 1);
        assert_eq!((x, y), (1025, 65_473));
    }
}

//! The cluster-culled scene frame: the standard passes drawing the meshlet list that
//! two-phase object and cluster culling write, and the readbacks of what the tests need.

use std::sync::{Arc, Mutex};

use culling::cluster::{ClusterSettings, ClusterStats, ClusterVerdict, CLUSTER_STAT_WORDS};
use render_graph::readback::{image_readback_buffer, BufferReadbackPass, ReadbackPass};
use render_graph::{ReadbackBuffer, RenderGraph, Result};

use crate::frame::{culled_frame_mode, points, ScenePassOptions};
use crate::names::{COLOR, COLOR_READBACK, DEPTH_PREPASS};
use crate::passes::{
    cluster_bits_bytes, color_readback_pass, lock_cluster_settings, BlendedPass, ClusterCullPass, ClusterRowWidth,
    ClusterSurvivorPass, CullPhase, CullResetPass, DepthPrepass, DrawMode, GeometryPass, GpuCullPass, GpuCullSettings,
    HiZBuildPass, LodUploadPass, MeshUploadPass, ObjectUploadPass, SharedClusterSettings, SharedCullSettings,
    ViewUploadPass, CLUSTER_BITS, CLUSTER_STATS, CLUSTER_VERDICTS,
};
use crate::scene::{lock_scene, ClusterTable, SharedScene};

/// Name of the imported host-visible buffer the cluster counters are copied into.
pub const CLUSTER_STATS_READBACK: &str = "cluster_stats_readback";
/// Name of the imported host-visible buffer the pair verdicts are copied into.
pub const CLUSTER_VERDICTS_READBACK: &str = "cluster_verdicts_readback";
/// Name of the imported host-visible buffer the pair bits are copied into.
pub const CLUSTER_BITS_READBACK: &str = "cluster_bits_readback";
/// Name of the imported host-visible buffer the early phase's depth is copied into.
pub const EARLY_DEPTH_READBACK: &str = "early_depth_readback";

/// What [`add_cluster_culled_scene_passes`] reads back besides the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterReadbacks {
    /// `color`.
    pub color: bool,
    /// [`CLUSTER_VERDICTS`] and [`CLUSTER_BITS`] (one u32 and one bit per pair).
    pub verdicts: bool,
    /// `depth_prepass` after the early phase, before the late one: the source of this
    /// frame's Hi-Z pyramid, for a CPU oracle.
    pub early_depth: bool,
}

/// What [`add_cluster_culled_scene_passes`] made.
pub struct ClusterCulledScene {
    /// The tables the passes culled at the build (host copy; the scene keeps the ones of
    /// now, [`GpuScene::cluster_table`](crate::GpuScene::cluster_table)). The verdict and
    /// bit readbacks hold the pairs of this table.
    pub table: ClusterTable,
    /// Settings of the cluster passes; change them with [`ClusterCulledScene::set_settings`]
    /// so that the object pass follows.
    pub settings: SharedClusterSettings,
    /// Settings of the object passes.
    pub object_settings: SharedCullSettings,
    /// The readback of `color`, when asked for.
    pub color: Option<ReadbackBuffer>,
    /// The readback of [`CLUSTER_VERDICTS`], when asked for.
    pub verdicts: Option<ReadbackBuffer>,
    /// The readback of [`CLUSTER_BITS`], when asked for.
    pub bits: Option<ReadbackBuffer>,
    /// The readback of the early depth (f32 texels, rows top first), when asked for.
    pub early_depth: Option<ReadbackBuffer>,
    /// The readback of [`CLUSTER_STATS`] (always).
    pub stats: ReadbackBuffer,
    /// How the scene passes draw.
    pub mode: DrawMode,
    /// The width of the rows of the cluster passes' direct dispatches.
    row_width: ClusterRowWidth,
}

impl ClusterCulledScene {
    /// Switches the tests of the object and cluster passes from the next frame on.
    pub fn set_settings(&self, settings: ClusterSettings) {
        *lock_cluster_settings(&self.settings) = settings;
        let mut objects = self.object_settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *objects = GpuCullSettings { frustum: settings.frustum, occlusion: settings.occlusion, ..*objects };
    }

    /// Runs the direct dispatches of the cluster passes (the early phase's pairs, the survivor
    /// pass's objects) in rows of at most `groups` workgroups from the next frame on (0, the
    /// default: 65,535, the most one dimension is guaranteed): a test narrows them so that a
    /// small scene runs on several rows, as a million chained objects do.
    pub fn set_dispatch_row(&self, groups: u32) {
        self.row_width.store(groups, std::sync::atomic::Ordering::Relaxed);
    }

    /// This frame's counters, once the frame has finished.
    pub fn read_stats(&self) -> Result<ClusterStats> {
        Ok(ClusterStats::from_counters(self.stats.read()?))
    }

    /// This frame's verdict of every pair into `out` (cleared first), once the frame has
    /// finished; nothing when the verdicts were not asked for.
    pub fn read_verdicts(&self, out: &mut Vec<ClusterVerdict>) -> Result<()> {
        out.clear();
        if let Some(verdicts) = &self.verdicts {
            let bytes = verdicts.read()?;
            let words = bytes.chunks_exact(4).take(self.table.pair_count() as usize);
            out.extend(words.map(|word| ClusterVerdict::from_code(u32::from_le_bytes(word.try_into().expect("4")))));
        }
        Ok(())
    }

    /// Whether pair `pair` was drawn-visible this frame (its [`CLUSTER_BITS`] bit); `false`
    /// when the bits were not asked for.
    pub fn read_bit(&self, pair: u32) -> Result<bool> {
        let Some(bits) = &self.bits else { return Ok(false) };
        let bytes = bits.read()?;
        Ok(bytes.get(pair as usize / 8).is_some_and(|byte| byte >> (pair % 8) & 1 == 1))
    }
}

/// Milliseconds of the early and late cluster passes in `graph`'s last finished frame (the
/// late phase's with its [`ClusterSurvivorPass`]).
pub fn cluster_pass_ms(graph: &render_graph::GraphStats) -> [Option<f64>; 2] {
    let ms = |name: &str| graph.pass_gpu_ms(name);
    let late = crate::passes::sum_gpu_ms(ms(ClusterSurvivorPass::NAME), ms(ClusterCullPass::LATE_NAME));
    [ms(ClusterCullPass::EARLY_NAME), late]
}

/// Has `scene` keep its cluster tables ([`GpuScene::track_clusters`](crate::GpuScene::track_clusters):
/// built now, and again by [`GpuScene::refresh_clusters`](crate::GpuScene::refresh_clusters), which
/// [`GpuScene::follow_growth`](crate::GpuScene::follow_growth) calls between frames,
/// when the objects name other meshes, meshes added while frames run included), imports the
/// scene's buffers with the tables, and adds the cluster-culled scene passes, in order: object upload,
/// mesh upload, [`LodUploadPass`], [`CullResetPass::clusters`], [`GpuCullPass`] early (only objects the table does not cover),
/// [`ClusterCullPass`] early, depth prepass, [`HiZBuildPass`], [`GpuCullPass`] late (bits
/// of every object; draws only uncovered objects), [`ClusterSurvivorPass`] (the kept
/// objects), [`ClusterCullPass`] late (their pairs only), late depth
/// prepass, geometry, the blended levels and pass, and the readbacks.
///
/// Returns [`GraphError::InvalidDescription`](render_graph::GraphError::InvalidDescription) when the output extent is zero or the device
/// has no indirect draws with a first instance.
pub fn add_cluster_culled_scene_passes(
    graph: &mut RenderGraph,
    scene: &SharedScene,
    options: &ScenePassOptions,
    settings: ClusterSettings,
    readbacks: ClusterReadbacks,
) -> Result<ClusterCulledScene> {
    let (extent, mode) = culled_frame_mode(
        graph,
        "cluster culling needs indirect draws with a first instance (drawIndirectFirstInstance)",
    )?;
    let device = Arc::clone(graph.device());
    let table = {
        let mut scene = lock_scene(scene);
        scene.track_clusters()?;
        scene.cluster_table().cloned().unwrap_or_default()
    };
    let pairs = table.pair_count();
    let object_settings = Arc::new(Mutex::new(GpuCullSettings {
        frustum: settings.frustum,
        occlusion: settings.occlusion,
        ..GpuCullSettings::default()
    }));
    let cluster_settings = Arc::new(Mutex::new(settings));
    let object_early = GpuCullPass::new(&device, Arc::clone(scene), Arc::clone(&object_settings), CullPhase::Early)?
        .drawing_after_clusters();
    let object_late = GpuCullPass::new(&device, Arc::clone(scene), Arc::clone(&object_settings), CullPhase::Late)?
        .drawing_after_clusters();
    let row_width = ClusterRowWidth::default();
    let cluster_early =
        ClusterCullPass::new(&device, Arc::clone(&cluster_settings), Arc::clone(scene), CullPhase::Early)?
            .with_row_width(&row_width);
    let survivors =
        ClusterSurvivorPass::new(&device, Arc::clone(&cluster_settings), Arc::clone(scene))?.with_row_width(&row_width);
    let cluster_late =
        ClusterCullPass::new(&device, Arc::clone(&cluster_settings), Arc::clone(scene), CullPhase::Late)?;
    let depth = DepthPrepass::with_mode(&device, Arc::clone(scene), mode)?;
    let late_depth = DepthPrepass::late(&device, Arc::clone(scene), mode)?;
    let geometry = GeometryPass::with_mode(&device, Arc::clone(scene), options.clear_color, mode)?;
    let hiz = HiZBuildPass::new(&device)?;
    let color = if readbacks.color { Some(image_readback_buffer(&device, COLOR_READBACK, extent)?) } else { None };
    let early_depth =
        if readbacks.early_depth { Some(image_readback_buffer(&device, EARLY_DEPTH_READBACK, extent)?) } else { None };
    let (verdicts, bits) = if readbacks.verdicts {
        let verdicts = ReadbackBuffer::new(&device, CLUSTER_VERDICTS_READBACK, u64::from(pairs.max(1)) * 4)?;
        (Some(verdicts), Some(ReadbackBuffer::new(&device, CLUSTER_BITS_READBACK, cluster_bits_bytes(pairs))?))
    } else {
        (None, None)
    };
    let stats = ReadbackBuffer::new(&device, CLUSTER_STATS_READBACK, CLUSTER_STAT_WORDS as u64 * 4)?;
    {
        // The lists are the GPU's, one command per meshlet or object: never instanced.
        let mut scene = lock_scene(scene);
        scene.import_into(graph);
        scene.draw_gpu_list();
    }
    graph.share_resource(COLOR);
    graph.add_typed_pass(ObjectUploadPass::new(&device, Arc::clone(scene))?);
    graph.add_typed_pass(MeshUploadPass::new(Arc::clone(scene)));
    // The culls choose the levels of the records' chains (`cluster_cull.h`).
    graph.add_typed_pass(LodUploadPass::new(Arc::clone(scene)));
    graph.add_typed_pass(ViewUploadPass::new(Arc::clone(scene)));
    graph.add_insertion_point(points::AFTER_UPLOAD)?;
    graph.add_insertion_point(points::BEFORE_CULL)?;
    let zero_commands = mode != DrawMode::IndirectCount;
    let reset = move |scene: &crate::GpuScene| {
        let layout = scene.cluster_layout();
        CullResetPass::clusters(layout.list_room, layout.pairs, layout.objects, zero_commands)
    };
    let first_reset = reset(&lock_scene(scene));
    graph.add_typed_pass(first_reset.following(Arc::clone(scene), reset));
    graph.add_typed_pass(object_early);
    graph.add_typed_pass(cluster_early);
    graph.add_typed_pass(depth);
    graph.add_typed_pass(hiz);
    if let Some(early_depth) = &early_depth {
        graph.import_buffer(EARLY_DEPTH_READBACK, early_depth.shared());
        graph.add_typed_pass(ReadbackPass::with_names(DEPTH_PREPASS, EARLY_DEPTH_READBACK));
    }
    graph.add_insertion_point(points::BETWEEN_CULL_PHASES)?;
    graph.add_typed_pass(object_late);
    graph.add_typed_pass(survivors);
    graph.add_typed_pass(cluster_late);
    graph.add_typed_pass(late_depth);
    graph.add_typed_pass(HiZBuildPass::final_depth(&device)?);
    graph.add_insertion_point(points::AFTER_DEPTH_PREPASS)?;
    graph.add_typed_pass(geometry);
    // The blended objects at the levels the object cull chose (`blended_levels.comp`).
    let (blended_levels, blended) = BlendedPass::gpu_culled_levels(&device, Arc::clone(scene))?;
    graph.add_typed_pass(blended_levels);
    graph.add_typed_pass(blended);
    graph.add_insertion_point(points::AFTER_GEOMETRY)?;
    graph.add_insertion_point(points::BEFORE_OUTPUT)?;
    if let Some(color) = &color {
        graph.import_buffer(COLOR_READBACK, color.shared());
        graph.add_typed_pass(color_readback_pass());
    }
    if let (Some(verdicts), Some(bits)) = (&verdicts, &bits) {
        graph.import_buffer(CLUSTER_VERDICTS_READBACK, verdicts.shared());
        graph.add_typed_pass(BufferReadbackPass::new(CLUSTER_VERDICTS, CLUSTER_VERDICTS_READBACK));
        graph.import_buffer(CLUSTER_BITS_READBACK, bits.shared());
        graph.add_typed_pass(BufferReadbackPass::new(CLUSTER_BITS, CLUSTER_BITS_READBACK));
    }
    graph.import_buffer(CLUSTER_STATS_READBACK, stats.shared());
    graph.add_typed_pass(BufferReadbackPass::new(CLUSTER_STATS, CLUSTER_STATS_READBACK));
    Ok(ClusterCulledScene {
        table,
        settings: cluster_settings,
        object_settings,
        color,
        verdicts,
        bits,
        early_depth,
        stats,
        mode,
        row_width,
    })
}

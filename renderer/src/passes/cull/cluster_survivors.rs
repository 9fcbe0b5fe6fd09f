//! [`ClusterSurvivorPass`]: between the object pass and the late cluster phase, one thread
//! per object the cluster tables cover (`cluster_survivors.comp`). A kept object is appended
//! to [`CLUSTER_SURVIVORS`] and widens [`CLUSTER_DISPATCH`], the late phase's indirect
//! dispatch (one workgroup per survivor), so the late phase never visits the pairs of culled
//! objects (most of them); a culled object's pairs get their verdict here, from its box.
//! Each survivor carries the level its slot's state names this frame
//! ([`SURVIVOR_LEVEL_SHIFT`]), the level the late phase draws the meshlets of.
//! It is a step of the meshlet cull's skeleton ([`TwoPhaseCull`]) with the cull's view and
//! inputs, run with the early phase's bindings (no pyramid).

use std::sync::Arc;

use render_graph::{
    Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ExecuteContext, GpuDevice, PrepareContext, Registry,
    ShaderStage,
};

use super::camera::VISIBILITY_BITS;
use super::cluster::{
    ClusterCull, ClusterRowWidth, SharedClusterSettings, CLUSTER_BITS, CLUSTER_DISPATCH, CLUSTER_GROUP, CLUSTER_STATS,
    CLUSTER_SURVIVORS, CLUSTER_VERDICTS,
};
use super::skeleton::{CullKind, CullPhase, TwoPhaseCull};
use super::view::{CullConstants, CullView};
use crate::names::OBJECT_LOD_LEVELS;
use crate::passes::hiz::HIZ_DEPTH;
use crate::scene::{SharedScene, CLUSTER_OBJECT_PAIRS};

/// The survivor step of the meshlet cull: the [`CullKind`] of [`ClusterSurvivorPass`].
pub struct ClusterSurvivors {
    cull: ClusterCull,
}

/// The survivor step's own resources, in binding order: the tables, the object bits and pair
/// ranges it reads, the verdicts, survivors, dispatch and counters it writes, and this
/// frame's LOD states it reads.
pub struct ClusterSurvivorHandles {
    reads: [BufferRead; 5],
    writes: [BufferWrite; 4],
    states: BufferRead,
}

/// A survivor is its object with, from this bit on, the level its slot's state names this
/// frame (`SURVIVOR_LEVEL_SHIFT` in `config.h`): the late phase draws that level's meshlets.
pub const SURVIVOR_LEVEL_SHIFT: u32 = 29;

/// The survivor pass of the cluster cull (see the module docs).
pub type ClusterSurvivorPass = TwoPhaseCull<ClusterSurvivors>;

impl TwoPhaseCull<ClusterSurvivors> {
    /// Name of the pass in the graph.
    pub const NAME: &'static str = "cluster survivors";

    /// A survivor pass over the objects `scene`'s cluster tables cover (kept by the scene:
    /// [`GpuScene::track_clusters`](crate::GpuScene::track_clusters)).
    pub fn new(
        device: &Arc<GpuDevice>,
        settings: SharedClusterSettings,
        scene: SharedScene,
    ) -> render_graph::Result<ClusterSurvivorPass> {
        let kind = ClusterSurvivors { cull: ClusterCull::new(settings, scene) };
        TwoPhaseCull::with_kind(device, kind, CullPhase::Early)
    }

    /// The pass, its dispatch in rows of the width `row` holds (shared with the cluster cull).
    pub fn with_row_width(mut self, row: &ClusterRowWidth) -> ClusterSurvivorPass {
        self.kind_mut().cull.row = Arc::clone(row);
        self
    }
}

impl CullKind for ClusterSurvivors {
    type Handles = ClusterSurvivorHandles;

    const HISTORY: &'static str = CLUSTER_BITS;
    const PYRAMID: &'static str = HIZ_DEPTH;

    fn name(&self, _phase: CullPhase) -> &'static str {
        ClusterSurvivorPass::NAME
    }

    fn shader(&self, _phase: CullPhase) -> (&'static [u32], &'static [BindingKind]) {
        (shaders::CLUSTER_SURVIVORS_COMP.words(), &[BindingKind::StorageBuffer; 10])
    }

    fn register(&mut self, _phase: CullPhase, registry: &mut Registry<'_>) -> ClusterSurvivorHandles {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        self.cull.follow_table();
        let [meshlets, pairs, objects] = ClusterCull::register_tables(registry);
        let [object_bits, object_pairs] = [VISIBILITY_BITS, CLUSTER_OBJECT_PAIRS].map(|name| {
            let buffer = registry.buffer(name);
            registry.read_storage_buffer(buffer, COMPUTE)
        });
        let size = u64::from(self.cull.pair_count().max(1)) * 4;
        let verdicts = registry.create_buffer(CLUSTER_VERDICTS, BufferDesc { size });
        let verdicts = registry.write_storage_buffer(verdicts, COMPUTE);
        let [survivors, dispatch, stats] = [CLUSTER_SURVIVORS, CLUSTER_DISPATCH, CLUSTER_STATS].map(|name| {
            let buffer = registry.buffer(name);
            registry.read_write_storage_buffer(buffer, COMPUTE)
        });
        // This frame's states (the object cull's late phase wrote them), packed with the
        // survivors for the late phase.
        let states = registry.buffer(OBJECT_LOD_LEVELS);
        let states = registry.read_storage_buffer(states, COMPUTE);
        ClusterSurvivorHandles {
            reads: [meshlets, pairs, objects, object_bits, object_pairs],
            writes: [verdicts, survivors, dispatch, stats],
            states,
        }
    }

    fn prepare(
        &mut self,
        _phase: CullPhase,
        context: &mut PrepareContext<'_>,
        views: &mut Vec<CullView>,
    ) -> Option<CullConstants> {
        self.cull.prepare_view(context, views)
    }

    fn bind(&self, handles: &ClusterSurvivorHandles, bind: &mut dyn FnMut(Binding)) {
        for &buffer in &handles.reads {
            bind(Binding::buffer(buffer));
        }
        for buffer in &handles.writes {
            bind(Binding::buffer(buffer));
        }
        bind(Binding::buffer(handles.states));
    }

    fn dispatch(&self, _handles: &ClusterSurvivorHandles, constants: &CullConstants, context: &mut ExecuteContext<'_>) {
        // At least one group: its first thread writes the dispatch's y and z and the meshlet
        // counter even when no object is covered.
        // Past 65,535 groups the objects take several rows.
        self.cull.dispatch_rows(context, constants.object_count.div_ceil(CLUSTER_GROUP).max(1));
    }
}

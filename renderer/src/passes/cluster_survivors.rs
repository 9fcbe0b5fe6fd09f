//! [`ClusterSurvivorPass`]: between the object pass and the late cluster phase, one thread
//! per object the cluster tables cover (`cluster_survivors.comp`). A kept object is appended
//! to [`CLUSTER_SURVIVORS`] and widens [`CLUSTER_DISPATCH`], the late phase's indirect
//! dispatch (one workgroup per survivor), so the late phase never visits the pairs of culled
//! objects (most of them); a culled object's pairs get their verdict here, from its box.

use std::sync::Arc;

use crate::names::{OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::SharedScene;
use render_graph::{
    Binding, BindingKind, BufferHandle, ComputePipeline, ExecuteContext, GpuDevice, Pass, PrepareContext, Registry,
    ShaderStage,
};

use super::cluster::{
    stage_uniforms, SharedClusterSettings, CLUSTER_BITS, CLUSTER_DISPATCH, CLUSTER_GROUP, CLUSTER_MAX_GROUPS,
    CLUSTER_STATS, CLUSTER_SURVIVORS, CLUSTER_VERDICTS,
};
use super::cull::VISIBILITY_BITS;
use crate::scene::{ClusterTable, CLUSTER_MESHLETS, CLUSTER_OBJECTS, CLUSTER_OBJECT_PAIRS, CLUSTER_PAIRS};

/// The survivor pass of the cluster cull (see the module docs).
pub struct ClusterSurvivorPass {
    pipeline: ComputePipeline,
    scene: SharedScene,
    settings: SharedClusterSettings,
    counts: [u32; 3],
    uniforms: Option<Binding>,
    buffers: Vec<BufferHandle>,
}

impl ClusterSurvivorPass {
    /// Name of the pass in the graph.
    pub const NAME: &'static str = "cluster survivors";

    /// A survivor pass over the objects of `table` (imported as the cluster tables).
    pub fn new(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        settings: SharedClusterSettings,
        table: &ClusterTable,
    ) -> render_graph::Result<ClusterSurvivorPass> {
        let mut kinds = vec![BindingKind::UniformBuffer];
        kinds.extend([BindingKind::StorageBuffer; 12]);
        let pipeline = ComputePipeline::new(device, Self::NAME, shaders::CLUSTER_SURVIVORS_COMP.words(), &kinds, 0)?;
        Ok(ClusterSurvivorPass {
            pipeline,
            scene,
            settings,
            counts: [table.pair_count(), table.meshlet_pair_count(), table.object_count()],
            uniforms: None,
            buffers: Vec::with_capacity(12),
        })
    }
}

impl Pass for ClusterSurvivorPass {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        self.buffers.clear();
        // Bindings 1-6 as in `cluster_cull.h`, then the object bits and pair ranges.
        for name in [OBJECT_RECORDS, OBJECT_TRANSFORMS, CLUSTER_MESHLETS, CLUSTER_PAIRS, CLUSTER_OBJECTS] {
            let buffer = registry.buffer(name);
            self.buffers.push(registry.read_storage_buffer(buffer, COMPUTE));
        }
        let history = registry.history_buffer(CLUSTER_BITS);
        self.buffers.push(registry.read_storage_buffer(history, COMPUTE));
        for name in [VISIBILITY_BITS, CLUSTER_OBJECT_PAIRS] {
            let buffer = registry.buffer(name);
            self.buffers.push(registry.read_storage_buffer(buffer, COMPUTE));
        }
        let size = u64::from(self.counts[0].max(1)) * 4;
        let verdicts = registry.create_buffer(CLUSTER_VERDICTS, render_graph::BufferDesc { size });
        self.buffers.push(registry.write_storage_buffer(verdicts, COMPUTE));
        for name in [CLUSTER_SURVIVORS, CLUSTER_DISPATCH, CLUSTER_STATS] {
            let buffer = registry.buffer(name);
            self.buffers.push(registry.read_write_storage_buffer(buffer, COMPUTE));
        }
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        self.uniforms = stage_uniforms(context, &self.scene, &self.settings, self.counts);
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        let Some(uniforms) = self.uniforms else { return };
        let mut bindings = [uniforms; 13];
        for (slot, &handle) in bindings[1..].iter_mut().zip(&self.buffers) {
            *slot = Binding::Buffer(handle);
        }
        context.bind_compute(&self.pipeline, &bindings);
        // At least one group: its first thread writes the dispatch's y and z and the
        // meshlet counter even when no object is covered.
        let groups = self.counts[2].div_ceil(CLUSTER_GROUP).max(1);
        if groups > CLUSTER_MAX_GROUPS {
            context.fail(render_graph::GraphError::InvalidDescription {
                resource: String::from(CLUSTER_OBJECT_PAIRS),
                reason: "more covered objects than one dispatch covers (65,535 groups of 64)",
            });
            return;
        }
        context.dispatch(groups, 1, 1);
    }
}

//! [`DrawBatchPass`]: what the GPU-culled frame's instanced lists start from each frame. The
//! batch ids of the slots that changed go into `object_batches` (a scatter, like the object
//! upload's), and, with batching on, both lists of `draw_commands` get one template command per
//! batch ([`BatchTable::template`](crate::BatchTable::template): the key's index range, no
//! instances, `firstInstance` the base of the batch's run, the late list's runs in the second
//! half of `draw_instances`) and `draw_count` the number of batches in each. The culls then
//! append the kept objects' slots to their runs (`gpu_cull.h`).
//!
//! Empty batches stay in the lists as commands of no instances: the lists are laid out once
//! per change of the scene, not per frame, and each cull phase appends with one atomic add
//! and no second compaction pass; a command of no instances costs the command processor a
//! read. The culls count the commands that draw something (`GpuCullStats::early_commands`,
//! `late_commands`).

use std::sync::Arc;

use crate::names::{DRAW_COMMANDS, DRAW_COUNT, LOD_ENTRIES, OBJECT_BATCHES};
use crate::passes::SCATTER_GROUP;
use crate::scene::{as_bytes, lock_scene, DrawCommand, SharedScene, DRAW_COMMAND_BYTES, LOD_INSTANCE_ROOM};
use render_graph::{Access, Binding, BindingKind, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice};
use render_graph::{PrepareContext, Registry, Result, ShaderStage, TypedPass};

/// Workgroups one scatter dispatches at most (the shader strides over the rest).
const MAX_SCATTER_GROUPS: u32 = 65_535;

/// The batch ids staged this frame: (slot, id) pairs and their count.
#[derive(Clone, Copy, Debug)]
struct StagedIds {
    pairs: Binding,
    count: u32,
}

/// Uploads the changed batch ids and, when the scene batches its draws
/// ([`GpuScene::set_batch_draws`](crate::GpuScene::set_batch_draws)), the frame's template
/// commands and counts (see the module docs). Runs after [`CullResetPass::objects`](super::CullResetPass::objects)
/// and before the early cull; `capacity` is the scene's, the room of each list.
pub struct DrawBatchPass {
    scene: SharedScene,
    pipeline: ComputePipeline,
    capacity: u32,
    staged: Option<StagedIds>,
    /// Scratch: this frame's templates (both lists) and counts, keeping their capacity.
    templates: Vec<DrawCommand>,
}

impl DrawBatchPass {
    /// Name of the pass.
    pub const NAME: &'static str = "draw batches";

    /// The pass for `scene` (its buffers imported, `object_batches` among them).
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene) -> Result<DrawBatchPass> {
        let bindings = [BindingKind::StorageBuffer; 2];
        let pipeline = ComputePipeline::new(device, Self::NAME, shaders::BATCH_SCATTER_COMP.words(), &bindings, 4)?;
        let capacity = lock_scene(&scene).capacity();
        // A table on a device buffer of its own: every slot's id goes up with the first frame.
        lock_scene(&scene).batches_mut().mark_all_changed();
        Ok(DrawBatchPass { scene, pipeline, capacity, staged: None, templates: Vec::new() })
    }

    /// Stages the changed ids; the frame fails (and every id goes again) when staging does.
    fn stage_ids(&mut self, context: &mut PrepareContext<'_>) {
        let mut scene = lock_scene(&self.scene);
        let count = scene.object_count();
        let pending = scene.batches().changed_count().map_or(count as usize, |changed| changed.min(count as usize));
        if pending == 0 {
            return;
        }
        let staged = context.stage_with(pending as u64 * 8, |out| {
            let mut chunks = out.chunks_exact_mut(8);
            scene.batches_mut().take_changed(count, |slot, id| {
                if let Some(chunk) = chunks.next() {
                    chunk[..4].copy_from_slice(&slot.to_le_bytes());
                    chunk[4..].copy_from_slice(&id.to_le_bytes());
                }
            });
        });
        match staged {
            Ok(pairs) => self.staged = Some(StagedIds { pairs, count: pending as u32 }),
            Err(error) => {
                scene.batches_mut().mark_all_changed();
                context.fail(error);
            }
        }
    }
}

impl TypedPass for DrawBatchPass {
    /// `object_batches`, `draw_commands`, `draw_count` and `lod_entries`.
    type Handles = (BufferWrite, BufferWrite, BufferWrite, BufferWrite);

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        // The lists' room follows the scene's capacity as the reset sizes them.
        self.capacity = lock_scene(&self.scene).capacity();
        let batches = registry.buffer(OBJECT_BATCHES);
        let commands = registry.buffer(DRAW_COMMANDS);
        let count = registry.buffer(DRAW_COUNT);
        let lod_entries = registry.buffer(LOD_ENTRIES);
        (
            registry.write_storage_buffer(batches, ShaderStage::Compute),
            registry.write_buffer(commands, Access::TransferWrite),
            registry.write_buffer(count, Access::TransferWrite),
            registry.write_buffer(lod_entries, Access::TransferWrite),
        )
    }

    fn prepare(&mut self, (_, commands, count, lod_entries): &Self::Handles, context: &mut PrepareContext<'_>) {
        self.staged = None;
        self.stage_ids(context);
        let mut scene = lock_scene(&self.scene);
        if let Some(entries) = scene.lod_entries_to_upload() {
            if let Err(error) = context.upload_buffer(lod_entries, 0, as_bytes(entries)) {
                scene.lod_upload_failed();
                context.fail(error);
                return;
            }
        }
        let batched = scene.batches_fit();
        scene.set_gpu_list_instanced(batched);
        if !batched {
            // The reset zeroed the counts: the culls append one command per object.
            return;
        }
        let table = scene.batches_mut();
        if table.layout_changed() {
            table.layout();
        }
        let batches = table.len();
        if batches == 0 {
            // No object: the reset's zero counts draw nothing.
            return;
        }
        // The early list's runs fill the first half of `draw_instances`, the late list's the
        // second: an object drawn in either phase has its place.
        let late_runs = self.capacity * LOD_INSTANCE_ROOM;
        self.templates.clear();
        self.templates.extend((0..batches).map(|id| table.template(id, 0)));
        self.templates.extend((0..batches).map(|id| table.template(id, late_runs)));
        let (early, late) = self.templates.split_at(batches as usize);
        let late_at = u64::from(self.capacity) * DRAW_COMMAND_BYTES;
        let result = context
            .upload_buffer(commands, 0, as_bytes(early))
            .and_then(|()| context.upload_buffer(commands, late_at, as_bytes(late)))
            .and_then(|()| context.upload_buffer(count, 0, as_bytes(&[batches, batches])));
        if let Err(error) = result {
            context.fail(error);
        }
    }

    fn execute(&mut self, (batches, _, _, _): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let Some(staged) = self.staged.take() else { return };
        context.bind_compute(&self.pipeline, &[staged.pairs, Binding::buffer(batches)]);
        context.push_constants(&[staged.count]);
        context.dispatch(staged.count.div_ceil(SCATTER_GROUP).min(MAX_SCATTER_GROUPS), 1, 1);
    }
}

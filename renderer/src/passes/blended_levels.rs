//! The blended objects' levels of detail on a GPU-culled frame: a compute step between the
//! late cull and the blended pass (`blended_levels.comp`) writes one indexed indirect command
//! per blended object of the main view, in the host's back-to-front order, at the level the
//! camera's cull chose for the object this frame (`object_lod_levels`, which the late cull
//! leaves every slot its frustum keeps), so a translucent object draws the mesh the opaque
//! passes would draw for it. The blended pass sorts in its `prepare` and stages the order;
//! this pass, recorded after every pass prepared, dispatches over it, and the blended pass
//! draws each command in that order (`draw_indexed_indirect`, one command each, as it drew one
//! direct draw each before).
//!
//! `blended_draws` holds a command per object slot of the scene's capacity (20 bytes each),
//! created only while the scene draws blended objects (the graph compiles again when a blended
//! material comes or the scene grows). The cluster-culled frame adds it too (its object cull
//! keeps the states). The other window views of a split-screen frame draw their blended
//! objects at the record's level (the main view's), as the host's lists do.

use std::sync::{Arc, Mutex, PoisonError};

use render_graph::{Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext};
use render_graph::{GpuDevice, Registry, Result, ShaderStage, TypedPass};

use crate::names::{LOD_ENTRIES, OBJECT_LOD_LEVELS, OBJECT_RECORDS};
use crate::scene::{lock_scene, SharedScene, DRAW_COMMAND_BYTES};

/// The commands the blended pass draws on a GPU-culled frame, a [`DRAW_COMMAND_BYTES`] each.
pub const BLENDED_DRAWS: &str = "blended_draws";

/// Threads per workgroup of `blended_levels.comp` (`BLENDED_LEVELS_GROUP` in `config.h`).
pub const BLENDED_LEVELS_GROUP: u32 = 64;

/// The main view's blended slots in drawing order, staged by the blended pass's `prepare`
/// for [`BlendedLevelsPass`]'s dispatch (`None`: nothing to draw this frame).
#[derive(Clone, Copy, Default)]
pub(crate) struct StagedOrder {
    pub(crate) slots: Option<(Binding, u32)>,
}

/// [`StagedOrder`] shared by the two passes of a frame.
pub(crate) type SharedOrder = Arc<Mutex<StagedOrder>>;

/// Locks `order`, a poisoned lock read as it stands (the order is plain data).
pub(crate) fn lock_order(order: &SharedOrder) -> std::sync::MutexGuard<'_, StagedOrder> {
    order.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The compute step of the module docs, named `"blended levels"`; added by
/// [`BlendedPass::gpu_culled_levels`](crate::BlendedPass::gpu_culled_levels) with its blended
/// pass, before it.
pub struct BlendedLevelsPass {
    pipeline: ComputePipeline,
    scene: SharedScene,
    order: SharedOrder,
}

/// What [`BlendedLevelsPass`] reads and writes while the scene draws blended objects.
pub struct BlendedLevelsHandles {
    reads: Option<([BufferRead; 3], BufferWrite)>,
}

impl BlendedLevelsPass {
    pub(crate) fn new(device: &Arc<GpuDevice>, scene: SharedScene, order: SharedOrder) -> Result<BlendedLevelsPass> {
        let bindings = [BindingKind::StorageBuffer; 5];
        let words = shaders::BLENDED_LEVELS_COMP.words();
        let pipeline = ComputePipeline::new(device, "blended levels", words, &bindings, 8)?;
        Ok(BlendedLevelsPass { pipeline, scene, order })
    }
}

impl TypedPass for BlendedLevelsPass {
    type Handles = BlendedLevelsHandles;

    fn name(&self) -> &str {
        "blended levels"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> BlendedLevelsHandles {
        let (active, capacity) = {
            let scene = lock_scene(&self.scene);
            (scene.draws_blended(), scene.capacity())
        };
        if !active {
            // The blended pass does not run either: nothing reads the commands.
            registry.optional();
            return BlendedLevelsHandles { reads: None };
        }
        let reads = [OBJECT_RECORDS, LOD_ENTRIES, OBJECT_LOD_LEVELS].map(|name| {
            let buffer = registry.buffer(name);
            registry.read_storage_buffer(buffer, ShaderStage::Compute)
        });
        let size = u64::from(capacity.max(1)) * DRAW_COMMAND_BYTES;
        let draws = registry.create_buffer(BLENDED_DRAWS, BufferDesc { size });
        BlendedLevelsHandles { reads: Some((reads, registry.write_storage_buffer(draws, ShaderStage::Compute))) }
    }

    fn execute(&mut self, handles: &BlendedLevelsHandles, context: &mut ExecuteContext<'_>) {
        let Some(([records, entries, levels], draws)) = &handles.reads else { return };
        let Some((order, count)) = lock_order(&self.order).slots else { return };
        if count == 0 {
            return;
        }
        // The camera's cull chooses levels exactly when the scene has the view's rule.
        let lod = lock_scene(&self.scene).lod_view().is_some();
        let bindings = [
            Binding::buffer(*records),
            Binding::buffer(*entries),
            Binding::buffer(*levels),
            order,
            Binding::buffer(draws),
        ];
        context.bind_compute(&self.pipeline, &bindings);
        context.push_constants(&[count, u32::from(lod)]);
        context.dispatch(count.div_ceil(BLENDED_LEVELS_GROUP), 1, 1);
    }
}

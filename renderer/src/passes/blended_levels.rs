//! The blended objects' levels of detail on a GPU-culled frame: a compute step between the
//! late cull and the blended pass (`blended_levels.comp`) writes one indexed indirect command
//! per blended object of each view, view after view in the host's back-to-front order of
//! each, at the level that view's cull chose for the object this frame: the main view's is
//! the slot's state (`object_lod_levels`, which the late cull leaves every slot its frustum
//! keeps); another window view of a split-screen frame chooses from that state by its own eye
//! and rule ([`BlendedView`], as the camera's cull does for it), so a translucent object draws
//! the mesh the opaque passes would draw for it in every view. The blended pass sorts in its `prepare` and stages the order;
//! this pass, recorded after every pass prepared, dispatches over it, and the blended pass
//! draws each command in that order (`draw_indexed_indirect`, one command each, as it drew one
//! direct draw each before).
//!
//! `blended_draws` holds a command per object slot of the scene's capacity and view the cull
//! has room for (20 bytes each), created only while the scene draws blended objects (the graph
//! compiles again when a blended material comes, the scene grows or the views outgrow the
//! room). The cluster-culled frame adds it too (its object cull keeps the states).

use std::sync::{Arc, Mutex, PoisonError};

use render_graph::{Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ComputePipeline, ExecuteContext};
use render_graph::{GpuDevice, Registry, Result, ShaderStage, TypedPass};

use crate::names::{LOD_ENTRIES, OBJECT_LOD_LEVELS, OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{lock_scene, SharedScene, DRAW_COMMAND_BYTES};

/// The commands the blended pass draws on a GPU-culled frame, a [`DRAW_COMMAND_BYTES`] each.
pub const BLENDED_DRAWS: &str = "blended_draws";

/// Threads per workgroup of `blended_levels.comp` (`BLENDED_LEVELS_GROUP` in `config.h`).
pub const BLENDED_LEVELS_GROUP: u32 = 64;

/// Every view's blended slots in drawing order (`[slot, view]` each) and the views, staged by
/// the blended pass's `prepare` for [`BlendedLevelsPass`]'s dispatch (`None`: nothing to draw
/// this frame).
#[derive(Clone, Copy, Default)]
pub(crate) struct StagedOrder {
    pub(crate) slots: Option<(Binding, u32)>,
    pub(crate) views: Option<Binding>,
}

/// A view's side of the level rules for its blended objects (`BlendedView` in
/// `blended_levels.comp`, 48 bytes): the fields of its cull's [`CullView`](crate::CullView)
/// that choose levels.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct BlendedView {
    lod: culling::LodErrorView,
    lod_eye: [f32; 4],
    flags: u32,
    bias: u32,
    main_view: u32,
    pad: u32,
}

const _: () = assert!(std::mem::size_of::<BlendedView>() == 48, "BlendedView must match blended_levels.comp");

impl BlendedView {
    /// The main view: its levels are the slots' states.
    pub(crate) fn main() -> BlendedView {
        BlendedView { main_view: 1, ..BlendedView::default() }
    }

    /// Another window view culled as `view` (its rules and eye).
    pub(crate) fn window(view: &crate::CullView) -> BlendedView {
        BlendedView {
            lod: view.lod,
            lod_eye: view.lod_eye,
            flags: view.flags,
            bias: view.padding,
            main_view: 0,
            pad: 0,
        }
    }

    /// The view's bytes, as staged.
    pub(crate) fn bytes(&self) -> [u8; 48] {
        let mut out = [0u8; 48];
        let lod = [self.lod.pixels_per_unit.to_bits(), self.lod.coarsen_sq.to_bits(), self.lod.keep_sq.to_bits()];
        let words = lod.into_iter().chain([self.lod.orthographic]).chain(self.lod_eye.map(f32::to_bits)).chain([
            self.flags,
            self.bias,
            self.main_view,
            self.pad,
        ]);
        for (chunk, word) in out.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
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
    reads: Option<([BufferRead; 4], BufferWrite)>,
}

impl BlendedLevelsPass {
    pub(crate) fn new(device: &Arc<GpuDevice>, scene: SharedScene, order: SharedOrder) -> Result<BlendedLevelsPass> {
        let bindings = [BindingKind::StorageBuffer; 7];
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
            // A command per slot and view the cull has room for.
            (scene.draws_blended(), scene.capacity().max(1) * scene.gpu_view_room().max(1))
        };
        if !active {
            // The blended pass does not run either: nothing reads the commands.
            registry.optional();
            return BlendedLevelsHandles { reads: None };
        }
        let reads = [OBJECT_RECORDS, LOD_ENTRIES, OBJECT_LOD_LEVELS, OBJECT_TRANSFORMS].map(|name| {
            let buffer = registry.buffer(name);
            registry.read_storage_buffer(buffer, ShaderStage::Compute)
        });
        let size = u64::from(capacity) * DRAW_COMMAND_BYTES;
        let draws = registry.create_buffer(BLENDED_DRAWS, BufferDesc { size });
        BlendedLevelsHandles { reads: Some((reads, registry.write_storage_buffer(draws, ShaderStage::Compute))) }
    }

    fn execute(&mut self, handles: &BlendedLevelsHandles, context: &mut ExecuteContext<'_>) {
        let Some(([records, entries, levels, transforms], draws)) = &handles.reads else { return };
        let staged = *lock_order(&self.order);
        let (Some((order, count)), Some(views)) = (staged.slots, staged.views) else { return };
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
            Binding::buffer(*transforms),
            views,
        ];
        context.bind_compute(&self.pipeline, &bindings);
        context.push_constants(&[count, u32::from(lod)]);
        context.dispatch(count.div_ceil(BLENDED_LEVELS_GROUP), 1, 1);
    }
}

//! The passes that move the host scene to the GPU each frame: the changed object transforms
//! and records into `object_transforms` and `object_records`, and the draw list into
//! `draw_commands`, `draw_count` and `draw_instances`.

use std::sync::Arc;

use crate::names::{DRAW_COMMANDS, DRAW_COUNT, DRAW_INSTANCES, OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{as_bytes, DRAW_COMMAND_BYTES, OBJECT_RECORD_BYTES, OBJECT_TRANSFORM_BYTES};
use crate::scene::{lock_scene, MeshCopy, RecordedCopy, SharedScene, MAX_WINDOW_VIEWS};
use render_graph::vk;
use render_graph::GpuDevice;
use render_graph::{Access, ShaderStage};
use render_graph::{Binding, ExecuteContext, PrepareContext};
use render_graph::{BindingKind, ComputePipeline};
use render_graph::{BufferDesc, BufferWrite, Registry, TypedPass};
use render_graph::{GraphError, Result};

/// Threads per workgroup of the scatter shader (`SCATTER_GROUP` in `scene_scatter.comp`).
pub const SCATTER_GROUP: u32 = 64;

/// Workgroups one scatter dispatches at most; the shader's grid-stride loop takes the rest
/// (Vulkan guarantees 65,535 groups per dimension).
const MAX_SCATTER_GROUPS: u32 = 65_535;

/// Set-0 bindings of `scene_scatter.comp`: 0 the slots, 1 the staged items, 2 the target.
const SCATTER_BINDINGS: [BindingKind; 3] =
    [BindingKind::StorageBuffer, BindingKind::StorageBuffer, BindingKind::StorageBuffer];

/// One kind of object data staged this frame: its slots and items in staging memory.
#[derive(Clone, Copy, Debug)]
struct Staged {
    slots: Binding,
    items: Binding,
    count: u32,
}

/// Uploads every object transform and record the scene marked since the last frame, however
/// many, and scatters them into their slots of the imported `object_transforms` and
/// `object_records` with a compute shader: one dispatch per buffer, whatever the pattern of
/// slots (a copy command per run of slots would cost a region per mover). A still scene
/// uploads nothing. The frame's bytes are in [`crate::scene::GpuScene::last_upload`].
///
/// In the frame after the scene grew ([`crate::scene::GpuScene::reserve`]), the pass first
/// copies the outgrown buffers into the new ones (transfers, then a barrier that makes them
/// visible to every later access), then scatters. Outgrown mesh buffers
/// ([`crate::scene::GpuScene::stream_frame`]) are copied here too, before the frame's
/// [`MeshUploadPass`](crate::passes::MeshUploadPass) writes the new meshes' bytes over them.
pub struct ObjectUploadPass {
    scene: SharedScene,
    pipeline: ComputePipeline,
    /// This frame's staged transforms and records.
    staged: [Option<Staged>; 2],
    /// This frame's copies of outgrown buffers (empty unless the scene grew).
    copies: Vec<RecordedCopy>,
    /// This frame's copies of outgrown mesh buffers (empty unless a mesh buffer grew).
    mesh_copies: Vec<MeshCopy>,
}

impl ObjectUploadPass {
    /// A pass uploading `scene`'s changes; the scene's buffers must be imported
    /// ([`crate::scene::GpuScene::import_into`]).
    pub fn new(device: &Arc<GpuDevice>, scene: SharedScene) -> Result<ObjectUploadPass> {
        let pipeline =
            ComputePipeline::new(device, "object_upload", shaders::SCENE_SCATTER_COMP.words(), &SCATTER_BINDINGS, 8)?;
        Ok(ObjectUploadPass { scene, pipeline, staged: [None; 2], copies: Vec::new(), mesh_copies: Vec::new() })
    }

    /// Name of the pass.
    pub const NAME: &'static str = "object_upload";
}

impl TypedPass for ObjectUploadPass {
    /// `object_transforms` and `object_records`, in that order.
    type Handles = [BufferWrite; 2];

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> [BufferWrite; 2] {
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        let records = registry.buffer(OBJECT_RECORDS);
        [
            registry.write_storage_buffer(transforms, ShaderStage::Compute),
            registry.write_storage_buffer(records, ShaderStage::Compute),
        ]
    }

    fn prepare(&mut self, _targets: &[BufferWrite; 2], context: &mut PrepareContext<'_>) {
        let mut scene = lock_scene(&self.scene);
        scene.growth_copies_for(context.frame_index(), &mut self.copies);
        scene.mesh_growth_copies_for(context.frame_index(), &mut self.mesh_copies);
        let mut counts = [0u32; 2];
        for (kind, records) in [false, true].into_iter().enumerate() {
            self.staged[kind] = None;
            let count = scene.list_marked(records);
            if count == 0 {
                continue;
            }
            let item_bytes = if records { OBJECT_RECORD_BYTES } else { OBJECT_TRANSFORM_BYTES };
            let staged = context.stage_data(as_bytes(scene.marked_slots())).and_then(|slots| {
                let items =
                    context.stage_with(u64::from(count) * item_bytes, |out| scene.write_marked(records, out))?;
                Ok(Staged { slots, items, count })
            });
            match staged {
                Ok(staged) => {
                    scene.unmark(records);
                    self.staged[kind] = Some(staged);
                    counts[kind] = count;
                }
                // The marks stay: the next frame uploads them (this one is not submitted).
                Err(error) => context.fail(error),
            }
        }
        scene.note_upload(counts[0], counts[1]);
    }

    fn execute(&mut self, targets: &[BufferWrite; 2], context: &mut ExecuteContext<'_>) {
        record_growth_copies(&self.copies, context);
        record_mesh_copies(&self.mesh_copies, context);
        let item_vec4s = [OBJECT_TRANSFORM_BYTES / 16, OBJECT_RECORD_BYTES / 16];
        for kind in 0..2 {
            let Some(staged) = self.staged[kind].take() else { continue };
            context.bind_compute(&self.pipeline, &[staged.slots, staged.items, Binding::buffer(&targets[kind])]);
            context.push_constants(&[staged.count, item_vec4s[kind] as u32]);
            context.dispatch(staged.count.div_ceil(SCATTER_GROUP).min(MAX_SCATTER_GROUPS), 1, 1);
        }
    }
}

/// Records the copies of outgrown object buffers into the buffers that replaced them, oldest
/// first, each followed by a barrier: the next copy reads what this one wrote, the scatter
/// writes over it, and every later pass reads it (at any stage), so the barrier's second
/// scope is every command.
fn record_growth_copies(copies: &[RecordedCopy], context: &ExecuteContext<'_>) {
    let (device, command_buffer) = (context.device(), context.command_buffer());
    for copy in copies {
        for kind in 0..2 {
            if copy.bytes[kind] == 0 {
                continue;
            }
            let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: copy.bytes[kind] }];
            // SAFETY: both buffers are the scene's (kept alive by it until this frame has
            // finished), made with transfer usage, and hold `bytes` (the slots below the
            // count when the scene grew, which both capacities hold); the outgrown buffer's
            // last writes belong to frames the graph waited for when it compiled for the
            // growth, and the target is not used before this pass in the frame.
            unsafe { device.cmd_copy_buffer(command_buffer, copy.sources[kind], copy.targets[kind], &region) };
        }
        barrier_after_copies(context);
    }
}

/// Records the copies of outgrown mesh buffers into their replacements, then one barrier
/// that makes them visible to every later command (the mesh upload's copies over them, the
/// draws).
fn record_mesh_copies(copies: &[MeshCopy], context: &ExecuteContext<'_>) {
    if copies.is_empty() {
        return;
    }
    let (device, command_buffer) = (context.device(), context.command_buffer());
    for copy in copies {
        let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: copy.bytes }];
        // SAFETY: both buffers are the scene's (the outgrown one kept alive by it until this
        // frame has finished), made with transfer usage; the replacement is at least as large
        // as the outgrown one; the outgrown one's last writes belong to frames the graph
        // waited for when it compiled for the growth, and the replacement is not used before
        // this pass in the frame.
        unsafe { device.cmd_copy_buffer(command_buffer, copy.source, copy.target, &region) };
    }
    barrier_after_copies(context);
}

/// One barrier after the copies recorded so far: their writes visible to every later command
/// (another copy, the scatter, every pass at any stage).
fn barrier_after_copies(context: &ExecuteContext<'_>) {
    let (device, command_buffer) = (context.device(), context.command_buffer());
    let barrier = [vk::MemoryBarrier2::default()
        .src_stage_mask(vk::PipelineStageFlags2::COPY)
        .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
        .dst_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
        .dst_access_mask(vk::AccessFlags2::MEMORY_READ | vk::AccessFlags2::MEMORY_WRITE)];
    let dependency = vk::DependencyInfo::default().memory_barriers(&barrier);
    // SAFETY: a global memory barrier recorded outside a rendering scope on the frame's
    // command buffer.
    unsafe { device.cmd_pipeline_barrier2(command_buffer, &dependency) };
}

/// Creates `draw_commands` and `draw_instances` (room for one command and one slot per object
/// of the scene for each of [`MAX_WINDOW_VIEWS`] window views) and `draw_count` (two u32),
/// and fills them from the scene's draw list each frame: the early list is the host's
/// (batched, one instanced command per (mesh, level, material) with its slots in
/// `draw_instances`; else one command per object), followed by the other window views' runs
/// of a split-screen frame ([`GpuScene::view_lists`](crate::GpuScene::view_lists)); the late
/// list is empty. A GPU culling pass that writes the lists itself takes
/// this pass's place.
pub struct DrawListPass {
    scene: SharedScene,
    capacity: u32,
    error: Option<GraphError>,
}

impl DrawListPass {
    /// A pass uploading `scene`'s draw list.
    pub fn new(scene: SharedScene) -> DrawListPass {
        let capacity = lock_scene(&scene).capacity();
        DrawListPass { scene, capacity, error: None }
    }
}

impl TypedPass for DrawListPass {
    /// `draw_commands`, `draw_count` and `draw_instances`.
    type Handles = (BufferWrite, BufferWrite, BufferWrite);

    fn name(&self) -> &str {
        "draw_list_upload"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        // The scene may have grown since the last compile.
        self.capacity = lock_scene(&self.scene).capacity();
        // Room for every window view's list (split-screen), each at most one command and one
        // instance per object; the late list (from the middle) stays empty.
        let lists = MAX_WINDOW_VIEWS.max(2) as u64;
        let commands = lists * u64::from(self.capacity) * DRAW_COMMAND_BYTES;
        let commands = registry.create_buffer(DRAW_COMMANDS, BufferDesc { size: commands });
        let count = registry.create_buffer(DRAW_COUNT, BufferDesc { size: 8 });
        let instances = lists * u64::from(self.capacity) * 4;
        let instances = registry.create_buffer(DRAW_INSTANCES, BufferDesc { size: instances });
        (
            registry.write_buffer(commands, Access::TransferWrite),
            registry.write_buffer(count, Access::TransferWrite),
            registry.write_buffer(instances, Access::TransferWrite),
        )
    }

    fn prepare(&mut self, (commands, count, instances): &Self::Handles, context: &mut PrepareContext<'_>) {
        let mut scene = lock_scene(&self.scene);
        let draws = scene.draw_commands();
        let slots = scene.draw_instances();
        // The GPU's count word is the main view's list (a split frame's runs are counted apart).
        let count_words = [scene.indirect_draw_counts()[0], 0];
        let mut result = context
            .upload_buffer(commands, 0, as_bytes(draws))
            .and_then(|()| context.upload_buffer(count, 0, as_bytes(&count_words)));
        if !slots.is_empty() {
            result = result.and_then(|()| context.upload_buffer(instances, 0, as_bytes(slots)));
        }
        let bytes = std::mem::size_of_val(draws) as u64 + std::mem::size_of_val(slots) as u64 + 8;
        // Each run's count: a split-screen frame draws every run with a count draw
        // (`draw_window_views`).
        let mut run_counts = [0u8; 4 * MAX_WINDOW_VIEWS];
        let written = scene.write_run_counts(&mut run_counts);
        let mut staged = None;
        if written > 0 {
            result = result.and_then(|()| {
                let counts = context.stage_data(&run_counts[..written])?;
                staged = counts.external_range().map(|(buffer, offset, _)| (buffer, offset));
                Ok(())
            });
        }
        scene.set_staged_run_counts(staged);
        match result {
            Ok(()) => scene.note_draw_upload(bytes),
            Err(error) => self.error = Some(error),
        }
    }

    fn execute(&mut self, _handles: &Self::Handles, context: &mut ExecuteContext<'_>) {
        if let Some(error) = self.error.take() {
            context.fail(error);
        }
    }
}

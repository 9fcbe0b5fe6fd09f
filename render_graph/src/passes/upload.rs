//! The passes that move the host scene to the GPU each frame: dirty object records into
//! `object_records`, and the draw list into `draw_commands` and `draw_count`.

use crate::access::Access;
use crate::context::{ExecuteContext, PrepareContext};
use crate::error::GraphError;
use crate::pass::Pass;
use crate::passes::records::{as_bytes, DRAW_COMMAND_BYTES, OBJECT_RECORD_BYTES};
use crate::passes::scene::{lock_scene, SharedScene};
use crate::passes::{DRAW_COMMANDS, DRAW_COUNT, OBJECT_RECORDS};
use crate::registry::{BufferDesc, BufferHandle, Registry};

/// Copies the scene's dirty object records (up to the scene's per-frame budget) into the
/// imported `object_records`; a still scene copies nothing. The frame's bytes and regions
/// are in [`crate::passes::GpuScene::last_upload`].
pub struct ObjectUploadPass {
    scene: SharedScene,
    target: Option<BufferHandle>,
    error: Option<GraphError>,
}

impl ObjectUploadPass {
    /// A pass uploading `scene`'s records; the scene's buffers must be imported
    /// ([`crate::passes::GpuScene::import_into`]).
    pub fn new(scene: SharedScene) -> ObjectUploadPass {
        ObjectUploadPass { scene, target: None, error: None }
    }
}

impl Pass for ObjectUploadPass {
    fn name(&self) -> &str {
        "object_upload"
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let target = registry.buffer(OBJECT_RECORDS);
        self.target = Some(registry.access_buffer(target, Access::TransferWrite));
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        let target = self.target.expect("register runs before prepare");
        let mut scene = lock_scene(&self.scene);
        let uploaded = scene.upload_dirty(|first, records| {
            context.upload_buffer(target, u64::from(first) * OBJECT_RECORD_BYTES, as_bytes(records))
        });
        if let Err(error) = uploaded {
            self.error = Some(error);
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        if let Some(error) = self.error.take() {
            context.fail(error);
        }
    }
}

/// Creates `draw_commands` (room for one command per object of the scene) and `draw_count`
/// (one u32), and fills them from the scene's draw list each frame. A GPU culling pass that
/// writes both buffers itself takes this pass's place.
pub struct DrawListPass {
    scene: SharedScene,
    capacity: u32,
    commands: Option<BufferHandle>,
    count: Option<BufferHandle>,
    error: Option<GraphError>,
}

impl DrawListPass {
    /// A pass uploading `scene`'s draw list.
    pub fn new(scene: SharedScene) -> DrawListPass {
        let capacity = lock_scene(&scene).capacity();
        DrawListPass { scene, capacity, commands: None, count: None, error: None }
    }
}

impl Pass for DrawListPass {
    fn name(&self) -> &str {
        "draw_list_upload"
    }

    fn register(&mut self, registry: &mut Registry<'_>) {
        let commands =
            registry.create_buffer(DRAW_COMMANDS, BufferDesc { size: u64::from(self.capacity) * DRAW_COMMAND_BYTES });
        let count = registry.create_buffer(DRAW_COUNT, BufferDesc { size: 4 });
        self.commands = Some(registry.access_buffer(commands, Access::TransferWrite));
        self.count = Some(registry.access_buffer(count, Access::TransferWrite));
    }

    fn prepare(&mut self, context: &mut PrepareContext<'_>) {
        let (commands, count) = (self.commands.expect("registered"), self.count.expect("registered"));
        let mut scene = lock_scene(&self.scene);
        let draws = scene.draw_commands();
        let count_word = [draws.len() as u32];
        let result = context
            .upload_buffer(commands, 0, as_bytes(draws))
            .and_then(|()| context.upload_buffer(count, 0, as_bytes(&count_word)));
        let bytes = std::mem::size_of_val(draws) as u64 + 4;
        match result {
            Ok(()) => scene.note_draw_upload(bytes),
            Err(error) => self.error = Some(error),
        }
    }

    fn execute(&mut self, context: &mut ExecuteContext<'_>) {
        if let Some(error) = self.error.take() {
            context.fail(error);
        }
    }
}

//! The pass that copies each frame's slice of the assets added while frames run: the meshes
//! ([`GpuScene::add_mesh_levels`](crate::scene::GpuScene::add_mesh_levels)) into
//! `mesh_vertices`, `mesh_indices`, `mesh_uvs` and `mesh_skin`, the skin matrices the
//! animation changed into `skin_palette`
//! ([`GpuScene::sync_palette`](crate::scene::GpuScene::sync_palette)), the material table entries added or
//! changed since the last frame ([`GpuScene::add_material`](crate::scene::GpuScene::add_material))
//! into `materials`, and the texels of textures
//! ([`GpuScene::add_texture`](crate::scene::GpuScene::add_texture)) into `material_textures`.

use crate::names::{
    MATERIALS, MATERIAL_TEXTURES, MATERIAL_TEXTURES_OUTGROWN, MESH_INDICES, MESH_SKIN, MESH_UVS, MESH_VERTICES,
    SKIN_PALETTE,
};
use crate::scene::{lock_scene, SharedScene};
use render_graph::{vk, Access, Binding, BufferWrite, ExecuteContext, ImageRead, ImageWrite, PrepareContext};
use render_graph::{Registry, TypedPass};

/// The handle of `materials` among the pass's buffers.
const MATERIAL_TARGET: usize = 4;
/// The handle of `skin_palette` among the pass's buffers.
const PALETTE_TARGET: usize = 5;

/// Copies the slice of added meshes the frame took
/// ([`GpuScene::stream_frame`](crate::scene::GpuScene::stream_frame), at most the transfer
/// budget) into the mesh buffers, at the start of the frame's passes: the frame's draws may
/// name what it completes. Runs after [`ObjectUploadPass`](crate::passes::ObjectUploadPass),
/// which copies outgrown mesh buffers first. A frame with no slice copies nothing. The
/// material entries marked since the last frame go with it (outside the budget: 16 bytes
/// each), and the frame's texels (inside it): the pass declares the texture array (and an
/// outgrown one it copies) only while texels or a copy wait, so a frame with none moves no
/// image layout.
pub struct MeshUploadPass {
    scene: SharedScene,
    /// This frame's layer copy from the outgrown array (its layer count).
    texture_copy: Option<u32>,
    /// This frame's staged texels and their regions.
    texels: Option<Binding>,
    texel_regions: Vec<vk::BufferImageCopy>,
}

impl MeshUploadPass {
    /// A pass uploading `scene`'s added meshes; the scene's buffers must be imported
    /// ([`crate::scene::GpuScene::import_into`]).
    pub fn new(scene: SharedScene) -> MeshUploadPass {
        MeshUploadPass { scene, texture_copy: None, texels: None, texel_regions: Vec::new() }
    }

    /// Name of the pass.
    pub const NAME: &'static str = "mesh_upload";
}

/// What [`MeshUploadPass`] declares.
pub struct MeshUploadHandles {
    /// `mesh_vertices`, `mesh_indices`, `mesh_uvs` and `mesh_skin`, in the order of the
    /// transfer targets, then `materials` and `skin_palette`.
    buffers: [BufferWrite; 6],
    /// `material_textures`, while texels or a layer copy wait.
    textures: Option<ImageWrite>,
    /// The outgrown array, while its layers wait to be copied.
    outgrown: Option<ImageRead>,
}

impl TypedPass for MeshUploadPass {
    type Handles = MeshUploadHandles;

    fn name(&self) -> &str {
        Self::NAME
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> MeshUploadHandles {
        let buffers = [MESH_VERTICES, MESH_INDICES, MESH_UVS, MESH_SKIN, MATERIALS, SKIN_PALETTE].map(|name| {
            let buffer = registry.buffer(name);
            registry.write_buffer(buffer, Access::TransferWrite)
        });
        let (textures, outgrown) = lock_scene(&self.scene).texture_declarations();
        let outgrown = outgrown.then(|| {
            let image = registry.image(MATERIAL_TEXTURES_OUTGROWN);
            registry.read_image(image, Access::TransferRead)
        });
        let textures = textures.then(|| {
            let image = registry.image(MATERIAL_TEXTURES);
            registry.write_image(image, Access::TransferWrite)
        });
        MeshUploadHandles { buffers, textures, outgrown }
    }

    fn prepare(&mut self, handles: &MeshUploadHandles, context: &mut PrepareContext<'_>) {
        let targets = &handles.buffers;
        let mut scene = lock_scene(&self.scene);
        let mut result = Ok(());
        for (target, offset, bytes) in scene.mesh_slice() {
            result = context.upload_buffer(&targets[target as usize], offset, bytes);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            for (offset, bytes) in scene.palette_slice() {
                result = context.upload_buffer(&targets[PALETTE_TARGET], offset, bytes);
                if result.is_err() {
                    break;
                }
            }
            if result.is_ok() {
                scene.note_palette_staged();
            }
        }
        if let (Ok(()), Some((offset, bytes))) = (&result, scene.material_slice()) {
            result = context.upload_buffer(&targets[MATERIAL_TARGET], offset, bytes);
            if result.is_ok() {
                scene.note_material_slice_staged();
            }
        }
        self.texture_copy = None;
        self.texels = None;
        // Texels wait for a graph that declares the array (it compiles again when they come).
        if result.is_ok() && handles.textures.is_some() {
            self.texture_copy =
                if handles.outgrown.is_some() { scene.texture_copy_for(context.frame_index()) } else { None };
            let bytes = scene.texture_slice_bytes();
            if bytes > 0 {
                let regions = &mut self.texel_regions;
                match context.stage_with(bytes, |out| scene.write_texture_slice(out, regions)) {
                    Ok(staged) => self.texels = Some(staged),
                    Err(error) => result = Err(error),
                }
            }
            if result.is_ok() {
                scene.note_texture_slice_staged();
            }
        }
        match result {
            Ok(()) => scene.note_mesh_slice_staged(),
            // The slice stays: the next frame copies it again (this one is not submitted).
            Err(error) => context.fail(error),
        }
    }

    fn execute(&mut self, handles: &MeshUploadHandles, context: &mut ExecuteContext<'_>) {
        let Some(textures) = &handles.textures else { return };
        if let (Some(layers), Some(outgrown)) = (self.texture_copy, &handles.outgrown) {
            context.copy_image_layers(outgrown, textures, layers);
        }
        if let Some(staged) = &self.texels {
            context.copy_staged_to_image(staged, textures, &self.texel_regions);
        }
    }
}

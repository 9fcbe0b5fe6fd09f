//! The stable names of the render-graph resources the engine's frame creates and imports
//! (**contract**: tests outside this crate and users' passes find them by these names), and
//! their formats.

use render_graph::vk;

/// The depth image the prepass writes (**contract** name).
pub const DEPTH_PREPASS: &str = "depth_prepass";
/// The object records buffer (**contract** name): one [`ObjectRecord`](crate::ObjectRecord) per slot.
pub const OBJECT_RECORDS: &str = "object_records";
/// The object transforms buffer: one [`ObjectTransform`](crate::ObjectTransform) per slot, what a moving object
/// uploads.
pub const OBJECT_TRANSFORMS: &str = "object_transforms";
/// The indirect draw commands buffer (**contract** name): two lists of
/// [`DrawCommand`](crate::DrawCommand)s, the early one from command 0 and the late one from
/// the middle of the buffer (command `size / 20 / 2`); see the crate docs.
pub const DRAW_COMMANDS: &str = "draw_commands";
/// The draw count buffer (**contract** name): two u32, the early list's command count, then
/// the late list's.
pub const DRAW_COUNT: &str = "draw_count";
/// The instances of the instanced (batched) draw lists (**contract** name): u32 object slots;
/// a batched command draws the slots from its `firstInstance` on, `instanceCount` of them.
pub const DRAW_INSTANCES: &str = "draw_instances";
/// Each object slot's batch id (u32, [`NO_BATCH`](crate::NO_BATCH) for an empty slot), the
/// GPU cull's table for instanced lists ([`BatchTable`](crate::BatchTable)).
pub const OBJECT_BATCHES: &str = "object_batches";
/// The levels of the LOD chains the camera's GPU cull chooses from (`LodEntry`s of
/// `lod_table.h`, [`MAX_GPU_LOD_LEVELS`](crate::MAX_GPU_LOD_LEVELS) per chain), the scene's
/// table.
pub const LOD_ENTRIES: &str = "lod_entries";
/// Each object slot's level of detail as the camera's GPU cull last chose it (a state word of
/// `lod_table.h`: the chain and the level), next frame's hysteresis state; the late cull
/// writes it, both phases read last frame's.
pub const OBJECT_LOD_LEVELS: &str = "object_lod_levels";
/// The colour image the geometry pass writes (**contract** name).
pub const COLOR: &str = "color";
/// Mesh positions (vec4 per vertex), pulled by the vertex shader.
pub const MESH_VERTICES: &str = "mesh_vertices";
/// Mesh indices (u32), the index buffer of every scene draw.
pub const MESH_INDICES: &str = "mesh_indices";
/// Mesh texture coordinates (`vec2` per vertex, parallel to `mesh_vertices`).
pub const MESH_UVS: &str = "mesh_uvs";
/// Vertex skinning influences (`uvec4` per vertex, parallel to `mesh_vertices`: four u16
/// joints, four unorm16 weights; see `skinning.h`).
pub const MESH_SKIN: &str = "mesh_skin";
/// The skin palette: every rig's skin matrices, three rows of an affine matrix each (48
/// bytes, like an [`ObjectTransform`](crate::ObjectTransform)), a record's `skin_first ..
/// skin_first + skin_count` its rig's.
pub const SKIN_PALETTE: &str = "skin_palette";
/// The materials (one [`GpuMaterial`](crate::GpuMaterial) each), indexed by a record's
/// `material`; an index past the table draws untextured and opaque.
pub const MATERIALS: &str = "materials";
/// The base-colour textures, one layer each of an sRGB image array (`sampler2DArray`).
pub const MATERIAL_TEXTURES: &str = "material_textures";
/// The texture array outgrown by textures added while frames run, while its layers are
/// copied into `material_textures`.
pub const MATERIAL_TEXTURES_OUTGROWN: &str = "material_textures_outgrown";
/// The frame's view, a uniform buffer holding one [`FrameView`](crate::FrameView)
/// (**contract** name): camera matrices, eye, viewport, planes, frame index, object count.
pub const VIEW: &str = "view";
/// The host-visible buffer [`crate::color_readback_pass`] copies `color` into.
pub const COLOR_READBACK: &str = "color_readback";

/// The shadow atlas (**contract** name): one D32 image, reversed-Z, holding every light
/// view's map in its own tile (see [`crate::ShadowFrame`]).
pub const SHADOW_ATLAS: &str = "shadow_atlas";
/// The lights and shadow views the shadowed geometry pass reads (`shadows.h`).
pub const SHADOW_LIGHTS: &str = "shadow_lights";

/// Format of `depth_prepass`.
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// Format of `color`.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

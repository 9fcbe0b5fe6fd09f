//! GLSL sources and their committed SPIR-V, so building needs no shader compiler.
//!
//! Each shader has one entry point (`main`) and lives in `glsl/<group>/<name>.<stage>.glsl`,
//! grouped by owner ([`Group`]): `engine` (the renderer's passes, with the headers they share:
//! `config.h` holds every constant they share with the host, checked against its Rust twins
//! by `renderer/tests/shader_config.rs`), `samples` (the shaders of the example programs) and
//! `probes` (the render graph's test probes). Its SPIR-V, compiled by `compile.sh` (glslc,
//! `--target-env=vulkan1.2 -O`), is committed in `spirv/<group>/<name>.<stage>.spv`. The test
//! `tests/fresh.rs` recompiles every source and fails when a committed binary is stale.
//!
//! ```
//! let words: &[u32] = shaders::PATTERN_COMP.words();
//! assert_eq!(words[0], shaders::SPIRV_MAGIC);
//! ```
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The committed SPIR-V is little-endian; reading it as native words needs a little-endian host.
#[cfg(target_endian = "big")]
compile_error!("the shaders crate reads SPIR-V words in place and supports little-endian hosts only");

/// The first word of every SPIR-V module.
pub const SPIRV_MAGIC: u32 = 0x0723_0203;

/// The pipeline stage a shader runs in (the `<stage>` part of its file name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// A compute shader (`.comp`).
    Compute,
    /// A vertex shader (`.vert`).
    Vertex,
    /// A fragment shader (`.frag`).
    Fragment,
}

impl Stage {
    /// The stage name glslc expects after `-fshader-stage=`.
    pub fn glslc_name(self) -> &'static str {
        match self {
            Stage::Compute => "comp",
            Stage::Vertex => "vert",
            Stage::Fragment => "frag",
        }
    }
}

/// Bytes kept at 4-byte alignment so they can be read as SPIR-V words without a copy.
#[repr(C, align(4))]
pub struct AlignedBytes<Bytes: ?Sized>(Bytes);

/// Who a shader belongs to (its folder under `glsl/` and `spirv/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// The renderer's passes (`glsl/engine`).
    Engine,
    /// The example programs (`glsl/samples`).
    Samples,
    /// The render graph's test probes (`glsl/probes`).
    Probes,
}

impl Group {
    /// The folder name.
    pub fn folder(self) -> &'static str {
        match self {
            Group::Engine => "engine",
            Group::Samples => "samples",
            Group::Probes => "probes",
        }
    }
}

/// The shared constants of the engine's shaders (`glsl/engine/config.h`), for tests that
/// check them against the host's.
pub const ENGINE_CONFIG_H: &str = include_str!("../glsl/engine/config.h");

/// The folder of the engine's GLSL headers, for a user's shaders (`glslc -I`): the layouts of
/// the engine's data, so a shader `#include`s them instead of copying them, each checked
/// against its Rust twin by the renderer's tests:
///
/// - `object_record.h`: `ObjectTransform` and `ObjectRecord` (the buffers `object_transforms`
///   and `object_records`, one per slot) and `object_world_box`, the box every cull tests;
/// - `view.h`: `FrameView`, the uniform buffer `view` (camera matrices and their inverse,
///   eye, viewport, planes, frame index, object count), with `ENGINE_VIEW_BLOCK(set, binding)`;
/// - `visibility_bits.h`: `VISIBILITY_BIT(words, slot)` over the GPU's `visibility_bits`;
/// - `config.h`: the constants the engine's shaders share with the host;
/// - `material.h`: the `Material` table and base-colour textures of the scene passes'
///   fragment shaders (`material_texel`, `material_hole`).
///
/// ```
/// assert!(std::path::Path::new(shaders::ENGINE_INCLUDE_DIR).join("view.h").is_file());
/// ```
pub const ENGINE_INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/glsl/engine");

/// `view.h` (see [`ENGINE_INCLUDE_DIR`]), for tests that check it against the host's layout.
pub const ENGINE_VIEW_H: &str = include_str!("../glsl/engine/view.h");

/// `object_record.h` (see [`ENGINE_INCLUDE_DIR`]).
pub const ENGINE_OBJECT_RECORD_H: &str = include_str!("../glsl/engine/object_record.h");

/// `material.h` (see [`ENGINE_INCLUDE_DIR`]).
pub const ENGINE_MATERIAL_H: &str = include_str!("../glsl/engine/material.h");

/// `cull_inputs.h`: the view block (`CullView`) and push constants (`CullConstants`) of the
/// engine's two-phase culls, for tests that check them against the host's layout.
pub const ENGINE_CULL_INPUTS_H: &str = include_str!("../glsl/engine/cull_inputs.h");

/// `lod_select.h`: the level-of-detail rule's GLSL twin (`LodView`, `lod_select`), for tests
/// that check it against the host's (`culling::LodErrorView`).
pub const ENGINE_LOD_SELECT_H: &str = include_str!("../glsl/engine/lod_select.h");

/// `lod_table.h`: the LOD chains' entries the camera's GPU cull chooses levels from
/// (`LodEntry`) and the slots' state words, for tests that check it against the host's
/// (`renderer::LodEntry`).
pub const ENGINE_LOD_TABLE_H: &str = include_str!("../glsl/engine/lod_table.h");

/// One shader: its name, stage, GLSL source path and compiled SPIR-V.
///
/// The shaders of this crate are statics ([`ALL`]); a shader of your own, compiled by you
/// (e.g. `glslc -fshader-stage=comp --target-env=vulkan1.2 -O -o my.comp.spv my.comp.glsl`),
/// is made with [`Shader::from_bytes`] (a `.spv` file's bytes) or [`Shader::from_words`]:
///
/// ```
/// let bytes = shaders::PATTERN_COMP.bytes().to_vec(); // e.g. std::fs::read("my.comp.spv")?
/// let mine = shaders::Shader::from_bytes("my.comp", shaders::Stage::Compute, &bytes)?;
/// assert_eq!(mine.words(), shaders::PATTERN_COMP.words());
/// assert!(shaders::Shader::from_bytes("broken", shaders::Stage::Compute, &bytes[1..]).is_err());
/// # Ok::<(), shaders::SpirvError>(())
/// ```
pub struct Shader {
    /// The file stem, `<name>.<stage>`, e.g. `pattern.comp`.
    pub name: &'static str,
    /// The stage it runs in.
    pub stage: Stage,
    /// Who it belongs to (`None` for shaders made at run time).
    pub group: Option<Group>,
    /// The GLSL source file, relative to the `shaders` crate folder (empty for shaders made
    /// at run time).
    pub source_path: &'static str,
    spirv: Spirv,
}

/// Where a shader's SPIR-V lives.
enum Spirv {
    /// Committed in this crate.
    Static(&'static AlignedBytes<[u8]>),
    /// Loaded at run time (checked).
    Owned(Vec<u32>),
}

/// Why bytes or words are not a SPIR-V module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpirvError {
    /// The byte length is not a multiple of 4.
    NotWholeWords {
        /// The length in bytes.
        bytes: usize,
    },
    /// Shorter than the 5-word SPIR-V header.
    TooShort {
        /// The length in words.
        words: usize,
    },
    /// The first word is not the SPIR-V magic number (in either byte order).
    BadMagic {
        /// The first word found.
        found: u32,
    },
}

impl std::fmt::Display for SpirvError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpirvError::NotWholeWords { bytes } => {
                write!(formatter, "SPIR-V is made of 32-bit words, but {bytes} bytes is not a multiple of 4")
            }
            SpirvError::TooShort { words } => {
                write!(formatter, "{words} words is shorter than the 5-word SPIR-V header")
            }
            SpirvError::BadMagic { found } => write!(
                formatter,
                "the first word is {found:#010x}, not the SPIR-V magic {SPIRV_MAGIC:#010x} (is this a .spv file?)"
            ),
        }
    }
}

impl std::error::Error for SpirvError {}

impl Shader {
    /// A shader from the bytes of a SPIR-V module (a `.spv` file), in either byte order; the
    /// bytes need no particular alignment. Checks the length (whole words, at least the
    /// header) and the magic number; the driver validates the rest when a pipeline is made.
    pub fn from_bytes(name: &'static str, stage: Stage, bytes: &[u8]) -> Result<Shader, SpirvError> {
        if !bytes.len().is_multiple_of(4) {
            return Err(SpirvError::NotWholeWords { bytes: bytes.len() });
        }
        let mut words: Vec<u32> =
            bytes.chunks_exact(4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]])).collect();
        if words.first() == Some(&SPIRV_MAGIC.swap_bytes()) {
            for word in &mut words {
                *word = word.swap_bytes();
            }
        }
        Shader::from_words(name, stage, words)
    }

    /// A shader from SPIR-V words (host byte order), checked like [`Shader::from_bytes`].
    pub fn from_words(name: &'static str, stage: Stage, words: Vec<u32>) -> Result<Shader, SpirvError> {
        if words.len() < 5 {
            return Err(SpirvError::TooShort { words: words.len() });
        }
        if words[0] != SPIRV_MAGIC {
            return Err(SpirvError::BadMagic { found: words[0] });
        }
        Ok(Shader { name, stage, group: None, source_path: "", spirv: Spirv::Owned(words) })
    }

    /// The SPIR-V as bytes (little-endian words).
    pub fn bytes(&self) -> &[u8] {
        match &self.spirv {
            Spirv::Static(bytes) => &bytes.0,
            Spirv::Owned(words) => {
                // SAFETY: any initialized u32 memory may be viewed as bytes (alignment 1,
                // length four times the word count); the view borrows `self`.
                unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 4) }
            }
        }
    }

    /// The SPIR-V as 32-bit words, ready for `vkCreateShaderModule`.
    pub fn words(&self) -> &[u32] {
        let bytes = match &self.spirv {
            Spirv::Static(bytes) => &bytes.0,
            Spirv::Owned(words) => return words,
        };
        assert_eq!(bytes.len() % 4, 0, "SPIR-V of {} is not whole words", self.name);
        // SAFETY: `AlignedBytes` is aligned to 4, so the pointer is aligned for u32; the length
        // is a multiple of 4 (asserted above), every bit pattern is a valid u32, and the data
        // is a `'static` immutable include, so the slice lives and stays unchanged forever.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u32>(), bytes.len() / 4) }
    }
}

macro_rules! shaders {
    ($($(#[$doc:meta])* $constant:ident = $group:ident $folder:literal / $file:literal, $stage:ident;)*) => {
        $(
            $(#[$doc])*
            pub static $constant: Shader = Shader {
                name: $file,
                stage: Stage::$stage,
                group: Some(Group::$group),
                source_path: concat!("glsl/", $folder, "/", $file, ".glsl"),
                spirv: Spirv::Static(&AlignedBytes(*include_bytes!(concat!("../spirv/", $folder, "/", $file, ".spv")))),
            };
        )*
        /// Every shader of the crate, for tools and the freshness test.
        pub static ALL: &[&Shader] = &[$(&$constant),*];
    };
}

shaders! {
    /// Temporal accumulation: r32ui `target` (binding 2) = `previous` (binding 0, last
    /// frame's target) + `current` (binding 1); workgroup 8x8.
    ACCUMULATE_COMP = Samples "samples" / "accumulate.comp", Compute;
    /// Draws cells without buffers: quad `gl_VertexIndex / 6` is a column, instance a band;
    /// push constants `uint band_count, column_count`.
    BAND_VERT = Samples "samples" / "band.vert", Vertex;
    /// Colours a cell of [`BAND_VERT`]: red = band + 1, green = column + 1 (unorm8).
    BAND_FRAG = Samples "samples" / "band.frag", Fragment;
    /// The batch ids' upload: writes `(slot, batch id)` pairs (binding 0) into
    /// `object_batches` (binding 1); push constant `uint count`; workgroup 64, grid-stride.
    BATCH_SCATTER_COMP = Engine "engine" / "batch_scatter.comp", Compute;
    /// One axis of a separable 3-tap box blur on r32ui images: `source` (binding 0) to
    /// `target` (binding 1); push constant `uint axis`; workgroup 8x8.
    BLUR_COMP = Samples "samples" / "blur.comp", Compute;
    /// Writes a `VkDrawIndirectCommand` (binding 1) for [`BAND_VERT`] from the number of texels
    /// of the r32ui image at binding 0 above a threshold; push constants `uint threshold,
    /// pixels_per_band, band_count`; one invocation.
    BRIGHT_BANDS_COMP = Samples "samples" / "bright_bands.comp", Compute;
    /// Cluster cull, early phase (`cluster_cull.h`): pairs visible last frame that pass the
    /// sphere-frustum and cone tests are appended to the draw list as meshlet commands;
    /// workgroup 64.
    CLUSTER_CULL_EARLY_COMP = Engine "engine" / "cluster_cull_early.comp", Compute;
    /// Cluster cull, late phase (`cluster_cull.h`, `hiz_occlusion.h`): every meshlet of every
    /// object the object pass kept, against the frustum, the normal cone and the Hi-Z pyramid;
    /// verdicts and pair bits written, newly visible meshlets appended; workgroup 64, one
    /// workgroup per survivor (dispatched indirectly).
    CLUSTER_CULL_LATE_COMP = Engine "engine" / "cluster_cull_late.comp", Compute;
    /// Cluster cull, survivor list (`cluster_cull.h`): one thread per covered object; kept
    /// objects appended to the survivor list and the late phase's indirect dispatch, the
    /// verdicts of culled objects' pairs written; workgroup 64.
    CLUSTER_SURVIVORS_COMP = Engine "engine" / "cluster_survivors.comp", Compute;
    /// Every object's world box as lines (24 vertices per instance, instance = slot),
    /// green where bit `slot` of `visibility_bits` (binding 2) is set, red elsewhere; object
    /// transforms and records at bindings 0 and 1, the engine's `view` block at 3.
    DEBUG_BOXES_VERT = Samples "samples" / "debug_boxes.vert", Vertex;
    /// Writes the colour [`DEBUG_BOXES_VERT`] chose.
    DEBUG_BOXES_FRAG = Samples "samples" / "debug_boxes.frag", Fragment;
    /// Shows one mip of the sampled image at binding 0 over the whole target (with
    /// [`FULLSCREEN_VERT`]): colour as it is, or its red channel as grey; push constants
    /// `vec2 inverse_target_size, uint grey`.
    DEBUG_VIEW_FRAG = Engine "engine" / "debug_view.frag", Fragment;
    /// Test pattern for depth pyramids: a hashed depth per pixel (24-bit exact, with exact 0
    /// and 1), drawn over [`FULLSCREEN_VERT`] with depth test ALWAYS; push constant
    /// `uint seed`.
    DEPTH_PATTERN_FRAG = Probes "probes" / "depth_pattern.frag", Fragment;
    /// Depth prepass: writes depth only (no colour attachment).
    DEPTH_PREPASS_FRAG = Engine "engine" / "depth_prepass.frag", Fragment;
    /// Depth prepass vertex shader: the position of [`GEOMETRY_VERT`] (same function of
    /// `scene_common.h`, `precise`), no outputs.
    DEPTH_PREPASS_VERT = Engine "engine" / "depth_prepass.vert", Vertex;
    /// Fog by depth in place: the rgba8 storage image at binding 0 (the colour) mixed towards
    /// `vec4 fog_color` by `1 - exp(-density * distance)`, the distance along the view from the
    /// sampled depth at binding 1 and the `view` block at 2; push constants `vec4 fog_color,
    /// float density`; workgroup 8x8.
    FOG_COMP = Samples "samples" / "fog.comp", Compute;
    /// Full-screen triangle from `gl_VertexIndex` (draw 3 vertices, no buffers).
    FULLSCREEN_VERT = Engine "engine" / "fullscreen.vert", Vertex;
    /// Geometry pass: writes the object's flat RGBA8 colour.
    GEOMETRY_FRAG = Engine "engine" / "geometry.frag", Fragment;
    /// Geometry pass of a frame with shadows: [`GEOMETRY_FRAG`] lit by the frame's lights
    /// (`shadow_lights`, binding 6) and shadowed by `shadow_atlas` (binding 7), `shadows.h`.
    GEOMETRY_SHADOWED_FRAG = Engine "engine" / "geometry_shadowed.frag", Fragment;
    /// Shadowed geometry pass vertex shader: [`GEOMETRY_VERT`] with the world position out
    /// at location 4, for [`GEOMETRY_SHADOWED_FRAG`].
    GEOMETRY_SHADOWED_VERT = Engine "engine" / "geometry_shadowed.vert", Vertex;
    /// Geometry pass vertex shader: object transform and record from `gl_InstanceIndex`
    /// (bindings 0 and 1), position pulled from `mesh_vertices` (binding 2), push constants
    /// `mat4 view_projection, uint draw_filter` (objects of other materials are clipped
    /// away); flat colour out at location 0.
    GEOMETRY_VERT = Engine "engine" / "geometry.vert", Vertex;
    /// The blended pass's vertex shader on GPU-culled frames: [`GEOMETRY_VERT`], leaving out
    /// objects whose bit in `visibility_bits` (binding 6) is clear.
    BLENDED_CULLED_VERT = Engine "engine" / "blended_culled.vert", Vertex;
    /// The blended pass's draws on a GPU-culled frame: one indexed indirect command per
    /// blended object of the main view (its slot at binding 3, in the host's order), at the
    /// level the camera's cull chose (records, `lod_entries`, `object_lod_levels` at bindings
    /// 0 to 2), written to binding 4; push constants `count`, `lod`; workgroup 64.
    BLENDED_LEVELS_COMP = Engine "engine" / "blended_levels.comp", Compute;
    /// GPU cull, early phase (`gpu_cull.h`): last frame's visible objects that pass the
    /// frustum are appended to the draw list; workgroup 64.
    GPU_CULL_EARLY_COMP = Engine "engine" / "gpu_cull_early.comp", Compute;
    /// GPU cull, late phase (`gpu_cull.h`): frustum and Hi-Z occlusion of every object,
    /// `visibility_bits` written, newly visible objects appended; workgroup 64.
    GPU_CULL_LATE_COMP = Engine "engine" / "gpu_cull_late.comp", Compute;
    /// An image-target view's object cull, early phase: [`GPU_CULL_EARLY_COMP`] for one view
    /// (view 0; the main camera staged as view 1 for the levels' hysteresis) with the slots
    /// marked in its `excluded` bits (the binding after last frame's levels) left out.
    IMAGE_CULL_EARLY_COMP = Engine "engine" / "image_cull_early.comp", Compute;
    /// An image-target view's object cull, late phase: [`GPU_CULL_LATE_COMP`] for one view,
    /// against its own pyramid, writing its own bits and no slot's level state; `excluded`
    /// where the window's late cull binds this frame's levels.
    IMAGE_CULL_LATE_COMP = Engine "engine" / "image_cull_late.comp", Compute;
    /// Shadow caster cull, early phase (`shadow_cull.h`): every caster slot (bit of binding 2)
    /// against every light view (binding 3); frustum-only views keep what is in their frustum
    /// (bits at binding 7), occlusion views draw what they kept last frame (history at
    /// binding 4); lists at binding 5, counts at binding 6; push constants
    /// `ShadowCullConstants`; workgroup 64.
    SHADOW_CULL_EARLY_COMP = Engine "engine" / "shadow_cull_early.comp", Compute;
    /// Shadow caster cull, late phase (`shadow_cull.h`): occlusion views test every caster in
    /// their frustum against their tile of the atlas's pyramid (binding 5), write their bits
    /// (binding 8) and draw the newly visible (lists at binding 6, counts at binding 7);
    /// workgroup 64.
    SHADOW_CULL_LATE_COMP = Engine "engine" / "shadow_cull_late.comp", Compute;
    /// Hi-Z build, mip `k`: each texel of the r32f storage image at binding 1 keeps the
    /// smallest depth of every texel of mip `k - 1` (binding 0) it covers, the last texel of
    /// an odd-sized source included; workgroup 8x8.
    HIZ_REDUCE_COMP = Engine "engine" / "hiz_reduce.comp", Compute;
    /// Hi-Z build, mip 0: copies the sampled depth image at binding 0 into the r32f storage
    /// image at binding 1 (same size); workgroup 8x8.
    HIZ_SEED_COMP = Engine "engine" / "hiz_seed.comp", Compute;
    /// Adds the push constant `vec4 offset` (xyz) to the translation of every object in
    /// `object_transforms` (binding 0, read-write) below the object count of the engine's
    /// `view` block (binding 1, `view.h`); workgroup 64.
    MOVE_OBJECTS_COMP = Samples "samples" / "move_objects.comp", Compute;
    /// Bobs the objects of `object_transforms` (binding 0, read-write) up and down: slot `s`
    /// sits `height * sin(phase + (s % 64) * spread)` above the host's place, kept across
    /// frames that do not re-upload it through `vec2` state per slot (last frame's at binding
    /// 1, this frame's at 2); `view` block at binding 3; push constants `float height, phase,
    /// spread; uint slots`; workgroup 64.
    BOB_COMP = Samples "samples" / "bob.comp", Compute;
    /// Writes the complement of the sampled image at binding 0 (combined image sampler).
    INVERT_FRAG = Samples "samples" / "invert.frag", Fragment;
    /// Writes `probe_hash(x + y * width) & 0xffff` to the r32ui storage image at binding 0;
    /// workgroup 8x8.
    NOISE_COMP = Samples "samples" / "noise.comp", Compute;
    /// Outlines in place: a pixel of the rgba8 storage image at binding 0 whose distance along
    /// the view (sampled depth at binding 1, `view` block at 2) differs from a neighbour's by
    /// more than `threshold` times the nearer becomes `vec4 line_color`; push constants
    /// `vec4 line_color, float threshold`; workgroup 8x8.
    OUTLINE_COMP = Samples "samples" / "outline.comp", Compute;
    /// Writes a gradient-and-checkerboard pattern to the rgba8 storage image at binding 0;
    /// push constant `uvec2 extent`; workgroup 8x8.
    PATTERN_COMP = Samples "samples" / "pattern.comp", Compute;
    /// Probe: fills the storage buffer at binding 0 with `probe_hash(seed + i)`.
    PROBE_FILL_BUFFER_COMP = Probes "probes" / "probe_fill_buffer.comp", Compute;
    /// Probe: fills the r32ui storage image at binding 0 with `probe_hash(seed + i)`.
    PROBE_FILL_IMAGE_COMP = Probes "probes" / "probe_fill_image.comp", Compute;
    /// Probe: copies the storage buffer at binding 0 into the report buffer at binding 1.
    PROBE_READ_BUFFER_COMP = Probes "probes" / "probe_read_buffer.comp", Compute;
    /// Probe: copies the r32ui storage image at binding 0 into the report buffer at binding 1.
    PROBE_READ_STORAGE_IMAGE_COMP = Probes "probes" / "probe_read_storage_image.comp", Compute;
    /// Probe: copies the sampled r32ui image at binding 0 into the report buffer at binding 1.
    PROBE_READ_SAMPLED_IMAGE_COMP = Probes "probes" / "probe_read_sampled_image.comp", Compute;
    /// Probe: reports the storage buffer at binding 0, then writes `probe_hash(seen ^ seed)`.
    PROBE_UPDATE_BUFFER_COMP = Probes "probes" / "probe_update_buffer.comp", Compute;
    /// Probe: reports the r32ui storage image at binding 0, then writes `probe_hash(seen ^ seed)`.
    PROBE_UPDATE_IMAGE_COMP = Probes "probes" / "probe_update_image.comp", Compute;
    /// Probe: the object-space positions of vertices `first_vertex ..` (`count` of them, from
    /// the record's `vertex_offset`) of object `object` as the scene passes skin them (`skinning.h`), as vec4 at binding 3;
    /// bindings 1 `object_records`, 2 `mesh_vertices`, 7 `skin_palette`, 8 `mesh_skin`; push
    /// constants `uint object, first_vertex, count`; workgroup 64.
    PROBE_SKIN_COMP = Probes "probes" / "skin_probe.comp", Compute;
    /// Scene upload: copies item `i` (`vec4s_per_item` vec4s of binding 1) to slot
    /// `slots[i]` (binding 0) of the target buffer (binding 2); push constants
    /// `uint count, vec4s_per_item`; workgroup 64, grid-stride.
    SCENE_SCATTER_COMP = Engine "engine" / "scene_scatter.comp", Compute;
}

/// Number of 32-bit elements every probe resource holds (`PROBE_ELEMENTS` in
/// `glsl/probes/probe_common.h`).
pub const PROBE_ELEMENTS: u32 = 256;

/// Width and height of a probe image (`PROBE_WIDTH` in `glsl/probes/probe_common.h`).
pub const PROBE_WIDTH: u32 = 16;

/// Workgroup size of every probe shader.
pub const PROBE_WORKGROUP: u32 = 64;

/// CPU twin of `probe_hash` in `glsl/probes/probe_common.h` (lowbias32).
pub fn probe_hash(mut value: u32) -> u32 {
    value ^= value >> 16;
    value = value.wrapping_mul(0x7feb_352d);
    value ^= value >> 15;
    value = value.wrapping_mul(0x846c_a68b);
    value ^= value >> 16;
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shader_is_valid_spirv_words() {
        for shader in ALL {
            let words = shader.words();
            assert!(words.len() > 5, "{} is too short to be SPIR-V", shader.name);
            assert_eq!(words[0], SPIRV_MAGIC, "{} lacks the SPIR-V magic", shader.name);
            assert!(
                shader.name.ends_with(shader.stage.glslc_name()),
                "{} names a stage other than {:?}",
                shader.name,
                shader.stage
            );
        }
    }

    #[test]
    fn user_spirv_is_checked_and_accepted_in_either_byte_order() {
        let words = PATTERN_COMP.words();
        let big_endian: Vec<u8> = words.iter().flat_map(|word| word.to_be_bytes()).collect();
        let shader = Shader::from_bytes("mine.comp", Stage::Compute, &big_endian).expect("valid SPIR-V");
        assert_eq!(shader.words(), words);
        assert_eq!(shader.bytes(), PATTERN_COMP.bytes());
        let bytes = PATTERN_COMP.bytes();
        assert_eq!(
            Shader::from_bytes("odd", Stage::Compute, &bytes[..bytes.len() - 1]).err(),
            Some(SpirvError::NotWholeWords { bytes: bytes.len() - 1 })
        );
        assert_eq!(
            Shader::from_words("short", Stage::Compute, vec![SPIRV_MAGIC]).err(),
            Some(SpirvError::TooShort { words: 1 })
        );
        let glsl = b"#version 450\nvoid main() {}\n\n\n\n";
        assert!(matches!(Shader::from_bytes("text", Stage::Compute, &glsl[..20]), Err(SpirvError::BadMagic { .. })));
    }

    #[test]
    fn probe_constants_match_each_other() {
        assert_eq!(PROBE_WIDTH * PROBE_WIDTH, PROBE_ELEMENTS);
        assert_eq!(PROBE_ELEMENTS % PROBE_WORKGROUP, 0);
    }

    #[test]
    fn probe_hash_scrambles_neighbours() {
        assert_eq!(probe_hash(0), 0, "lowbias32 maps 0 to 0");
        assert_ne!(probe_hash(1), probe_hash(2));
        assert_ne!(probe_hash(1), 1);
    }
}

//! GLSL sources and their committed SPIR-V, so building needs no shader compiler.
//!
//! Each shader has one entry point (`main`) and lives in `glsl/<name>.<stage>.glsl`; its
//! SPIR-V, compiled by `compile.sh` (glslc, `--target-env=vulkan1.2 -O`), is committed in
//! `spirv/<name>.<stage>.spv`. The test `tests/fresh.rs` recompiles every source and fails
//! when a committed binary is stale.
//!
//! ```
//! let words: &[u32] = shaders::PATTERN_COMP.words();
//! assert_eq!(words[0], shaders::SPIRV_MAGIC);
//! ```
#![warn(missing_docs)]

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

/// One shader: its name, stage, GLSL source path and compiled SPIR-V.
pub struct Shader {
    /// The file stem, `<name>.<stage>`, e.g. `pattern.comp`.
    pub name: &'static str,
    /// The stage it runs in.
    pub stage: Stage,
    /// The GLSL source file, relative to the `shaders` crate folder.
    pub source_path: &'static str,
    spirv: &'static AlignedBytes<[u8]>,
}

impl Shader {
    /// The committed SPIR-V as bytes (little-endian words).
    pub fn bytes(&self) -> &'static [u8] {
        &self.spirv.0
    }

    /// The committed SPIR-V as 32-bit words, ready for `vkCreateShaderModule`.
    pub fn words(&self) -> &'static [u32] {
        let bytes = self.bytes();
        assert_eq!(bytes.len() % 4, 0, "SPIR-V of {} is not whole words", self.name);
        // SAFETY: `AlignedBytes` is aligned to 4, so the pointer is aligned for u32; the length
        // is a multiple of 4 (asserted above), every bit pattern is a valid u32, and the data
        // is a `'static` immutable include, so the slice lives and stays unchanged forever.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u32>(), bytes.len() / 4) }
    }
}

macro_rules! shaders {
    ($($(#[$doc:meta])* $constant:ident = $file:literal, $stage:ident;)*) => {
        $(
            $(#[$doc])*
            pub static $constant: Shader = Shader {
                name: $file,
                stage: Stage::$stage,
                source_path: concat!("glsl/", $file, ".glsl"),
                spirv: &AlignedBytes(*include_bytes!(concat!("../spirv/", $file, ".spv"))),
            };
        )*
        /// Every shader of the crate, for tools and the freshness test.
        pub static ALL: &[&Shader] = &[$(&$constant),*];
    };
}

shaders! {
    /// Depth prepass: writes depth only (no colour attachment).
    DEPTH_PREPASS_FRAG = "depth_prepass.frag", Fragment;
    /// Depth prepass vertex shader: the position of [`GEOMETRY_VERT`] (same function of
    /// `scene_common.h`, `precise`), no outputs.
    DEPTH_PREPASS_VERT = "depth_prepass.vert", Vertex;
    /// Full-screen triangle from `gl_VertexIndex` (draw 3 vertices, no buffers).
    FULLSCREEN_VERT = "fullscreen.vert", Vertex;
    /// Geometry pass: writes the object's flat RGBA8 colour.
    GEOMETRY_FRAG = "geometry.frag", Fragment;
    /// Geometry pass vertex shader: object record from `gl_InstanceIndex` (binding 0),
    /// position pulled from `mesh_vertices` (binding 1), push constant
    /// `mat4 view_projection`; flat colour out at location 0.
    GEOMETRY_VERT = "geometry.vert", Vertex;
    /// Writes the complement of the sampled image at binding 0 (combined image sampler).
    INVERT_FRAG = "invert.frag", Fragment;
    /// Writes a gradient-and-checkerboard pattern to the rgba8 storage image at binding 0;
    /// push constant `uvec2 extent`; workgroup 8x8.
    PATTERN_COMP = "pattern.comp", Compute;
    /// Probe: fills the storage buffer at binding 0 with `probe_hash(seed + i)`.
    PROBE_FILL_BUFFER_COMP = "probe_fill_buffer.comp", Compute;
    /// Probe: fills the r32ui storage image at binding 0 with `probe_hash(seed + i)`.
    PROBE_FILL_IMAGE_COMP = "probe_fill_image.comp", Compute;
    /// Probe: copies the storage buffer at binding 0 into the report buffer at binding 1.
    PROBE_READ_BUFFER_COMP = "probe_read_buffer.comp", Compute;
    /// Probe: copies the r32ui storage image at binding 0 into the report buffer at binding 1.
    PROBE_READ_STORAGE_IMAGE_COMP = "probe_read_storage_image.comp", Compute;
    /// Probe: copies the sampled r32ui image at binding 0 into the report buffer at binding 1.
    PROBE_READ_SAMPLED_IMAGE_COMP = "probe_read_sampled_image.comp", Compute;
    /// Probe: reports the storage buffer at binding 0, then writes `probe_hash(seen ^ seed)`.
    PROBE_UPDATE_BUFFER_COMP = "probe_update_buffer.comp", Compute;
    /// Probe: reports the r32ui storage image at binding 0, then writes `probe_hash(seen ^ seed)`.
    PROBE_UPDATE_IMAGE_COMP = "probe_update_image.comp", Compute;
}

/// Number of 32-bit elements every probe resource holds (`PROBE_ELEMENTS` in
/// `glsl/probe_common.h`).
pub const PROBE_ELEMENTS: u32 = 256;

/// Width and height of a probe image (`PROBE_WIDTH` in `glsl/probe_common.h`).
pub const PROBE_WIDTH: u32 = 16;

/// Workgroup size of every probe shader.
pub const PROBE_WORKGROUP: u32 = 64;

/// CPU twin of `probe_hash` in `glsl/probe_common.h` (lowbias32).
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

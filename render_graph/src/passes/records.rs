//! Plain data shared with the GPU by the scene passes: the per-object record, the indirect
//! draw command and the camera push constants, each `#[repr(C)]` with compile-time size and
//! offset checks against its GLSL twin.

use std::mem::{offset_of, size_of};

use ash::vk;

/// One object of the GPU scene, as stored in `object_records`.
///
/// GLSL twin: `struct ObjectRecord` in `shaders/glsl/object_record.h` (std430, 112 bytes).
/// The record is self-contained for GPU culling: it carries the world bounds and the mesh's
/// draw arguments, so a compaction shader can write a [`DrawCommand`] from it alone.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectRecord {
    /// Local-to-world matrix, column-major (`glam::Mat4::to_cols_array_2d`).
    pub world: [[f32; 4]; 4],
    /// Minimum corner of the world-space bounding box.
    pub bounds_min: [f32; 3],
    /// Flat colour, RGBA8 packed with red in the lowest byte ([`pack_rgba8`]).
    pub color: u32,
    /// Maximum corner of the world-space bounding box.
    pub bounds_max: [f32; 3],
    /// The mesh id (index into the scene's [`crate::passes::MeshLibrary`]).
    pub mesh: u32,
    /// Indices of the mesh (draw argument).
    pub index_count: u32,
    /// First index of the mesh in `mesh_indices` (draw argument).
    pub first_index: u32,
    /// Added to every index of the mesh (draw argument).
    pub vertex_offset: i32,
    /// Material id, for renderers that shade by material; the geometry pass colours by
    /// [`ObjectRecord::color`].
    pub material: u32,
}

const _: () = {
    assert!(size_of::<ObjectRecord>() == 112, "ObjectRecord must match the std430 size in object_record.h");
    assert!(offset_of!(ObjectRecord, world) == 0);
    assert!(offset_of!(ObjectRecord, bounds_min) == 64, "vec3 bounds_min sits at 64 in std430");
    assert!(offset_of!(ObjectRecord, color) == 76, "uint color packs after the vec3");
    assert!(offset_of!(ObjectRecord, bounds_max) == 80);
    assert!(offset_of!(ObjectRecord, mesh) == 92);
    assert!(offset_of!(ObjectRecord, index_count) == 96);
    assert!(offset_of!(ObjectRecord, first_index) == 100);
    assert!(offset_of!(ObjectRecord, vertex_offset) == 104);
    assert!(offset_of!(ObjectRecord, material) == 108);
    // std430 rounds the array stride of a struct holding a mat4 up to 16 bytes.
    assert!(size_of::<ObjectRecord>().is_multiple_of(16));
};

/// Bytes of one [`ObjectRecord`] in `object_records`.
pub const OBJECT_RECORD_BYTES: u64 = size_of::<ObjectRecord>() as u64;

/// One indexed indirect draw: `VkDrawIndexedIndirectCommand`, as stored in `draw_commands`.
///
/// The scene passes draw one object per command: `instance_count` is 1 and
/// `first_instance` is the object's index in `object_records` (the vertex shader reads its
/// record at `gl_InstanceIndex`). GLSL twin for writers on the GPU: five `uint`s (20 bytes,
/// `vertex_offset` an `int`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawCommand {
    /// Indices to draw.
    pub index_count: u32,
    /// Instances to draw (1 per object).
    pub instance_count: u32,
    /// First index in the index buffer.
    pub first_index: u32,
    /// Added to each index before pulling the vertex.
    pub vertex_offset: i32,
    /// The object index (read as `gl_InstanceIndex`).
    pub first_instance: u32,
}

const _: () = {
    assert!(size_of::<DrawCommand>() == size_of::<vk::DrawIndexedIndirectCommand>());
    assert!(size_of::<DrawCommand>() == 20, "VkDrawIndexedIndirectCommand is five 32-bit words");
    assert!(offset_of!(DrawCommand, index_count) == 0);
    assert!(offset_of!(DrawCommand, instance_count) == 4);
    assert!(offset_of!(DrawCommand, first_index) == 8);
    assert!(offset_of!(DrawCommand, vertex_offset) == 12);
    assert!(offset_of!(DrawCommand, first_instance) == 16);
};

/// Bytes of one [`DrawCommand`] (the indirect stride).
pub const DRAW_COMMAND_BYTES: u64 = size_of::<DrawCommand>() as u64;

impl DrawCommand {
    /// The command that draws object `object` with the draw arguments of its record.
    pub fn for_object(object: u32, record: &ObjectRecord) -> DrawCommand {
        DrawCommand {
            index_count: record.index_count,
            instance_count: 1,
            first_index: record.first_index,
            vertex_offset: record.vertex_offset,
            first_instance: object,
        }
    }
}

/// The push constants of the scene shaders.
///
/// GLSL twin: `CameraConstants` in `shaders/glsl/scene_common.h`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraConstants {
    /// World to clip, column-major (reversed-Z infinite projection by default).
    pub view_projection: [[f32; 4]; 4],
}

const _: () = {
    assert!(size_of::<CameraConstants>() == 64, "a mat4 push constant block is 64 bytes");
    assert!(size_of::<CameraConstants>() <= 128, "Vulkan guarantees 128 bytes of push constants");
};

impl CameraConstants {
    /// Bytes of the push-constant block.
    pub const BYTES: u32 = size_of::<CameraConstants>() as u32;

    /// The block as 32-bit words for [`crate::ExecuteContext::push_constants`].
    pub fn words(&self) -> [u32; 16] {
        let mut words = [0_u32; 16];
        for (word, value) in words.iter_mut().zip(self.view_projection.as_flattened()) {
            *word = value.to_bits();
        }
        words
    }
}

/// The identity matrix in the column-major layout of the records.
pub const IDENTITY: [[f32; 4]; 4] =
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];

/// Packs a colour into the record's RGBA8 layout (red in the lowest byte, as GLSL's
/// `unpackUnorm4x8` reads it).
pub const fn pack_rgba8(red: u8, green: u8, blue: u8, alpha: u8) -> u32 {
    u32::from_le_bytes([red, green, blue, alpha])
}

/// Marker for types whose every byte is initialized plain data, so a slice of them may be
/// viewed as bytes for an upload.
///
/// # Safety
///
/// The type must be `#[repr(C)]`, `Copy`, and have no padding bytes.
pub(crate) unsafe trait PlainData: Copy {}

// SAFETY: repr(C) of 28 four-byte fields; the size check above proves there is no padding.
unsafe impl PlainData for ObjectRecord {}
// SAFETY: repr(C) of five four-byte fields, 20 bytes (checked above): no padding.
unsafe impl PlainData for DrawCommand {}
// SAFETY: a u32 has no padding.
unsafe impl PlainData for u32 {}
// SAFETY: an array of four f32 has no padding.
unsafe impl PlainData for [f32; 4] {}

/// Views plain data as its bytes.
pub(crate) fn as_bytes<Data: PlainData>(data: &[Data]) -> &[u8] {
    // SAFETY: `PlainData` promises every byte of `Data` is initialized (no padding); the
    // length covers exactly the slice and u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

/// The corners of `min..max` transformed by the column-major `world` matrix, bounded again
/// (Arvo's method: per output axis, sum the smaller and larger of each column term).
pub fn transform_bounds(world: &[[f32; 4]; 4], min: [f32; 3], max: [f32; 3]) -> ([f32; 3], [f32; 3]) {
    let mut out_min = [world[3][0], world[3][1], world[3][2]];
    let mut out_max = out_min;
    for axis in 0..3 {
        for (column, (&low, &high)) in world.iter().take(3).zip(min.iter().zip(&max)) {
            let first = column[axis] * low;
            let second = column[axis] * high;
            out_min[axis] += first.min(second);
            out_max[axis] += first.max(second);
        }
    }
    (out_min, out_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_packs_red_in_the_lowest_byte() {
        assert_eq!(pack_rgba8(0x11, 0x22, 0x33, 0x44), 0x4433_2211);
    }

    #[test]
    fn camera_words_are_the_column_major_floats() {
        let camera = CameraConstants { view_projection: IDENTITY };
        let words = camera.words();
        assert_eq!(words[0], 1.0_f32.to_bits());
        assert_eq!(words[1], 0);
        assert_eq!(words[5], 1.0_f32.to_bits());
        assert_eq!(words[15], 1.0_f32.to_bits());
    }

    #[test]
    fn bounds_of_a_rotated_scaled_box_contain_its_corners() {
        // 90° about z, scale 2, then translate (10, 0, 0).
        let world = [[0.0, 2.0, 0.0, 0.0], [-2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [10.0, 0.0, 0.0, 1.0]];
        let (min, max) = transform_bounds(&world, [-0.5, -1.0, -0.5], [0.5, 1.0, 0.5]);
        assert_eq!(min, [8.0, -1.0, -1.0], "x spans the box's y extent doubled");
        assert_eq!(max, [12.0, 1.0, 1.0]);
    }

    #[test]
    fn draw_command_takes_the_record_arguments_and_the_object_index() {
        let record = ObjectRecord {
            world: IDENTITY,
            bounds_min: [0.0; 3],
            color: 0,
            bounds_max: [0.0; 3],
            mesh: 0,
            index_count: 36,
            first_index: 6,
            vertex_offset: 8,
            material: 0,
        };
        let command = DrawCommand::for_object(7, &record);
        assert_eq!(
            command,
            DrawCommand { index_count: 36, instance_count: 1, first_index: 6, vertex_offset: 8, first_instance: 7 }
        );
        assert_eq!(as_bytes(&[command]).len(), 20);
    }
}

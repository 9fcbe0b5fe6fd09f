//! Plain data shared with the GPU by the scene passes: the per-object transform and record,
//! the indirect draw command and the camera push constants, each `#[repr(C)]` with
//! compile-time size and offset checks against its GLSL twin.
//!
//! An object lives in two buffers indexed by its slot, split by how often each part changes:
//! [`ObjectTransform`] (`object_transforms`, 48 bytes) is all that a moving object uploads;
//! [`ObjectRecord`] (`object_records`, 64 bytes) holds what changes with the mesh, its level
//! of detail, colour, material or skin (a skinned object's palette slice, and its posed box
//! on frames its rig was animated). The world box is not stored: every shader that culls
//! computes it from the record's local box and the transform ([`world_box`], the GLSL
//! `object_world_box`), with the operations of the CPU's `Aabb::transformed_center_half`, so
//! the GPU's frustum bits equal the CPU kernels' bits for the same object.

use std::mem::{offset_of, size_of};

use render_graph::vk;

/// Where one object is: its local-to-world matrix as three rows (an affine matrix; the fourth
/// row is `0 0 0 1`), as stored in `object_transforms`.
///
/// GLSL twin: `struct ObjectTransform` in `shaders/glsl/engine/object_record.h` (std430, 48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectTransform {
    /// Row `r` holds `world[0][r], world[1][r], world[2][r], world[3][r]` of the column-major
    /// matrix: the three axes' `r`-th components and the translation's.
    pub rows: [[f32; 4]; 3],
}

const _: () = {
    assert!(size_of::<ObjectTransform>() == 48, "ObjectTransform must match the std430 size in object_record.h");
    assert!(offset_of!(ObjectTransform, rows) == 0);
};

/// Bytes of one [`ObjectTransform`] in `object_transforms`: what one moving object uploads.
pub const OBJECT_TRANSFORM_BYTES: u64 = size_of::<ObjectTransform>() as u64;

impl ObjectTransform {
    /// The identity transform.
    pub const IDENTITY: ObjectTransform =
        ObjectTransform { rows: [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]] };

    /// The transform of a column-major local-to-world matrix (`glam::Mat4::to_cols_array_2d`);
    /// the fourth row is dropped (world matrices are affine).
    pub fn from_cols(world: &[[f32; 4]; 4]) -> ObjectTransform {
        let row = |r: usize| [world[0][r], world[1][r], world[2][r], world[3][r]];
        ObjectTransform { rows: [row(0), row(1), row(2)] }
    }

    /// The column-major matrix, fourth row `0 0 0 1`.
    pub fn to_cols(&self) -> [[f32; 4]; 4] {
        let column = |c: usize| [self.rows[0][c], self.rows[1][c], self.rows[2][c], if c == 3 { 1.0 } else { 0.0 }];
        [column(0), column(1), column(2), column(3)]
    }

    /// Column `c` (0-2: an axis, 3: the translation) as a vector.
    fn column(&self, c: usize) -> [f32; 3] {
        [self.rows[0][c], self.rows[1][c], self.rows[2][c]]
    }
}

/// What an object is drawn and culled with, as stored in `object_records`: its box in its own
/// space, its mesh's draw arguments, colour and material.
///
/// GLSL twin: `struct ObjectRecord` in `shaders/glsl/engine/object_record.h` (std430, 64 bytes). The
/// pair of record and [`ObjectTransform`] is self-contained for GPU culling: a compaction
/// shader writes a [`DrawCommand`] from the record alone. An empty slot holds
/// [`ObjectRecord::EMPTY`]: no indices, so it is never drawn, never counted visible and never
/// in the depth a Hi-Z pyramid is built from.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectRecord {
    /// Centre of the box the object is culled with, in its own space: `(min + max) * 0.5` of
    /// the mesh's bounds, or of a skinned mesh's posed bounds. A non-finite value makes every
    /// GPU test keep the object.
    pub local_center: [f32; 3],
    /// Indices of the mesh (draw argument); 0 for an empty slot.
    pub index_count: u32,
    /// Half extents of that box, `(max - min) * 0.5`.
    pub local_half: [f32; 3],
    /// First index of the mesh in `mesh_indices` (draw argument).
    pub first_index: u32,
    /// Added to every index of the mesh (draw argument).
    pub vertex_offset: i32,
    /// Flat colour, RGBA8 packed with red in the lowest byte ([`pack_rgba8`]).
    pub color: u32,
    /// Material id, for renderers that shade by material; the geometry pass colours by
    /// [`ObjectRecord::color`].
    pub material: u32,
    /// The mesh id (index into the scene's [`meshes::MeshLibrary`]).
    pub mesh: u32,
    /// First entry of the object's rig in `skin_palette` (its `animation::Skin`'s
    /// `skin_first`); meaningful when [`ObjectRecord::skin_count`] is not 0.
    pub skin_first: u32,
    /// Joints of the object's rig in `skin_palette`: 0 draws the mesh rigid (a static mesh,
    /// or a skinned one without a rig, in its bind pose).
    pub skin_count: u32,
    /// The LOD chain the camera's GPU cull chooses this object's level from: its first entry
    /// in `lod_entries` and its level count ([`GpuScene::lod_chain_columns`](crate::GpuScene::lod_chain_columns)); zero
    /// without one (the record's own range is drawn).
    pub reserved: [u32; 2],
}

const _: () = {
    assert!(size_of::<ObjectRecord>() == 64, "ObjectRecord must match the std430 size in object_record.h");
    assert!(offset_of!(ObjectRecord, local_center) == 0);
    assert!(offset_of!(ObjectRecord, index_count) == 12, "uint index_count packs after the vec3");
    assert!(offset_of!(ObjectRecord, local_half) == 16);
    assert!(offset_of!(ObjectRecord, first_index) == 28);
    assert!(offset_of!(ObjectRecord, vertex_offset) == 32);
    assert!(offset_of!(ObjectRecord, color) == 36);
    assert!(offset_of!(ObjectRecord, material) == 40);
    assert!(offset_of!(ObjectRecord, mesh) == 44);
    assert!(offset_of!(ObjectRecord, skin_first) == 48);
    assert!(offset_of!(ObjectRecord, skin_count) == 52);
    assert!(offset_of!(ObjectRecord, reserved) == 56);
    // std430 rounds the array stride of a struct holding a vec3 up to 16 bytes.
    assert!(size_of::<ObjectRecord>().is_multiple_of(16));
};

/// Bytes of one [`ObjectRecord`] in `object_records`.
pub const OBJECT_RECORD_BYTES: u64 = size_of::<ObjectRecord>() as u64;

impl ObjectRecord {
    /// The record of an empty slot (a despawned or undrawable object): nothing to draw.
    pub const EMPTY: ObjectRecord = ObjectRecord {
        local_center: [0.0; 3],
        index_count: 0,
        local_half: [0.0; 3],
        first_index: 0,
        vertex_offset: 0,
        color: 0,
        material: 0,
        mesh: 0,
        skin_first: 0,
        skin_count: 0,
        reserved: [0; 2],
    };

    /// Whether the record draws nothing.
    pub fn is_empty(&self) -> bool {
        self.index_count == 0
    }

    /// The local box's centre and half extents from its corners, with the operations of
    /// `ecs::Aabb::center` and `half_extent` (the same bits as the CPU's).
    pub fn center_half(min: [f32; 3], max: [f32; 3]) -> ([f32; 3], [f32; 3]) {
        let mut center = [0.0; 3];
        let mut half = [0.0; 3];
        for axis in 0..3 {
            center[axis] = (min[axis] + max[axis]) * 0.5;
            half[axis] = (max[axis] - min[axis]) * 0.5;
        }
        (center, half)
    }
}

/// The object's world box as centre and half extents: the transform applied to the record's
/// local box by Arvo's method, step for step as `ecs::Aabb::transformed_center_half` (glam's
/// `transform_point3`, then `|X| hx + |Y| hy + |Z| hz`), so the bits equal the CPU's.
///
/// GLSL twin: `object_world_box` in `shaders/glsl/engine/object_record.h`.
pub fn world_box(transform: &ObjectTransform, record: &ObjectRecord) -> ([f32; 3], [f32; 3]) {
    let [x, y, z, w] = [0, 1, 2, 3].map(|c| transform.column(c));
    let (c, h) = (record.local_center, record.local_half);
    let mut center = [0.0; 3];
    let mut half = [0.0; 3];
    for axis in 0..3 {
        center[axis] = ((x[axis] * c[0] + y[axis] * c[1]) + z[axis] * c[2]) + w[axis];
        half[axis] = (x[axis].abs() * h[0] + y[axis].abs() * h[1]) + z[axis].abs() * h[2];
    }
    (center, half)
}

/// One indexed indirect draw: `VkDrawIndexedIndirectCommand`, as stored in `draw_commands`.
///
/// A command of an instanced (batched) list draws every object of one (mesh, level of detail,
/// material) that the list holds: `instance_count` objects whose slots are
/// `draw_instances[first_instance ..]`, so the vertex shader reads the object at
/// `draw_instances[gl_InstanceIndex]` (a GPU list may hold commands of no instances, for
/// batches it drew nothing of). A command of a list of one command per object (unbatched, a
/// meshlet, a shadow caster) has `instance_count` 1 and `first_instance` the object's index in
/// `object_records` (the vertex shader reads its record at `gl_InstanceIndex`). See the crate
/// docs for the two lists of `draw_commands`. GLSL twin for writers on the GPU: five `uint`s
/// (20 bytes, `vertex_offset` an `int`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrawCommand {
    /// Indices to draw.
    pub index_count: u32,
    /// Instances to draw: the objects of a batch, or 1 for one object.
    pub instance_count: u32,
    /// First index in the index buffer.
    pub first_index: u32,
    /// Added to each index before pulling the vertex.
    pub vertex_offset: i32,
    /// The start of the batch's objects in `draw_instances`, or the object's index (read as
    /// `gl_InstanceIndex`).
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
    /// The command that draws object `object` alone with the draw arguments of its record.
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

// SAFETY: repr(C) of sixteen four-byte fields, 64 bytes (checked above): no padding.
unsafe impl PlainData for ObjectRecord {}
// SAFETY: repr(C) of twelve f32, 48 bytes (checked above): no padding.
unsafe impl PlainData for ObjectTransform {}
// SAFETY: repr(C) of five four-byte fields, 20 bytes (checked above): no padding.
unsafe impl PlainData for DrawCommand {}
// SAFETY: `#[repr(C)]` of u32, i32 and f32 fields, no padding (checked at its definition).
unsafe impl PlainData for crate::scene::LodEntry {}
// SAFETY: a u32 has no padding.
unsafe impl PlainData for u32 {}
// SAFETY: a u64 has no padding.
unsafe impl PlainData for u64 {}
// SAFETY: repr(C) of 64 four-byte fields, 256 bytes (checked in passes/cull/view.rs): no
// padding.
unsafe impl PlainData for crate::passes::CullView {}
// SAFETY: an array of four f32 has no padding.
unsafe impl PlainData for [f32; 4] {}
// SAFETY: an array of four u32 has no padding.
unsafe impl PlainData for [u32; 4] {}
// SAFETY: an array of two f32 has no padding.
unsafe impl PlainData for [f32; 2] {}
// SAFETY: repr(C) of four four-byte fields, 16 bytes (checked in materials.rs): no padding.
unsafe impl PlainData for crate::scene::GpuMaterial {}

/// Views plain data as its bytes.
pub(crate) fn as_bytes<Data: PlainData>(data: &[Data]) -> &[u8] {
    // SAFETY: `PlainData` promises every byte of `Data` is initialized (no padding); the
    // length covers exactly the slice and u8 has alignment 1.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_packs_red_in_the_lowest_byte() {
        assert_eq!(pack_rgba8(0x11, 0x22, 0x33, 0x44), 0x4433_2211);
    }

    #[test]
    fn a_transform_keeps_the_rows_of_the_matrix_and_gives_it_back() {
        let world = [[1.0, 2.0, 3.0, 0.0], [4.0, 5.0, 6.0, 0.0], [7.0, 8.0, 9.0, 0.0], [10.0, 11.0, 12.0, 1.0]];
        let transform = ObjectTransform::from_cols(&world);
        assert_eq!(transform.rows[0], [1.0, 4.0, 7.0, 10.0], "row 0: the x components and the translation's");
        assert_eq!(transform.rows[2], [3.0, 6.0, 9.0, 12.0]);
        assert_eq!(transform.to_cols(), world);
        assert_eq!(ObjectTransform::from_cols(&IDENTITY), ObjectTransform::IDENTITY);
    }

    #[test]
    fn the_world_box_of_a_rotated_scaled_box_contains_its_corners() {
        // 90° about z, scale 2, then translate (10, 0, 0).
        let world = [[0.0, 2.0, 0.0, 0.0], [-2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [10.0, 0.0, 0.0, 1.0]];
        let (local_center, local_half) = ObjectRecord::center_half([-0.5, -1.0, -0.5], [0.5, 1.0, 0.5]);
        let record = ObjectRecord { local_center, local_half, ..ObjectRecord::EMPTY };
        let (center, half) = world_box(&ObjectTransform::from_cols(&world), &record);
        assert_eq!(center, [10.0, 0.0, 0.0]);
        assert_eq!(half, [2.0, 1.0, 1.0], "x spans the box's y extent doubled");
    }

    #[test]
    fn draw_command_takes_the_record_arguments_and_the_object_index() {
        let record = ObjectRecord { index_count: 36, first_index: 6, vertex_offset: 8, ..ObjectRecord::EMPTY };
        let command = DrawCommand::for_object(7, &record);
        assert_eq!(
            command,
            DrawCommand { index_count: 36, instance_count: 1, first_index: 6, vertex_offset: 8, first_instance: 7 }
        );
        assert_eq!(as_bytes(&[command]).len(), 20);
    }
}

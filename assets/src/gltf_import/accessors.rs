//! Reading accessors with every offset, stride and count checked against the bytes there
//! are, with overflow-checked arithmetic, before a single element is read.

use gltf::accessor::{DataType, Dimensions};

use super::error::ImportError;

/// Where an accessor's elements lie: `count` elements of `element_size` bytes, `stride`
/// apart, from the start of `data`.
struct Layout<'a> {
    data: &'a [u8],
    stride: usize,
    count: usize,
}

fn layout<'a>(
    accessor: &gltf::Accessor<'_>,
    buffers: &'a [Vec<u8>],
    dimensions: Dimensions,
    types: &[DataType],
) -> Result<Layout<'a>, ImportError> {
    let index = accessor.index();
    let fail = |reason: String| ImportError::Accessor { accessor: index, reason };
    if accessor.sparse().is_some() {
        return Err(ImportError::Unsupported(format!("accessor {index} is sparse")));
    }
    if accessor.dimensions() != dimensions {
        return Err(fail(format!("is {:?}, {dimensions:?} expected", accessor.dimensions())));
    }
    if !types.contains(&accessor.data_type()) {
        return Err(fail(format!("has components of {:?}, one of {types:?} expected", accessor.data_type())));
    }
    let view = accessor.view().ok_or_else(|| fail(String::from("has no buffer view")))?;
    let buffer = buffers
        .get(view.buffer().index())
        .ok_or_else(|| fail(format!("names buffer {}, which does not exist", view.buffer().index())))?;
    let view_end = view.offset().checked_add(view.length()).filter(|&end| end <= buffer.len());
    let view_end = view_end.ok_or_else(|| {
        fail(format!(
            "its view {} spans bytes {}+{} of a {}-byte buffer",
            view.index(),
            view.offset(),
            view.length(),
            buffer.len()
        ))
    })?;
    let view_bytes = &buffer[view.offset()..view_end];
    let element_size = accessor.data_type().size() * dimensions.multiplicity();
    let stride = view.stride().unwrap_or(element_size);
    if stride < element_size {
        return Err(fail(format!("a stride of {stride} bytes is less than its {element_size}-byte elements")));
    }
    let count = accessor.count();
    if count == 0 {
        return Ok(Layout { data: &[], stride, count });
    }
    let needed = (count - 1)
        .checked_mul(stride)
        .and_then(|span| span.checked_add(element_size))
        .and_then(|span| span.checked_add(accessor.offset()));
    match needed {
        Some(needed) if needed <= view_bytes.len() => {
            Ok(Layout { data: &view_bytes[accessor.offset()..needed], stride, count })
        }
        _ => Err(fail(format!(
            "{count} elements of {element_size} bytes (stride {stride}) from byte {} do not fit its {}-byte view",
            accessor.offset(),
            view_bytes.len()
        ))),
    }
}

fn component(bytes: &[u8], data_type: DataType, normalized: bool) -> f32 {
    match data_type {
        DataType::F32 => f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        DataType::U8 => f32::from(bytes[0]) / if normalized { 255.0 } else { 1.0 },
        DataType::U16 => f32::from(u16::from_le_bytes([bytes[0], bytes[1]])) / if normalized { 65535.0 } else { 1.0 },
        DataType::I8 => {
            let value = f32::from(bytes[0] as i8);
            if normalized {
                (value / 127.0).max(-1.0)
            } else {
                value
            }
        }
        DataType::I16 => {
            let value = f32::from(i16::from_le_bytes([bytes[0], bytes[1]]));
            if normalized {
                (value / 32767.0).max(-1.0)
            } else {
                value
            }
        }
        DataType::U32 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f32,
    }
}

fn read_floats<const N: usize>(
    accessor: &gltf::Accessor<'_>,
    buffers: &[Vec<u8>],
    dimensions: Dimensions,
    types: &[DataType],
) -> Result<Vec<[f32; N]>, ImportError> {
    let layout = layout(accessor, buffers, dimensions, types)?;
    let data_type = accessor.data_type();
    let size = data_type.size();
    let normalized = accessor.normalized();
    Ok((0..layout.count)
        .map(|element| {
            let start = element * layout.stride;
            std::array::from_fn(|axis| component(&layout.data[start + axis * size..], data_type, normalized))
        })
        .collect())
}

/// A VEC3 float attribute (positions, normals).
pub(crate) fn read_vec3(accessor: &gltf::Accessor<'_>, buffers: &[Vec<u8>]) -> Result<Vec<[f32; 3]>, ImportError> {
    read_floats(accessor, buffers, Dimensions::Vec3, &[DataType::F32])
}

/// A VEC2 texture-coordinate attribute: floats, or normalized unsigned bytes or shorts.
pub(crate) fn read_vec2(accessor: &gltf::Accessor<'_>, buffers: &[Vec<u8>]) -> Result<Vec<[f32; 2]>, ImportError> {
    if accessor.data_type() != DataType::F32 && !accessor.normalized() {
        return Err(ImportError::Accessor {
            accessor: accessor.index(),
            reason: String::from("integer texture coordinates must be normalized"),
        });
    }
    read_floats(accessor, buffers, Dimensions::Vec2, &[DataType::F32, DataType::U8, DataType::U16])
}

/// A SCALAR index list of unsigned bytes, shorts or ints.
pub(crate) fn read_indices(accessor: &gltf::Accessor<'_>, buffers: &[Vec<u8>]) -> Result<Vec<u32>, ImportError> {
    let layout = layout(accessor, buffers, Dimensions::Scalar, &[DataType::U8, DataType::U16, DataType::U32])?;
    let data_type = accessor.data_type();
    Ok((0..layout.count)
        .map(|element| {
            let bytes = &layout.data[element * layout.stride..];
            match data_type {
                DataType::U8 => u32::from(bytes[0]),
                DataType::U16 => u32::from(u16::from_le_bytes([bytes[0], bytes[1]])),
                _ => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            }
        })
        .collect())
}

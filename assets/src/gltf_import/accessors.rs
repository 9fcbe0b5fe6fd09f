//! Reading accessors with every offset, stride and count checked against the bytes there
//! are, with overflow-checked arithmetic, before a single element is read: dense data from
//! a view (plain or decompressed), zeros for an accessor without one, then any sparse
//! substitutions; component types per core glTF and `KHR_mesh_quantization`.

use gltf::accessor::{DataType, Dimensions};

use super::error::ImportError;
use super::views::ViewBytes;

/// Most elements an accessor without a buffer view may claim: no bytes in the file bound
/// its count, so this keeps a small file from making the loader allocate gigabytes of zeros.
const MAX_VIEWLESS_ELEMENTS: usize = 1 << 24;

/// The vertex attributes the importer reads, each with its own allowed component types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attribute {
    /// `POSITION`.
    Position,
    /// `NORMAL`.
    Normal,
    /// `TEXCOORD_0`.
    TexCoord,
}

const SIGNED_OR_UNSIGNED_ANY: &[(DataType, bool)] = &[
    (DataType::I8, false),
    (DataType::I8, true),
    (DataType::U8, false),
    (DataType::U8, true),
    (DataType::I16, false),
    (DataType::I16, true),
    (DataType::U16, false),
    (DataType::U16, true),
];

impl Attribute {
    fn semantic(self) -> &'static str {
        match self {
            Attribute::Position => "POSITION",
            Attribute::Normal => "NORMAL",
            Attribute::TexCoord => "TEXCOORD_0",
        }
    }

    fn dimensions(self) -> Dimensions {
        match self {
            Attribute::Position | Attribute::Normal => Dimensions::Vec3,
            Attribute::TexCoord => Dimensions::Vec2,
        }
    }

    /// `(component type, normalized)` pairs core glTF allows.
    fn core_types(self) -> &'static [(DataType, bool)] {
        match self {
            Attribute::Position | Attribute::Normal => &[(DataType::F32, false)],
            Attribute::TexCoord => &[(DataType::F32, false), (DataType::U8, true), (DataType::U16, true)],
        }
    }

    /// The pairs `KHR_mesh_quantization` adds (its table, which for texture coordinates
    /// leaves out only the two normalized unsigned types core glTF already has).
    fn quantized_types(self) -> &'static [(DataType, bool)] {
        match self {
            Attribute::Position | Attribute::TexCoord => SIGNED_OR_UNSIGNED_ANY,
            Attribute::Normal => &[(DataType::I8, true), (DataType::I16, true)],
        }
    }
}

/// Checks `accessor`'s shape and component type for `attribute`; `quantized` says whether
/// the file declares `KHR_mesh_quantization`.
fn check_attribute(accessor: &gltf::Accessor<'_>, attribute: Attribute, quantized: bool) -> Result<(), ImportError> {
    let fail = |reason: String| ImportError::Accessor { accessor: accessor.index(), reason };
    if accessor.dimensions() != attribute.dimensions() {
        return Err(fail(format!("is {:?}, {:?} expected", accessor.dimensions(), attribute.dimensions())));
    }
    let found = (accessor.data_type(), accessor.normalized());
    if attribute.core_types().contains(&found) || (quantized && attribute.quantized_types().contains(&found)) {
        return Ok(());
    }
    let normalized = if found.1 { " normalized" } else { "" };
    let (semantic, data_type) = (attribute.semantic(), found.0);
    if attribute.quantized_types().contains(&found) {
        Err(fail(format!(
            "{semantic} of {data_type:?}{normalized} needs KHR_mesh_quantization, which the file does not declare"
        )))
    } else {
        Err(fail(format!("{semantic} cannot be {data_type:?}{normalized}")))
    }
}

/// The bytes of `accessor`'s dense elements in its view and their stride, after checking
/// that every element fits.
fn dense_span<'a>(
    accessor: &gltf::Accessor<'_>,
    view: &gltf::buffer::View<'_>,
    views: &'a [ViewBytes<'_>],
    element_size: usize,
) -> Result<(&'a [u8], usize), ImportError> {
    let fail = |reason: String| ImportError::Accessor { accessor: accessor.index(), reason };
    let view_bytes = view_bytes(views, view).map_err(fail)?;
    let stride = view.stride().unwrap_or(element_size);
    if stride < element_size {
        return Err(fail(format!("a stride of {stride} bytes is less than its {element_size}-byte elements")));
    }
    let count = accessor.count();
    if count == 0 {
        return Ok((&[], stride));
    }
    let needed = (count - 1)
        .checked_mul(stride)
        .and_then(|span| span.checked_add(element_size))
        .and_then(|span| span.checked_add(accessor.offset()));
    match needed {
        Some(needed) if needed <= view_bytes.len() => Ok((&view_bytes[accessor.offset()..needed], stride)),
        _ => Err(fail(format!(
            "{count} elements of {element_size} bytes (stride {stride}) from byte {} do not fit its {}-byte view",
            accessor.offset(),
            view_bytes.len()
        ))),
    }
}

fn view_bytes<'a>(views: &'a [ViewBytes<'_>], view: &gltf::buffer::View<'_>) -> Result<&'a [u8], String> {
    let resolved =
        views.get(view.index()).ok_or_else(|| format!("names view {}, which does not exist", view.index()))?;
    resolved.bytes().map_err(String::from)
}

/// `count` tightly packed items of `size` bytes from `offset` in `view` (a sparse
/// accessor's indices or values).
fn packed_span<'a>(
    views: &'a [ViewBytes<'_>],
    view: &gltf::buffer::View<'_>,
    offset: usize,
    count: usize,
    size: usize,
) -> Result<&'a [u8], String> {
    let bytes = view_bytes(views, view)?;
    count
        .checked_mul(size)
        .and_then(|length| length.checked_add(offset))
        .filter(|&end| end <= bytes.len())
        .map(|end| &bytes[offset..end])
        .ok_or_else(|| format!("{count} items of {size} bytes from byte {offset} do not fit view {}", view.index()))
}

/// Every element of `accessor` through `element` (given an element's bytes): from its view,
/// `zero` without one, then its sparse substitutions.
fn read_elements<T: Copy>(
    accessor: &gltf::Accessor<'_>,
    views: &[ViewBytes<'_>],
    zero: T,
    element: impl Fn(&[u8]) -> T,
) -> Result<Vec<T>, ImportError> {
    let fail = |reason: String| ImportError::Accessor { accessor: accessor.index(), reason };
    let element_size = accessor.data_type().size() * accessor.dimensions().multiplicity();
    let count = accessor.count();
    let mut out = match accessor.view() {
        Some(view) => {
            let (data, stride) = dense_span(accessor, &view, views, element_size)?;
            (0..count).map(|index| element(&data[index * stride..])).collect()
        }
        None if count > MAX_VIEWLESS_ELEMENTS => {
            return Err(fail(format!(
                "claims {count} elements without a buffer view, more than the {MAX_VIEWLESS_ELEMENTS} allowed"
            )));
        }
        None => vec![zero; count],
    };
    if let Some(sparse) = accessor.sparse() {
        substitute_sparse(&sparse, views, element_size, &element, &mut out).map_err(fail)?;
    }
    Ok(out)
}

/// Replaces the elements a sparse accessor lists by its values. The indices must strictly
/// increase and stay below the element count, as the specification requires.
fn substitute_sparse<T>(
    sparse: &gltf::accessor::sparse::Sparse<'_>,
    views: &[ViewBytes<'_>],
    element_size: usize,
    element: &impl Fn(&[u8]) -> T,
    out: &mut [T],
) -> Result<(), String> {
    let count = sparse.count();
    if count > out.len() {
        return Err(format!("sparse.count {count} exceeds the accessor's {} elements", out.len()));
    }
    let indices = sparse.indices();
    let index_size = indices.index_type().size();
    let index_bytes = packed_span(views, &indices.view(), indices.offset(), count, index_size)
        .map_err(|reason| format!("sparse indices: {reason}"))?;
    let values = sparse.values();
    let value_bytes = packed_span(views, &values.view(), values.offset(), count, element_size)
        .map_err(|reason| format!("sparse values: {reason}"))?;
    let mut previous = None;
    for item in 0..count {
        let index = unsigned(&index_bytes[item * index_size..], index_size) as usize;
        if index >= out.len() || previous.is_some_and(|previous| index <= previous) {
            return Err(format!("sparse index {item} is {index}: indices must increase and stay below {}", out.len()));
        }
        out[index] = element(&value_bytes[item * element_size..]);
        previous = Some(index);
    }
    Ok(())
}

/// A little-endian unsigned integer of `size` (1, 2 or 4) bytes.
fn unsigned(bytes: &[u8], size: usize) -> u32 {
    match size {
        1 => u32::from(bytes[0]),
        2 => u32::from(u16::from_le_bytes([bytes[0], bytes[1]])),
        _ => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
    }
}

/// One component as a float; normalized integers map per the glTF equations (signed ones
/// `max(c / MAX, -1)`), others keep their integer value.
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
    views: &[ViewBytes<'_>],
    attribute: Attribute,
    quantized: bool,
) -> Result<Vec<[f32; N]>, ImportError> {
    check_attribute(accessor, attribute, quantized)?;
    let data_type = accessor.data_type();
    let size = data_type.size();
    let normalized = accessor.normalized();
    read_elements(accessor, views, [0.0; N], |bytes| {
        std::array::from_fn(|axis| component(&bytes[axis * size..], data_type, normalized))
    })
}

/// A VEC3 attribute (positions, normals) as floats; `quantized` (the file declares
/// `KHR_mesh_quantization`) admits the integer types that extension allows.
pub(crate) fn read_vec3(
    accessor: &gltf::Accessor<'_>,
    views: &[ViewBytes<'_>],
    attribute: Attribute,
    quantized: bool,
) -> Result<Vec<[f32; 3]>, ImportError> {
    read_floats(accessor, views, attribute, quantized)
}

/// A VEC2 texture-coordinate attribute as floats: floats or normalized unsigned bytes or
/// shorts, and with `quantized` any 8- or 16-bit integer, normalized or not (unnormalized
/// ones keep their integer value, which a texture transform scales).
pub(crate) fn read_vec2(
    accessor: &gltf::Accessor<'_>,
    views: &[ViewBytes<'_>],
    quantized: bool,
) -> Result<Vec<[f32; 2]>, ImportError> {
    read_floats(accessor, views, Attribute::TexCoord, quantized)
}

/// Elements of `accessor` as floats (normalized integers mapped per glTF), after checking its
/// shape is `dimensions` and its `(component type, normalized)` is one of `allowed`; `what`
/// names the use in the error.
pub(crate) fn read_checked<const N: usize>(
    accessor: &gltf::Accessor<'_>,
    views: &[ViewBytes<'_>],
    dimensions: Dimensions,
    allowed: &[(DataType, bool)],
    what: &str,
) -> Result<Vec<[f32; N]>, ImportError> {
    let fail = |reason: String| ImportError::Accessor { accessor: accessor.index(), reason };
    if accessor.dimensions() != dimensions || dimensions.multiplicity() != N {
        return Err(fail(format!("{what} is {:?}, {dimensions:?} expected", accessor.dimensions())));
    }
    let found = (accessor.data_type(), accessor.normalized());
    if !allowed.contains(&found) {
        let normalized = if found.1 { " normalized" } else { "" };
        return Err(fail(format!("{what} cannot be {:?}{normalized}", found.0)));
    }
    let (data_type, size, normalized) = (found.0, found.0.size(), found.1);
    read_elements(accessor, views, [0.0; N], |bytes| {
        std::array::from_fn(|axis| component(&bytes[axis * size..], data_type, normalized))
    })
}

/// A SCALAR index list of unsigned bytes, shorts or ints.
pub(crate) fn read_indices(accessor: &gltf::Accessor<'_>, views: &[ViewBytes<'_>]) -> Result<Vec<u32>, ImportError> {
    let fail = |reason: String| ImportError::Accessor { accessor: accessor.index(), reason };
    if accessor.dimensions() != Dimensions::Scalar {
        return Err(fail(format!("is {:?}, Scalar expected", accessor.dimensions())));
    }
    let data_type = accessor.data_type();
    if !matches!(data_type, DataType::U8 | DataType::U16 | DataType::U32) || accessor.normalized() {
        return Err(fail(format!(
            "indices cannot be {data_type:?}{}",
            if accessor.normalized() { " normalized" } else { "" }
        )));
    }
    let size = data_type.size();
    read_elements(accessor, views, 0, |bytes| unsigned(bytes, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_components_follow_the_specification() {
        assert_eq!(component(&[127], DataType::I8, true), 1.0);
        assert_eq!(component(&[0x80], DataType::I8, true), -1.0, "-128 clamps to -1");
        assert_eq!(component(&[0x81], DataType::I8, true), -1.0);
        assert_eq!(component(&[0x80], DataType::I8, false), -128.0);
        assert_eq!(component(&[255], DataType::U8, true), 1.0);
        assert_eq!(component(&[255], DataType::U8, false), 255.0);
        assert_eq!(component(&0x8000_u16.to_le_bytes(), DataType::I16, true), -1.0);
        assert_eq!(component(&32767_i16.to_le_bytes(), DataType::I16, true), 1.0);
        assert_eq!(component(&(-5_i16).to_le_bytes(), DataType::I16, false), -5.0);
        assert_eq!(component(&65535_u16.to_le_bytes(), DataType::U16, true), 1.0);
        assert_eq!(component(&1000_u16.to_le_bytes(), DataType::U16, false), 1000.0);
    }

    #[test]
    fn quantized_types_follow_the_extension_table() {
        use Attribute::*;
        for (data_type, normalized) in SIGNED_OR_UNSIGNED_ANY {
            assert!(Position.quantized_types().contains(&(*data_type, *normalized)));
        }
        assert!(!Normal.quantized_types().contains(&(DataType::U8, true)), "normals are signed");
        assert!(!Normal.quantized_types().contains(&(DataType::I16, false)), "normals are normalized");
        assert!(TexCoord.core_types().contains(&(DataType::U16, true)));
        assert!(!Position.core_types().contains(&(DataType::I16, false)), "integers need the extension");
    }
}

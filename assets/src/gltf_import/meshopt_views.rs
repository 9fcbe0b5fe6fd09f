//! Buffer views compressed by `EXT_meshopt_compression` (or its successor
//! `KHR_meshopt_compression`, the same JSON with one more filter): the extension's object
//! is read from the raw JSON (gltf-json keeps no unknown extension data), checked against
//! every rule of the specification, and decoded by meshoptimizer into the bytes the parent
//! view stands for.

use gltf::json::Value;

/// The extension names, newest first; a view may carry at most one of them.
const EXTENSIONS: [&str; 2] = ["KHR_meshopt_compression", "EXT_meshopt_compression"];

/// How the compressed stream is laid out (the specification's `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Vertex data of any element size (a multiple of 4 bytes).
    Attributes,
    /// A triangle list's indices.
    Triangles,
    /// Any other index sequence.
    Indices,
}

/// What is done to decoded attribute data (the specification's `filter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Filter {
    /// The data as decoded.
    None,
    /// Octahedral unit vectors into normalized integers.
    Octahedral,
    /// Three-component quaternions into four normalized shorts.
    Quaternion,
    /// Exponent and mantissa into 32-bit floats.
    Exponential,
    /// YCoCg colours into RGBA (`KHR_meshopt_compression` only).
    Color,
}

/// A view's compression parameters, as the extension object gives them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompressedView {
    /// Which of the two extensions it is.
    pub(crate) extension: &'static str,
    /// The buffer holding the compressed bytes.
    pub(crate) buffer: usize,
    /// Where they start in it.
    pub(crate) offset: usize,
    /// How many there are.
    pub(crate) length: usize,
    /// The size of one decoded element.
    pub(crate) stride: usize,
    /// The number of decoded elements.
    pub(crate) count: usize,
    /// The stream's layout.
    pub(crate) mode: Mode,
    /// The filter applied after decoding.
    pub(crate) filter: Filter,
}

/// The decoded bytes of a view, in storage aligned for the element type the decoders write
/// (meshoptimizer's filters address 16-bit components in place).
pub(crate) enum Decoded {
    /// Attribute data or 32-bit indices.
    Words(Vec<u32>),
    /// 16-bit indices.
    Halves(Vec<u16>),
}

impl Decoded {
    /// The decoded bytes, as the parent view would hold them uncompressed.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Decoded::Words(words) => bytemuck::cast_slice(words),
            Decoded::Halves(halves) => bytemuck::cast_slice(halves),
        }
    }
}

/// Per buffer view of `root`: its compression parameters, `None` for a plain view. A
/// malformed extension object is a JSON error naming the field.
pub(crate) fn compressed_views(root: &Value) -> Result<Vec<Option<CompressedView>>, super::ImportError> {
    let Some(views) = root.get("bufferViews").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    views
        .iter()
        .enumerate()
        .map(|(index, view)| {
            let mut present = EXTENSIONS.iter().filter_map(|&name| Some((name, view.get("extensions")?.get(name)?)));
            let Some((name, object)) = present.next() else {
                return Ok(None);
            };
            if present.next().is_some() {
                return Err(super::ImportError::Json(format!(
                    "bufferViews[{index}] carries both EXT_meshopt_compression and KHR_meshopt_compression"
                )));
            }
            parse_extension(name, object)
                .map(Some)
                .map_err(|reason| super::ImportError::Json(format!("bufferViews[{index}].extensions.{name}: {reason}")))
        })
        .collect()
}

/// Per buffer of `root`: whether it is tagged as a fallback (its data, if any, is only for
/// loaders without the extension, so it is never loaded).
pub(crate) fn fallback_buffers(root: &Value) -> Vec<bool> {
    let Some(buffers) = root.get("buffers").and_then(Value::as_array) else {
        return Vec::new();
    };
    buffers
        .iter()
        .map(|buffer| {
            EXTENSIONS.iter().any(|&name| {
                buffer
                    .get("extensions")
                    .and_then(|extensions| extensions.get(name))
                    .and_then(|object| object.get("fallback"))
                    == Some(&Value::Bool(true))
            })
        })
        .collect()
}

fn parse_extension(extension: &'static str, object: &Value) -> Result<CompressedView, String> {
    let integer = |field: &str, default: Option<usize>| match object.get(field) {
        None => default.ok_or_else(|| format!("{field} is missing")),
        Some(value) => value
            .as_u64()
            .and_then(|value| usize::try_from(value).ok())
            .ok_or_else(|| format!("{field} is not a non-negative integer")),
    };
    let mode = match object.get("mode").and_then(Value::as_str) {
        Some("ATTRIBUTES") => Mode::Attributes,
        Some("TRIANGLES") => Mode::Triangles,
        Some("INDICES") => Mode::Indices,
        Some(other) => return Err(format!("mode {other:?} is not ATTRIBUTES, TRIANGLES or INDICES")),
        None => return Err(String::from("mode is missing or not a string")),
    };
    let filter = match object.get("filter").map(|filter| filter.as_str()) {
        None | Some(Some("NONE")) => Filter::None,
        Some(Some("OCTAHEDRAL")) => Filter::Octahedral,
        Some(Some("QUATERNION")) => Filter::Quaternion,
        Some(Some("EXPONENTIAL")) => Filter::Exponential,
        Some(Some("COLOR")) if extension == "KHR_meshopt_compression" => Filter::Color,
        Some(other) => return Err(format!("filter {other:?} is not one the extension defines")),
    };
    Ok(CompressedView {
        extension,
        buffer: integer("buffer", None)?,
        offset: integer("byteOffset", Some(0))?,
        length: integer("byteLength", None)?,
        stride: integer("byteStride", None)?,
        count: integer("count", None)?,
        mode,
        filter,
    })
}

impl CompressedView {
    /// The size of the decoded data, after checking the rules the specification sets on the
    /// parameters (and on the parent view's `byteLength`, and for `EXT_meshopt_compression`
    /// its `byteStride`).
    pub(crate) fn decoded_length(&self, parent_stride: Option<usize>, parent_length: usize) -> Result<usize, String> {
        let stride = self.stride;
        // Only EXT_meshopt_compression ties the parent's stride to the stream's; for its
        // successor the decoded bytes are the parent's, read with the parent's stride.
        if self.extension == "EXT_meshopt_compression" && parent_stride.is_some_and(|parent| parent != stride) {
            return Err(format!("byteStride {stride} differs from the view's {}", parent_stride.unwrap_or(0)));
        }
        let decoded = stride.checked_mul(self.count).filter(|&decoded| decoded == parent_length).ok_or_else(|| {
            format!("{} elements of {stride} bytes do not make the view's {parent_length} bytes", self.count)
        })?;
        match self.mode {
            Mode::Attributes if stride == 0 || !stride.is_multiple_of(4) || stride > 256 => {
                return Err(format!("ATTRIBUTES need a byteStride that is a multiple of 4 up to 256, not {stride}"));
            }
            Mode::Triangles if !self.count.is_multiple_of(3) => {
                return Err(format!("TRIANGLES need a count that is a multiple of 3, not {}", self.count));
            }
            Mode::Triangles | Mode::Indices if stride != 2 && stride != 4 => {
                return Err(format!("{:?} need a byteStride of 2 or 4, not {stride}", self.mode));
            }
            Mode::Triangles | Mode::Indices if self.filter != Filter::None => {
                return Err(format!("{:?} take no filter, not {:?}", self.mode, self.filter));
            }
            _ => {}
        }
        let filter_fits = match self.filter {
            Filter::None | Filter::Exponential => true,
            Filter::Octahedral | Filter::Color => stride == 4 || stride == 8,
            Filter::Quaternion => stride == 8,
        };
        if !filter_fits {
            return Err(format!("filter {:?} does not take a byteStride of {stride}", self.filter));
        }
        // The most any valid stream expands: an ATTRIBUTES block of up to 256 elements can
        // cost 2 bits per byte of an element (the version 1 zero mode), TRIANGLES one code
        // byte per triangle, INDICES one byte per index. Checking this before allocating
        // keeps a small file from claiming gigabytes.
        let expansion = match self.mode {
            Mode::Attributes => 1024,
            Mode::Triangles => 12,
            Mode::Indices => 4,
        };
        if decoded / expansion > self.length {
            return Err(format!(
                "{decoded} decoded bytes cannot come from {} compressed ones in {:?} mode",
                self.length, self.mode
            ));
        }
        Ok(decoded)
    }

    /// Decodes `source` (the compressed bytes) into `decoded_length` bytes; the parameters
    /// must have passed [`CompressedView::decoded_length`].
    pub(crate) fn decode(&self, source: &[u8]) -> Result<Decoded, String> {
        let failed = |code| format!("the {:?} stream does not decode (meshoptimizer error {code:?})", self.mode);
        match (self.mode, self.stride) {
            (Mode::Attributes, _) => {
                let mut words = decode_attributes(source, self.count, self.stride)?;
                apply_filter(self.filter, &mut words, self.count, self.stride);
                Ok(Decoded::Words(words))
            }
            (Mode::Triangles, 2) => {
                meshopt::encoding::decode_index_buffer::<u16>(source, self.count).map(Decoded::Halves).map_err(failed)
            }
            (Mode::Triangles, _) => {
                meshopt::encoding::decode_index_buffer::<u32>(source, self.count).map(Decoded::Words).map_err(failed)
            }
            (Mode::Indices, 2) => {
                meshopt::encoding::decode_index_sequence::<u16>(source, self.count).map(Decoded::Halves).map_err(failed)
            }
            (Mode::Indices, _) => {
                meshopt::encoding::decode_index_sequence::<u32>(source, self.count).map(Decoded::Words).map_err(failed)
            }
        }
    }
}

/// The ATTRIBUTES decoder with the element size known only at run time (the safe wrapper
/// takes it from a type), writing into 4-byte aligned storage.
fn decode_attributes(source: &[u8], count: usize, stride: usize) -> Result<Vec<u32>, String> {
    let mut words = vec![0_u32; count * stride / 4];
    // SAFETY: `words` holds exactly `count * stride` bytes, all the decoder writes; `stride`
    // is a multiple of 4 from 4 to 256 (checked by `decoded_length`), as the decoder
    // requires; `source` is a live slice of `source.len()` bytes, which the decoder only
    // reads within.
    let code = unsafe {
        meshopt::ffi::meshopt_decodeVertexBuffer(
            words.as_mut_ptr().cast(),
            count,
            stride,
            source.as_ptr(),
            source.len(),
        )
    };
    if code != 0 {
        return Err(format!("the ATTRIBUTES stream does not decode (meshoptimizer error {code})"));
    }
    Ok(words)
}

/// Runs `filter` in place over `count` elements of `stride` bytes in `words`.
fn apply_filter(filter: Filter, words: &mut [u32], count: usize, stride: usize) {
    let decode = match filter {
        Filter::None => return,
        Filter::Octahedral => meshopt::ffi::meshopt_decodeFilterOct,
        Filter::Quaternion => meshopt::ffi::meshopt_decodeFilterQuat,
        Filter::Exponential => meshopt::ffi::meshopt_decodeFilterExp,
        Filter::Color => meshopt::ffi::meshopt_decodeFilterColor,
    };
    // SAFETY: `words` holds `count * stride` bytes, 4-byte aligned, which the filter reads
    // and rewrites in place; `decoded_length` checked that `stride` is one this filter takes
    // (4 or 8 for octahedral and colour, 8 for quaternion, a multiple of 4 for exponential).
    unsafe { decode(words.as_mut_ptr().cast(), count, stride) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gltf::json::Value;

    fn view(mode: Mode, filter: Filter, stride: usize, count: usize, length: usize) -> CompressedView {
        CompressedView {
            extension: "EXT_meshopt_compression",
            buffer: 0,
            offset: 0,
            length,
            stride,
            count,
            mode,
            filter,
        }
    }

    #[test]
    fn the_specification_rules_are_checked() {
        let ok = view(Mode::Attributes, Filter::None, 12, 10, 100);
        assert_eq!(ok.decoded_length(None, 120), Ok(120));
        assert!(ok.decoded_length(Some(16), 120).is_err(), "a parent stride that differs");
        let successor = CompressedView { extension: "KHR_meshopt_compression", ..ok.clone() };
        assert_eq!(successor.decoded_length(Some(16), 120), Ok(120), "the successor drops that rule");
        assert!(ok.decoded_length(None, 121).is_err(), "a parent length that is not stride * count");
        assert!(view(Mode::Attributes, Filter::None, 6, 10, 100).decoded_length(None, 60).is_err());
        assert!(view(Mode::Attributes, Filter::None, 260, 1, 100).decoded_length(None, 260).is_err());
        assert!(view(Mode::Triangles, Filter::None, 2, 4, 100).decoded_length(None, 8).is_err());
        assert!(view(Mode::Indices, Filter::None, 8, 4, 100).decoded_length(None, 32).is_err());
        assert!(view(Mode::Indices, Filter::Octahedral, 4, 4, 100).decoded_length(None, 16).is_err());
        assert!(view(Mode::Attributes, Filter::Octahedral, 12, 4, 100).decoded_length(None, 48).is_err());
        assert!(view(Mode::Attributes, Filter::Quaternion, 4, 4, 100).decoded_length(None, 16).is_err());
        assert!(view(Mode::Attributes, Filter::Quaternion, 8, 4, 100).decoded_length(None, 32).is_ok());
    }

    #[test]
    fn a_claim_past_the_codec_expansion_is_refused_before_allocating() {
        let huge = view(Mode::Attributes, Filter::None, 4, 1 << 30, 64);
        let error = huge.decoded_length(None, 4 << 30).unwrap_err();
        assert!(error.contains("cannot come from 64 compressed"), "{error}");
    }

    #[test]
    fn garbage_streams_are_errors() {
        let attributes = view(Mode::Attributes, Filter::Octahedral, 4, 16, 40);
        assert!(attributes.decode(&[0xa0; 40]).is_err());
        assert!(attributes.decode(&[]).is_err());
        assert!(view(Mode::Triangles, Filter::None, 4, 3, 20).decode(&[0xe1, 0, 0]).is_err());
        assert!(view(Mode::Indices, Filter::None, 2, 3, 20).decode(&[0x17]).is_err());
    }

    /// Compresses `filtered` (a filter encoder's output) as ATTRIBUTES and checks that
    /// decoding with `filter` gives what `reference` (meshoptimizer's typed decoder) does.
    fn check_filter<T: bytemuck::Pod + Default>(filter: Filter, filtered: Vec<T>, reference: impl Fn(&mut [T])) {
        let stride = std::mem::size_of::<T>();
        let encoded = meshopt::encoding::encode_vertex_buffer(&filtered).unwrap();
        let compressed = view(Mode::Attributes, filter, stride, filtered.len(), encoded.len());
        assert!(compressed.decoded_length(Some(stride), stride * filtered.len()).is_ok());
        let decoded = compressed.decode(&encoded).unwrap();
        let mut expected = filtered.clone();
        reference(&mut expected);
        assert_eq!(decoded.bytes(), bytemuck::cast_slice::<T, u8>(&expected), "{filter:?}");
    }

    #[test]
    fn every_filter_decodes_as_meshoptimizer_does() {
        use meshopt::encoding::*;
        let vectors: Vec<[f32; 4]> = (0..40)
            .map(|step| {
                let angle = step as f32 * 0.3;
                let (x, y, z) = (angle.cos() * 0.6, angle.sin() * 0.6, (step as f32 / 40.0) - 0.5);
                let length = (x * x + y * y + z * z).sqrt();
                [x / length, y / length, z / length, 0.5]
            })
            .collect();
        let rotations: Vec<[f32; 4]> = vectors.iter().map(|v| [v[0] * 0.5, v[1] * 0.5, v[2] * 0.5, 0.5]).collect();
        let rotations: Vec<[f32; 4]> = rotations
            .iter()
            .map(|q| {
                let length = q.iter().map(|c| c * c).sum::<f32>().sqrt();
                q.map(|c| c / length)
            })
            .collect();
        let floats: Vec<[f32; 3]> = vectors.iter().map(|v| [v[0] * 1000.0, v[1] * 0.001, v[2]]).collect();
        let colours: Vec<[f32; 4]> = vectors.iter().map(|v| v.map(|c| c.abs())).collect();
        check_filter(Filter::Octahedral, encode_filter_oct::<i8>(&vectors, 8), decode_filter_oct);
        check_filter(Filter::Octahedral, encode_filter_oct::<i16>(&vectors, 12), decode_filter_oct);
        check_filter(Filter::Quaternion, encode_filter_quat(&rotations, 12), decode_filter_quat);
        check_filter(Filter::Exponential, encode_filter_exp(&floats, 15, EncodeExpMode::Separate), |data| {
            decode_filter_exp(data)
        });
        check_filter(Filter::Color, encode_filter_color::<u8>(&colours, 8), decode_filter_color);
        check_filter(Filter::None, floats.clone(), |_| {});
    }

    #[test]
    fn extension_objects_parse_with_defaults_and_named_errors() {
        let root: Value = gltf::json::deserialize::from_str(
            r#"{ "bufferViews": [
                { "buffer": 1, "byteLength": 48 },
                { "buffer": 1, "byteLength": 48, "extensions": { "EXT_meshopt_compression":
                    { "buffer": 0, "byteLength": 30, "byteStride": 12, "count": 4, "mode": "ATTRIBUTES" } } }
            ], "buffers": [{ "byteLength": 30 }, { "byteLength": 48,
                "extensions": { "EXT_meshopt_compression": { "fallback": true } } }] }"#,
        )
        .unwrap();
        let views = compressed_views(&root).unwrap();
        assert_eq!(views[0], None);
        assert_eq!(views[1], Some(view(Mode::Attributes, Filter::None, 12, 4, 30)));
        assert_eq!(fallback_buffers(&root), vec![false, true]);
        let bad: Value = gltf::json::deserialize::from_str(
            r#"{ "bufferViews": [{ "buffer": 0, "byteLength": 4, "extensions": { "EXT_meshopt_compression":
                { "buffer": 0, "byteLength": 4, "byteStride": 4, "count": 1, "mode": "ATTRIBUTES", "filter": "COLOR" } } }] }"#,
        )
        .unwrap();
        let error = compressed_views(&bad).unwrap_err().to_string();
        assert!(error.contains("filter") && error.contains("bufferViews[0]"), "{error}");
    }
}

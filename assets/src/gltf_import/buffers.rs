//! The bytes behind a glTF document: the .glb container split by hand (every length checked
//! before use), and each buffer resolved from the binary chunk, a data URI or a file beside
//! the document, its length checked against its claim before anything reads it.

use std::path::Path;

use super::error::ImportError;
use super::meshopt_views::CompressedView;

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// The JSON of a .gltf file, or the JSON and binary chunks of a .glb one.
pub(crate) struct Container<'a> {
    pub(crate) json: &'a [u8],
    pub(crate) bin: Option<&'a [u8]>,
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let word = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(word.try_into().ok()?))
}

/// Splits `bytes` into JSON and binary chunk when it is a .glb; otherwise all of it is JSON.
pub(crate) fn split_container(bytes: &[u8]) -> Result<Container<'_>, ImportError> {
    if !bytes.starts_with(GLB_MAGIC) {
        return Ok(Container { json: bytes, bin: None });
    }
    let glb = |reason: String| Err(ImportError::Glb(reason));
    let (Some(version), Some(length)) = (read_u32(bytes, 4), read_u32(bytes, 8)) else {
        return glb(format!("the 12-byte header is cut short at {} bytes", bytes.len()));
    };
    if version != 2 {
        return glb(format!("version {version}, only 2 is read"));
    }
    let length = length as usize;
    if length > bytes.len() {
        return glb(format!("the header claims {length} bytes but the file has {} (truncated)", bytes.len()));
    }
    let mut chunks = Vec::new();
    let mut at = 12;
    while at < length {
        let (Some(chunk_length), Some(kind)) = (read_u32(bytes, at), read_u32(bytes, at + 4)) else {
            return glb(format!("a chunk header at byte {at} is cut short"));
        };
        let start = at + 8;
        let end = start.checked_add(chunk_length as usize).filter(|&end| end <= length);
        let Some(end) = end else {
            return glb(format!(
                "the chunk at byte {at} claims {chunk_length} bytes, past the end of the {length}-byte file"
            ));
        };
        chunks.push((kind, &bytes[start..end]));
        // Chunks start on 4-byte boundaries.
        at = end.next_multiple_of(4);
    }
    match chunks.as_slice() {
        [(CHUNK_JSON, json)] => Ok(Container { json, bin: None }),
        [(CHUNK_JSON, json), (CHUNK_BIN, bin), ..] => Ok(Container { json, bin: Some(bin) }),
        [] => glb(String::from("no chunk at all")),
        _ => glb(String::from("the first chunk is not JSON or the second not BIN")),
    }
}

/// Decodes standard base64 (with or without padding); `None` for a character outside the
/// alphabet.
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut accumulator = 0_u32;
    let mut bits = 0;
    for byte in text.bytes().filter(|&byte| byte != b'=') {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        accumulator = (accumulator << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((accumulator >> bits) as u8);
        }
    }
    Some(out)
}

/// A buffer's bytes, or `None` for a placeholder without data: one tagged as an
/// `EXT_meshopt_compression` fallback, or one without a URI that nothing reads (a buffer
/// without a URI other than the first is never the .glb binary chunk, and a .gltf or a .glb
/// without that chunk has none). Only compressed views may lie in a placeholder.
pub(crate) type BufferData = Option<Vec<u8>>;

/// The bytes of every buffer of `document`, in order, each at least as long as it claims;
/// `fallback` says per buffer whether it is a compression fallback, which is never loaded
/// (its data is only for loaders that cannot decompress). A buffer without a URI and without
/// the binary chunk behind it is a placeholder when nothing reads it (the specification
/// allows one, and the Khronos validator accepts it) and a [`ImportError::Buffer`] naming
/// its first reader when something does; `compressed` says per view which buffer its
/// compressed stream lies in (such a view reads that buffer, not its own).
pub(crate) fn load_buffers(
    document: &gltf::Document,
    bin: Option<&[u8]>,
    base: Option<&Path>,
    fallback: &[bool],
    compressed: &[Option<CompressedView>],
) -> Result<Vec<BufferData>, ImportError> {
    let readers = first_readers(document, compressed);
    let mut buffers = Vec::with_capacity(document.buffers().len());
    for buffer in document.buffers() {
        let index = buffer.index();
        let without_data = matches!(buffer.source(), gltf::buffer::Source::Bin) && (index > 0 || bin.is_none());
        let data = if fallback.get(index).copied().unwrap_or(false) {
            None
        } else if without_data {
            if let Some(reader) = &readers[index] {
                let lacks = if index > 0 { "it is not the first buffer" } else { "the file has no BIN chunk" };
                return Err(ImportError::Buffer {
                    buffer: index,
                    reason: format!("has no data (no uri, and {lacks}) but {reader} reads it"),
                });
            }
            None
        } else {
            Some(buffer_bytes(&buffer, bin, base)?)
        };
        buffers.push(data);
    }
    Ok(buffers)
}

/// Per buffer of `document`: the first thing that reads it (an accessor, its sparse indices
/// or values, an image, or a compressed view's stream), named for an error message; `None`
/// for a buffer nothing reads. A compressed view reads the buffer of its stream (always:
/// every compressed view is decoded at load), not its own.
fn first_readers(document: &gltf::Document, compressed: &[Option<CompressedView>]) -> Vec<Option<String>> {
    let mut readers: Vec<Option<String>> = vec![None; document.buffers().len()];
    let mut note = |buffer: usize, reader: &dyn Fn() -> String| {
        if let Some(slot) = readers.get_mut(buffer).filter(|slot| slot.is_none()) {
            *slot = Some(reader());
        }
    };
    for (view, compression) in compressed.iter().enumerate() {
        if let Some(compression) = compression {
            note(compression.buffer, &|| format!("buffer view {view}'s {}", compression.extension));
        }
    }
    let is_plain = |view: &gltf::buffer::View<'_>| compressed.get(view.index()).is_none_or(Option::is_none);
    for accessor in document.accessors() {
        let index = accessor.index();
        let mut views = Vec::new();
        views.extend(accessor.view().map(|view| (view, "accessor")));
        if let Some(sparse) = accessor.sparse() {
            views.push((sparse.indices().view(), "the sparse indices of accessor"));
            views.push((sparse.values().view(), "the sparse values of accessor"));
        }
        for (view, what) in views.into_iter().filter(|(view, _)| is_plain(view)) {
            note(view.buffer().index(), &|| format!("{what} {index}"));
        }
    }
    for image in document.images() {
        if let gltf::image::Source::View { view, .. } = image.source() {
            if is_plain(&view) {
                note(view.buffer().index(), &|| format!("image {}", image.index()));
            }
        }
    }
    readers
}

fn buffer_bytes(buffer: &gltf::Buffer<'_>, bin: Option<&[u8]>, base: Option<&Path>) -> Result<Vec<u8>, ImportError> {
    let index = buffer.index();
    let fail = |reason: String| ImportError::Buffer { buffer: index, reason };
    let claimed = buffer.length();
    let data = match buffer.source() {
        gltf::buffer::Source::Bin => {
            bin.ok_or_else(|| fail(String::from("refers to a BIN chunk the file lacks")))?.to_vec()
        }
        gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
            let (_, payload) =
                uri.split_once(";base64,").ok_or_else(|| fail(String::from("a data URI that is not base64")))?;
            decode_base64(payload).ok_or_else(|| fail(String::from("a data URI with bad base64")))?
        }
        gltf::buffer::Source::Uri(uri) => {
            let base =
                base.ok_or_else(|| fail(format!("external file {uri:?} but the scene was not loaded from a file")))?;
            if uri.contains("://") {
                return Err(fail(format!("{uri:?} is not a relative file path")));
            }
            let path = base.join(percent_decode(uri));
            let size = std::fs::metadata(&path)
                .map_err(|error| fail(format!("external file {} is missing: {error}", path.display())))?
                .len();
            if size < claimed as u64 {
                return Err(fail(format!(
                    "external file {} has {size} bytes but the buffer claims {claimed}",
                    path.display()
                )));
            }
            std::fs::read(&path).map_err(|error| fail(format!("cannot read {}: {error}", path.display())))?
        }
    };
    if data.len() < claimed {
        return Err(fail(format!("claims {claimed} bytes but has {}", data.len())));
    }
    Ok(data)
}

/// Undoes `%XX` escapes of a URI path (glTF URIs are percent-encoded); a malformed escape
/// stays as written.
pub(crate) fn percent_decode(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escape {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_answers() {
        assert_eq!(decode_base64("TWFu").unwrap(), b"Man");
        assert_eq!(decode_base64("TWE=").unwrap(), b"Ma");
        assert_eq!(decode_base64("TQ==").unwrap(), b"M");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert!(decode_base64("T!Q=").is_none());
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("bad%2"), "bad%2");
    }

    #[test]
    fn glb_lengths_are_checked_before_use() {
        assert!(matches!(split_container(b"glTF\x02\0\0"), Err(ImportError::Glb(_))), "short header");
        let mut glb = b"glTF".to_vec();
        glb.extend_from_slice(&2_u32.to_le_bytes());
        glb.extend_from_slice(&4_u32.to_le_bytes());
        assert!(split_container(&glb).is_err(), "a length under the header's own size");
        let mut glb = b"glTF".to_vec();
        glb.extend_from_slice(&2_u32.to_le_bytes());
        glb.extend_from_slice(&28_u32.to_le_bytes());
        glb.extend_from_slice(&0x8000_0000_u32.to_le_bytes());
        glb.extend_from_slice(&CHUNK_JSON.to_le_bytes());
        glb.extend_from_slice(b"{}  ");
        glb.extend_from_slice(&[0; 4]);
        let error = split_container(&glb).err().unwrap().to_string();
        assert!(error.contains("claims 2147483648 bytes"), "{error}");
    }
}

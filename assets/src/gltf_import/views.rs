//! The bytes behind each buffer view: a checked slice of its buffer, or the data decoded
//! from its `EXT_meshopt_compression` stream, which then stands for the view in every read.

use super::buffers::BufferData;
use super::error::ImportError;
use super::meshopt_views::{CompressedView, Decoded};

/// What an accessor finds when it reads a view.
pub(crate) enum ViewBytes<'a> {
    /// The view's range of a buffer that has data.
    Plain(&'a [u8]),
    /// The view's decompressed data.
    Decoded(Decoded),
    /// Why the view cannot be read (its range falls outside its buffer, or the buffer is a
    /// placeholder without data); an accessor reading it fails with this reason, a view
    /// nothing reads does not stop the load.
    Unreadable(String),
}

impl ViewBytes<'_> {
    /// The bytes, or why there are none.
    pub(crate) fn bytes(&self) -> Result<&[u8], &str> {
        match self {
            ViewBytes::Plain(bytes) => Ok(bytes),
            ViewBytes::Decoded(decoded) => Ok(decoded.bytes()),
            ViewBytes::Unreadable(reason) => Err(reason),
        }
    }
}

/// Every view of `document`, in order: compressed ones (per `compressed`, from the raw
/// JSON) decoded now, so malformed compressed data is an error even where nothing reads it.
pub(crate) fn resolve_views<'a>(
    document: &gltf::Document,
    compressed: &[Option<CompressedView>],
    buffers: &'a [BufferData],
) -> Result<Vec<ViewBytes<'a>>, ImportError> {
    document
        .views()
        .map(|view| match compressed.get(view.index()).and_then(Option::as_ref) {
            Some(compression) => decompress(&view, compression, buffers).map(ViewBytes::Decoded),
            None => Ok(plain(&view, buffers)),
        })
        .collect()
}

fn plain<'a>(view: &gltf::buffer::View<'_>, buffers: &'a [BufferData]) -> ViewBytes<'a> {
    let buffer_index = view.buffer().index();
    let Some(buffer) = buffers.get(buffer_index) else {
        return ViewBytes::Unreadable(format!("names buffer {buffer_index}, which does not exist"));
    };
    let Some(buffer) = buffer else {
        return ViewBytes::Unreadable(format!(
            "its view {} is not compressed but lies in buffer {buffer_index}, a placeholder without data",
            view.index()
        ));
    };
    match view.offset().checked_add(view.length()).filter(|&end| end <= buffer.len()) {
        Some(end) => ViewBytes::Plain(&buffer[view.offset()..end]),
        None => ViewBytes::Unreadable(format!(
            "its view {} spans bytes {}+{} of a {}-byte buffer",
            view.index(),
            view.offset(),
            view.length(),
            buffer.len()
        )),
    }
}

fn decompress(
    view: &gltf::buffer::View<'_>,
    compression: &CompressedView,
    buffers: &[BufferData],
) -> Result<Decoded, ImportError> {
    let fail = |reason: String| ImportError::Compression { view: view.index(), reason };
    let parent_end = view.offset().checked_add(view.length());
    if parent_end.is_none_or(|end| end > view.buffer().length()) {
        return Err(fail(format!(
            "spans bytes {}+{} of buffer {}, which claims {} bytes",
            view.offset(),
            view.length(),
            view.buffer().index(),
            view.buffer().length()
        )));
    }
    compression.decoded_length(view.stride(), view.length()).map_err(fail)?;
    let source = compressed_bytes(compression, buffers).map_err(fail)?;
    compression.decode(source).map_err(fail)
}

/// The compressed stream a view's extension names, checked to lie in a buffer with data.
fn compressed_bytes<'a>(compression: &CompressedView, buffers: &'a [BufferData]) -> Result<&'a [u8], String> {
    let index = compression.buffer;
    let buffer = match buffers.get(index) {
        None => return Err(format!("{} names buffer {index}, which does not exist", compression.extension)),
        Some(None) => {
            return Err(format!("{} names buffer {index}, a placeholder without data", compression.extension));
        }
        Some(Some(buffer)) => buffer,
    };
    compression
        .offset
        .checked_add(compression.length)
        .filter(|&end| end <= buffer.len())
        .map(|end| &buffer[compression.offset..end])
        .ok_or_else(|| {
            format!(
                "the compressed bytes {}+{} lie past the end of buffer {index} ({} bytes)",
                compression.offset,
                compression.length,
                buffer.len()
            )
        })
}

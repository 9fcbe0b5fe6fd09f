//! The bytes behind each buffer view: a checked slice of its buffer.

/// What an accessor finds when it reads a view.
pub(crate) enum ViewBytes<'a> {
    /// The view's range of its buffer.
    Plain(&'a [u8]),
    /// Why the view cannot be read (its range falls outside its buffer); an accessor
    /// reading it fails with this reason, a view nothing reads does not stop the load.
    Unreadable(String),
}

impl ViewBytes<'_> {
    /// The bytes, or why there are none.
    pub(crate) fn bytes(&self) -> Result<&[u8], &str> {
        match self {
            ViewBytes::Plain(bytes) => Ok(bytes),
            ViewBytes::Unreadable(reason) => Err(reason),
        }
    }
}

/// Every view of `document`, in order.
pub(crate) fn resolve_views<'a>(document: &gltf::Document, buffers: &'a [Vec<u8>]) -> Vec<ViewBytes<'a>> {
    document.views().map(|view| plain(&view, buffers)).collect()
}

fn plain<'a>(view: &gltf::buffer::View<'_>, buffers: &'a [Vec<u8>]) -> ViewBytes<'a> {
    let buffer_index = view.buffer().index();
    let Some(buffer) = buffers.get(buffer_index) else {
        return ViewBytes::Unreadable(format!("names buffer {buffer_index}, which does not exist"));
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

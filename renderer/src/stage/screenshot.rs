//! Screenshots and debug views without a [`FrameTarget`](crate::FrameTarget): a game asks the
//! [`Screenshots`] resource for any named image of the frame (`color`, `depth_prepass`,
//! `hiz_depth`, a mask of its own) at a game frame, as a PNG file or bytes, and takes the
//! results back from the same resource, in the window as headless.
//!
//! The Render stage adds one [`ScreenshotPass`] per image name asked for (the graph
//! recompiles once) and arms it only on the frames a request is due: other frames record
//! nothing for it. A due frame waits for the GPU (a screenshot stalls its frame).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use render_graph::readback::{has_four_byte_texels, HostImageCopy};
use render_graph::{vk, Access, ExecuteContext, ImageRead, Registry, TypedPass};

/// What a game asks for: image `image` of game frame `frame` (the next frame drawn when
/// `None`), written to `png` when given.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenshotRequest {
    /// The graph image (see [`crate::names`]: `color`, `depth_prepass`, ...; a user pass's
    /// own image works the same way).
    pub image: String,
    /// The game frame ([`runtime::FrameTime::frame_index`]) to take it at; `None`: the next
    /// frame drawn. A frame already past is taken at the next frame drawn.
    pub frame: Option<u64>,
    /// Where to write it as a PNG (RGBA8; see [`Screenshot::rgba8`]).
    pub png: Option<PathBuf>,
}

/// A screenshot taken: the image's texels of mip 0, and an RGBA8 picture of them.
#[derive(Clone, Debug, Default)]
pub struct Screenshot {
    /// The image's name.
    pub image: String,
    /// The game frame it was taken at.
    pub frame: u64,
    /// Its size.
    pub width: u32,
    /// Its size.
    pub height: u32,
    /// Its format.
    pub format: vk::Format,
    /// Texels as the GPU holds them (4 bytes each), rows top first.
    pub texels: Vec<u8>,
    /// A picture of them: colour images as they are (BGRA swapped to RGBA); depth images
    /// (`D32_SFLOAT`) as grey on the debug view's logarithmic scale
    /// ([`DebugView::DEPTH_LOG_DECADES`](crate::DebugView::DEPTH_LOG_DECADES) decades unless
    /// [`Screenshots::set_depth_log_decades`] says otherwise; reversed-Z puts near surfaces
    /// white), float images as grey (0 black, 1 and above white), integer images as grey
    /// scaled to their largest value (0 black).
    pub rgba8: Vec<u8>,
    /// Where it was written, when a PNG was asked for and written.
    pub saved: Option<PathBuf>,
    /// Why it could not be taken or written (an unknown image, a format of other than
    /// 4-byte texels, a file that cannot be written); the other fields are then empty.
    pub error: Option<String>,
}

/// The resource through which a game asks for screenshots and takes them back
/// ([`crate::install_render`] inserts it).
///
/// ```
/// let mut screenshots = renderer::Screenshots::default();
/// screenshots.request("color");
/// screenshots.request_png("depth_prepass", Some(10), "depth.png");
/// assert_eq!(screenshots.pending().len(), 2);
/// // ... frames run; then:
/// for shot in screenshots.take() {
///     println!("{} of frame {}: {:?}", shot.image, shot.frame, shot.error);
/// }
/// ```
#[derive(Debug)]
pub struct Screenshots {
    pending: Vec<ScreenshotRequest>,
    taken: Vec<Screenshot>,
    depth_log_decades: f32,
}

impl Default for Screenshots {
    fn default() -> Screenshots {
        Screenshots { pending: Vec::new(), taken: Vec::new(), depth_log_decades: crate::DebugView::DEPTH_LOG_DECADES }
    }
}

impl Screenshots {
    /// Develops the pictures ([`Screenshot::rgba8`]) of depth images on a logarithmic scale
    /// of `decades` decades, as the debug view shows them ([`crate::debug_view_grey`]); 0
    /// develops the raw depth (0 black, 1 white), which is nearly black for reversed-Z.
    /// The texels ([`Screenshot::texels`]) are the GPU's either way.
    pub fn set_depth_log_decades(&mut self, decades: f32) {
        self.depth_log_decades = decades.max(0.0);
    }

    /// The decades depth pictures are developed on (see
    /// [`Screenshots::set_depth_log_decades`]).
    pub fn depth_log_decades(&self) -> f32 {
        self.depth_log_decades
    }

    /// Asks for `image` of the next frame drawn, as bytes.
    pub fn request(&mut self, image: &str) {
        self.pending.push(ScreenshotRequest { image: image.to_owned(), frame: None, png: None });
    }

    /// Asks for `image` of game frame `frame` (the next drawn when `None`), written to `path`.
    pub fn request_png(&mut self, image: &str, frame: Option<u64>, path: impl Into<PathBuf>) {
        self.pending.push(ScreenshotRequest { image: image.to_owned(), frame, png: Some(path.into()) });
    }

    /// Adds a request.
    pub fn push(&mut self, request: ScreenshotRequest) {
        self.pending.push(request);
    }

    /// Requests not taken yet.
    pub fn pending(&self) -> &[ScreenshotRequest] {
        &self.pending
    }

    /// The screenshots taken since the last call, in the order taken.
    pub fn take(&mut self) -> Vec<Screenshot> {
        std::mem::take(&mut self.taken)
    }

    /// Moves the requests due at game frame `frame` out (into `due`).
    pub(crate) fn due(&mut self, frame: u64, due: &mut Vec<ScreenshotRequest>) {
        due.clear();
        let mut index = 0;
        while index < self.pending.len() {
            if self.pending[index].frame.is_none_or(|wanted| wanted <= frame) {
                due.push(self.pending.remove(index));
            } else {
                index += 1;
            }
        }
    }

    /// Puts requests back (their frame was not drawn).
    pub(crate) fn defer(&mut self, requests: &mut Vec<ScreenshotRequest>) {
        self.pending.splice(0..0, requests.drain(..));
    }

    pub(crate) fn deliver(&mut self, shot: Screenshot) {
        self.taken.push(shot);
    }
}

/// What a [`ScreenshotPass`] copied on its last armed frame.
#[derive(Default)]
pub(crate) struct Copied {
    pub(crate) host: HostImageCopy,
    pub(crate) extent: vk::Extent2D,
    pub(crate) format: vk::Format,
    pub(crate) error: Option<String>,
    /// Copy on the next frame.
    pub(crate) armed: bool,
    /// The image was found when the pass was added: later frames may lack it (an image
    /// view's target whose camera went) without failing.
    pub(crate) found: bool,
}

/// Shared between a [`ScreenshotPass`] and the Render stage.
pub(crate) type SharedCopy = Arc<Mutex<Copied>>;

pub(crate) fn lock_copied(copy: &SharedCopy) -> std::sync::MutexGuard<'_, Copied> {
    copy.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Copies mip 0 of one image into a host buffer of its own on the frames it is armed (see
/// the module docs); named `screenshot IMAGE`.
pub struct ScreenshotPass {
    name: String,
    image_name: String,
    copy: SharedCopy,
}

impl ScreenshotPass {
    pub(crate) fn new(image: &str, copy: SharedCopy) -> ScreenshotPass {
        ScreenshotPass::named(format!("screenshot {image}"), image, copy)
    }

    /// A pass named `name` (the headless target's own, apart from the screenshots').
    pub(crate) fn named(name: String, image: &str, copy: SharedCopy) -> ScreenshotPass {
        ScreenshotPass { name, image_name: image.to_owned(), copy }
    }
}

impl TypedPass for ScreenshotPass {
    /// The image, read as a transfer source.
    type Handles = ImageRead;

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> ImageRead {
        // Required when the pass is added (a name no frame has is answered by the compile's
        // error), optional once found: an image only some frames have (an image view's
        // target, whose camera may go) must not fail the frames without it; a request due
        // then says so.
        let image = if lock_copied(&self.copy).found {
            registry.optional_image(&self.image_name)
        } else {
            registry.image(&self.image_name)
        };
        registry.side_effect();
        registry.read_image(image, Access::TransferRead)
    }

    fn execute(&mut self, &handle: &ImageRead, context: &mut ExecuteContext<'_>) {
        let mut copy = lock_copied(&self.copy);
        if !copy.armed {
            return;
        }
        copy.armed = false;
        if !context.exists(handle) {
            copy.error = Some(format!("no image `{}` in this frame", self.image_name));
            return;
        }
        let image = match context.try_image(handle) {
            Ok(image) => image,
            Err(error) => {
                copy.error = Some(error.to_string());
                return;
            }
        };
        if !has_four_byte_texels(image.format) {
            copy.error =
                Some(format!("`{}` is {:?}; screenshots copy 4-byte texels only", self.image_name, image.format));
            return;
        }
        // Recording outside a rendering scope; the image is declared a transfer source.
        if !copy.host.record(context, &self.name, handle, &image) {
            return;
        }
        copy.extent = image.extent;
        copy.format = image.format;
        copy.error = None;
    }
}

/// The screenshot a finished frame's copy gives for `request`.
/// `depth_log_decades`: the scale of depth pictures ([`Screenshots::set_depth_log_decades`]).
pub(crate) fn develop(request: &ScreenshotRequest, frame: u64, copy: &Copied, depth_log_decades: f32) -> Screenshot {
    let mut shot = Screenshot { image: request.image.clone(), frame, ..Screenshot::default() };
    if let Some(error) = &copy.error {
        shot.error = Some(error.clone());
        return shot;
    }
    let Some(buffer) = copy.host.buffer() else {
        shot.error = Some(format!("`{}` was not copied (the frame did not run its pass)", request.image));
        return shot;
    };
    let bytes = copy.extent.width as usize * copy.extent.height as usize * 4;
    match buffer.read() {
        Ok(mapped) if mapped.len() >= bytes => shot.texels.extend_from_slice(&mapped[..bytes]),
        Ok(_) => shot.error = Some(String::from("the screenshot buffer is smaller than the image")),
        Err(error) => shot.error = Some(error.to_string()),
    }
    if shot.error.is_some() {
        return shot;
    }
    (shot.width, shot.height, shot.format) = (copy.extent.width, copy.extent.height, copy.format);
    shot.rgba8 = picture_on_scale(&shot.texels, copy.format, depth_log_decades);
    if let Some(path) = &request.png {
        match write_png(path, &shot.rgba8, shot.width, shot.height) {
            Ok(()) => shot.saved = Some(path.clone()),
            Err(error) => shot.error = Some(format!("writing {}: {error}", path.display())),
        }
    }
    shot
}

/// An RGBA8 picture of 4-byte texels of `format`, depth as it is (0 black, 1 white; see
/// [`picture_on_scale`]).
pub fn picture(texels: &[u8], format: vk::Format) -> Vec<u8> {
    picture_on_scale(texels, format, 0.0)
}

/// An RGBA8 picture of 4-byte texels of `format` (see [`Screenshot::rgba8`]), depth
/// (`D32_SFLOAT`) on a logarithmic scale of `depth_log_decades` decades as the debug view
/// shows it ([`crate::debug_view_grey`]; 0: as it is).
pub fn picture_on_scale(texels: &[u8], format: vk::Format, depth_log_decades: f32) -> Vec<u8> {
    let words = || texels.chunks_exact(4).map(|texel| [texel[0], texel[1], texel[2], texel[3]]);
    let grey = |value: u8| [value, value, value, 255];
    match format {
        vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB => {
            words().flat_map(|[b, g, r, a]| [r, g, b, a]).collect()
        }
        vk::Format::R32_SFLOAT | vk::Format::D32_SFLOAT => {
            let decades = if format == vk::Format::D32_SFLOAT { depth_log_decades } else { 0.0 };
            words()
                .flat_map(|texel| {
                    let value = f32::from_le_bytes(texel);
                    let shown = crate::debug_view_grey(value, decades);
                    grey(if value.is_nan() { 0 } else { (shown * 255.0).round() as u8 })
                })
                .collect()
        }
        vk::Format::R32_UINT | vk::Format::R32_SINT => {
            let value = |texel: [u8; 4]| u64::from(u32::from_le_bytes(texel));
            let largest = words().map(value).max().unwrap_or(0).max(1);
            words().flat_map(|texel| grey((value(texel) * 255 / largest) as u8)).collect()
        }
        _ => texels.to_vec(),
    }
}

/// Writes `rgba8` (rows top first) as a `width` x `height` RGBA8 PNG at `path`.
pub fn write_png(path: &std::path::Path, rgba8: &[u8], width: u32, height: u32) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer.write_image_data(rgba8).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_fall_due_at_their_frame_and_deferred_ones_keep_their_place() {
        let mut screenshots = Screenshots::default();
        screenshots.request_png("color", Some(5), "five.png");
        screenshots.request("depth_prepass");
        let mut due = Vec::new();
        screenshots.due(3, &mut due);
        assert_eq!(due.iter().map(|request| request.image.as_str()).collect::<Vec<_>>(), ["depth_prepass"]);
        screenshots.defer(&mut due);
        assert_eq!(screenshots.pending()[0].image, "depth_prepass");
        screenshots.due(7, &mut due);
        assert_eq!(due.len(), 2, "a frame past its own is taken at the next one drawn");
        assert!(screenshots.pending().is_empty());
    }

    #[test]
    fn pictures_of_depth_masks_and_bgra_are_rgba8() {
        let depth: Vec<u8> = [0.0f32, 0.5, 1.0, f32::NAN].iter().flat_map(|value| value.to_le_bytes()).collect();
        let picture_of_depth = picture(&depth, vk::Format::D32_SFLOAT);
        assert_eq!(picture_of_depth.chunks(4).map(|texel| texel[0]).collect::<Vec<_>>(), [0, 128, 255, 0]);
        let mask: Vec<u8> = [0u32, 2, 4].iter().flat_map(|value| value.to_le_bytes()).collect();
        assert_eq!(
            picture(&mask, vk::Format::R32_UINT).chunks(4).map(|texel| texel[0]).collect::<Vec<_>>(),
            [0, 127, 255]
        );
        assert_eq!(picture(&[1, 2, 3, 4], vk::Format::B8G8R8A8_UNORM), [3, 2, 1, 4]);
    }
}

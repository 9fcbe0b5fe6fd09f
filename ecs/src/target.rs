//! Where a camera's view is drawn: the window (whole, or a rectangle of it for split-screen)
//! or a named image that materials and passes sample later in the same frame.

use std::sync::Arc;

use crate::camera::Viewport;

/// Pixel format of an image target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// 8-bit RGBA, sRGB-encoded (a picture for a material to show).
    #[default]
    Rgba8Srgb,
    /// 8-bit RGBA holding the bytes the window's colour holds: the image is pixel-equal to
    /// the same camera drawn into a window of its size.
    Rgba8Unorm,
    /// 16-bit float RGBA (linear, for passes that post-process it).
    Rgba16Float,
}

/// A named image a camera renders into: its name is how a material or a user pass finds it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImageTarget {
    /// The image's name, unique among the frame's image targets.
    pub name: Arc<str>,
    /// Width in pixels; zero is refused ([`ViewError::ZeroSizeImage`]).
    pub width: u32,
    /// Height in pixels; zero is refused.
    pub height: u32,
    /// Pixel format.
    pub format: ImageFormat,
}

impl ImageTarget {
    /// An image target named `name` of `width` x `height` pixels in `format`.
    pub fn new(name: &str, width: u32, height: u32, format: ImageFormat) -> ImageTarget {
        ImageTarget { name: Arc::from(name), width, height, format }
    }

    /// The image's size as a viewport.
    pub fn viewport(&self) -> Viewport {
        Viewport::new(self.width, self.height)
    }
}

/// What a camera renders into: a component (a camera without one renders into the window).
///
/// ```
/// use ecs::{CameraTarget, ImageFormat, ImageTarget};
/// assert_eq!(CameraTarget::default(), CameraTarget::Window);
/// let monitor = CameraTarget::Image(ImageTarget::new("monitor", 256, 256, ImageFormat::Rgba8Srgb));
/// assert!(matches!(monitor, CameraTarget::Image(ref image) if &*image.name == "monitor"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum CameraTarget {
    /// The window: whole, or the camera's [`CameraRect`] of it.
    #[default]
    Window,
    /// A named image of a chosen size and format.
    Image(ImageTarget),
}

/// The part of the window a camera draws into, in fractions of the window's size (0 to 1,
/// top-left origin): a component for split-screen. The view's viewport is this rectangle in
/// pixels of the [`Viewport`] resource, so it follows the window as it is resized; a camera
/// with a `CameraRect` ignores its [`CameraViewport`](crate::CameraViewport).
///
/// ```
/// use ecs::{CameraRect, PixelRect, Viewport};
/// let right = CameraRect::new(0.5, 0.0, 0.5, 1.0);
/// assert_eq!(right.pixels(Viewport::new(1280, 720)), PixelRect { x: 640, y: 0, width: 640, height: 720 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraRect {
    /// Left edge, fraction of the window's width.
    pub x: f32,
    /// Top edge, fraction of the window's height.
    pub y: f32,
    /// Width, fraction of the window's width.
    pub width: f32,
    /// Height, fraction of the window's height.
    pub height: f32,
}

impl CameraRect {
    /// The whole window.
    pub const WHOLE: CameraRect = CameraRect { x: 0.0, y: 0.0, width: 1.0, height: 1.0 };

    /// A rectangle at `(x, y)` of `width` x `height`, fractions of the window.
    pub const fn new(x: f32, y: f32, width: f32, height: f32) -> CameraRect {
        CameraRect { x, y, width, height }
    }

    /// The rectangle in pixels of a window of `window`'s size, clamped into the window (a
    /// non-finite fraction counts as 0): edges are rounded, so rectangles that share an edge
    /// in fractions share it in pixels.
    pub fn pixels(&self, window: Viewport) -> PixelRect {
        let edge = |fraction: f32, size: u32| {
            let fraction = if fraction.is_finite() { fraction.clamp(0.0, 1.0) } else { 0.0 };
            (fraction * size as f32).round() as u32
        };
        let left = edge(self.x, window.width);
        let top = edge(self.y, window.height);
        let right = edge(self.x + self.width, window.width).max(left);
        let bottom = edge(self.y + self.height, window.height).max(top);
        PixelRect { x: left, y: top, width: right - left, height: bottom - top }
    }
}

/// A rectangle in pixels (top-left origin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PixelRect {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl PixelRect {
    /// The rectangle's size as a viewport.
    pub fn viewport(&self) -> Viewport {
        Viewport::new(self.width, self.height)
    }

    /// Whether it covers no pixel.
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }
}

/// A camera whose view was refused this frame; the other views are drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// The camera's image target has a zero width or height.
    ZeroSizeImage {
        /// The camera.
        camera: hecs::Entity,
        /// The image's name.
        name: Arc<str>,
    },
    /// The camera's image target has an empty name, which nothing could sample.
    UnnamedImage {
        /// The camera.
        camera: hecs::Entity,
    },
    /// Another camera earlier in the order already renders into the image of this name.
    SharedImage {
        /// The camera refused.
        camera: hecs::Entity,
        /// The camera that keeps the image.
        kept_by: hecs::Entity,
        /// The image's name.
        name: Arc<str>,
    },
}

impl std::fmt::Display for ViewError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewError::ZeroSizeImage { camera, name } => {
                write!(formatter, "camera {camera:?} renders into image {name:?} of zero size; its view is skipped")
            }
            ViewError::UnnamedImage { camera } => {
                write!(formatter, "camera {camera:?} renders into an image without a name; its view is skipped")
            }
            ViewError::SharedImage { camera, kept_by, name } => write!(
                formatter,
                "camera {camera:?} renders into image {name:?}, already the target of camera {kept_by:?}; its view is skipped"
            ),
        }
    }
}

impl std::error::Error for ViewError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_share_their_edge_and_cover_the_window() {
        let window = Viewport::new(1281, 721);
        let left = CameraRect::new(0.0, 0.0, 0.5, 1.0).pixels(window);
        let right = CameraRect::new(0.5, 0.0, 0.5, 1.0).pixels(window);
        assert_eq!(left.x + left.width, right.x);
        assert_eq!(left.width + right.width, 1281);
        assert_eq!((left.height, right.height), (721, 721));
    }

    #[test]
    fn bad_fractions_give_a_rectangle_inside_the_window() {
        let window = Viewport::new(100, 50);
        for rect in [
            CameraRect::new(f32::NAN, 0.0, 1.0, 1.0),
            CameraRect::new(-1.0, -1.0, 5.0, 5.0),
            CameraRect::new(0.8, 0.8, -0.5, f32::INFINITY),
        ] {
            let pixels = rect.pixels(window);
            assert!(pixels.x + pixels.width <= 100 && pixels.y + pixels.height <= 50, "{rect:?} gave {pixels:?}");
        }
        assert!(CameraRect::new(0.5, 0.5, 0.0, 0.5).pixels(window).is_empty());
    }
}

//! The size of the CPU occlusion buffer for a view: the configured pixel count in the
//! view's aspect, so the buffer's pixels are square on screen whatever the window's shape.

use super::{tile, MAX_SIDE};

/// The occlusion buffer size `[width, height]` for `buffer` (the configured size) and a view
/// of `viewport` pixels.
///
/// With `follow_viewport`, the result keeps about `buffer[0] * buffer[1]` pixels in the
/// viewport's aspect: the width is the multiple of 8 nearest to `sqrt(pixels * aspect)` (at
/// least 8), the height `width / aspect` rounded (at least 1), both at most [`MAX_SIDE`]
/// (the other side shrinks to keep the aspect). Without it, or for a viewport or buffer with
/// no area, it is `buffer` with the width rounded up to a multiple of 8. The culler refuses
/// what it cannot use (see [`super::OcclusionCuller::new`]).
///
/// ```
/// use culling::occlusion::fit_buffer;
/// assert_eq!(fit_buffer([256, 128], [1920, 1080], true), [240, 135]);
/// assert_eq!(fit_buffer([256, 128], [1000, 500], true), [256, 128]);
/// assert_eq!(fit_buffer([256, 128], [1920, 1080], false), [256, 128]);
/// ```
pub fn fit_buffer(buffer: [u32; 2], viewport: [u32; 2], follow_viewport: bool) -> [usize; 2] {
    let lanes = tile::LANES;
    let fixed = [(buffer[0] as usize).div_ceil(lanes) * lanes, buffer[1] as usize];
    let pixels = f64::from(buffer[0]) * f64::from(buffer[1]);
    if !follow_viewport || viewport[0] == 0 || viewport[1] == 0 || pixels == 0.0 {
        return fixed;
    }
    let aspect = f64::from(viewport[0]) / f64::from(viewport[1]);
    let side = MAX_SIDE as f64;
    let width = ((pixels * aspect).sqrt() / lanes as f64).round().max(1.0) * lanes as f64;
    // Keep the aspect within the largest side: a very wide or tall view shrinks the other.
    let width = width.min(side).min((side * aspect / lanes as f64).floor().max(1.0) * lanes as f64);
    let height = (width / aspect).round().clamp(1.0, side);
    [width as usize, height as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_takes_the_view_aspect_and_keeps_its_pixel_count() {
        for viewport in [[1920, 1080], [1080, 1920], [800, 600], [3440, 1440], [640, 640], [5000, 7]] {
            let [width, height] = fit_buffer([256, 128], viewport, true);
            assert!(width % 8 == 0 && width >= 8 && height >= 1, "{viewport:?}: {width} x {height}");
            assert!(width <= MAX_SIDE && height <= MAX_SIDE, "{viewport:?}: {width} x {height}");
            let aspect = viewport[0] as f64 / viewport[1] as f64;
            let fitted = width as f64 / height as f64;
            if (0.1..10.0).contains(&aspect) {
                assert!((fitted / aspect - 1.0).abs() < 0.05, "{viewport:?}: aspect {fitted}, view {aspect}");
                let pixels = (width * height) as f64;
                assert!((pixels / 32768.0 - 1.0).abs() < 0.08, "{viewport:?}: {pixels} pixels");
            }
        }
    }

    #[test]
    fn a_fixed_buffer_or_an_empty_view_keeps_the_configured_size() {
        assert_eq!(fit_buffer([100, 50], [1920, 1080], false), [104, 50], "width rounds up to a multiple of 8");
        assert_eq!(fit_buffer([256, 128], [0, 1080], true), [256, 128]);
        assert_eq!(fit_buffer([0, 0], [1920, 1080], true), [0, 0], "the culler refuses it and keeps the default");
        assert_eq!(fit_buffer([u32::MAX, u32::MAX], [16, 9], true)[0], MAX_SIDE, "clamped to the largest side");
    }
}

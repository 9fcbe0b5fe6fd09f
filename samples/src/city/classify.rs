//! `city --classify`: every object coloured by what culling decided about it, drawn with
//! culling off next to the normal image.

use culling::Visibility;
use glam::Vec4;

/// Submitted and owning at least one pixel: green.
pub const VISIBLE: u32 = pack(40, 200, 60);
/// Outside the view frustum: red.
pub const FRUSTUM: u32 = pack(220, 40, 40);
/// Hidden behind occluders: blue.
pub const OCCLUDED: u32 = pack(40, 80, 230);
/// Culled as too small on screen or too far: grey.
pub const SMALL_OR_FAR: u32 = pack(128, 128, 128);
/// Submitted although it owns no pixel (kept conservatively): amber.
pub const KEPT: u32 = pack(255, 176, 0);

const fn pack(red: u32, green: u32, blue: u32) -> u32 {
    red | green << 8 | blue << 16 | 255 << 24
}

/// Each object's colour: its verdict. `with_pixels` is sorted (from
/// `MeshRenderer::objects_with_pixels`); an object culled neither by occlusion nor by the
/// frustum (its world box has a corner inside the view volume) was culled for its size or
/// distance.
pub fn verdict_colors(visibility: &Visibility, with_pixels: &[u32]) -> Vec<u32> {
    let objects = visibility.objects();
    let mut colors = vec![0; objects.len()];
    let mut submitted = vec![false; objects.len()];
    for object in visibility.bits().iter_visible() {
        submitted[object] = true;
    }
    let view_projection = visibility.view().map(|view| view.projection * view.view);
    for (object, color) in colors.iter_mut().enumerate() {
        *color = if submitted[object] {
            if with_pixels.binary_search(&(object as u32)).is_ok() {
                VISIBLE
            } else {
                KEPT
            }
        } else if visibility.is_occluded(object) {
            OCCLUDED
        } else if view_projection.is_some_and(|matrix| outside_frustum(&matrix, &objects.bounds[object])) {
            FRUSTUM
        } else {
            SMALL_OR_FAR
        };
    }
    colors
}

/// Whether all eight corners of `bounds` lie outside one clip plane (reversed-Z: depth
/// in [0, w], the near plane at z = w).
fn outside_frustum(view_projection: &glam::Mat4, bounds: &ecs::Aabb) -> bool {
    let corners: Vec<Vec4> = (0..8)
        .map(|corner| {
            let pick = |bit: u32, low: f32, high: f32| if corner & bit == 0 { low } else { high };
            *view_projection
                * Vec4::new(
                    pick(1, bounds.min.x, bounds.max.x),
                    pick(2, bounds.min.y, bounds.max.y),
                    pick(4, bounds.min.z, bounds.max.z),
                    1.0,
                )
        })
        .collect();
    let planes: [fn(&Vec4) -> bool; 5] = [|c| c.x < -c.w, |c| c.x > c.w, |c| c.y < -c.w, |c| c.y > c.w, |c| c.z > c.w];
    planes.iter().any(|outside| corners.iter().all(outside))
}

/// The normal image and the classified one side by side (RGBA8, `width` x `height` each).
pub fn side_by_side(normal: &[u8], classified: &[u8], width: u32) -> Vec<u8> {
    let row = width as usize * 4;
    normal.chunks_exact(row).zip(classified.chunks_exact(row)).flat_map(|(a, b)| a.iter().chain(b)).copied().collect()
}

/// Writes RGBA8 `pixels` of `width` x `height` as a PNG.
pub fn write_png(path: &std::path::Path, pixels: &[u8], width: u32, height: u32) -> Result<(), super::RenderError> {
    Ok(renderer::write_png(path, pixels, width, height)?)
}

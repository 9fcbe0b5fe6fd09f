//! An offscreen renderer for image tests: a scene of unit cubes drawn by the standard passes
//! (depth prepass, geometry, readback) into an RGBA8 image read back on the host, plus the
//! colour code that maps a pixel back to the object that drew it.

use std::sync::Arc;

use glam::Mat4;
use render_graph::device::GpuDevice;
use render_graph::{vk, ReadbackBuffer, RenderGraph, Result};
use renderer::{lock_scene, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

/// The colour `color` is cleared to: opaque black, which [`object_color`] never gives.
pub const CLEAR: [u8; 4] = [0, 0, 0, 255];

/// A unique opaque colour for object `index` (up to 2^24 - 1 objects): the index plus one in
/// red, green and blue, so no object is drawn in the clear colour.
pub fn object_color(index: u32) -> u32 {
    debug_assert!(index < 0x00ff_ffff, "object {index} has no unique colour");
    let code = index + 1;
    renderer::pack_rgba8(code as u8, (code >> 8) as u8, (code >> 16) as u8, 255)
}

/// The object whose [`object_color`] is `texel`, or `None` for the clear colour.
///
/// ```
/// use tests::offscreen::{object_color, object_of, CLEAR};
/// for index in [0, 1, 255, 256, 70_000] {
///     let texel = object_color(index).to_le_bytes();
///     assert_eq!(object_of(texel), Some(index), "the colour code round-trips");
/// }
/// assert_eq!(object_of(CLEAR), None, "the clear colour names no object");
/// ```
pub fn object_of(texel: [u8; 4]) -> Option<u32> {
    let code = u32::from(texel[0]) | (u32::from(texel[1]) << 8) | (u32::from(texel[2]) << 16);
    code.checked_sub(1)
}

/// A scene of unit cubes rendered by the standard passes into a host-readable image.
pub struct OffscreenRenderer {
    graph: RenderGraph,
    scene: SharedScene,
    readback: ReadbackBuffer,
    extent: vk::Extent2D,
}

impl OffscreenRenderer {
    /// A renderer of `extent` pixels for up to `capacity` cubes.
    pub fn new(device: &Arc<GpuDevice>, extent: vk::Extent2D, capacity: u32) -> Result<OffscreenRenderer> {
        let scene = GpuScene::new(device, MeshLibrary::with_unit_cube(), capacity)?.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(device), extent)?;
        let options = ScenePassOptions {
            clear_color: CLEAR.map(|channel| f32::from(channel) / 255.0),
            ..ScenePassOptions::default()
        };
        let readback =
            renderer::add_scene_passes(&mut graph, &scene, &options)?.expect("the options ask for a readback");
        Ok(OffscreenRenderer { graph, scene, readback, extent })
    }

    /// Sets the cubes: object `i` has world matrix `worlds[i]` and colour
    /// [`object_color`]`(i)`. Objects already present are replaced (uploaded only if they
    /// changed).
    pub fn set_objects(&mut self, worlds: &[Mat4]) -> Result<()> {
        let mut scene = lock_scene(&self.scene);
        for (index, world) in worlds.iter().enumerate() {
            let object =
                ObjectDesc { world: world.to_cols_array_2d(), color: object_color(index as u32), mesh: 0, material: 0 };
            if (index as u32) < scene.object_count() {
                scene.set_object(index as u32, object)?;
            } else {
                scene.push_object(object)?;
            }
        }
        Ok(())
    }

    /// Renders the objects of `draw_list` (every object, in storage order, when `None`) from
    /// `view_projection` and returns the image, RGBA8 rows top first.
    pub fn render(&mut self, view_projection: Mat4, draw_list: Option<&[u32]>) -> Result<Vec<u8>> {
        self.graph.set_param(renderer::FrameView::from_view_projection(view_projection));
        {
            let mut scene = lock_scene(&self.scene);
            match draw_list {
                Some(list) => scene.set_draw_list(list)?,
                None => scene.draw_all_objects(),
            }
        }
        self.graph.execute_frame()?;
        self.graph.wait_idle()?;
        Ok(self.readback.read()?.to_vec())
    }

    /// The image size.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The shared scene, e.g. for its upload report.
    pub fn scene(&self) -> &SharedScene {
        &self.scene
    }
}

/// Describes how two images of `extent` differ: the number of differing pixels and the first
/// few with the objects drawn there in each; `None` when they are equal.
pub fn describe_difference(extent: vk::Extent2D, expected: &[u8], actual: &[u8]) -> Option<String> {
    if expected == actual {
        return None;
    }
    if expected.len() != actual.len() {
        return Some(format!("image sizes differ: {} and {} bytes", expected.len(), actual.len()));
    }
    let differing: Vec<usize> = expected
        .chunks_exact(4)
        .zip(actual.chunks_exact(4))
        .enumerate()
        .filter(|(_, (left, right))| left != right)
        .map(|(pixel, _)| pixel)
        .collect();
    let examples: Vec<String> = differing
        .iter()
        .take(8)
        .map(|&pixel| {
            let texel = |image: &[u8]| -> [u8; 4] { image[pixel * 4..pixel * 4 + 4].try_into().expect("four bytes") };
            let (x, y) = (pixel as u32 % extent.width, pixel as u32 / extent.width);
            format!("({x}, {y}): object {:?} vs {:?}", object_of(texel(expected)), object_of(texel(actual)))
        })
        .collect();
    Some(format!("{} pixel(s) differ; first: {}", differing.len(), examples.join("; ")))
}

/// The distinct objects drawn in `image`.
pub fn objects_drawn(image: &[u8]) -> Vec<u32> {
    let mut objects: Vec<u32> =
        image.chunks_exact(4).filter_map(|texel| object_of(texel.try_into().expect("four bytes"))).collect();
    objects.sort_unstable();
    objects.dedup();
    objects
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_round_trip_and_never_equal_the_clear_colour() {
        for index in [0, 1, 255, 256, 70_000, 0x00ff_fffe] {
            let texel = object_color(index).to_le_bytes();
            assert_ne!(texel, CLEAR, "object {index}");
            assert_eq!(object_of(texel), Some(index));
        }
        assert_eq!(object_of(CLEAR), None);
    }

    #[test]
    fn differences_name_the_pixel_and_objects() {
        let extent = vk::Extent2D { width: 2, height: 1 };
        let left = [CLEAR, object_color(4).to_le_bytes()].concat();
        let right = [CLEAR, object_color(9).to_le_bytes()].concat();
        assert_eq!(describe_difference(extent, &left, &left), None);
        let message = describe_difference(extent, &left, &right).expect("they differ");
        assert!(message.starts_with("1 pixel(s) differ"), "{message}");
        assert!(message.contains("(1, 0): object Some(4) vs Some(9)"), "{message}");
    }
}

//! The truth of one window view of a split-screen frame: its rectangle of the image judged
//! against that view's own answer ([`Visibility::for_view`]).

use culling::Visibility;
use ecs::ViewId;
use runtime::hecs::World;

use super::reference::ReferenceRenderer;
use super::{differing_pixels, slot_colors, FrameCheck, Submitted, Truth, TruthError};
use crate::scene::{FrameView, WindowView, WindowViews};
use crate::RenderReport;

/// The checks of [`super::check_frame`] for window view `view` of the frame `image` (RGBA8,
/// `image_size` pixels, the whole window as the Render stage drew it on the CPU backend),
/// whose rectangle is `rect` (left, top, width, height): the rectangle must equal every
/// drawable object drawn with culling off from that view, and every object owning a pixel of
/// it must be in that view's visible list. `reference` draws at the window's size, the view
/// into its rectangle as the frame did (so the rasterisation is the frame's to the pixel).
///
/// The reference draws the view's visible objects at the levels that view picked (a skinned
/// object at its record's, as the frame does) and the others at the main view's; a skinned
/// object in the frame's pose once the reference was given the frame's palette
/// ([`ReferenceRenderer::set_palette`], before each frame's checks, as for
/// [`super::check_frame`]), else in its bind pose. The shadows, if any, are not judged per
/// view.
pub fn check_view(
    reference: &mut ReferenceRenderer,
    image: (&[u8], (u32, u32)),
    rect: [u32; 4],
    world: &World,
    visibility: &Visibility,
    view: ViewId,
) -> Result<FrameCheck, TruthError> {
    check_view_against(reference, image, rect, (world, visibility), view, None)
}

/// [`check_view`] for a frame culled on the GPU: what the view submitted is what its bits
/// mark (its words of [`RenderReport::view_bits`], `index` its place among the cull's views,
/// [`WindowView::list`]; [`RenderReport::bits`] for a frame of one view), read back with
/// [`crate::BitsReadback::Wait`], and its statistics those of
/// [`RenderReport::view_gpu`]. The reference draws the levels the CPU picked for the view,
/// which the GPU's choice repeats.
pub fn check_gpu_view(
    reference: &mut ReferenceRenderer,
    image: (&[u8], (u32, u32)),
    rect: [u32; 4],
    (world, visibility): (&World, &Visibility),
    (view, index): (ViewId, usize),
    report: &RenderReport,
) -> Result<FrameCheck, TruthError> {
    if let Some(error) = &report.error {
        return Err(TruthError::Frame(error.clone()));
    }
    let words = report.bits.len();
    let bits = if report.view_bits.is_empty() && index == 0 {
        &report.bits[..]
    } else {
        report.view_bits.get(index * words..(index + 1) * words).ok_or(TruthError::NoView)?
    };
    let stats = report.view_gpu.get(index).copied().or(report.gpu.filter(|_| index == 0)).unwrap_or_default();
    let objects = (0..visibility.len() as u32)
        .filter(|&slot| bits.get(slot as usize / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1))
        .collect();
    let submitted = Submitted {
        objects,
        drawn: (stats.early_drawn + stats.late_drawn) as usize,
        triangles: u64::from(stats.triangles),
    };
    check_view_against(reference, image, rect, (world, visibility), view, Some(submitted))
}

/// The checks of [`check_view`] with what the view submitted: `submitted`, or its answer's
/// visible list.
fn check_view_against(
    reference: &mut ReferenceRenderer,
    (image, image_size): (&[u8], (u32, u32)),
    rect: [u32; 4],
    (world, visibility): (&World, &Visibility),
    view: ViewId,
    submitted: Option<Submitted>,
) -> Result<FrameCheck, TruthError> {
    let answer = visibility.for_view(view).ok_or(TruthError::NoView)?;
    let [x, y, width, height] = rect;
    let inside = x.checked_add(width).is_some_and(|right| right <= image_size.0)
        && y.checked_add(height).is_some_and(|bottom| bottom <= image_size.1)
        && image.len() == image_size.0 as usize * image_size.1 as usize * 4;
    if !inside || reference.extent() != image_size {
        return Err(TruthError::ViewRect { rect, image: image_size, reference: reference.extent() });
    }
    let view_projection = answer.view().view_projection.to_cols_array_2d();
    // Each skinned slot's rig for this frame: without it the reference would draw the last
    // checked frame's rigs, or bind poses, where the frame drew this frame's poses.
    reference.follow_skins(world, visibility);
    reference.collect_drawable(visibility);
    let drawable = reference.drawable().to_vec();
    let colors = slot_colors(world, visibility.objects());
    // The view's visible objects at the levels it picked; the others cannot show in it.
    let draws = &visibility.objects().draws;
    reference.view_meshes.clear();
    reference.view_meshes.extend(answer.visible().iter().enumerate().filter_map(|(index, &slot)| {
        let mesh = answer.draw(index);
        (mesh.is_some() && mesh != draws[slot as usize].mesh).then_some((slot, mesh.0))
    }));
    let mut place = WindowViews::default();
    let uniform = FrameView::from_view_projection(answer.view().view_projection);
    let camera = answer.view().camera;
    place.push(WindowView { view_projection, rect, list: 0, lod: None, lod_distance: None, camera }, uniform, true);
    reference.graph.set_param(place);
    let drawn = reference.upload(visibility, |object| colors[object]).and_then(|_| {
        let unculled = reference.draw_list(view_projection, &drawable)?;
        let owners = reference.owners_in_view(world, visibility, view_projection, &drawable)?;
        Ok((unculled, owners))
    });
    reference.graph.remove_param::<WindowViews>();
    reference.view_meshes.clear();
    let (unculled, owners) = drawn?;
    let submitted = submitted.unwrap_or_else(|| {
        let mut visible = answer.visible().to_vec();
        let meshes = reference.parts().1;
        let triangles = (0..visible.len())
            .map(|index| answer.draw(index))
            .filter(|mesh| mesh.is_some())
            .map(|mesh| u64::from(meshes.triangle_count(mesh.0)))
            .sum();
        visible.sort_unstable();
        Submitted { drawn: visible.len(), objects: visible, triangles }
    });
    let truth = Truth::judge(&owners, &submitted.objects, visibility.objects().len());
    let differing = differing_pixels(&crop(image, image_size.0, rect), &crop(&unculled, image_size.0, rect));
    Ok(FrameCheck { differing_pixels: differing, submitted, truth })
}

/// Rectangle `rect` (left, top, width, height) of an RGBA8 image `width` pixels wide.
fn crop(image: &[u8], width: u32, [x, y, w, h]: [u32; 4]) -> Vec<u8> {
    image
        .chunks_exact(width as usize * 4)
        .skip(y as usize)
        .take(h as usize)
        .flat_map(|line| &line[x as usize * 4..(x + w) as usize * 4])
        .copied()
        .collect()
}

impl ReferenceRenderer {
    /// Draws the objects of `view_meshes` with their view's mesh (after an upload wrote every
    /// record at the main view's level); a skinned or empty record keeps its own.
    pub(super) fn apply_view_meshes(&mut self, visibility: &Visibility) -> Result<(), TruthError> {
        if self.view_meshes.is_empty() {
            return Ok(());
        }
        let objects = visibility.objects();
        let mut scene = crate::lock_scene(&self.scene);
        for &(slot, mesh) in &self.view_meshes {
            let Some(&record) = scene.records().get(slot as usize) else { continue };
            if record.is_empty() || record.skin_count != 0 || scene.meshes().range(mesh).is_none() {
                continue;
            }
            let world = objects.models[slot as usize].to_cols_array_2d();
            let material = objects.draws[slot as usize].material.0;
            scene.set_object(slot, crate::ObjectDesc { world, color: record.color, mesh, material })?;
        }
        Ok(())
    }
}

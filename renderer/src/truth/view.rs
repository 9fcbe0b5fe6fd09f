//! The truth of one window view of a split-screen frame: its rectangle of the image judged
//! against that view's own answer ([`Visibility::for_view`]).

use culling::Visibility;
use ecs::ViewId;
use runtime::hecs::World;

use super::reference::ReferenceRenderer;
use super::{differing_pixels, slot_colors, FrameCheck, Submitted, Truth, TruthError};

/// The checks of [`super::check_frame`] for window view `view` of the frame `image` (RGBA8,
/// `image_size` pixels, the whole window as the Render stage drew it on the CPU backend),
/// whose rectangle is `rect` (left, top, width, height): the rectangle must equal every
/// drawable object drawn with culling off from that view, and every object owning a pixel of
/// it must be in that view's visible list. `reference` draws at the rectangle's size.
///
/// The reference draws each object's record as the main view's level of detail chose it;
/// another view that picked a different level differs there by those pixels (the truth,
/// judged on objects, is unaffected). The shadows, if any, are not judged per view.
pub fn check_view(
    reference: &mut ReferenceRenderer,
    (image, image_size): (&[u8], (u32, u32)),
    rect: [u32; 4],
    world: &World,
    visibility: &Visibility,
    view: ViewId,
) -> Result<FrameCheck, TruthError> {
    let answer = visibility.for_view(view).ok_or(TruthError::NoView)?;
    let [x, y, width, height] = rect;
    let inside = x.checked_add(width).is_some_and(|right| right <= image_size.0)
        && y.checked_add(height).is_some_and(|bottom| bottom <= image_size.1)
        && image.len() == image_size.0 as usize * image_size.1 as usize * 4;
    if !inside || reference.extent() != (width, height) {
        return Err(TruthError::ViewRect { rect, image: image_size, reference: reference.extent() });
    }
    let row = image_size.0 as usize * 4;
    let crop: Vec<u8> = image
        .chunks_exact(row)
        .skip(y as usize)
        .take(height as usize)
        .flat_map(|line| &line[x as usize * 4..(x + width) as usize * 4])
        .copied()
        .collect();
    let view_projection = answer.view().view_projection.to_cols_array_2d();
    reference.collect_drawable(visibility);
    let drawable = reference.drawable().to_vec();
    let colors = slot_colors(world, visibility.objects());
    reference.upload(visibility, |object| colors[object])?;
    let unculled = reference.draw_list(view_projection, &drawable)?;
    let owners = reference.owners_in_view(world, visibility, view_projection, &drawable)?;
    let mut visible = answer.visible().to_vec();
    let meshes = reference.parts().1;
    let triangles = (0..visible.len())
        .map(|index| answer.draw(index))
        .filter(|mesh| mesh.is_some())
        .map(|mesh| u64::from(meshes.triangle_count(mesh.0)))
        .sum();
    visible.sort_unstable();
    let submitted = Submitted { drawn: visible.len(), objects: visible, triangles };
    let truth = Truth::judge(&owners, &submitted.objects, visibility.objects().len());
    Ok(FrameCheck { differing_pixels: differing_pixels(&crop, &unculled), submitted, truth })
}

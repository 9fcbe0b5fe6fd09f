//! The truth of one window view of a split-screen frame: its rectangle of the image judged
//! against that view's own answer ([`Visibility::for_view`]). The object-id image of any
//! view (picking's, [`IdView`]) is placed by the same code: the view's camera and levels, in
//! its rectangle of the window.

use culling::{ViewVisibility, Visibility};
use ecs::{ResolvedView, ViewId};
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
/// object keeps its rig, each level's vertices reading their own influences) and the others
/// at the main view's; a skinned
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
    let submitted = gpu_submitted(visibility, bits, stats);
    check_view_against(reference, image, rect, (world, visibility), view, Some(submitted))
}

/// [`check_view`] for an image-target view `view` culled on the GPU by its own cull, drawn
/// into the image `name` (`image`, read back by a user's pass; `reference` at its size):
/// what the view submitted is what its own bits mark ([`RenderReport::image_views`], read
/// back with [`crate::BitsReadback::Wait`]), and its statistics its own cull's.
/// [`TruthError::NoView`] when the frame did not cull that image on the GPU.
pub fn check_gpu_image_view(
    reference: &mut ReferenceRenderer,
    image: (&[u8], (u32, u32)),
    (world, visibility): (&World, &Visibility),
    (view, name): (ViewId, &str),
    report: &RenderReport,
) -> Result<FrameCheck, TruthError> {
    if let Some(error) = &report.error {
        return Err(TruthError::Frame(error.clone()));
    }
    let own = report.image_views.iter().find(|own| &*own.name == name).ok_or(TruthError::NoView)?;
    let submitted = gpu_submitted(visibility, &own.bits, own.stats);
    let rect = [0, 0, image.1 .0, image.1 .1];
    check_view_against(reference, image, rect, (world, visibility), view, Some(submitted))
}

/// What a view culled on the GPU submitted: the slots its `bits` mark, drawn and triangles
/// as its `stats` count them.
fn gpu_submitted(visibility: &Visibility, bits: &[u64], stats: crate::GpuCullStats) -> Submitted {
    let objects = (0..visibility.len() as u32)
        .filter(|&slot| bits.get(slot as usize / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1))
        .collect();
    Submitted { objects, drawn: (stats.early_drawn + stats.late_drawn) as usize, triangles: u64::from(stats.triangles) }
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
    reference.set_view_meshes(visibility, &answer);
    reference.place_in_window(answer.view(), rect);
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

/// Rectangle `rect` (left, top, width, height) of an image of 4-byte texels (RGBA8, or a
/// depth of `f32`s) `width` texels wide: a view's part of a split-screen frame.
///
/// # Panics
/// When `rect` reaches past a row.
pub fn crop(image: &[u8], width: u32, [x, y, w, h]: [u32; 4]) -> Vec<u8> {
    image
        .chunks_exact(width as usize * 4)
        .skip(y as usize)
        .take(h as usize)
        .flat_map(|line| &line[x as usize * 4..(x + w) as usize * 4])
        .copied()
        .collect()
}

/// Which view of the frame an object-id image is drawn for
/// ([`ReferenceRenderer::submit_owner_image`]), and where in the renderer's image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdView {
    /// The view ([`Visibility::for_view`]); `None`: the main view.
    pub view: Option<ViewId>,
    /// The view's rectangle of the image (left, top, width, height) for a window view of a
    /// split-screen frame: the renderer is then the window's size and the view is drawn into
    /// its rectangle, as the frame drew it. `None`: the view fills the image (the renderer is
    /// the view's size: a frame of one view, or an image target's).
    pub rect: Option<[u32; 4]>,
}

impl IdView {
    /// The main view over the whole image.
    pub const MAIN: IdView = IdView { view: None, rect: None };
}

impl ReferenceRenderer {
    /// Sets up the draw of an id image for `place`: the view's levels of detail and, for a
    /// rectangle, the view placed in it; returns the view's view-projection. Undone by
    /// [`ReferenceRenderer::unplace_id_view`] once the image is submitted.
    pub(super) fn place_id_view(
        &mut self,
        visibility: &Visibility,
        place: IdView,
    ) -> Result<[[f32; 4]; 4], TruthError> {
        // The main view's levels are the records' own: no view meshes to set for it.
        let (resolved, answer) = match place.view {
            Some(id) => {
                let answer = visibility.for_view(id).ok_or(TruthError::NoView)?;
                (answer.view(), Some(answer).filter(|answer| !answer.is_main()))
            }
            None => (visibility.view().ok_or(TruthError::NoView)?, None),
        };
        if let Some(rect @ [x, y, width, height]) = place.rect {
            let image = self.extent();
            let inside = x.checked_add(width).is_some_and(|right| right <= image.0)
                && y.checked_add(height).is_some_and(|bottom| bottom <= image.1);
            if !inside {
                return Err(TruthError::ViewRect { rect, image, reference: image });
            }
            self.place_in_window(resolved, rect);
        }
        if let Some(answer) = answer {
            self.set_view_meshes(visibility, &answer);
        }
        Ok(resolved.view_projection.to_cols_array_2d())
    }

    /// Undoes [`ReferenceRenderer::place_id_view`]: the next draws are the main view's.
    pub(super) fn unplace_id_view(&mut self) {
        self.graph.remove_param::<WindowViews>();
        self.view_meshes.clear();
    }

    /// Draws `answer`'s view alone into rectangle `rect` (left, top, width, height) of the
    /// image, as a split-screen frame drew it (a graph parameter, removed after the draw).
    fn place_in_window(&mut self, resolved: &ResolvedView, rect: [u32; 4]) {
        let view_projection = resolved.view_projection.to_cols_array_2d();
        let mut place = WindowViews::default();
        let uniform = FrameView::from_view_projection(resolved.view_projection);
        let window_view =
            WindowView { view_projection, rect, list: 0, lod: None, lod_distance: None, camera: resolved.camera };
        place.push(window_view, uniform, true);
        self.graph.set_param(place);
    }

    /// Draws the objects `answer`'s view sees at the levels it picked (applied with every
    /// upload); the others cannot show in it and keep the main view's.
    fn set_view_meshes(&mut self, visibility: &Visibility, answer: &ViewVisibility<'_>) {
        let draws = &visibility.objects().draws;
        self.view_meshes.clear();
        self.view_meshes.extend(answer.visible().iter().enumerate().filter_map(|(index, &slot)| {
            let mesh = answer.draw(index);
            (mesh.is_some() && mesh != draws[slot as usize].mesh).then_some((slot, mesh.0))
        }));
    }

    /// Draws the objects of `view_meshes` with their view's mesh (after an upload wrote every
    /// record at the main view's level), or the stand-in the frame drew for it where it was not
    /// resident ([`ReferenceRenderer::follow_stand_ins`]: the view's level may be one the main
    /// view does not draw, so the upload's following did not reach it); an empty record keeps
    /// its own, and so does a skinned one whose view mesh is rigid (as the frame's view lists
    /// draw them).
    pub(super) fn apply_view_meshes(&mut self, visibility: &Visibility) -> Result<(), TruthError> {
        if self.view_meshes.is_empty() {
            return Ok(());
        }
        let objects = visibility.objects();
        let mut scene = crate::lock_scene(&self.scene);
        for &(slot, mesh) in &self.view_meshes {
            let Some(&record) = scene.records().get(slot as usize) else { continue };
            if record.is_empty() || scene.meshes().range(mesh).is_none() {
                continue;
            }
            if record.skin_count != 0 {
                // The rig stays: each level's vertices read their own influences.
                if !crate::mesh_is_skinned(scene.meshes(), mesh) {
                    continue;
                }
                let level = scene.record_for(mesh, [0.0; 3], [0.0; 3], record.color, record.material)?;
                let (first_index, index_count, vertex_offset) =
                    (level.first_index, level.index_count, level.vertex_offset);
                let drawn = crate::ObjectRecord { first_index, index_count, vertex_offset, mesh, ..record };
                let transform = scene.transforms()[slot as usize];
                scene.set_parts(slot, transform, drawn)?;
                continue;
            }
            let mesh = match self.stand_ins.iter().find(|(missing, _)| *missing == mesh) {
                None => mesh,
                Some(&(_, Some(drawn))) => drawn,
                // Nothing resident to stand in: the frame drew nothing for it.
                Some(&(_, None)) => {
                    scene.clear_object(slot)?;
                    continue;
                }
            };
            let world = objects.models[slot as usize].to_cols_array_2d();
            let material = objects.draws[slot as usize].material.0;
            scene.set_object(slot, crate::ObjectDesc { world, color: record.color, mesh, material })?;
        }
        Ok(())
    }
}

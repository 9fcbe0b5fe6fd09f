//! The culling truth of a frame the Render stage drew: was anything that owns a pixel left
//! out? The [`ReferenceRenderer`] draws the same frame again with culling off on a graph of
//! its own (same meshes, same device), and the checks compare:
//!
//! - **Culled against unculled** ([`compare_with_unculled`]): every drawable object drawn in
//!   the colour the Render stage gave it ([`slot_colors`]) must give the very image culling
//!   drew: [`differing_pixels`] 0.
//! - **The object-id image** ([`ReferenceRenderer::objects_with_pixels`]): every drawable
//!   object drawn as its id (in one draw, unlit, a masked material cutting its holes as in
//!   the frame, a blended one owning nothing); the objects owning at least one pixel.
//! - **False hidden** ([`Truth::judge`]): objects owning a pixel that culling did not submit
//!   ([`submitted`]: the GPU's visibility bits of the frame on the GPU backend, the host's
//!   visible list on the CPU's). Must be 0. **Efficiency**: objects with pixels over objects
//!   submitted (1 is perfect; below, culling kept objects that own no pixel).
//! - **Dropped casters** ([`dropped_casters`]): with shadows, casters owning a texel of a
//!   light view drawn with every caster, which that view's culling left out. Must be 0.
//!
//! [`check_frame`] does all of it for one frame; [`check_view`] for one window view of a
//! split-screen frame (its rectangle, its own answer). On the GPU backend the frame must be read
//! back with [`crate::BitsReadback::Wait`], so that the bits in the [`crate::RenderReport`]
//! are the frame's own.
//!
//! ```no_run
//! # fn frame(app: &runtime::App) -> (&runtime::hecs::World, &culling::Visibility, &renderer::RenderReport, Vec<u8>) { unimplemented!() }
//! # let app = runtime::App::new();
//! # let mut reference: renderer::truth::ReferenceRenderer = unimplemented!();
//! let (world, visibility, report, image) = frame(&app);
//! let checked = renderer::truth::check_frame(&mut reference, &image, world, visibility, report, None)?;
//! assert_eq!(checked.differing_pixels, 0, "culling changed the picture");
//! assert_eq!(checked.truth.false_hidden, 0, "culling hid {:?}", checked.truth.false_hidden_slots);
//! # Ok::<(), renderer::truth::TruthError>(())
//! ```

mod casters;
mod error;
mod reference;
mod view;

use culling::{ObjectColumns, Visibility};
use ecs::BaseColor;
use runtime::hecs::World;

pub use casters::dropped_casters;
pub use error::TruthError;
pub use reference::{upload_objects, upload_objects_drawing, ReferenceRenderer};
pub use view::{check_gpu_image_view, check_gpu_view, check_view, crop, IdView};

use crate::{MeshLibrary, RenderReport};

/// How many false-hidden slots [`Truth::false_hidden_slots`] names.
pub const NAMED_SLOTS: usize = 8;

/// The culling truth of one drawn frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Truth {
    /// Objects owning at least one pixel of the frame drawn with culling off.
    pub objects_with_pixels: usize,
    /// Of those, objects culling did not submit (must be 0).
    pub false_hidden: usize,
    /// The first few of them ([`NAMED_SLOTS`]), by slot, for a report.
    pub false_hidden_slots: Vec<u32>,
    /// Objects with pixels / objects submitted.
    pub efficiency: f64,
    /// With shadows: casters owning a texel of a light view drawn with every caster that
    /// the view's culling left out, summed over the views (must be 0); see
    /// [`dropped_casters`].
    pub dropped_casters: Option<usize>,
}

impl Truth {
    /// The truth of a frame of `objects` slots where `owners` (sorted or not) own pixels and
    /// `submitted` were submitted (no casters judged).
    pub fn judge(owners: &[u32], submitted: &[u32], objects: usize) -> Truth {
        let mut was_submitted = vec![false; objects];
        for &object in submitted {
            if let Some(flag) = was_submitted.get_mut(object as usize) {
                *flag = true;
            }
        }
        let is_hidden = |object: &&u32| !was_submitted.get(**object as usize).copied().unwrap_or(false);
        let false_hidden = owners.iter().filter(is_hidden).count();
        Truth {
            objects_with_pixels: owners.len(),
            false_hidden,
            false_hidden_slots: owners.iter().filter(is_hidden).copied().take(NAMED_SLOTS).collect(),
            efficiency: owners.len() as f64 / submitted.len().max(1) as f64,
            dropped_casters: None,
        }
    }
}

/// What culling submitted in a frame (see [`submitted`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Submitted {
    /// The objects (slots) culling kept, ascending.
    pub objects: Vec<u32>,
    /// Objects drawn: on the GPU backend both phases' draws.
    pub drawn: usize,
    /// Triangles drawn.
    pub triangles: u64,
}

/// What culling submitted in the frame `report` describes: on the GPU backend the objects its
/// visibility bits mark ([`RenderReport::bits`]; a subset of what it drew, so the check is
/// strict), else the Visibility stage's list, with the triangles of `meshes`.
pub fn submitted(report: &RenderReport, visibility: &Visibility, meshes: &MeshLibrary) -> Submitted {
    let objects = visibility.objects();
    match &report.gpu {
        Some(stats) => {
            let bits = &report.bits;
            let visible = (0..objects.len() as u32)
                .filter(|&object| bits.get(object as usize / 64).is_some_and(|word| word >> (object % 64) & 1 == 1))
                .collect();
            let drawn = (stats.early_drawn + stats.late_drawn) as usize;
            Submitted { objects: visible, drawn, triangles: u64::from(stats.triangles) }
        }
        None => {
            let mut visible = visibility.visible().to_vec();
            let triangles_of = |object: &u32| {
                let draw = objects.draws[*object as usize];
                if draw.mesh.is_some() {
                    u64::from(meshes.triangle_count(draw.mesh.0))
                } else {
                    0
                }
            };
            let triangles = visible.iter().map(triangles_of).sum();
            visible.sort_unstable();
            Submitted { drawn: visible.len(), objects: visible, triangles }
        }
    }
}

/// Each slot's colour as the Render stage draws it: the packed [`BaseColor`] of the slot's
/// entity (white without one).
pub fn slot_colors(world: &World, columns: &ObjectColumns) -> Vec<u32> {
    columns
        .entities
        .iter()
        .map(|&entity| world.get::<&BaseColor>(entity).map_or(BaseColor::WHITE, |color| *color).packed())
        .collect()
}

/// Pixels that differ between two RGBA8 images of one size.
pub fn differing_pixels(first: &[u8], second: &[u8]) -> usize {
    first.chunks_exact(4).zip(second.chunks_exact(4)).filter(|(one, other)| one != other).count()
}

/// Draws the frame of `visibility` with culling off (each object in its colour in `world`)
/// and returns how many pixels of `image` (the frame as culling drew it, RGBA8) differ from
/// it (0 is the only right answer). Afterwards [`ReferenceRenderer::draw_all`] draws the
/// same objects.
pub fn compare_with_unculled(
    reference: &mut ReferenceRenderer,
    image: &[u8],
    world: &World,
    visibility: &Visibility,
) -> Result<usize, TruthError> {
    let colors = slot_colors(world, visibility.objects());
    let unculled = reference.draw_reference(visibility, |object| colors[object])?;
    Ok(differing_pixels(image, &unculled))
}

/// The checks of one frame (see [`check_frame`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameCheck {
    /// Pixels where the frame differs from the same frame drawn with culling off.
    pub differing_pixels: usize,
    /// What culling submitted.
    pub submitted: Submitted,
    /// The truth of the frame.
    pub truth: Truth,
}

/// Every check of the module docs for one frame drawn by the Render stage: `image` (RGBA8, the
/// frame's `color`, as a [`crate::HeadlessTarget`] keeps it), the `world` and `visibility`
/// it was drawn from, its `report` (read back with [`crate::BitsReadback::Wait`] on the GPU
/// backend) and, with shadows, its light views. `reference` draws at the frame's size, with
/// shadows when the frame has them ([`ReferenceRenderer::with_shadows`]).
pub fn check_frame(
    reference: &mut ReferenceRenderer,
    image: &[u8],
    world: &World,
    visibility: &Visibility,
    report: &RenderReport,
    shadows: Option<&culling::ShadowViews>,
) -> Result<FrameCheck, TruthError> {
    if let Some(error) = &report.error {
        return Err(TruthError::Frame(error.clone()));
    }
    reference.set_shadows(shadows, visibility);
    reference.follow_stand_ins(report);
    reference.follow_skins(world, visibility);
    let differing_pixels = compare_with_unculled(reference, image, world, visibility)?;
    let owners = reference.objects_with_pixels(world, visibility)?;
    let submitted = submitted(report, visibility, reference.parts().1);
    let mut truth = Truth::judge(&owners, &submitted.objects, visibility.objects().len());
    if let Some(shadows) = shadows {
        truth.dropped_casters = Some(dropped_casters(reference, world, visibility, shadows, report)?);
    }
    Ok(FrameCheck { differing_pixels, submitted, truth })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_not_submitted_is_false_hidden_and_efficiency_counts_the_kept() {
        let truth = Truth::judge(&[1, 4, 7], &[1, 2, 3, 7], 8);
        assert_eq!(truth.objects_with_pixels, 3);
        assert_eq!(truth.false_hidden, 1, "object 4 owns pixels and was not submitted");
        assert_eq!(truth.false_hidden_slots, [4]);
        assert!((truth.efficiency - 0.75).abs() < 1e-12, "3 owners of 4 submitted: {}", truth.efficiency);
        assert_eq!(Truth::judge(&[1, 4], &[1, 4], 8).false_hidden, 0);
    }

    #[test]
    fn differing_pixels_counts_whole_pixels() {
        assert_eq!(differing_pixels(&[0, 0, 0, 0, 1, 1, 1, 1], &[0, 0, 0, 0, 1, 1, 1, 2]), 1);
        assert_eq!(differing_pixels(&[9; 8], &[9; 8]), 0);
    }
}

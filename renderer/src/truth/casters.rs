//! Dropped shadow casters: the shadow half of the truth.

use culling::Visibility;
use runtime::hecs::World;

use super::{ReferenceRenderer, TruthError};
use crate::RenderReport;

/// Casters owning a texel of a light view drawn with every caster (an id image of the view
/// at the reference's size), which that view's culling did not keep, summed over the views
/// (must be 0): the GPU's kept bits when it culled (read back with the frame,
/// [`crate::BitsReadback::Wait`]), else the host's. `world` gives the casters' colours (a
/// masked material's holes depend on their alpha).
pub fn dropped_casters(
    reference: &mut ReferenceRenderer,
    world: &World,
    visibility: &Visibility,
    shadows: &culling::ShadowViews,
    report: &RenderReport,
) -> Result<usize, TruthError> {
    let drawn = &report.shadows;
    let mut casters: Vec<u32> = shadows.casters().to_vec();
    casters.sort_unstable();
    let mut dropped = 0;
    let mut kept = culling::VisibilityBits::default();
    for (index, view) in shadows.views().iter().enumerate() {
        let device_bits = drawn.on_device.then(|| drawn.view_bits(index));
        if device_bits.is_some_and(<[u64]>::is_empty) {
            return Err(TruthError::CasterBitsMissing);
        }
        if device_bits.is_none() {
            shadows.slot_bits_into(index, visibility.len(), &mut kept);
        }
        let is_kept = |slot: u32| match device_bits {
            Some(words) => words.get(slot as usize / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1),
            None => (slot as usize) < kept.len() && kept.is_visible(slot as usize),
        };
        let owners = reference.owners_in_view(world, visibility, view.view_projection.to_cols_array_2d(), &casters)?;
        dropped += owners.into_iter().filter(|&slot| !is_kept(slot)).count();
    }
    Ok(dropped)
}

//! Checking a frame the Render stage drew: the same frame drawn with culling off must give
//! the same image, and with `--truth` every object owning a pixel must have been submitted.

use std::path::PathBuf;

use culling::Visibility;
use renderer::MeshLibrary;
use renderer::RenderReport;

use super::rendering::{Capture, CityColors};
use super::{classify, RenderError};
use crate::mesh_render::{MeshFrame, MeshRenderer};

/// What to check and write for one drawn frame.
#[derive(Clone, Debug, Default)]
pub struct CheckRequest {
    /// Images to write the frame to.
    pub pngs: Vec<PathBuf>,
    /// Count the objects owning pixels and compare with what culling submitted.
    pub truth: bool,
    /// Write `NAME-classify.png` next to each PNG.
    pub classify: bool,
    /// With GPU culling, also cull the frame meshlet by meshlet and report it (`--clusters`);
    /// with `classify` it writes `NAME-meshlets.png`, with `truth` it fails on a hidden
    /// meshlet that owns a pixel.
    pub clusters: bool,
    /// The colour as the geometry drew it, when user passes drew over it (post-processes,
    /// debug lines): compared with the unculled reference in place of the final image.
    pub geometry: Option<Vec<u8>>,
}

/// `--truth` on one drawn frame.
#[derive(Clone, Debug)]
pub struct Truth {
    /// Objects owning at least one pixel of the frame drawn with culling off.
    pub objects_with_pixels: usize,
    /// Of those, objects culling did not submit (must be 0).
    pub false_hidden: usize,
    /// The first few of them (slots), for the report.
    pub false_hidden_slots: Vec<u32>,
    /// Objects with pixels / objects submitted.
    pub efficiency: f64,
    /// With shadows: casters owning a texel of a light view drawn with every caster that
    /// the view's culling left out, summed over the views (must be 0). The texels are those
    /// of an id image of the view at the frame's size.
    pub dropped_casters: Option<usize>,
}

/// The checks of one drawn frame.
pub struct Checked {
    /// What was drawn and how the images compare.
    pub frame: MeshFrame,
    /// The truth, when asked for.
    pub truth: Option<Truth>,
    /// The `cluster cull:` line, when cluster culling was asked for on a GPU-culled frame.
    pub clusters: Option<String>,
}

/// Checks the frame `capture` holds (drawn by the Render stage from `visibility`, reported in
/// `report`) with `checker`, a renderer of the same meshes on the same device: draws it
/// again with culling off and compares; writes the PNGs; with `truth` or `classify` draws
/// the object-id image. On the GPU backend "submitted" is what the GPU's visibility bits of
/// this frame mark visible (a subset of what it drew, so the check is strict).
///
/// With `shadows` (the frame's light views) the reference draws every caster into every
/// view, so the images agree only if the shadow culling dropped no caster that shades a
/// pixel; `truth` then also draws each light view's id image of every caster and counts
/// the owners of its texels that the view's culling left out (the GPU's per-view bits, or
/// the host's).
#[allow(clippy::too_many_arguments)]
pub fn check_frame(
    checker: &mut MeshRenderer,
    capture: &Capture,
    visibility: &Visibility,
    report: &RenderReport,
    world: &hecs::World,
    library: &MeshLibrary,
    shadows: Option<&culling::ShadowViews>,
    request: &CheckRequest,
) -> Result<Checked, RenderError> {
    if let Some(error) = &report.error {
        return Err(error.clone().into());
    }
    if !capture.captured {
        return Err("the Render stage did not capture the frame".into());
    }
    let (width, height) = checker.extent();
    let slot_colors = CityColors::of(world, visibility.objects());
    checker.set_shadows(shadows, visibility);
    let reference = checker.draw_reference(visibility, |object| slot_colors[object])?;
    let pixels = &capture.pixels;
    let compared = request.geometry.as_deref().unwrap_or(pixels);
    let differing_pixels = compared.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
    let triangles_of = |object: u32| {
        let draw = visibility.objects().draws[object as usize];
        if draw.mesh.is_some() {
            u64::from(library.triangle_count(draw.mesh.0))
        } else {
            0
        }
    };
    let (submitted, drawn, triangles): (Vec<u32>, usize, u64) = match &report.gpu {
        Some(stats) => {
            let bits = &report.bits;
            let visible: Vec<u32> = (0..visibility.objects().len() as u32)
                .filter(|&object| bits.get(object as usize / 64).is_some_and(|word| word >> (object % 64) & 1 == 1))
                .collect();
            (visible, (stats.early_drawn + stats.late_drawn) as usize, u64::from(stats.triangles))
        }
        None => {
            let visible = visibility.visible().to_vec();
            let triangles = visible.iter().map(|&object| triangles_of(object)).sum();
            (visible, visibility.visible().len(), triangles)
        }
    };
    let frame = MeshFrame {
        drawn,
        drawn_without_culling: visibility.scene().len(),
        triangles,
        differing_pixels,
        gpu_ms: capture.gpu_ms.clone(),
        uploaded_bytes: report.upload.bytes + report.upload.draw_bytes,
    };
    for path in &request.pngs {
        checker.write_png(path, pixels)?;
    }
    let classify = request.classify && !request.pngs.is_empty();
    let owners = if request.truth || classify { Some(checker.objects_with_pixels(visibility)?) } else { None };
    if let (true, Some(owners)) = (classify, &owners) {
        let verdicts = classify::verdict_colors(visibility, owners);
        let classified = checker.draw_all(visibility, |object| verdicts[object])?;
        let both = classify::side_by_side(pixels, &classified, width);
        for path in &request.pngs {
            let stem = path.file_stem().map_or(String::from("city"), |stem| stem.to_string_lossy().into_owned());
            classify::write_png(&path.with_file_name(format!("{stem}-classify.png")), &both, width * 2, height)?;
        }
    }
    let clusters = if report.gpu.is_some() && (request.clusters || classify) {
        let line = crate::cluster_render::report_frame(
            checker,
            visibility,
            |object| slot_colors[object],
            &request.pngs,
            classify,
            request.truth,
        )?;
        Some(line)
    } else {
        None
    };
    let truth = match (request.truth, owners) {
        (true, Some(owners)) => {
            let mut was_submitted = vec![false; visibility.objects().len()];
            for &object in &submitted {
                was_submitted[object as usize] = true;
            }
            let hidden: Vec<u32> = owners.iter().copied().filter(|&object| !was_submitted[object as usize]).collect();
            let efficiency = owners.len() as f64 / submitted.len().max(1) as f64;
            let false_hidden_slots = hidden.iter().copied().take(8).collect();
            let dropped_casters = match shadows {
                Some(shadows) => Some(dropped_casters(checker, visibility, shadows, report)?),
                None => None,
            };
            Some(Truth {
                objects_with_pixels: owners.len(),
                false_hidden: hidden.len(),
                false_hidden_slots,
                efficiency,
                dropped_casters,
            })
        }
        _ => None,
    };
    Ok(Checked { frame, truth, clusters })
}

/// Casters owning a texel of a light view drawn with every caster, which that view's
/// culling did not keep, summed over the views: the GPU's kept bits when it culled (read back
/// with the frame), else the host's.
fn dropped_casters(
    checker: &mut MeshRenderer,
    visibility: &Visibility,
    shadows: &culling::ShadowViews,
    report: &RenderReport,
) -> Result<usize, RenderError> {
    let drawn = &report.shadows;
    let mut casters: Vec<u32> = shadows.casters().to_vec();
    casters.sort_unstable();
    let mut dropped = 0;
    let mut kept = culling::VisibilityBits::default();
    for (index, view) in shadows.views().iter().enumerate() {
        let device_bits = drawn.on_device.then(|| drawn.view_bits(index));
        if device_bits.is_some_and(<[u64]>::is_empty) {
            return Err("the GPU culled the shadow casters but their bits were not read back".into());
        }
        if device_bits.is_none() {
            shadows.slot_bits_into(index, visibility.len(), &mut kept);
        }
        let is_kept = |slot: u32| match device_bits {
            Some(words) => words.get(slot as usize / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1),
            None => (slot as usize) < kept.len() && kept.is_visible(slot as usize),
        };
        let owners = checker.owners_in_view(visibility, view.view_projection.to_cols_array_2d(), &casters)?;
        dropped += owners.into_iter().filter(|&slot| !is_kept(slot)).count();
    }
    Ok(dropped)
}

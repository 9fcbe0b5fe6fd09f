//! Checking a frame the Render stage drew: the same frame drawn with culling off must give
//! the same image, and with `--truth` every object owning a pixel must have been submitted.

use std::path::PathBuf;

use culling::Visibility;
use renderer::MeshLibrary;
use renderer::RenderReport;

use renderer::truth::{differing_pixels, dropped_casters, slot_colors, submitted};
use renderer::Capture;

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
    /// The levels' errors (`ecs::LodErrors`) where the frame chose levels by the error rule:
    /// the cluster frame's records then name their chains and its GPU cull chooses the levels.
    pub lod_errors: Option<ecs::LodErrors>,
}

/// `--truth` on one drawn frame: the engine's [`renderer::truth::Truth`].
pub use renderer::truth::Truth;

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
///
/// With `palette` (the frame's `animation::SkinPalette`, where the game animates) the reference
/// draws every skinned object in the pose the frame drew it in; without it, in its bind pose.
#[allow(clippy::too_many_arguments)]
pub fn check_frame(
    checker: &mut MeshRenderer,
    capture: &Capture,
    visibility: &Visibility,
    report: &RenderReport,
    world: &hecs::World,
    library: &MeshLibrary,
    shadows: Option<&culling::ShadowViews>,
    palette: Option<&animation::SkinPalette>,
    request: &CheckRequest,
) -> Result<Checked, RenderError> {
    if let Some(error) = &report.error {
        return Err(error.clone().into());
    }
    if !capture.captured {
        return Err("the Render stage did not capture the frame".into());
    }
    let (width, height) = checker.extent();
    let slot_colors = slot_colors(world, visibility.objects());
    checker.set_shadows(shadows, visibility);
    // Meshes added while the game runs draw what the frame drew for them (a coarser level or
    // a box) until their bytes are on the GPU; the reference draws the same.
    checker.follow_stand_ins(report);
    if let Some(palette) = palette {
        checker.set_palette(palette)?;
        checker.follow_skins(world, visibility);
    }
    let reference = checker.draw_reference(visibility, |object| slot_colors[object])?;
    let pixels = &capture.pixels;
    let compared = request.geometry.as_deref().unwrap_or(pixels);
    let submitted = submitted(report, visibility, library);
    let frame = MeshFrame {
        drawn: submitted.drawn,
        drawn_without_culling: (0..visibility.len()).filter(|&slot| visibility.is_drawable(slot)).count(),
        triangles: submitted.triangles,
        differing_pixels: differing_pixels(compared, &reference),
        gpu_ms: capture.gpu_ms.clone(),
        uploaded_bytes: report.upload.bytes + report.upload.draw_bytes,
    };
    for path in &request.pngs {
        checker.write_png(path, pixels)?;
    }
    let classify = request.classify && !request.pngs.is_empty();
    let owners = if request.truth || classify { Some(checker.objects_with_pixels(world, visibility)?) } else { None };
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
            (classify, request.truth),
            request.lod_errors.as_ref().map(|errors| (world, errors)),
        )?;
        Some(line)
    } else {
        None
    };
    let truth = match (request.truth, owners) {
        (true, Some(owners)) => {
            let mut truth = Truth::judge(&owners, &submitted.objects, visibility.objects().len());
            if let Some(shadows) = shadows {
                truth.dropped_casters = Some(dropped_casters(checker, world, visibility, shadows, report)?);
            }
            Some(truth)
        }
        _ => None,
    };
    Ok(Checked { frame, truth, clusters })
}

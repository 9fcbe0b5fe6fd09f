//! `--animate` headless: the frames drawn one after another, the skinned meshes posed by the
//! animation system and skinned on the GPU.

use std::path::PathBuf;
use std::process::ExitCode;

use culling::Visibility;
use renderer::pack_rgba8;
use runtime::App;

use super::options::{Options, ANIMATE_FRAMES};
use crate::mesh_render::MeshRenderer;

/// `--animate` headless: draws the frames, the skinned meshes posed by the animation system
/// and skinned on the GPU, writes the PNGs asked for and compares culled with unculled
/// images (every frame with `--truth`, else the last).
pub(super) fn animate_frames(
    options: &Options,
    app: &mut App,
    renderer: &mut MeshRenderer,
    colors: &[u32],
) -> ExitCode {
    let frames = options.frames.unwrap_or(ANIMATE_FRAMES);
    let every = options.png_every.unwrap_or(frames);
    let (mut first, mut moved, mut differing, mut written) = (None::<Vec<u8>>, 0_u64, 0_usize, Vec::new());
    for frame in 0..frames {
        if frame > 0 {
            app.run_frame();
        }
        if let Err(error) = renderer.set_palette(&app.resource::<animation::SkinPalette>()) {
            eprintln!("viewer: animate: {error}");
            return ExitCode::FAILURE;
        }
        let visibility = app.resource::<Visibility>();
        renderer.follow_skins(app.world(), &visibility);
        if options.shadows {
            renderer.set_shadows(Some(&app.resource::<culling::ShadowViews>()), &visibility);
        }
        let white = pack_rgba8(255, 255, 255, 255);
        let color_of = |object: usize| colors.get(object).copied().unwrap_or(white);
        let (pixels, checked) = match renderer.render_and_check(&visibility, color_of) {
            Ok(drawn) => drawn,
            Err(error) => {
                eprintln!("viewer: render: {error}");
                return ExitCode::FAILURE;
            }
        };
        let last = frame + 1 == frames;
        if options.truth || last {
            differing += checked.differing_pixels;
        }
        match &first {
            None => first = Some(pixels.clone()),
            Some(first) => moved += u64::from(*first != pixels),
        }
        if (frame + 1) % every == 0 || last {
            let path = frame_path(&options.out, frame);
            if let Err(error) = renderer.write_png(&path, &pixels) {
                eprintln!("viewer: {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
            written.push(path);
        }
    }
    let report = app.resource::<animation::AnimationReport>();
    println!(
        "animate: {} rigs, {} joints; {frames} frames, {moved} differ from the first; culled vs unculled: {}; wrote {} PNGs ({})",
        report.rigs,
        report.joints,
        if differing == 0 { String::from("identical images") } else { format!("{differing} pixels differ") },
        written.len(),
        written.last().map_or(String::new(), |path| path.display().to_string())
    );
    let problems = renderer.validation_problems();
    if !problems.is_empty() {
        eprintln!("viewer: validation reported problems: {problems:?}");
        return ExitCode::FAILURE;
    }
    if differing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--animate`'s PNG of frame `frame`: beside `out`, named `STEM-NNNN.png`.
fn frame_path(out: &std::path::Path, frame: u64) -> PathBuf {
    let stem = out.file_stem().map_or_else(|| String::from("viewer"), |stem| stem.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}-{frame:04}.png"))
}

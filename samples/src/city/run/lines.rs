//! The headless city's printed lines: its progress bar, the statistics table's header, and
//! the report lines of checked and streamed frames.

use indicatif::{ProgressBar, ProgressStyle};
use renderer::RenderReport;
use runtime::App;

use crate::city::check::CheckRequest;
use crate::city::stream::DistrictStreamer;
use crate::city::{self, CityLibrary};
use crate::mesh_render::MeshFrame;
use culling::Visibility;

/// A progress bar on standard error for long runs (hidden when it is not a terminal).
pub(super) fn progress_bar(frames: u64) -> ProgressBar {
    if frames < 300 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(frames);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} frames, {per_sec}, eta {eta}") {
        bar.set_style(style);
    }
    bar
}

/// The median of `values` (sorted in place); 0 for none.
pub(super) fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The header of the table printed every `--report-every` frames.
pub(super) fn table_header() -> String {
    format!(
        "{:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "frame",
        "height",
        "objects",
        "visible",
        "frustum",
        "occluded",
        "small",
        "far",
        "tags±",
        "frame ms",
        "xform ms",
        "visib ms"
    )
}

/// Adds the frame to the streaming report; with `truth`, returns the frame's `stream:` lines
/// (resident mesh bytes against the budget, districts in the world, whether a visible object
/// of the main view drew a stand-in) and, for every other view (split-screen, monitor), whether
/// one it sees drew one: `frame N view V stand_in S`.
pub(super) fn stream_frame(
    streamer: &mut DistrictStreamer,
    app: &App,
    meshes: &CityLibrary,
    frame: u64,
    truth: bool,
) -> Option<String> {
    let report = app.resource::<RenderReport>();
    let visibility = app.resource::<Visibility>();
    let submitted = renderer::truth::submitted(&report, &visibility, &meshes.library);
    let stand_in = city::stream::visible_stand_in(&report, &visibility, &submitted.objects);
    let others: Vec<(u32, bool)> = visibility
        .other_views()
        .filter_map(|id| visibility.for_view(id).map(|view| (id.0, city::stream::view_stand_in(&report, &view))))
        .collect();
    streamer.report.record_frame(&report, stand_in || others.iter().any(|&(_, drew)| drew));
    let residency = &report.residency;
    truth.then(|| {
        let mut line = format!(
            "frame {frame} resident_bytes {} budget {} districts {} stand_in {}",
            residency.resident_bytes,
            residency.budget.map_or_else(|| String::from("none"), |budget| budget.to_string()),
            streamer.spawned(),
            u8::from(stand_in)
        );
        for (view, drew) in others {
            line.push_str(&format!("\nframe {frame} view {view} stand_in {}", u8::from(drew)));
        }
        line
    })
}

/// The `shadows:` line of a checked frame: casters per view before and after culling (the
/// GPU's counts when it culled them), draws, triangles and the GPU time of the cull and of the
/// atlas.
pub(super) fn shadow_line(report: &RenderReport, frame: u64) -> String {
    let shadows = &report.shadows;
    let ms = |value: Option<f64>| value.map_or_else(|| String::from("n/a"), |ms| format!("{ms:.3}"));
    let views: Vec<String> = shadows
        .views
        .iter()
        .map(|view| {
            let kind = match view.kind {
                culling::shadow::LightViewKind::Cascade(index) => format!("c{index}"),
                culling::shadow::LightViewKind::Spot => String::from("spot"),
                culling::shadow::LightViewKind::CubeFace(face) => format!("f{face}"),
            };
            let ms = view.gpu_ms.map_or_else(String::new, |ms| format!(" {ms:.2}ms"));
            format!("{kind} {}/{}{ms}", view.count, view.casters)
        })
        .collect();
    format!(
        "shadows: frame {frame} {} views culled on the {}: {} caster draws of {} tested ({} late), {} triangles; GPU ms: cull {}, atlas {}, pyramid {}; kept/tested (GPU ms) per view: {}",
        shadows.views.len(),
        if shadows.on_device { "GPU" } else { "CPU" },
        shadows.draws(),
        shadows.casters_tested(),
        shadows.views.iter().map(|view| u64::from(view.late)).sum::<u64>(),
        shadows.triangles(),
        ms(shadows.gpu_ms[0]),
        ms(shadows.gpu_ms[1]),
        ms(shadows.gpu_ms[2]),
        views.join(", ")
    )
}

/// The frame a checked frame's report line describes: its index and size, whether culling
/// was lossless, whether the GPU culled it, and the device's name.
pub(super) struct CheckedFrame<'a> {
    pub(super) frame: u64,
    pub(super) size: (u32, u32),
    pub(super) lossless: bool,
    pub(super) gpu_culling: bool,
    pub(super) device: &'a str,
}

/// The report lines of a checked frame: the GPU culling's statistics (GPU backend) and
/// what was drawn, written and compared.
pub(super) fn report_line(
    report: &RenderReport,
    check: &MeshFrame,
    request: &CheckRequest,
    on: CheckedFrame,
) -> String {
    let CheckedFrame { frame, size: (width, height), lossless, gpu_culling, device } = on;
    let ms = |value: Option<f64>| value.map_or_else(|| String::from("n/a"), |ms| format!("{ms:.3}"));
    let gpu_line = report.gpu.as_ref().map_or_else(String::new, |stats| {
        format!(
            "gpu cull: {} objects, {} frustum rejects, {} drawn early, {} occlusion rejects, {} drawn late, {} triangles; GPU ms: early {}, hi-z {}, late {}; culled_on_device {}\n",
            stats.objects,
            stats.frustum_rejected,
            stats.early_drawn,
            stats.occlusion_rejected,
            stats.late_drawn,
            stats.triangles,
            ms(stats.gpu_ms[0]),
            ms(stats.gpu_ms[1]),
            ms(stats.gpu_ms[2]),
            stats.culled_on_device
        )
    });
    let gpu_total: f64 = check.gpu_ms.iter().filter_map(|(_, ms)| *ms).sum();
    format!(
        "{gpu_line}render: frame {frame} {width}x{height} on {device}: {} drew {} of {} drawable objects ({} triangles), GPU {gpu_total:.1} ms{}; culling on vs off: {}",
        if gpu_culling { "GPU culling" } else { "CPU culling" },
        check.drawn,
        check.drawn_without_culling,
        check.triangles,
        request.pngs.iter().map(|path| format!(", wrote {}", path.display())).collect::<String>(),
        match (check.differing_pixels, lossless) {
            (0, _) => String::from("identical images"),
            (pixels, true) => format!("{pixels} pixels differ: an object was wrongly hidden"),
            (pixels, false) => format!("{pixels} pixels differ (size/distance culls are lossy by design)"),
        }
    )
}

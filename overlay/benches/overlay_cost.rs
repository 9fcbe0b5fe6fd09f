//! The overlay's CPU cost a frame with every panel open: reading the figures, building the
//! panels and tessellating them ([`overlay::Overlay::update_with_events`]), from a synthetic
//! frame report (a 1280x720 image, a dozen passes with GPU times, a full 240-frame history).
//! Two rows: a frame as a game sees it (the panels rebuilt every
//! [`overlay::REBUILD_PERIOD`]-th frame, the frames between only recording the history), and
//! a rebuild every frame (input every frame, as a pointer moving over the window gives).
//! Recording the pass needs a device: the release run of `tests/overlay_frame.rs` prints it.
//! Run with `cargo bench -p overlay` (add `-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, Criterion};
use overlay::{Overlay, Switches, HISTORY_FRAMES};
use render_graph::{vk, PassStats};
use renderer::RenderReport;

/// Passes the synthetic frame reports, as many as the city's frame has.
const PASSES: usize = 12;

/// An app with no device whose report looks like a drawn frame's, figures changing a frame.
fn synthetic_app() -> runtime::App {
    let mut app = runtime::App::with_threads(1);
    let report = RenderReport {
        frames: 1,
        extent: vk::Extent2D { width: 1280, height: 720 },
        host_draw_commands: 4096,
        passes: (0..PASSES)
            .map(|index| PassStats {
                name: format!("pass {index}"),
                gpu_ms: Some(0.1 + index as f64 * 0.05),
                cpu_record_ms: 0.01 * index as f64,
                ..PassStats::default()
            })
            .collect(),
        ..RenderReport::default()
    };
    app.insert_resource(report);
    app
}

/// Changes the report's figures as a running game's do.
fn next_frame(app: &mut runtime::App, frame: u64) {
    app.run_frame();
    let mut report = app.resource_mut::<RenderReport>();
    report.frames = frame;
    for (index, pass) in report.passes.iter_mut().enumerate() {
        pass.gpu_ms = Some(0.1 + ((frame + index as u64) % 7) as f64 * 0.013);
    }
}

fn overlay_cost(criterion: &mut Criterion) {
    let mut app = synthetic_app();
    let mut overlay = Overlay::new(true);
    let switches = Switches { debug_view: Some("depth".to_owned()), shadows: Some(true), ..Switches::default() };
    let mut frame = 0;
    // A full history and settled panel sizes before timing.
    for _ in 0..HISTORY_FRAMES + 8 {
        frame += 1;
        next_frame(&mut app, frame);
        overlay.update_with_events(&app, &switches, Vec::new());
    }
    assert_eq!(overlay.panel_rects().count(), 5, "every panel is open");
    criterion.bench_function("overlay_update_every_panel_open", |bench| {
        bench.iter(|| {
            frame += 1;
            next_frame(&mut app, frame);
            overlay.update_with_events(&app, &switches, Vec::new())
        })
    });
    criterion.bench_function("overlay_rebuild_every_panel_open", |bench| {
        bench.iter(|| {
            frame += 1;
            next_frame(&mut app, frame);
            // A pointer moving outside the panels: input, so the panels are rebuilt.
            let moved = overlay::egui::Event::PointerMoved(overlay::egui::pos2(1200.0, 700.0 - (frame % 8) as f32));
            overlay.update_with_events(&app, &switches, vec![moved])
        })
    });
}

criterion_group!(benches, overlay_cost);
criterion_main!(benches);

//! The headless city's frames: each frame is run, timed and recorded; the frames `--render`
//! draws are checked ([`super::checks`]); a summary table, `stats.json` and the medians end
//! the run.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use culling::{Visibility, VisibilityStats};
use indicatif::ProgressBar;
use renderer::{lock_capture, RenderReport};
use runtime::App;

use super::install::{Rendering, Streaming};
use super::lines::{self, median};
use super::setup::Scene;
use crate::city::memory::{self, MemoryReport};
use crate::city::summary::{self, FrameRecord};
use crate::city::{CheckChoice, CityOptions, RenderChoice};

/// The run's state between frames: its measurements, records and status.
pub(super) struct Headless<'a> {
    pub(super) options: &'a CityOptions,
    /// Whether culling keeps every visible pixel (no size or distance cull): a checked frame
    /// that differs from its reference then fails the run.
    pub(super) lossless: bool,
    pub(super) status: ExitCode,
    pub(super) progress: ProgressBar,
    /// Whether the GPU culls the frames.
    pub(super) gpu_culling: bool,
    frame_ms: Vec<f64>,
    transform_ms: Vec<f64>,
    visibility_ms: Vec<f64>,
    visible_counts: Vec<f64>,
    records: Vec<FrameRecord>,
    memory: MemoryReport,
}

/// Runs `options.frames` frames headless, checking the drawn ones; the status is a failure
/// when a check failed.
pub(super) fn run(
    mut app: App,
    options: &CityOptions,
    scene: &Scene,
    mut rendering: Option<Rendering>,
    mut streaming: Option<Streaming>,
) -> Result<ExitCode, String> {
    let gpu_culling = rendering.as_ref().is_some_and(|rendering| rendering.on_device);
    println!(
        "jobs: {} threads; culling: {} ({:?} kernel for the CPU's part); profiling: {}",
        app.job_system().threads(),
        if gpu_culling { "GPU (two-phase Hi-Z)" } else { "CPU path" },
        culling::Kernel::detect(),
        if runtime::profiling::enabled() { "Tracy on" } else { "off (build with --features profile)" }
    );
    println!("{}", lines::table_header());
    let frames = options.frames as usize;
    let mut run = Headless {
        options,
        lossless: options.min_pixels <= 0.0 && options.max_distance <= 0.0,
        status: ExitCode::SUCCESS,
        progress: lines::progress_bar(options.frames),
        gpu_culling,
        frame_ms: Vec::with_capacity(frames),
        transform_ms: Vec::with_capacity(frames),
        visibility_ms: Vec::with_capacity(frames),
        visible_counts: Vec::with_capacity(frames),
        records: Vec::with_capacity(frames),
        memory: MemoryReport::default(),
    };
    run.memory.after_setup(memory::sample());
    for _ in 0..options.frames {
        run.frame(&mut app, scene, &mut rendering, &mut streaming)?;
    }
    run.progress.finish_and_clear();
    Ok(run.finish(&app, scene, rendering.as_ref(), streaming.as_ref()))
}

impl Headless<'_> {
    /// Prints `line` above the progress bar.
    pub(super) fn say(&self, line: impl std::fmt::Display) {
        self.progress.suspend(|| println!("{line}"));
    }

    /// Marks the run failed (it goes on to its summary).
    pub(super) fn fail(&mut self) {
        self.status = ExitCode::FAILURE;
    }

    /// Which frames the GPU draws (given a device): `--render last` also draws the two frames
    /// before the last, so GPU culling has the history its early phase draws from.
    fn drawn(&self, frame: u64) -> bool {
        match self.options.render_choice() {
            RenderChoice::Every => true,
            RenderChoice::Last => frame + 2 >= self.options.frames,
            RenderChoice::None => false,
        }
    }

    /// Runs one frame (the streaming work before it counts in its time), records it, and
    /// checks it when it is one of the checked frames.
    fn frame(
        &mut self,
        app: &mut App,
        scene: &Scene,
        rendering: &mut Option<Rendering>,
        streaming: &mut Option<Streaming>,
    ) -> Result<(), String> {
        let options = self.options;
        // Frames run once this one has (the frame's index is one less).
        let next = app.frames_run() + 1;
        let last = next == options.frames;
        let render = options.render_choice();
        let checked = (render == RenderChoice::Every && (options.checks == CheckChoice::Every || last))
            || (render == RenderChoice::Last && last);
        if let Some(rendering) = rendering.as_mut() {
            rendering.clock.set(next);
            let mut capture = lock_capture(&rendering.capture);
            capture.draw = self.drawn(next);
            capture.capture = checked;
            drop(capture);
            // The overlay shows the frame before (as in a window), built before this one runs.
            if let Some(hud) = rendering.hud.as_mut() {
                hud.overlay.update(app, &overlay::Switches::default());
            }
        }
        // The streaming work between frames (adding ready districts, removing far ones) is
        // the game's, so it counts in the frame's time; the check's copy of the meshes does not.
        let mut started = Instant::now();
        let mut stream_ms = None;
        if let Some((streamer, render_meshes)) = streaming.as_mut() {
            let mut checkers = rendering.as_mut().map(Rendering::checkers).unwrap_or_default();
            streamer
                .update(app.world_mut(), render_meshes, &mut checkers)
                .map_err(|error| format!("stream: {error}"))?;
            started += Duration::from_secs_f64(streamer.checker_seconds());
            stream_ms = Some(started.elapsed().as_secs_f64() * 1e3);
            streamer.report.update_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        app.run_frame();
        self.frame_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let frame = app.last_frame_index().expect("a frame was run");
        let mut record =
            FrameRecord { frame, frame_ms: started.elapsed().as_secs_f64() * 1e3, stream_ms, ..FrameRecord::default() };
        let stats = self.record_stages(app, &mut record);
        if let (false, true, Some(_)) = (checked, self.drawn(next), rendering.as_ref()) {
            record.record_unchecked(&app.resource::<RenderReport>());
        }
        if let (true, Some(rendering)) = (checked, rendering.as_mut()) {
            self.check(app, scene, rendering, (frame, last), &mut record)?;
        }
        if let Some((streamer, _)) = streaming.as_mut() {
            if let Some(line) = lines::stream_frame(streamer, app, &scene.meshes, frame, options.truth) {
                self.say(line);
            }
        }
        if next.is_multiple_of(options.report_every) {
            self.report_row(app, &stats, frame);
        }
        self.records.push(record);
        if next == 100 || last {
            // A few reads of /proc in the run: the peak is a high-water mark, so the last read has it.
            self.memory.after_frame(next, memory::sample());
        }
        if rendering.is_some() && !self.drawn(next) && self.drawn(next + 1) {
            // The next frame is the first the GPU draws.
            self.memory.before_drawing(next, memory::sample());
        }
        self.progress.inc(1);
        Ok(())
    }

    /// Records the frame's system and stage times and the Visibility stage's counts.
    fn record_stages(&mut self, app: &App, record: &mut FrameRecord) -> VisibilityStats {
        for (stage, system, seconds) in app.schedule().system_seconds() {
            record.system_ms.insert(format!("{stage}/{system}"), seconds * 1e3);
        }
        for (stage, seconds) in app.schedule().stage_seconds() {
            record.stage_ms.insert(stage.to_string(), seconds * 1e3);
            match stage {
                "Transform" => self.transform_ms.push(seconds * 1e3),
                "Visibility" => self.visibility_ms.push(seconds * 1e3),
                _ => {}
            }
        }
        let stats = *app.resource::<Visibility>().stats();
        self.visible_counts.push(stats.visible as f64);
        record.objects = stats.objects;
        record.frustum_rejected = stats.frustum_rejected;
        record.occluded = stats.occluded;
        record.small_or_far = stats.size_rejected + stats.distance_rejected;
        record.visible = stats.visible;
        record.tracked = stats.tracked;
        record.objects_culled = stats.objects_culled;
        stats
    }

    /// The table's row: the frame's counts and the medians of the last `--report-every` frames.
    fn report_row(&self, app: &App, stats: &VisibilityStats, frame: u64) {
        let height = app.resource::<Visibility>().view().map_or(f32::NAN, |view| view.position.y);
        let recent = self.options.report_every as usize;
        let window = |values: &[f64]| median(&mut values[values.len().saturating_sub(recent)..].to_vec());
        self.say(format!(
            "{:>6} {:>8.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9.3} {:>9.3} {:>9.3}",
            frame,
            height,
            stats.objects,
            stats.visible,
            stats.frustum_rejected,
            stats.occluded,
            stats.size_rejected,
            stats.distance_rejected,
            stats.tags_inserted + stats.tags_removed,
            window(&self.frame_ms),
            window(&self.transform_ms),
            window(&self.visibility_ms),
        ));
    }

    /// The run's end: the last frame's triangles, validation, the summary table, the
    /// streaming report, the memory line, `stats.json` and the medians.
    fn finish(
        mut self,
        app: &App,
        scene: &Scene,
        rendering: Option<&Rendering>,
        streaming: Option<&Streaming>,
    ) -> ExitCode {
        {
            let visibility = app.resource::<Visibility>();
            let (with_lod, full) = scene.meshes.triangles_in_view(&visibility, app.world());
            println!(
                "lod: the last frame's visible objects have {with_lod} triangles at their LOD levels, {full} at full detail ({:.1}x fewer)",
                full as f64 / with_lod.max(1) as f64
            );
        }
        if let Some(rendering) = rendering {
            let problems = rendering.checker.validation_problems();
            if !problems.is_empty() {
                eprintln!("render: validation reported problems: {problems:?}");
                self.fail();
            }
        }
        print!("{}", summary::table(&self.records));
        if let Some((streamer, _)) = streaming {
            print!("{}", streamer.report.lines());
        }
        let path = self.options.out.join("stats.json");
        println!("{}", self.memory.line());
        match summary::write_stats_json(&path, &self.records, &self.memory) {
            Ok(()) => println!("stats: wrote {} ({} frames)", path.display(), self.records.len()),
            Err(error) => {
                eprintln!("stats: cannot write {}: {error}", path.display());
                self.fail();
            }
        }
        println!(
            "summary: {} frames, median frame {:.3} ms, Transform {:.3} ms, Visibility {:.3} ms, median visible {:.0} of {}",
            self.options.frames,
            median(&mut self.frame_ms),
            median(&mut self.transform_ms),
            median(&mut self.visibility_ms),
            median(&mut self.visible_counts),
            scene.city.mesh_entities
        );
        self.status
    }
}

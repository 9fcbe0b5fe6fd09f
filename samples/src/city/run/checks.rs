//! The checks of a drawn frame: the users' passes against the CPU, each split-screen view and
//! the monitor against their references and truths, and the frame against the same frame
//! drawn with culling off (`--truth`: against every object owning a pixel).

use culling::Visibility;
use renderer::{lock_capture, RenderReport};
use runtime::App;

use super::headless::Headless;
use super::install::Rendering;
use super::lines::{self, CheckedFrame};
use super::setup::Scene;
use crate::city;
use crate::city::check::{check_frame, CheckRequest, Checked};
use crate::frame_passes::{FramePassCheck, FramePassMismatches, PostView};

impl Headless<'_> {
    /// Checks the frame just drawn (`frame`, the run's `last` or not) and fills `record` with
    /// what the checks measured.
    pub(super) fn check(
        &mut self,
        app: &App,
        scene: &Scene,
        rendering: &mut Rendering,
        (frame, last): (u64, bool),
        record: &mut city::summary::FrameRecord,
    ) -> Result<(), String> {
        let options = self.options;
        // The last frame is `city.png`; `--png-every N` adds every N-th drawn frame.
        let mut request = CheckRequest {
            truth: options.truth,
            classify: options.classify,
            clusters: options.clusters,
            // The colour before the users' passes or the overlay: the one the reference draws.
            geometry: rendering
                .frame_check
                .as_ref()
                .and_then(FramePassCheck::color_before)
                .or_else(|| rendering.hud.as_ref().and_then(|hud| hud.color_before())),
            // The cluster frame chooses the levels on the GPU as the frame did.
            lod_errors: (options.clusters && options.gpu_lod == city::options::Switch::On)
                .then(|| app.resources().get::<ecs::LodErrors>().as_deref().cloned())
                .flatten(),
            ..CheckRequest::default()
        };
        if last {
            request.pngs.push(options.out.join("city.png"));
        }
        if options.png_every.is_some_and(|every| frame % every == 0) {
            request.pngs.push(options.out.join(format!("frame-{frame:06}.png")));
        }
        if rendering.frame_check.is_some() {
            self.check_user_passes(app, rendering, frame);
        }
        // The monitor first: the street views' references show its picture of this frame.
        if rendering.monitor.is_some() {
            self.check_monitor(app, rendering, frame)?;
        }
        if scene.split {
            self.check_split(app, rendering, frame)?;
            // The pass times and each view's share of the cull, for the summary.
            record.record_unchecked(&app.resource::<RenderReport>());
        }
        if !scene.split {
            self.check_main(app, scene, rendering, (&request, frame), record)?;
        }
        if let (true, Some(hud)) = (last, rendering.hud.as_ref()) {
            // Where the last frame's overlay is (egui points are pixels here): a PNG differs
            // from the same frame without `--hud` only inside these.
            let rects: Vec<String> = hud
                .overlay
                .panel_rects()
                .map(|rect| format!("{:.0} {:.0} {:.0} {:.0}", rect.min.x, rect.min.y, rect.max.x, rect.max.y))
                .collect();
            self.say(format!("hud: {} panels: {}", rects.len(), rects.join(", ")));
        }
        Ok(())
    }

    /// The user's passes against the CPU: fog and outline of the colour before them, each line
    /// inside a box whose bit has its colour, the GPU's heights.
    fn check_user_passes(&mut self, app: &App, rendering: &Rendering, frame: u64) {
        let Some(frame_check) = &rendering.frame_check else { return };
        let line = {
            let capture = lock_capture(&rendering.capture);
            let report = app.resource::<RenderReport>();
            let visibility = app.resource::<Visibility>();
            let views = post_views(&app.resource::<ecs::ResolvedViews>());
            let bits = (&report.bits[..], &report.view_bits[..]);
            match frame_check.check(&visibility, &views, bits, &capture.pixels, self.options.size.0) {
                Ok(mismatches) => {
                    if !mismatches.is_clean() {
                        self.fail();
                    }
                    let FramePassMismatches { post, lines, heights } = mismatches;
                    format!("frame {frame} passes vs cpu: post {post} lines {lines} heights {heights}")
                }
                Err(error) => {
                    self.fail();
                    format!("frame {frame} passes vs cpu: cannot check: {error}")
                }
            }
        };
        self.say(line);
    }

    /// `--views 2`: the GPU's counts per view and the cull's pass times (each view's own
    /// share when dispatched one by one), then each view against its reference and its truth.
    fn check_split(&mut self, app: &App, rendering: &mut Rendering, frame: u64) -> Result<(), String> {
        {
            let report = app.resource::<RenderReport>();
            if let Some(gpu) = report.gpu {
                let ms = gpu.gpu_ms.map(|ms| ms.unwrap_or(f64::NAN));
                self.say(format!(
                    "frame {frame} gpu ms cull early {:.3} hi-z {:.3} cull late {:.3}",
                    ms[0], ms[1], ms[2]
                ));
            }
            for (index, stats) in report.view_gpu.iter().enumerate() {
                let (triangles, occluded) = (stats.triangles, stats.occlusion_rejected);
                let ms = match stats.gpu_ms {
                    [Some(early), _, Some(late)] => format!(" cull early {early:.3} cull late {late:.3}"),
                    _ => String::new(),
                };
                self.say(format!("frame {frame} view {index} gpu triangles {triangles} occluded {occluded}{ms}"));
            }
        }
        // The colour before the users' passes, when they drew over it: what the references draw.
        let geometry = rendering.frame_check.as_ref().and_then(FramePassCheck::color_before);
        let checked = {
            let capture = lock_capture(&rendering.capture);
            let views = app.resource::<ecs::ResolvedViews>();
            let report = app.resource::<RenderReport>();
            let visibility = app.resource::<Visibility>();
            let palette = app.resources().get::<animation::SkinPalette>();
            let world = (app.world(), palette.as_deref());
            let shadows = self.options.shadows.then(|| app.resource::<culling::ShadowViews>());
            let answers = (&*views, &*visibility, shadows.as_deref());
            let image = (&*capture, geometry.as_deref());
            city::views::check_views(&mut rendering.checker, image, answers, world, &report)
        };
        let checks = checked.map_err(|error| {
            self.progress.abandon();
            format!("render: frame {frame}: {error}")
        })?;
        for (view, check) in checks {
            self.view_lines(frame, view, check.differing_pixels, check.truth.false_hidden);
        }
        Ok(())
    }

    /// `--monitor`: the monitor's view against its reference and its truth.
    fn check_monitor(&mut self, app: &App, rendering: &mut Rendering, frame: u64) -> Result<(), String> {
        let Some(monitor) = &mut rendering.monitor else { return Ok(()) };
        let checked = {
            let views = app.resource::<ecs::ResolvedViews>();
            let report = app.resource::<RenderReport>();
            let visibility = app.resource::<Visibility>();
            let palette = app.resources().get::<animation::SkinPalette>();
            let shadows = self.options.shadows.then(|| app.resource::<culling::ShadowViews>());
            let answers = (&*views, &*visibility, shadows.as_deref());
            // Culled on the GPU: its own cull's counts and pass times.
            for own in &report.image_views {
                let (stats, ms) = (own.stats, own.stats.gpu_ms.map(|ms| ms.unwrap_or(f64::NAN)));
                self.say(format!(
                    "frame {frame} image view {} gpu ms cull early {:.3} hi-z {:.3} cull late {:.3} triangles {} occluded {}",
                    own.name, ms[0], ms[1], ms[2], stats.triangles, stats.occlusion_rejected
                ));
            }
            monitor.check(answers, app.world(), (&report, palette.as_deref()))
        };
        let (view, check) = checked.map_err(|error| {
            self.progress.abandon();
            format!("render: frame {frame}: the monitor: {error}")
        })?;
        self.view_lines(frame, view, check.differing_pixels, check.truth.false_hidden);
        Ok(())
    }

    /// A view's lines (`differing_pixels`, and `false_hidden` with `--truth`); either not 0
    /// fails a lossless run.
    fn view_lines(&mut self, frame: u64, view: u32, differing: usize, hidden: usize) {
        let truth = self.options.truth;
        self.say(format!("frame {frame} view {view} differing_pixels {differing}"));
        if truth {
            self.say(format!("frame {frame} view {view} false_hidden {hidden}"));
        }
        if (differing != 0 || (truth && hidden != 0)) && self.lossless {
            self.fail();
        }
    }

    /// The frame against the same frame drawn with culling off, with its report, shadow,
    /// cluster and truth lines; with a monitor the street view's lines are named as a view's.
    fn check_main(
        &mut self,
        app: &App,
        scene: &Scene,
        rendering: &mut Rendering,
        (request, frame): (&CheckRequest, u64),
        record: &mut city::summary::FrameRecord,
    ) -> Result<(), String> {
        let checked = {
            let capture = lock_capture(&rendering.capture);
            let report = app.resource::<RenderReport>();
            let visibility = app.resource::<Visibility>();
            let shadows = self.options.shadows.then(|| app.resource::<culling::ShadowViews>());
            check_frame(
                &mut rendering.checker,
                &capture,
                &visibility,
                &report,
                app.world(),
                &scene.meshes.library,
                shadows.as_deref(),
                app.resources().get::<animation::SkinPalette>().as_deref(),
                request,
            )
        };
        let Checked { frame: check, truth, clusters } = checked.map_err(|error| {
            self.progress.abandon();
            format!("render: frame {frame}: {error}")
        })?;
        let lossless = self.lossless;
        {
            let report = app.resource::<RenderReport>();
            let on = CheckedFrame {
                frame,
                size: self.options.size,
                lossless,
                gpu_culling: self.gpu_culling,
                device: rendering.checker.device_name(),
            };
            self.say(lines::report_line(&report, &check, request, on));
            if self.options.shadows {
                let budget = city::lights::budget_line(&app.resource::<culling::ShadowViews>(), frame);
                self.say(format!("{}\n{budget}", lines::shadow_line(&report, frame)));
            }
        }
        if let Some(clusters) = clusters {
            self.say(clusters);
        }
        if check.differing_pixels != 0 && lossless {
            self.fail();
        }
        // With a monitor the street view is one view of several: named like the others.
        let main_view = rendering.monitor.as_ref().and_then(|_| app.resource::<ecs::ResolvedViews>().main());
        if let Some(view) = main_view {
            self.say(format!("frame {frame} view {} differing_pixels {}", view.0, check.differing_pixels));
            if let Some(truth) = &truth {
                self.say(format!("frame {frame} view {} false_hidden {}", view.0, truth.false_hidden));
            }
        }
        if let Some(truth) = &truth {
            self.say(format!(
                "frame {frame} false_hidden {}\nframe {frame} efficiency {:.3}",
                truth.false_hidden, truth.efficiency
            ));
            if truth.false_hidden != 0 && lossless {
                self.fail();
            }
            if let Some(dropped) = truth.dropped_casters {
                self.say(format!("frame {frame} dropped_casters {dropped}"));
                if dropped != 0 {
                    self.fail();
                }
            }
        }
        record.record_check(&check, truth.as_ref());
        record.record_commands(&app.resource::<RenderReport>());
        record.cpu_lod_levels = Some(scene.meshes.lod_histogram(&app.resource::<Visibility>(), app.world()));
        Ok(())
    }
}

/// The frame's window views as the users' passes' check sees them (each rectangle with its
/// camera and its index among the GPU cull's views: the main view 0, the others from 1 in
/// render order), when the window is split; none for a frame of one view (the whole image is
/// the main view's).
fn post_views(views: &ecs::ResolvedViews) -> Vec<PostView> {
    let mut others = 0;
    let windows: Vec<PostView> = views
        .views()
        .iter()
        .filter_map(|view| {
            let ecs::ViewTarget::Window(rect) = &view.target else { return None };
            let list = if views.main() == Some(view.id) {
                0
            } else {
                others += 1;
                others
            };
            Some(PostView {
                rect: [rect.x, rect.y, rect.width, rect.height],
                planes: (view.view.near, view.view.far),
                view_projection: view.view.view_projection,
                list,
            })
        })
        .collect();
    if windows.len() > 1 {
        windows
    } else {
        Vec::new()
    }
}

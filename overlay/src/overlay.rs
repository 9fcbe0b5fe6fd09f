//! [`Overlay`]: the egui context, the open switch (F3), the history and the snapshot; built
//! between frames from the [`App`], handed to [`OverlayPass`] tessellated.
//!
//! The history is recorded every frame, but the panels are rebuilt (figures read, egui run and
//! tessellated) only every [`REBUILD_PERIOD`] frames, or at once when there is input for them,
//! the selection, the switches or the image's size changed or the overlay was just opened, and
//! once more right after such a build when egui asks for the next frame (a panel's first,
//! invisible sizing pass; an animation then goes on at the period's pace): the pass draws the
//! last build meanwhile. Text that changes every frame is what egui spends most
//! on (a new layout per changed label), and figures that change 60 times a second cannot be
//! read anyway.

use std::sync::Arc;
use std::time::Instant;

use egui::{Context, RawInput, Rect};
use runtime::hecs::Entity;
use runtime::App;
use winit::event::WindowEvent;
use winit::window::Window;

use crate::history::FrameHistory;
use crate::panels::{self, Requests, Switches};
use crate::pass::{lock_painted, OverlayPass, Painted, SharedPainted};
use crate::snapshot::{Snapshot, MEMORY_PERIOD};

/// Frames between two rebuilds of the panels without a reason to rebuild sooner (10 a second
/// at 60 frames a second: a rebuild inside a frame costs about 0.7 ms of CPU, so a frame's
/// share stays under 0.3 ms with the pass's recording).
pub const REBUILD_PERIOD: u64 = 6;

/// The debug overlay (see the crate docs).
///
/// ```no_run
/// # fn setup() -> renderer::RenderSetup { unimplemented!() }
/// let mut overlay = overlay::Overlay::new(true);
/// let mut setup = setup();
/// setup.passes.push(overlay.passes());
/// let mut app = runtime::App::new();
/// renderer::install_render(&mut app, setup).expect("installed");
/// for _ in 0..10 {
///     app.run_frame();
///     overlay.update(&app, &overlay::Switches::default());
/// }
/// ```
pub struct Overlay {
    context: Context,
    open: bool,
    shared: SharedPainted,
    history: FrameHistory,
    snapshot: Snapshot,
    rects: Vec<Rect>,
    window_input: Option<egui_winit::State>,
    started: Instant,
    updates: u64,
    /// Whether the pass was last handed an empty overlay (closed).
    cleared: bool,
    build_seconds: f64,
    /// The entity whose components and explanation the overlay shows.
    selected: Option<Entity>,
    /// What the last build showed: the selection, the switches and the screen.
    built_for: Option<(Option<Entity>, Switches, Option<Rect>)>,
    /// Frames since the last build.
    since_build: u64,
    /// The last build asked for another at once (see `update_with`).
    repaint_asked: bool,
    /// "Freeze and explain" was switched on (`true`) or off since the last build.
    hold_request: Option<bool>,
}

impl Overlay {
    /// An overlay, open from the start when `open` (`--hud`).
    pub fn new(open: bool) -> Overlay {
        let context = Context::default();
        panels::style(&context);
        let shared = SharedPainted::new(std::sync::Mutex::new(Painted { pixels_per_point: 1.0, ..Painted::default() }));
        Overlay {
            context,
            open,
            shared,
            history: FrameHistory::default(),
            snapshot: Snapshot::default(),
            rects: Vec::new(),
            window_input: None,
            started: Instant::now(),
            updates: 0,
            cleared: false,
            build_seconds: 0.0,
            selected: None,
            built_for: None,
            since_build: 0,
            repaint_asked: false,
            hold_request: None,
        }
    }

    /// The overlay's pass for [`renderer::RenderSetup::passes`]: added at
    /// [`renderer::points::BEFORE_OUTPUT`].
    pub fn passes(&self) -> renderer::AddPasses {
        let shared = Arc::clone(&self.shared);
        Box::new(move |graph| {
            let pass = OverlayPass::new(graph.device(), shared)?;
            graph.add_typed_pass_at(renderer::points::BEFORE_OUTPUT, pass)
        })
    }

    /// Whether the overlay is shown.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Shows or hides the overlay.
    pub fn set_open(&mut self, open: bool) {
        self.open = open;
    }

    /// Shows a hidden overlay, hides a shown one (F3).
    pub fn toggle(&mut self) {
        self.open = !self.open;
    }

    /// Shows `entity`'s components, slot, `state_of` and explanation (a picked entity), or
    /// nothing with `None`.
    pub fn select(&mut self, entity: Option<Entity>) {
        self.selected = entity;
    }

    /// The selected entity.
    pub fn selected(&self) -> Option<Entity> {
        self.selected
    }

    /// Switches "freeze and explain" on or off. On, the next update reads the frame as usual
    /// and keeps its selection (with the explanation) and culling counters
    /// ([`Snapshot::held`]), shown in place of the live ones while the world and the camera
    /// move on; off, the next update shows live figures again. The window pins the culling
    /// view with it (F4), so the held answer stays the one culling keeps drawing.
    pub fn freeze_explain(&mut self, on: bool) {
        self.hold_request = Some(on);
    }

    /// Whether "freeze and explain" is on (or switched on for the next update).
    pub fn explain_frozen(&self) -> bool {
        self.hold_request.unwrap_or(self.snapshot.held.is_some())
    }

    /// Projects the selection's box with `view_projection` instead of the main view's: the
    /// view the frame was drawn with when it is not the culling view (pinned); `None` for
    /// the main view's.
    pub fn set_drawn_view(&mut self, view_projection: Option<glam::Mat4>) {
        self.snapshot.drawn_view = view_projection;
    }

    /// Why the overlay was dropped (its renderer failed), if it was.
    pub fn error(&self) -> Option<String> {
        lock_painted(&self.shared).error.clone()
    }

    /// The panels' rectangles of the last build, in pixels of the image.
    pub fn panel_rects(&self) -> impl Iterator<Item = Rect> + '_ {
        let scale = self.context.pixels_per_point();
        self.rects.iter().map(move |rect| Rect::from_min_max(rect.min * scale, rect.max * scale))
    }

    /// CPU seconds the last [`Overlay::update`] took to read the figures, build the panels
    /// and tessellate them.
    pub fn build_seconds(&self) -> f64 {
        self.build_seconds
    }

    /// The figures of the last build.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// What the overlay hands its pass (tests use it to inject a renderer's failure).
    pub fn painted(&self) -> &SharedPainted {
        &self.shared
    }

    /// Follows `window`'s input from now on (see [`Overlay::on_window_event`]).
    pub fn attach_window(&mut self, window: &Window) {
        let viewport = egui::ViewportId::ROOT;
        let scale = Some(window.scale_factor() as f32);
        self.window_input = Some(egui_winit::State::new(self.context.clone(), viewport, window, scale, None, None));
    }

    /// Gives a window event to the overlay; true when the overlay took it (the pointer is
    /// over a panel, or a panel has the keyboard), so the fly camera should not.
    pub fn on_window_event(&mut self, window: &Window, event: &WindowEvent) -> bool {
        let Some(state) = self.window_input.as_mut() else { return false };
        if !self.open {
            return false;
        }
        let response = state.on_window_event(window, event);
        let wants = match event {
            WindowEvent::KeyboardInput { .. } => self.context.egui_wants_keyboard_input(),
            WindowEvent::MouseInput { .. } | WindowEvent::MouseWheel { .. } => self.context.is_pointer_over_egui(),
            _ => false,
        };
        response.consumed || wants
    }

    /// Reads the frame `app` ran last and builds the panels for the next frame, from the
    /// window's input when one is attached (else none); returns what the switches asked.
    pub fn update_in_window(&mut self, app: &App, switches: &Switches, window: &Window) -> Requests {
        let input = match self.window_input.as_mut() {
            Some(state) => state.take_egui_input(window),
            None => self.headless_input(app),
        };
        let (requests, output) = self.update_with(app, switches, input);
        if let (Some(state), Some(output)) = (self.window_input.as_mut(), output) {
            state.handle_platform_output(window, output);
        }
        requests
    }

    /// Reads the frame `app` ran last and builds the panels for the next frame, with no
    /// input (headless: the image's size, one pixel a point).
    pub fn update(&mut self, app: &App, switches: &Switches) -> Requests {
        let input = self.headless_input(app);
        self.update_with(app, switches, input).0
    }

    /// Like [`Overlay::update`] with input events of the caller's (injected clicks).
    pub fn update_with_events(&mut self, app: &App, switches: &Switches, events: Vec<egui::Event>) -> Requests {
        let mut input = self.headless_input(app);
        input.events = events;
        self.update_with(app, switches, input).0
    }

    fn headless_input(&self, app: &App) -> RawInput {
        let extent = app
            .resources()
            .get::<renderer::RenderReport>()
            .map_or((0, 0), |report| (report.extent.width, report.extent.height));
        let size = egui::vec2(extent.0 as f32, extent.1 as f32);
        RawInput {
            screen_rect: Some(Rect::from_min_size(egui::Pos2::ZERO, size)),
            time: Some(self.started.elapsed().as_secs_f64()),
            ..RawInput::default()
        }
    }

    fn update_with(
        &mut self,
        app: &App,
        switches: &Switches,
        input: RawInput,
    ) -> (Requests, Option<egui::PlatformOutput>) {
        let started = Instant::now();
        let stages = app.schedule().stage_seconds().map(|(name, seconds)| (name, (seconds * 1e3) as f32));
        let gpu_ms = self.snapshot.gpu_ms;
        self.history.record((app.frame_stats().last_seconds * 1e3) as f32, stages, gpu_ms);
        let dropped = lock_painted(&self.shared).error.is_some();
        if dropped || !self.open {
            self.rects.clear();
            self.built_for = None;
            if !dropped && !self.cleared {
                let mut painted = lock_painted(&self.shared);
                painted.primitives.clear();
                painted.taken = false;
                self.cleared = true;
            }
            self.build_seconds = started.elapsed().as_secs_f64();
            return (Requests::default(), None);
        }
        self.since_build += 1;
        let unchanged = self.built_for.as_ref().is_some_and(|(selected, built, screen)| {
            *selected == self.selected && built == switches && *screen == input.screen_rect
        });
        let due = self.repaint_asked || self.since_build >= REBUILD_PERIOD;
        // A build for input, a new selection, a switch, a new size or the opening: egui's wish
        // for another frame then is a sizing pass, and is followed once. A periodic build's
        // wish is not: the panels' numbers change the windows' sizes, and following each such
        // wish would rebuild every frame.
        let eventful = !unchanged || !input.events.is_empty() || self.hold_request.is_some();
        if !eventful && !due {
            // The pass draws the last build again; the jobs' counts stay a frame's.
            self.snapshot.skip_frame(app);
            self.build_seconds = started.elapsed().as_secs_f64();
            return (Requests::default(), None);
        }
        self.since_build = 0;
        self.built_for = Some((self.selected, switches.clone(), input.screen_rect));
        let device = lock_painted(&self.shared).device.clone();
        if self.hold_request == Some(false) {
            self.snapshot.release();
        }
        self.snapshot.read(app, device.as_ref(), self.updates.is_multiple_of(MEMORY_PERIOD), self.selected);
        if self.hold_request.take() == Some(true) {
            self.snapshot.hold(app);
        }
        self.updates += 1;
        let mut requests = Requests::default();
        let Overlay { context, snapshot, history, rects, .. } = self;
        let mut output = context.run_ui(input, |ui| {
            requests = panels::build(ui.ctx(), snapshot, history, switches, rects);
        });
        if requests.toggle_freeze_explain {
            self.hold_request = Some(self.snapshot.held.is_none());
        }
        // egui asks for the next frame at once when this one was not final: a window's first
        // (invisible) sizing pass, an animation.
        self.repaint_asked = eventful
            && output
                .viewport_output
                .get(&egui::ViewportId::ROOT)
                .is_some_and(|viewport| viewport.repaint_delay.is_zero());
        let primitives = self.context.tessellate(output.shapes, output.pixels_per_point);
        {
            let mut painted = lock_painted(&self.shared);
            // Each texture's changes in the order egui made them (a partial update follows
            // the texture's creation).
            for (id, deltas) in std::mem::take(&mut output.textures_delta.set) {
                painted.textures.extend(deltas.into_iter().map(|delta| (id, delta)));
            }
            painted.frees.extend(std::mem::take(&mut output.textures_delta.free));
            painted.primitives = primitives;
            painted.pixels_per_point = output.pixels_per_point;
            painted.taken = false;
        }
        self.cleared = false;
        self.build_seconds = started.elapsed().as_secs_f64();
        (requests, Some(output.platform_output))
    }
}

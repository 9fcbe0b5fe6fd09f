//! The window's event loop: makes the window, the device with surface extensions, the
//! swapchain and the city's rendering on the first `resumed`, then runs one frame of the
//! schedule per turn of the loop. Keys and mouse go to the debug overlay first (F3 shows or
//! hides it; while shown it takes what it wants), the rest to [`FlyInput`]; resizes to the
//! [`Viewport`] and the swapchain.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use culling::{CullingBackend, Visibility};
use ecs::Viewport;
use render_graph::swapchain::{surface_extensions, Swapchain};
use render_graph::{vk, DeviceConfig, GpuDevice};
use renderer::{DebugView, MeshLibrary, RenderReport};
use runtime::{App, Stage};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::{ElementState, KeyEvent, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use winit::window::{Window, WindowId};

use overlay::{Overlay, Picking, Switches};

use super::fly::{draw_view_matrix, fly_system, keys, DrawView, FlyCamera, FlyInput};
use super::pointer::{poll_pick, request_pick, Pointer, PointerAction};
use super::target::{lock_window, SharedWindow, SwapchainTarget};
use crate::city::{rendering, RenderError};
use crate::frame_passes::{add_switched_frame_passes, BobClock, FramePassChoice, PostSwitch};

/// How the window runs.
#[derive(Clone, Debug)]
pub struct WindowOptions {
    /// The program's name: the window's title starts with it.
    pub title: &'static str,
    /// The window's first inner size, pixels.
    pub size: (u32, u32),
    /// Close after this many frames (`--frames` given with `--window`); `None`: until Esc
    /// or the window closes.
    pub frames: Option<u64>,
    /// The present mode asked for (FIFO where unsupported).
    pub present: vk::PresentModeKHR,
    /// Write the last frame's swapchain image here (needs `frames`).
    pub screenshot: Option<PathBuf>,
    /// Ask the window for this inner size halfway through `frames` (a resize test).
    pub resize_to: Option<(u32, u32)>,
    /// The culling backend.
    pub backend: CullingBackend,
    /// The users' frame passes shown (`--post`, `--debug-boxes`, `--gpu-animate`).
    pub frame_passes: FramePassChoice,
    /// The graph image shown in place of the frame from the start (`--debug-view`); `V`
    /// cycles through [`DEBUG_VIEWS`] in the window.
    pub debug_view: DebugView,
    /// Pipelined frames ([`ecs::RenderSettings::pipelined_frames`]).
    pub pipelined: bool,
    /// Draw the world's lights and shadows (`RenderSetup::shadows`).
    pub shadows: bool,
    /// Show the debug overlay from the start (`--hud`); F3 shows or hides it.
    pub hud: bool,
}

impl WindowOptions {
    /// A game's window: `title`, `size` and `backend`, FIFO present, pipelined frames, no
    /// shadows, users' passes or debug view, running until Esc; set the rest by field (struct
    /// update syntax).
    ///
    /// ```
    /// # use samples::window::run::WindowOptions;
    /// let options = WindowOptions { frames: Some(120), hud: true, ..WindowOptions::new("game", (640, 360), Default::default()) };
    /// assert!(options.pipelined && !options.shadows);
    /// ```
    pub fn new(title: &'static str, size: (u32, u32), backend: CullingBackend) -> WindowOptions {
        WindowOptions {
            title,
            size,
            frames: None,
            present: vk::PresentModeKHR::FIFO,
            screenshot: None,
            resize_to: None,
            backend,
            frame_passes: FramePassChoice::default(),
            debug_view: DebugView::default(),
            pipelined: true,
            shadows: false,
            hud: false,
        }
    }
}

/// What `V` cycles through in the window: the frame, then these images (and mips).
pub const DEBUG_VIEWS: [(&str, u32); 4] =
    [(renderer::DEPTH_PREPASS, 0), (renderer::HIZ_DEPTH, 0), (renderer::HIZ_DEPTH, 3), (renderer::HIZ_DEPTH, 5)];

/// The debug view after `current` in the window's cycle (the frame follows the last).
pub fn next_debug_view(current: &DebugView) -> DebugView {
    let at = DEBUG_VIEWS.iter().position(|&(image, mip)| current.image.as_deref() == Some(image) && current.mip == mip);
    let next = match at {
        None if current.image.is_none() => Some(0),
        None => None,
        Some(index) => (index + 1 < DEBUG_VIEWS.len()).then_some(index + 1),
    };
    next.map_or(DebugView::default(), |index| DebugView::depth(DEBUG_VIEWS[index].0, DEBUG_VIEWS[index].1))
}

/// What a windowed run did.
#[derive(Clone, Debug, Default)]
pub struct WindowSummary {
    /// Frames the schedule ran.
    pub frames: u64,
    /// Frames presented.
    pub presented: u64,
    /// Frames skipped (minimised, out of date).
    pub skipped: u64,
    /// The size of the last presented frame.
    pub extent: (u32, u32),
    /// The present mode used.
    pub present_mode: String,
    /// Median frame time, milliseconds.
    pub median_frame_ms: f64,
    /// Validation warnings and errors.
    pub validation_problems: Vec<String>,
}

/// The game's work between two of the window's frames (the city's district streaming): called
/// with the app before each frame runs, as a headless loop would between its frames; an error
/// closes the window and is the run's error.
pub type FrameHook<'a> = Box<dyn FnMut(&mut App) -> Result<(), RenderError> + 'a>;

/// Runs `app` (a scene built with the engine's stages: the city, or a viewer's file, with a
/// camera the fly camera starts from) drawing `meshes` in a window until it closes or
/// `options.frames` have run; writes the screenshot when asked.
pub fn run(app: App, meshes: &MeshLibrary, options: WindowOptions) -> Result<WindowSummary, RenderError> {
    run_with(app, meshes, options, None)
}

/// [`run`], with `hook` called before every frame (see [`FrameHook`]).
pub fn run_with(
    app: App,
    meshes: &MeshLibrary,
    options: WindowOptions,
    hook: Option<FrameHook<'_>>,
) -> Result<WindowSummary, RenderError> {
    let event_loop = EventLoop::new()?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut runner = Runner {
        app: Some(app),
        meshes,
        options,
        window: None,
        device: None,
        shared: SharedWindow::default(),
        pointer: Pointer::default(),
        draw_view: None,
        post: PostSwitch::default(),
        error: None,
        summary: WindowSummary::default(),
        frame_ms: Vec::new(),
        title_at: Instant::now(),
        title_frames: 0,
        overlay: None,
        picking: None,
        hook,
    };
    event_loop.run_app(&mut runner)?;
    // The renderer (in the app's systems) goes before the window its surface draws to.
    drop(runner.app.take());
    if let Some(error) = runner.error.take() {
        return Err(error);
    }
    let mut summary = runner.summary;
    summary.frame_ms_median(&mut runner.frame_ms);
    if let Some(device) = &runner.device {
        if device.validation_counts().has_problems() {
            summary.validation_problems = device.validation_messages();
        }
    }
    Ok(summary)
}

impl WindowSummary {
    /// Prints what the window did (`window: ...` lines) or `program`'s error about it, and
    /// returns the exit code: a failure on an error or on validation problems.
    pub fn report(
        outcome: Result<WindowSummary, RenderError>,
        program: &str,
        screenshot: Option<&std::path::Path>,
    ) -> std::process::ExitCode {
        use std::process::ExitCode;
        match outcome {
            Ok(summary) => {
                println!(
                    "window: {} frames, {} presented, {} skipped, last {}x{}, present mode {}, median frame {:.3} ms",
                    summary.frames,
                    summary.presented,
                    summary.skipped,
                    summary.extent.0,
                    summary.extent.1,
                    summary.present_mode,
                    summary.median_frame_ms
                );
                if let Some(path) = screenshot {
                    println!("window: wrote {}", path.display());
                }
                if summary.validation_problems.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    eprintln!("render: validation reported problems: {:?}", summary.validation_problems);
                    ExitCode::FAILURE
                }
            }
            Err(error) => {
                eprintln!("{program}: --window: {error}");
                ExitCode::FAILURE
            }
        }
    }

    fn frame_ms_median(&mut self, frame_ms: &mut [f64]) {
        frame_ms.sort_by(f64::total_cmp);
        self.median_frame_ms = frame_ms.get(frame_ms.len() / 2).copied().unwrap_or(0.0);
    }
}

struct Runner<'a> {
    app: Option<App>,
    meshes: &'a MeshLibrary,
    options: WindowOptions,
    window: Option<Arc<Window>>,
    device: Option<Arc<GpuDevice>>,
    shared: SharedWindow,
    /// Alt + click and the mouse look.
    pointer: Pointer,
    /// The view drawn while the culling view is pinned (the selection's box is drawn with it).
    draw_view: Option<DrawView>,
    /// The `--post` passes' switch (the overlay's).
    post: PostSwitch,
    error: Option<RenderError>,
    summary: WindowSummary,
    frame_ms: Vec<f64>,
    title_at: Instant,
    title_frames: u64,
    /// The debug overlay (made with the window).
    overlay: Option<Overlay>,
    /// Picking for Alt + click (made with the window).
    picking: Option<Picking>,
    /// The game's work before each frame.
    hook: Option<FrameHook<'a>>,
}

impl Runner<'_> {
    /// Window, device, swapchain and rendering, once.
    fn start(&mut self, event_loop: &ActiveEventLoop) -> Result<(), RenderError> {
        let (width, height) = self.options.size;
        let attributes = Window::default_attributes()
            .with_title(self.options.title)
            .with_inner_size(PhysicalSize::new(width, height));
        let window = Arc::new(event_loop.create_window(attributes)?);
        let display = window.display_handle()?.as_raw();
        let config = DeviceConfig {
            app_name: self.options.title.into(),
            surface_extensions: surface_extensions(display)?,
            ..DeviceConfig::default()
        };
        let device = Arc::new(GpuDevice::new(&config)?);
        let size = window.inner_size();
        let extent = vk::Extent2D { width: size.width, height: size.height };
        lock_window(&self.shared).window_extent = extent;
        let swapchain =
            Swapchain::new(&device, display, window.window_handle()?.as_raw(), extent, self.options.present)?;
        self.summary.present_mode = format!("{:?}", swapchain.present_mode());
        let draw_view = DrawView::default();
        let target = SwapchainTarget::new(
            &device,
            swapchain,
            Arc::clone(&self.shared),
            Arc::clone(&draw_view),
            self.options.screenshot.is_some(),
        );
        let app = self.app.as_mut().ok_or("the app is gone")?;
        app.insert_resource(Viewport { width: extent.width.max(1), height: extent.height.max(1) });
        app.insert_resource(FlyInput::default());
        app.insert_resource(FlyCamera::new(Arc::clone(&draw_view)));
        self.draw_view = Some(Arc::clone(&draw_view));
        app.add_system(Stage::Input, fly_system());
        let render_extent = vk::Extent2D { width: extent.width.max(1), height: extent.height.max(1) };
        // The users' passes, as the headless city runs them (checked against the CPU there).
        let choice = self.options.frame_passes;
        let capacity = rendering::capacity(app.world());
        let clock = BobClock::default();
        let post = self.post.clone();
        let frame_clock = clock.clone();
        let mut overlay = Overlay::new(self.options.hud);
        overlay.attach_window(&window);
        let frames = rendering::CityFrames {
            backend: self.options.backend,
            extent: render_extent,
            bits: renderer::BitsReadback::Lagged,
            passes: vec![
                Box::new(move |graph| add_switched_frame_passes(graph, &choice, capacity, &clock, &post)),
                overlay.passes(),
            ],
            shadows: self.options.shadows,
        };
        let culling = rendering::install(app, &device, self.meshes, Box::new(target), frames)?;
        // The bob pass's frame is set at the Render stage's sync point, so a pipelined frame
        // bobs by the frame it draws, not by the one simulating meanwhile.
        app.resource_mut::<renderer::RenderExtract>().add(move |_, game_frame| frame_clock.set(game_frame));
        app.resource_mut::<ecs::RenderSettings>().pipelined_frames = self.options.pipelined;
        if (choice.bob || choice.boxes) && !culling.on_device {
            return Err("--gpu-animate and --debug-boxes need GPU culling (--cull gpu)".into());
        }
        *app.resource_mut::<DebugView>() = self.options.debug_view.clone();
        self.overlay = Some(overlay);
        self.picking = Some(Picking::new(Some(Arc::clone(&device)), self.meshes.clone()));
        self.window = Some(window);
        self.device = Some(device);
        Ok(())
    }

    /// One frame of the schedule; closes after the last one.
    fn frame(&mut self, event_loop: &ActiveEventLoop) {
        let Some(app) = self.app.as_mut() else { return };
        let next = self.summary.frames + 1;
        if let Some(frames) = self.options.frames {
            if next == frames && self.options.screenshot.is_some() {
                lock_window(&self.shared).capture_next = true;
            }
            if let (Some((width, height)), Some(window)) = (self.options.resize_to, &self.window) {
                if next == frames / 2 {
                    let _ = window.request_inner_size(PhysicalSize::new(width, height));
                }
            }
        }
        let started = Instant::now();
        if let Some(hook) = self.hook.as_mut() {
            if let Err(error) = hook(app) {
                self.error = Some(format!("frame {next}: {error}").into());
                event_loop.exit();
                return;
            }
        }
        app.run_frame();
        self.frame_ms.push(started.elapsed().as_secs_f64() * 1e3);
        self.summary.frames = next;
        self.title_frames += 1;
        if let Some(error) = &app.resource::<RenderReport>().error {
            self.error = Some(format!("frame {next}: {error}").into());
            event_loop.exit();
            return;
        }
        let since = self.title_at.elapsed().as_secs_f64();
        if since >= 0.5 {
            let drawn = match &app.resource::<RenderReport>().gpu {
                Some(stats) => (stats.early_drawn + stats.late_drawn) as usize,
                None => app.resource::<Visibility>().visible().len(),
            };
            let objects = app.resource::<Visibility>().objects().len();
            let fly = app.resource::<FlyCamera>();
            let title = format!(
                "{}: {:.1} fps, {drawn} of {objects} objects drawn{}{}",
                self.options.title,
                self.title_frames as f64 / since,
                if fly.culling_off { ", culling off (F1)" } else { "" },
                if fly.pinned { ", culling view pinned (F2)" } else { "" },
            );
            if let Some(window) = &self.window {
                window.set_title(&title);
            }
            self.title_at = Instant::now();
            self.title_frames = 0;
        }
        if let (Some(picking), Some(overlay)) = (self.picking.as_mut(), self.overlay.as_mut()) {
            poll_pick(picking, overlay);
        }
        self.update_overlay();
        if self.options.frames.is_some_and(|frames| next >= frames) {
            self.finish(event_loop);
        }
    }

    /// Records the window's counts, writes the screenshot and closes.
    fn finish(&mut self, event_loop: &ActiveEventLoop) {
        if let Some(app) = self.app.as_mut() {
            // A pipelined last frame is still with the render thread: it is presented (and
            // captured) before the counts are read.
            renderer::FrameInFlight::finish(app);
            if let Some(error) = &app.resource::<RenderReport>().error {
                self.error = Some(format!("the last frame: {error}").into());
            }
        }
        let mut shared = lock_window(&self.shared);
        self.summary.presented = shared.presented;
        self.summary.skipped = shared.skipped;
        self.summary.extent = (shared.presented_extent.width, shared.presented_extent.height);
        if let Some(path) = &self.options.screenshot {
            match shared.screenshot.take() {
                Some((pixels, extent)) => {
                    if let Err(error) = crate::city::classify::write_png(path, &pixels, extent.width, extent.height) {
                        self.error = Some(format!("cannot write {}: {error}", path.display()).into());
                    }
                }
                None => self.error = Some("the last frame was not presented: no screenshot".into()),
            }
        }
        event_loop.exit();
    }

    /// Builds the overlay from the frame just run and applies what its switches asked, as
    /// the keys would.
    fn update_overlay(&mut self) {
        let (Some(app), Some(overlay), Some(window)) = (self.app.as_mut(), self.overlay.as_mut(), &self.window) else {
            return;
        };
        let switches = {
            let fly = app.resource::<FlyCamera>();
            Switches {
                culling_off: fly.culling_off,
                pinned: fly.pinned,
                debug_view: app.resource::<DebugView>().image.clone(),
                shadows: self.options.shadows.then(|| app.resource::<ecs::ShadowSettings>().enabled),
                post: (self.options.frame_passes.fog || self.options.frame_passes.outline).then(|| self.post.is_on()),
            }
        };
        overlay.set_drawn_view(self.draw_view.as_ref().and_then(draw_view_matrix));
        let requests = overlay.update_in_window(app, &switches, window);
        let mut input = app.resource_mut::<FlyInput>();
        input.toggle_culling |= requests.toggle_culling;
        input.toggle_pin |= requests.toggle_pin;
        // "Freeze and explain" pins the culling view while it holds the figures.
        if requests.toggle_freeze_explain && overlay.explain_frozen() != switches.pinned {
            input.toggle_pin = !input.toggle_pin;
        }
        drop(input);
        if requests.toggle_shadows {
            let mut settings = app.resource_mut::<ecs::ShadowSettings>();
            settings.enabled = !settings.enabled;
        }
        if requests.toggle_post {
            self.post.set(!self.post.is_on());
        }
        if requests.next_debug_view {
            let mut view = app.resource_mut::<DebugView>();
            *view = next_debug_view(&view);
        }
    }

    fn key(&mut self, event_loop: &ActiveEventLoop, event: &KeyEvent) {
        let PhysicalKey::Code(code) = event.physical_key else { return };
        let pressed = event.state == ElementState::Pressed;
        let Some(app) = self.app.as_mut() else { return };
        let mut input = app.resource_mut::<FlyInput>();
        let bit = match code {
            KeyCode::KeyW => keys::FORWARD,
            KeyCode::KeyS => keys::BACK,
            KeyCode::KeyA => keys::LEFT,
            KeyCode::KeyD => keys::RIGHT,
            KeyCode::Space => keys::UP,
            KeyCode::ControlLeft | KeyCode::ControlRight => keys::DOWN,
            KeyCode::ShiftLeft | KeyCode::ShiftRight => keys::FAST,
            KeyCode::F1 if pressed && !event.repeat => {
                input.toggle_culling = true;
                return;
            }
            KeyCode::F2 if pressed && !event.repeat => {
                input.toggle_pin = true;
                return;
            }
            KeyCode::F3 if pressed && !event.repeat => {
                if let Some(overlay) = self.overlay.as_mut() {
                    overlay.toggle();
                }
                return;
            }
            KeyCode::F4 if pressed && !event.repeat => {
                drop(input);
                let pinned = app.resource::<FlyCamera>().pinned;
                if let Some(overlay) = self.overlay.as_mut() {
                    // Pins the culling view with the held figures, releases both after.
                    let hold = !overlay.explain_frozen();
                    overlay.freeze_explain(hold);
                    overlay.set_open(true);
                    app.resource_mut::<FlyInput>().toggle_pin = hold != pinned;
                }
                return;
            }
            KeyCode::KeyV if pressed && !event.repeat => {
                drop(input);
                let mut view = app.resource_mut::<DebugView>();
                *view = next_debug_view(&view);
                return;
            }
            KeyCode::Escape if pressed => {
                drop(input);
                self.finish(event_loop);
                return;
            }
            _ => return,
        };
        if pressed {
            input.held |= bit;
        } else {
            input.held &= !bit;
        }
    }
}

impl ApplicationHandler for Runner<'_> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() || self.error.is_some() {
            return;
        }
        if let Err(error) = self.start(event_loop) {
            self.error = Some(error);
            event_loop.exit();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _window: WindowId, event: WindowEvent) {
        if let (Some(overlay), Some(window)) = (self.overlay.as_mut(), &self.window) {
            // A shown overlay takes the pointer over its panels and the keyboard while a
            // panel has it; F3 and closing always reach the window.
            let toggle = matches!(&event, WindowEvent::KeyboardInput { event, .. }
                if event.physical_key == PhysicalKey::Code(KeyCode::F3));
            if !toggle && overlay.on_window_event(window, &event) && !matches!(event, WindowEvent::CloseRequested) {
                if let WindowEvent::MouseInput { state: ElementState::Released, .. } = &event {
                    self.pointer.stop_looking();
                }
                return;
            }
        }
        match event {
            WindowEvent::CloseRequested => self.finish(event_loop),
            WindowEvent::Resized(size) => {
                lock_window(&self.shared).window_extent = vk::Extent2D { width: size.width, height: size.height };
                if let Some(app) = self.app.as_mut() {
                    // A zero size (minimised) keeps culling's last answer; nothing is drawn.
                    app.insert_resource(Viewport { width: size.width, height: size.height });
                }
            }
            WindowEvent::KeyboardInput { event, .. } => self.key(event_loop, &event),
            _ => match self.pointer.on_event(&event) {
                PointerAction::None => {}
                PointerAction::Pick { x, y } => {
                    if let (Some(app), Some(picking)) = (self.app.as_ref(), self.picking.as_mut()) {
                        request_pick(picking, app, x, y);
                    }
                }
                PointerAction::Look(delta) => {
                    if let Some(app) = self.app.as_mut() {
                        app.resource_mut::<FlyInput>().look += delta;
                    }
                }
            },
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() && self.error.is_none() && !event_loop.exiting() {
            self.frame(event_loop);
        }
    }
}

//! Pipelined frames: the render thread that submits frame `N` while the next frame's Input,
//! Transform, View and Visibility stages run.
//!
//! The Render stage of frame `N` first waits for the thread to finish frame `N - 1` and
//! publishes what it produced (errors, screenshots, the upload report), then prepares
//! frame `N` on its own thread (the extract: the changed slots into the GPU scene, the view,
//! the host's list, the [`RenderExtract`] hooks), hands it to the thread and returns. The
//! thread executes the graph (record, submit, present) from the GPU scene and the passes
//! alone; it never reads the world, so nothing the next frame's systems do can change what
//! it draws.
//!
//! A panic on the thread (outside the passes, whose panics are frame errors) is caught and
//! raised again by the next Render stage, as the Render system's panic; the thread lives on.
//! Dropping the handle lets the thread finish the frame it has and joins it, so dropping the
//! `App` mid-run never leaves a frame half-submitted or the device in use.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use runtime::hecs::World;

use super::outcome::FrameOutcome;
use super::state::RenderState;
use super::{RenderReport, Screenshots};

/// The name of the render thread (in Tracy and in panics).
pub const RENDER_THREAD: &str = "render";

/// Hooks the Render stage runs at the sync point of every frame, on its own thread, after
/// the frame before has been submitted and before this one is: where a game copies the
/// per-frame parameters its passes read (a clock, a tint) out of the world, so a pipelined
/// frame's passes see the values of the frame they draw. A resource; add hooks with
/// [`RenderExtract::add`].
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// # let mut app = runtime::App::with_threads(1);
/// # app.insert_resource(renderer::RenderExtract::default());
/// // A pass reads `frame` when it executes; the hook sets it for the frame being drawn.
/// let frame = Arc::new(AtomicU64::new(0));
/// let written = Arc::clone(&frame);
/// app.resource_mut::<renderer::RenderExtract>().add(move |_world, game_frame| written.store(game_frame, Ordering::Relaxed));
/// ```
#[derive(Default)]
pub struct RenderExtract {
    hooks: Vec<ExtractHook>,
}

/// One hook of [`RenderExtract`].
type ExtractHook = Box<dyn FnMut(&World, u64) + Send + Sync>;

impl RenderExtract {
    /// Adds a hook, called with the world and the game frame being drawn.
    pub fn add(&mut self, hook: impl FnMut(&World, u64) + Send + Sync + 'static) {
        self.hooks.push(Box::new(hook));
    }

    /// Runs every hook for `game_frame`.
    pub(super) fn run(&mut self, world: &World, game_frame: u64) {
        for hook in &mut self.hooks {
            hook(world, game_frame);
        }
    }
}

/// What the thread sends back for one frame.
pub(super) enum Submitted {
    /// The frame was submitted (or failed with the error in its outcome); boxed, as it
    /// travels back and forth with its buffers.
    Frame(Box<FrameOutcome>),
    /// Submitting panicked; the payload is raised again on the Render stage's thread.
    Panicked(Box<dyn Any + Send>),
}

/// The render thread and the frame it holds.
pub(super) struct RenderThread {
    frames: Option<Sender<(u64, Box<FrameOutcome>)>>,
    submitted: Receiver<Submitted>,
    thread: Option<JoinHandle<()>>,
    /// Whether a frame is with the thread (the Input-stage readback then leaves the render
    /// state alone, so it does not wait for the thread).
    in_flight: Arc<AtomicBool>,
}

impl RenderThread {
    /// Starts the thread submitting frames of `state`; `in_flight` mirrors whether it has one.
    pub(super) fn spawn(state: Arc<Mutex<RenderState>>, in_flight: Arc<AtomicBool>) -> std::io::Result<RenderThread> {
        let (frames, incoming) = channel::<(u64, Box<FrameOutcome>)>();
        let (outgoing, submitted) = channel();
        let thread = std::thread::Builder::new().name(RENDER_THREAD.into()).spawn(move || {
            runtime::profiling::name_this_thread();
            for (game_frame, mut outcome) in incoming {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                    state.submit(game_frame, &mut outcome);
                }));
                let message = match result {
                    Ok(()) => Submitted::Frame(outcome),
                    Err(payload) => Submitted::Panicked(payload),
                };
                if outgoing.send(message).is_err() {
                    break;
                }
            }
        })?;
        Ok(RenderThread { frames: Some(frames), submitted, thread: Some(thread), in_flight })
    }

    /// Hands the prepared frame `game_frame` to the thread.
    pub(super) fn start(&mut self, game_frame: u64, outcome: Box<FrameOutcome>) {
        let Some(frames) = &self.frames else { return };
        self.in_flight.store(true, Ordering::Release);
        if frames.send((game_frame, outcome)).is_err() {
            self.in_flight.store(false, Ordering::Release);
        }
    }

    /// Whether a frame is with the thread.
    pub(super) fn holds_a_frame(&self) -> bool {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Waits for the frame the thread holds, if any.
    pub(super) fn finish(&mut self) -> Option<Submitted> {
        if !self.in_flight.load(Ordering::Acquire) {
            return None;
        }
        runtime::profile_zone!("render: wait for the render thread");
        let submitted = self.submitted.recv().ok();
        self.in_flight.store(false, Ordering::Release);
        submitted
    }
}

impl Drop for RenderThread {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop once it has finished the frame it holds.
        self.frames.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.in_flight.store(false, Ordering::Release);
    }
}

/// The Render stage's side of pipelining: the thread (started with the first pipelined
/// frame), the outcome buffers passed back and forth, the last error logged.
#[derive(Default)]
pub(super) struct Pipeline {
    pub(super) thread: Option<RenderThread>,
    pub(super) spare: Option<Box<FrameOutcome>>,
    /// The last error logged: a frame's error is logged when it differs from it, so a
    /// failure that lasts (a full scene, device memory exhausted) is logged once, not per
    /// frame.
    pub(super) logged_error: Option<String>,
}

impl Pipeline {
    /// Waits for the frame the thread holds and publishes it into `report` and `shots`;
    /// returns its error (`None` as well without a frame in flight). A panic on the thread
    /// is raised here.
    pub(super) fn finish(&mut self, report: &mut RenderReport, shots: &mut Screenshots) -> Option<String> {
        match self.thread.as_mut().and_then(RenderThread::finish)? {
            Submitted::Frame(mut done) => {
                let error = done.publish(report, shots);
                self.spare = Some(done);
                error
            }
            Submitted::Panicked(payload) => {
                self.spare = Some(Box::default());
                std::panic::resume_unwind(payload);
            }
        }
    }

    /// Sets `error` as the frame's, logging it when it is new.
    pub(super) fn note_error(&mut self, report: &mut RenderReport, error: Option<String>) {
        report.error = error;
        if report.error.is_some() && report.error != self.logged_error {
            let frame = report.game_frame.unwrap_or_default();
            log::error!("rendering frame {frame}: {}", report.error.as_deref().unwrap_or_default());
        }
        if report.error.is_some() {
            self.logged_error.clone_from(&report.error);
        }
    }
}

/// The pipelined frame in flight, a resource [`crate::install_render`] inserts: a host that
/// stops running frames (a window closing, a test's last frame) calls
/// [`FrameInFlight::finish`] to have the last frame submitted and its screenshots, report and
/// errors published, instead of waiting for the next frame's Render stage. Serial frames
/// have none in flight.
#[derive(Clone, Default)]
pub struct FrameInFlight(pub(super) Arc<Mutex<Pipeline>>);

impl FrameInFlight {
    /// Waits for `app`'s frame in flight, if any, and publishes it into [`RenderReport`] and
    /// [`Screenshots`].
    pub fn finish(app: &mut runtime::App) {
        let Some(pipeline) = app.resources().get::<FrameInFlight>().map(|frame| Arc::clone(&frame.0)) else {
            return;
        };
        let mut pipeline = pipeline.lock().unwrap_or_else(PoisonError::into_inner);
        let resources = app.resources();
        let Some(mut report) = resources.get_mut::<RenderReport>() else { return };
        let mut shots = resources.get_mut::<Screenshots>();
        let mut no_shots = Screenshots::default();
        let shots = shots.as_deref_mut().unwrap_or(&mut no_shots);
        if pipeline.thread.as_ref().is_some_and(RenderThread::holds_a_frame) {
            let error = pipeline.finish(&mut report, shots);
            pipeline.note_error(&mut report, error);
        }
    }
}

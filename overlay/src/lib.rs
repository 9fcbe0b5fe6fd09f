//! The in-game debug overlay: an egui overlay drawn by a render-graph pass at the frame's
//! [`renderer::points::BEFORE_OUTPUT`] point, over the final `color`, so it appears in the
//! window and in headless pictures alike.
//!
//! - [`Overlay`] (`overlay.rs`) owns the egui context. A game calls [`Overlay::update`] (or
//!   [`Overlay::update_in_window`]) after each frame: it reads that frame's figures from the
//!   [`runtime::App`] ([`Snapshot`], `snapshot.rs`), records the frame-time history
//!   ([`FrameHistory`], `history.rs`), builds the panels (`panels.rs`) when the overlay is
//!   open, and hands the tessellated result to the pass. F3 in the samples' window calls
//!   [`Overlay::toggle`]; `--hud` starts it open.
//! - [`OverlayPass`] (`pass.rs`) draws the newest tessellated overlay with
//!   `egui-ash-renderer` inside the graph's rendering scope over `color` (a colour attachment
//!   it loads, so the graph places its barriers). A renderer error drops the overlay with one
//!   logged error; the frame goes on.
//! - [`Picking`] (`picking.rs`) answers which entity owns a pixel of a view (the main one,
//!   or any of a split-screen frame, [`window_view_at`]), from an object-id image drawn on
//!   the asking frame; [`Overlay::select`] shows one, its
//!   explanation in a panel and its world box drawn over the frame ([`box_segments`],
//!   `outline.rs`).
//! - In a window, [`Overlay::on_window_event`] feeds egui through `egui-winit` and says
//!   whether the overlay took the event (then the fly camera does not).
//!
//! The panels: the frame-time graph (CPU frame, each stage, GPU frame; the last
//! [`HISTORY_FRAMES`] frames), the main view's and each shadow view's culling counters (with the
//! levels of detail the GPU and the CPU drew, [`LevelTable`]), GPU
//! milliseconds per pass, memory (resident, GPU pools) and the job system, and the switches
//! the window's keys flip ([`Switches`], answered with [`Requests`]): culling on or off, the
//! pinned culling view (culling answers for a pose while the drawing camera flies on), the
//! debug view, and "freeze and explain" ([`Overlay::freeze_explain`]: the selection's
//! explanation and the culling counters of one frame held while the camera flies out).
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod history;
mod levels;
mod outline;
mod overlay;
mod panels;
mod pass;
mod picking;
mod snapshot;

pub use history::{FrameHistory, Series, CPU_FRAME, GPU_FRAME, HISTORY_FRAMES};
pub use levels::LevelTable;
pub use outline::{box_segments, Segment};
pub use overlay::{Overlay, REBUILD_PERIOD};
pub use panels::{Requests, Switches, OUTLINE_COLOUR};
pub use pass::{lock_painted, OverlayPass, Painted, SharedPainted, OVERLAY_PASS};
pub use picking::{window_view_at, PickMiss, Picking};
pub use snapshot::{HeldFrame, MemoryFigures, Selection, ShadowCounters, Snapshot, ViewCounters, MEMORY_PERIOD};

/// The egui library the overlay is built with (its input events, for injected input).
pub use egui;

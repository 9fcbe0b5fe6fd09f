//! What submitting one frame produced ([`FrameOutcome`]) and how it reaches the Render
//! stage's resources: at once when frames are serial, at the next frame's Render stage when
//! they are pipelined. The report's vectors are swapped, not cloned, so publishing allocates
//! nothing in steady state.

use render_graph::{Owner, RenderGraph};

use super::screenshot::{Screenshot, ScreenshotRequest, Screenshots};
use super::RenderReport;

/// What submitting one frame produced, for the Render stage to publish into its resources
/// (at once when serial, at the next frame's Render stage when pipelined).
#[derive(Default)]
pub(super) struct FrameOutcome {
    /// The game frame it drew.
    pub(super) game_frame: u64,
    /// Whether the graph ran (the fields of `report` below are then this frame's).
    pub(super) drawn: bool,
    /// Its error, if it was not drawn.
    pub(super) error: Option<render_graph::GraphError>,
    /// The scene could not grow to hold every object: the frame draws those that fit.
    pub(super) growth_error: Option<String>,
    /// Screenshots developed.
    pub(super) shots: Vec<Screenshot>,
    /// Screenshot requests of a frame not drawn: they wait for the next.
    pub(super) deferred: Vec<ScreenshotRequest>,
    /// What the frame's extract did (`synced_slots`, `missing_meshes`, `sync_seconds`, and
    /// `shadows` with `host_shadows`); `upload`, `frames` and `extent` of the drawn frame;
    /// with `read_bits`, also `gpu`, `bits` and `bits_frame` (a waited readback).
    pub(super) report: RenderReport,
    /// Whether `report` holds a waited readback.
    pub(super) read_bits: bool,
    /// Whether `report.shadows` holds the frame's shadow views as the host culled them.
    pub(super) host_shadows: bool,
}

impl FrameOutcome {
    /// Publishes what the frame's extract did (a frame that was not submitted has nothing
    /// else): `game_frame` and the extract's fields of the report.
    pub(super) fn publish_prepared(&mut self, report: &mut RenderReport) {
        report.game_frame = Some(self.game_frame);
        report.synced_slots = self.report.synced_slots;
        report.missing_meshes = self.report.missing_meshes;
        // Swapped, not cloned, as the shadows below.
        std::mem::swap(&mut report.stand_ins, &mut self.report.stand_ins);
        std::mem::swap(&mut report.texture_mips, &mut self.report.texture_mips);
        report.sync_seconds = self.report.sync_seconds;
        report.extract_seconds = self.report.extract_seconds;
        report.residency = self.report.residency;
        report.host_draw_commands = self.report.host_draw_commands;
        if self.host_shadows {
            // Swapped, not cloned: the vectors go back and forth without allocating.
            std::mem::swap(&mut report.shadows, &mut self.report.shadows);
            self.host_shadows = false;
        }
    }

    /// Publishes the outcome: the report's fields, the screenshots; returns the error.
    pub(super) fn publish(&mut self, report: &mut RenderReport, shots: &mut Screenshots) -> Option<String> {
        self.publish_prepared(report);
        for shot in self.shots.drain(..) {
            shots.deliver(shot);
        }
        shots.defer(&mut self.deferred);
        if self.drawn {
            report.upload = self.report.upload;
            report.frames = self.report.frames;
            report.extent = self.report.extent;
        }
        report.pass_warnings = self.report.pass_warnings;
        if report.dropped_passes.len() != self.report.dropped_passes.len() {
            report.dropped_passes.clone_from(&self.report.dropped_passes);
        }
        std::mem::swap(&mut report.user_passes, &mut self.report.user_passes);
        std::mem::swap(&mut report.passes, &mut self.report.passes);
        let growth_error = self.growth_error.take();
        if self.read_bits {
            report.gpu = self.report.gpu.take();
            report.bits_frame = self.report.bits_frame;
            std::mem::swap(&mut report.bits, &mut self.report.bits);
            std::mem::swap(&mut report.view_gpu, &mut self.report.view_gpu);
            std::mem::swap(&mut report.view_bits, &mut self.report.view_bits);
            std::mem::swap(&mut report.image_views, &mut self.report.image_views);
            report.shadows.gpu_ms = self.report.shadows.gpu_ms;
            if self.report.shadows.on_device {
                std::mem::swap(&mut report.shadows, &mut self.report.shadows);
            }
        }
        self.error.take().map(|error| error.to_string()).or(growth_error)
    }
}

/// The timings of `passes` into `known`, rewritten in place while the passes stay the same
/// (no allocation per frame), replaced when they change.
fn copy_pass_stats<'graph>(
    passes: impl Iterator<Item = &'graph render_graph::PassStats> + Clone,
    known: &mut Vec<render_graph::PassStats>,
) {
    let same = passes.clone().count() == known.len()
        && passes.clone().zip(known.iter()).all(|(pass, old)| pass.name == old.name);
    if same {
        for (pass, old) in passes.zip(known.iter_mut()) {
            old.gpu_ms = pass.gpu_ms;
            old.cpu_record_ms = pass.cpu_record_ms;
            old.barriers = pass.barriers;
        }
    } else {
        known.clear();
        known.extend(passes.cloned());
    }
}

/// The users' passes into `report`: their timings of the newest frame whose times are known
/// (rewritten in place while the passes stay the same), the ones dropped so far and the
/// count of their warnings.
pub(super) fn report_user_passes(graph: &RenderGraph, report: &mut RenderReport) {
    let users = graph.stats().passes.iter().filter(|pass| pass.owner == Owner::User);
    copy_pass_stats(users, &mut report.user_passes);
    copy_pass_stats(graph.stats().passes.iter(), &mut report.passes);
    let dropped = graph.dropped_passes();
    if dropped.len() != report.dropped_passes.len() {
        report.dropped_passes = dropped.iter().map(ToString::to_string).collect();
    }
    let is_user = |name: &str| graph.pass_owner(name) != Some(Owner::Engine);
    report.pass_warnings =
        graph.pass_warnings().iter().filter(|warning| is_user(&warning.pass)).map(|warning| warning.count).sum();
}

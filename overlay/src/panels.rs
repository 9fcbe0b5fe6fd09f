//! The overlay's panels, built with egui from a [`Snapshot`] and a [`FrameHistory`]: the
//! frame-time graph, the culling counters, GPU milliseconds per pass, memory and jobs, and
//! the window's switches. Each panel is an egui window without a shadow, so what it draws
//! stays inside the rectangle it reports.

use culling::shadow::{Casting, LightViewKind};
use egui::{Color32, Context, Pos2, Rect, Ui, Vec2};

use crate::history::FrameHistory;
use crate::snapshot::{Selection, Snapshot};

/// The switches the window's keys flip, as the overlay shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// Culling is off (F1).
    pub culling_off: bool,
    /// The culling view is pinned (F2): culling answers for the camera's pose of that moment
    /// while the drawing camera flies on.
    pub pinned: bool,
    /// The graph image shown in place of the frame (V), `None` for the frame.
    pub debug_view: Option<String>,
    /// Shadows: `Some(on)` where the frame was made with its shadow passes (the switch flips
    /// `ecs::ShadowSettings::enabled`, read every frame); `None` where it was made without
    /// them (adding passes rebuilds the frame's graph: chosen at start).
    pub shadows: Option<bool>,
    /// The users' post-processes (`--post`): `Some(on)` where the frame has some (each skips
    /// its work while off; the graph stays), `None` without.
    pub post: Option<bool>,
}

/// What the user asked for in the overlay's switches this frame; the window applies it as
/// it would the key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requests {
    /// Flip culling on or off (what F1 does).
    pub toggle_culling: bool,
    /// Pin or release the culling view (what F2 does).
    pub toggle_pin: bool,
    /// Show the next debug view (what V does).
    pub next_debug_view: bool,
    /// "Freeze and explain" was switched (what F4 does): the overlay applies it itself
    /// ([`crate::Overlay::explain_frozen`] says the new state); the window pins or releases
    /// the culling view to match.
    pub toggle_freeze_explain: bool,
    /// Turn shadows on or off.
    pub toggle_shadows: bool,
    /// Turn the post-processes on or off.
    pub toggle_post: bool,
}

/// Height of the frame-time graph, points.
const GRAPH_HEIGHT: f32 = 80.0;
/// Width of every panel, points.
const PANEL_WIDTH: f32 = 260.0;
/// Space around the panels, points.
const PANEL_MARGIN: f32 = 8.0;
/// Colours of the graph's series, in turn.
const SERIES_COLOURS: [Color32; 6] = [
    Color32::WHITE,
    Color32::from_rgb(120, 200, 255),
    Color32::from_rgb(255, 200, 90),
    Color32::from_rgb(150, 255, 150),
    Color32::from_rgb(255, 130, 200),
    Color32::from_rgb(255, 90, 90),
];

/// Colour of the selection's box drawn over the frame.
pub const OUTLINE_COLOUR: Color32 = Color32::from_rgb(255, 220, 0);
/// Width of the selection's box's lines, points.
const OUTLINE_WIDTH: f32 = 2.0;

/// Makes the overlay's style: opaque-looking panels with no shadow.
pub fn style(context: &Context) {
    context.all_styles_mut(|style| {
        style.visuals.window_shadow = egui::epaint::Shadow::NONE;
        style.visuals.popup_shadow = egui::epaint::Shadow::NONE;
    });
}

/// Builds every panel; returns their rectangles (points) and what was asked.
pub fn build(
    context: &Context,
    snapshot: &Snapshot,
    history: &FrameHistory,
    switches: &Switches,
    rects: &mut Vec<Rect>,
) -> Requests {
    rects.clear();
    let mut requests = Requests::default();
    // Two columns of panels, each placed under the one above it as drawn this frame.
    let mut tops = [PANEL_MARGIN; 2];
    let mut panel = |column: usize, title: &str, body: &mut dyn FnMut(&mut Ui)| {
        let left = PANEL_MARGIN + column as f32 * (PANEL_WIDTH + 3.0 * PANEL_MARGIN);
        let shown = egui::Window::new(title)
            .current_pos(Pos2::new(left, tops[column]))
            .default_width(PANEL_WIDTH)
            .movable(false)
            .resizable(false)
            .collapsible(true)
            .show(context, |ui| body(ui));
        if let Some(shown) = shown {
            rects.push(shown.response.rect);
            tops[column] = shown.response.rect.bottom() + PANEL_MARGIN;
        }
    };
    panel(0, "frame", &mut |ui| frame_panel(ui, snapshot, history));
    panel(0, "culling", &mut |ui| culling_panel(ui, snapshot));
    panel(0, "memory and jobs", &mut |ui| memory_panel(ui, snapshot));
    panel(1, "passes (GPU ms)", &mut |ui| passes_panel(ui, snapshot));
    let held_frame = snapshot.held.as_ref().map(|held| held.frame);
    panel(1, "switches", &mut |ui| switches_panel(ui, switches, held_frame, &mut requests));
    if let Some(selection) = &snapshot.selection {
        panel(1, "selected", &mut |ui| selection_panel(ui, selection));
    }
    outline(context, snapshot);
    requests
}

/// Draws the selection's box (already projected, in pixels) on the layer under the panels.
fn outline(context: &Context, snapshot: &Snapshot) {
    if snapshot.outline.is_empty() {
        return;
    }
    let painter = context.layer_painter(egui::LayerId::background());
    let scale = 1.0 / context.pixels_per_point();
    let stroke = egui::Stroke::new(OUTLINE_WIDTH, OUTLINE_COLOUR);
    for [a, b] in &snapshot.outline {
        painter.line_segment([Pos2::new(a.x, a.y) * scale, Pos2::new(b.x, b.y) * scale], stroke);
    }
}

fn frame_panel(ui: &mut Ui, snapshot: &Snapshot, history: &FrameHistory) {
    ui.label(format!(
        "cpu {:.2} ms   gpu {:.2} ms   frame {}   {}x{}",
        snapshot.cpu_ms, snapshot.gpu_ms, snapshot.frames, snapshot.extent.0, snapshot.extent.1
    ));
    let (response, painter) = ui.allocate_painter(Vec2::new(PANEL_WIDTH, GRAPH_HEIGHT), egui::Sense::hover());
    let area = response.rect;
    painter.rect_filled(area, 0.0, Color32::from_black_alpha(160));
    let top = history.series().iter().map(|series| series.max()).fold(1.0, f32::max);
    painter.add(graph_mesh(history, area, top));
    ui.horizontal_wrapped(|ui| {
        for (index, series) in history.series().iter().enumerate() {
            let colour = SERIES_COLOURS[index % SERIES_COLOURS.len()];
            ui.colored_label(colour, format!("{} {:.2}", series.name, history.newest(index)));
        }
    });
    ui.label(format!("graph top: {top:.2} ms"));
}

/// Every series of the graph as one mesh, a one-pixel ribbon a series: two vertices a sample
/// (offset across the line's direction there), two triangles a segment. What a `Shape::line`
/// a series draws, without the tessellator's anti-aliased path of [`crate::HISTORY_FRAMES`]
/// points a series (which cost most of the overlay's frame), and with half the vertices of a
/// quad a segment (the tessellator copies every one).
fn graph_mesh(history: &FrameHistory, area: Rect, top: f32) -> egui::Shape {
    const HALF_WIDTH: f32 = 0.5;
    let step = area.width() / (crate::HISTORY_FRAMES - 1) as f32;
    let series = history.series().len();
    let mut mesh = egui::Mesh::default();
    mesh.reserve_vertices(series * crate::HISTORY_FRAMES * 2);
    mesh.reserve_triangles(series * (crate::HISTORY_FRAMES - 1) * 2);
    let point =
        |at: usize, ms: f32| Pos2::new(area.left() + at as f32 * step, area.bottom() - area.height() * (ms / top));
    for (index, series) in history.series().iter().enumerate() {
        let colour = SERIES_COLOURS[index % SERIES_COLOURS.len()];
        let mut samples = series.oldest_first(history.next()).enumerate().map(|(at, ms)| point(at, ms)).peekable();
        let Some(mut before) = samples.peek().copied() else { continue };
        let first = mesh.vertices.len() as u32;
        while let Some(at) = samples.next() {
            let after = samples.peek().copied().unwrap_or(at);
            // Across the direction from the sample before to the one after (the end samples:
            // their one segment's); a square root, not `length`'s `hypot`.
            let along = after - before;
            let length = (along.x * along.x + along.y * along.y).sqrt().max(f32::EPSILON);
            let across = Vec2::new(-along.y, along.x) * (HALF_WIDTH / length);
            mesh.colored_vertex(at - across, colour);
            mesh.colored_vertex(at + across, colour);
            before = at;
        }
        let last = mesh.vertices.len() as u32;
        for left in (first..last.saturating_sub(2)).step_by(2) {
            mesh.add_triangle(left, left + 1, left + 3);
            mesh.add_triangle(left, left + 3, left + 2);
        }
    }
    egui::Shape::mesh(mesh)
}

fn culling_panel(ui: &mut Ui, snapshot: &Snapshot) {
    let main = &snapshot.main;
    let backend = if snapshot.gpu_culled { "GPU" } else { "CPU" };
    egui::Grid::new("culling counters").num_columns(2).show(ui, |ui| {
        let mut row = |name: &str, value: u64| {
            ui.label(name);
            ui.label(value.to_string());
            ui.end_row();
        };
        row("objects", main.objects);
        row("frustum", main.frustum);
        row("too far", main.too_far);
        row("too small", main.too_small);
        row("occluded", main.occluded);
        row("visible", main.visible);
        row("early draws", main.early_draws);
        row("late draws", main.late_draws);
        row("triangles", main.triangles);
    });
    ui.label(format!("main view culled on the {backend}"));
    if let Some(held) = &snapshot.held {
        ui.label(format!("held from frame {} (freeze and explain)", held.frame));
    }
    for (side, levels) in [("GPU", main.gpu_lod_levels), ("CPU", main.cpu_lod_levels)] {
        if let Some(levels) = levels {
            ui.label(format!("{side} levels of detail drawn: {}", LevelCounts(&levels)));
        }
    }
    for (index, view) in snapshot.shadows.iter().enumerate() {
        ui.label(format!(
            "shadow {index}: {} casters, {} draws ({} late), {} tris{}",
            view.casters,
            view.draws,
            view.late,
            view.triangles,
            view.gpu_ms.map_or(String::new(), |ms| format!(", {ms:.3} ms"))
        ));
    }
}

/// A level-of-detail histogram as `0: n, 1: n, 2: n, 3+: n` (the last level counts the coarser).
struct LevelCounts<'a>(&'a [u32]);

impl std::fmt::Display for LevelCounts<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let last = self.0.len().saturating_sub(1);
        for (level, count) in self.0.iter().enumerate() {
            let separator = if level == 0 { "" } else { ", " };
            let plus = if level == last { "+" } else { "" };
            write!(formatter, "{separator}{level}{plus}: {count}")?;
        }
        Ok(())
    }
}

fn passes_panel(ui: &mut Ui, snapshot: &Snapshot) {
    egui::Grid::new("pass times").num_columns(3).show(ui, |ui| {
        for (name, gpu_ms, cpu_ms) in &snapshot.passes {
            ui.label(name.as_str());
            ui.label(gpu_ms.map_or("-".to_owned(), |ms| format!("{ms:.3}")));
            ui.label(format!("cpu {cpu_ms:.3}"));
            ui.end_row();
        }
    });
}

fn memory_panel(ui: &mut Ui, snapshot: &Snapshot) {
    const MIB: f64 = 1024.0 * 1024.0;
    let memory = &snapshot.memory;
    ui.label(format!("resident {:.1} MiB", memory.resident as f64 / MIB));
    ui.label(format!(
        "GPU pools {:.1} of {:.1} MiB in {} blocks",
        memory.gpu_allocated as f64 / MIB,
        memory.gpu_reserved as f64 / MIB,
        memory.gpu_blocks
    ));
    ui.label(format!("job threads {}, inline system batches {}", snapshot.threads, snapshot.inline_batches));
    let jobs = &snapshot.jobs;
    ui.label(format!(
        "jobs {}, stolen {}, sleeps {}, asleep {:.2} ms",
        jobs.jobs,
        jobs.steals,
        jobs.sleeps,
        jobs.asleep().as_secs_f64() * 1e3
    ));
    if let Some(error) = &snapshot.error {
        ui.colored_label(Color32::RED, format!("render error: {error}"));
    }
}

fn switches_panel(ui: &mut Ui, switches: &Switches, held_frame: Option<u64>, requests: &mut Requests) {
    let mut culling = !switches.culling_off;
    if ui.checkbox(&mut culling, "culling (F1)").changed() {
        requests.toggle_culling = true;
    }
    let mut pinned = switches.pinned;
    if ui.checkbox(&mut pinned, "pinned culling view (F2)").changed() {
        requests.toggle_pin = true;
    }
    let mut held = held_frame.is_some();
    if ui.checkbox(&mut held, "freeze and explain (F4)").changed() {
        requests.toggle_freeze_explain = true;
    }
    if let Some(frame) = held_frame {
        ui.label(format!("culling figures and selection held from frame {frame}"));
    }
    let view = switches.debug_view.as_deref().unwrap_or("the frame");
    if ui.button(format!("debug view: {view} (V)")).clicked() {
        requests.next_debug_view = true;
    }
    for (name, switch, request) in [
        ("shadows", switches.shadows, &mut requests.toggle_shadows),
        ("post-processes (--post)", switches.post, &mut requests.toggle_post),
    ] {
        match switch {
            Some(mut on) => *request = ui.checkbox(&mut on, name).changed(),
            None => {
                ui.label(format!("{name}: not in this frame (chosen at start)"));
            }
        }
    }
}

fn selection_panel(ui: &mut Ui, selection: &Selection) {
    let explanation = &selection.explanation;
    ui.label(format!("entity {:?}, slot {:?}", selection.entity, explanation.slot));
    if let Some([x, y, z]) = selection.position {
        ui.label(format!("at ({x:.2}, {y:.2}, {z:.2})"));
    }
    if let Some((mesh, material)) = selection.mesh {
        ui.label(format!("mesh {mesh}, material {material}"));
    }
    if let Some(lod) = explanation.lod {
        ui.label(format!(
            "level {} of {} (distance {:.1} within {:.1})",
            lod.level, lod.levels, lod.scaled_distance, lod.range
        ));
    } else if let Some(levels) = selection.levels {
        ui.label(format!("{levels} levels of detail"));
    }
    ui.label(format!("state: {:?}", explanation.state));
    ui.label(format!("why: {:?}", explanation.reason));
    if let Some(detail) = explanation.occlusion {
        match detail.read {
            Some(read) => ui.label(format!(
                "CPU occlusion: {:?} at mip {} of the {}x{} pyramid ({}x{} texels): occluder depth {:.6} against nearest {:.6}",
                detail.verdict,
                read.level,
                detail.buffer[0],
                detail.buffer[1],
                read.texels[0],
                read.texels[1],
                read.occluder_depth,
                read.nearest_depth
            )),
            None => ui.label(format!("CPU occlusion: {:?} without a pyramid read", detail.verdict)),
        };
    }
    if let Some(gpu) = selection.gpu {
        ui.label(format!(
            "GPU bits of frame {} ({} late): {}",
            gpu.frame,
            gpu.frames_late,
            match (gpu.in_view, gpu.visible) {
                (false, _) => "not in that frame's view",
                (true, true) => "visible",
                (true, false) => "occluded",
            }
        ));
    }
    for (view, other) in &selection.other_views {
        ui.label(format!("view {}: {:?}", view.0, other.reason));
    }
    ui.label(if explanation.caster { "casts shadows" } else { "casts no shadow" });
    for shadow in &selection.shadows {
        ui.label(format!("shadow {} ({}): {}", shadow.view, ShadowViewName(shadow.kind), CastingText(shadow.casting)));
    }
}

/// A shadow view's kind as the panel names it.
struct ShadowViewName(LightViewKind);

impl std::fmt::Display for ShadowViewName {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            LightViewKind::Cascade(index) => write!(formatter, "sun cascade {index}"),
            LightViewKind::Spot => write!(formatter, "spot"),
            LightViewKind::CubeFace(face) => write!(formatter, "point face {face}"),
        }
    }
}

/// Whether the selection draws into a shadow view, as the panel says it.
struct CastingText(Casting);

impl std::fmt::Display for CastingText {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self.0 {
            Casting::Casts => "casts",
            Casting::Culled => "culled by the view",
            Casting::OnDevice { in_volume: true } => "in the view's volume (the GPU decides)",
            Casting::OnDevice { in_volume: false } => "outside the view's volume (GPU culled)",
            Casting::NotCaster => "not a caster",
            Casting::NotDrawable => "not drawable",
        })
    }
}

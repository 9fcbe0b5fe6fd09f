//! What the panels show, read from an [`App`] between frames: the Visibility stage's counters,
//! the Render stage's report (GPU culling, shadow views, passes), memory and the job system.
//! Reading it costs a few copies and one table read per visible object (the CPU's level-of-detail
//! histogram, `levels.rs`); the memory pools are asked, and the level table rebuilt from the
//! world, every [`MEMORY_PERIOD`] reads (the allocator's report lists every allocation).

use std::sync::Arc;

use culling::{Explanation, Visibility};
use ecs::{Lod, Mesh, RenderSettings, WorldTransform};
use glam::Mat4;
use render_graph::GpuDevice;
use renderer::RenderReport;
use runtime::hecs::Entity;
use runtime::App;

use crate::levels::LevelTable;
use crate::outline::{box_segments, Segment};

/// Builds of the panels between two reads of the memory figures (about 30 frames: see
/// [`crate::REBUILD_PERIOD`]).
pub const MEMORY_PERIOD: u64 = 8;

/// The main view's culling counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewCounters {
    /// Mesh entities.
    pub objects: u64,
    /// Rejected by the frustum.
    pub frustum: u64,
    /// Rejected by the maximum distance.
    pub too_far: u64,
    /// Rejected for their screen size.
    pub too_small: u64,
    /// Hidden by occluders (the CPU's occlusion, or the GPU's late phase).
    pub occluded: u64,
    /// Objects kept.
    pub visible: u64,
    /// Objects the early phase drew (the GPU backend; the host's list otherwise).
    pub early_draws: u64,
    /// Objects the late phase added (GPU backend).
    pub late_draws: u64,
    /// Triangles drawn (GPU backend).
    pub triangles: u64,
    /// Objects drawn at each level of detail the GPU cull chose, the last entry counting that
    /// level and every coarser one (GPU backend: `renderer::GpuCullStats::lod_levels`).
    pub gpu_lod_levels: Option<[u32; renderer::LOD_STAT_LEVELS]>,
    /// Objects the Visibility answer draws at each level of detail, counted as
    /// [`ViewCounters::gpu_lod_levels`]; `None` when no entity has levels.
    pub cpu_lod_levels: Option<[u32; renderer::LOD_STAT_LEVELS]>,
}

/// One shadow view's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShadowCounters {
    /// Casters tested.
    pub casters: u64,
    /// Caster draws.
    pub draws: u64,
    /// Of those, drawn by the late phase (GPU occlusion of the cascades).
    pub late: u64,
    /// Triangles drawn.
    pub triangles: u64,
    /// GPU milliseconds of the view's draws, when known.
    pub gpu_ms: Option<f64>,
}

/// Memory figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemoryFigures {
    /// Resident set of the process, bytes (0 where the system does not say).
    pub resident: u64,
    /// Bytes allocated from the GPU memory pools.
    pub gpu_allocated: u64,
    /// Bytes the GPU memory pools hold (allocated or free).
    pub gpu_reserved: u64,
    /// Memory blocks of the pools.
    pub gpu_blocks: u64,
}

/// The selected entity as the overlay shows it: its components, slot, the stage's answer
/// and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// The entity.
    pub entity: Entity,
    /// Its world position, when it has a world transform.
    pub position: Option<[f32; 3]>,
    /// Its mesh and material handles, when it has a mesh.
    pub mesh: Option<(u32, u32)>,
    /// Its levels of detail, when it has some.
    pub levels: Option<usize>,
    /// Its world box as the stage culled it (by its slot), when it has a slot.
    pub world_box: Option<ecs::Aabb>,
    /// [`Visibility::explain`] for it: slot, `state_of`, the reason and the level chosen.
    pub explanation: Explanation,
    /// On the GPU path, what the GPU's bits read back say of its slot, and from which frame
    /// (`culling::GpuFeedback::verdict`).
    pub gpu: Option<culling::GpuVerdict>,
    /// For every shadow view of the frame, whether the entity draws there
    /// (`culling::ShadowViews::explain`); empty in a frame without one.
    pub shadows: Vec<culling::shadow::ShadowCasting>,
    /// The frame's other views (split-screen halves, image targets), each with why the entity
    /// is drawn or not there (`culling::ViewVisibility::explain`).
    pub other_views: Vec<(ecs::ViewId, Explanation)>,
}

impl Selection {
    /// Reads `entity`'s components and explanation from `app`; `None` without a Visibility
    /// stage.
    pub fn read(app: &App, entity: Entity) -> Option<Selection> {
        Selection::read_into(app, entity, Vec::new())
    }

    /// [`Selection::read`], filling `other_views` (emptied first) so a selection read every
    /// frame reuses the list of the frame before.
    pub fn read_into(app: &App, entity: Entity, mut other_views: Vec<(ecs::ViewId, Explanation)>) -> Option<Selection> {
        let visibility = app.resources().get::<Visibility>()?;
        let settings = app.resources().get::<RenderSettings>()?;
        let world = app.world();
        let explanation = visibility.explain(world, &settings, entity);
        let position = world.get::<&WorldTransform>(entity).ok().map(|world| world.0.w_axis.truncate().to_array());
        let mesh = world.get::<&Mesh>(entity).ok().map(|mesh| (mesh.mesh.0, mesh.material.0));
        let levels = world.get::<&Lod>(entity).ok().map(|lod| lod.levels.len());
        let bounds = &visibility.objects().bounds;
        let world_box = explanation.slot.and_then(|slot| bounds.get(slot as usize)).copied();
        let now = app.last_frame_index().unwrap_or(0);
        let gpu =
            app.resources().get::<culling::GpuFeedback>().and_then(|feedback| feedback.verdict(explanation.slot?, now));
        let shadows = app
            .resources()
            .get::<culling::ShadowViews>()
            .map(|shadows| shadows.explain(&visibility, &explanation))
            .unwrap_or_default();
        other_views.clear();
        other_views.extend(
            visibility
                .other_views()
                .filter_map(|id| Some((id, visibility.for_view(id)?.explain(world, &settings, entity)))),
        );
        Some(Selection { entity, position, mesh, levels, world_box, explanation, gpu, shadows, other_views })
    }
}

/// What "freeze and explain" keeps: the selection's explanation and the culling counters of
/// the frame it was switched on, shown in place of the live ones until it is switched off.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeldFrame {
    /// The frame the figures are of (`App::last_frame_index` when it was held).
    pub frame: u64,
    /// The selected entity then, with its explanation.
    pub selection: Option<Selection>,
    /// The main view's counters then.
    pub main: ViewCounters,
    /// Each shadow view's counters then.
    pub shadows: Vec<ShadowCounters>,
}

/// Everything the panels show of one frame.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The CPU frame, milliseconds.
    pub cpu_ms: f32,
    /// GPU milliseconds of the newest frame whose times are known (the sum of its passes).
    pub gpu_ms: f32,
    /// Frames drawn so far.
    pub frames: u64,
    /// The image's size.
    pub extent: (u32, u32),
    /// The main view.
    pub main: ViewCounters,
    /// Whether the GPU culled the main view.
    pub gpu_culled: bool,
    /// Each shadow view.
    pub shadows: Vec<ShadowCounters>,
    /// Each pass of the frame with its GPU and CPU-recording milliseconds.
    pub passes: Vec<(String, Option<f64>, f64)>,
    /// Memory.
    pub memory: MemoryFigures,
    /// Threads of the job system.
    pub threads: usize,
    /// System batches the scheduler ran inline in the last frame.
    pub inline_batches: usize,
    /// What the job system's threads did since the previous snapshot (a frame, when the
    /// overlay is updated every frame): jobs, steals, sleeps, time asleep.
    pub jobs: runtime::jobs::JobCounters,
    /// The job system's totals at the previous snapshot.
    jobs_total: runtime::jobs::JobCounters,
    /// Mesh ids to levels of detail, for [`ViewCounters::cpu_lod_levels`].
    levels: LevelTable,
    /// The Render stage's error of the last frame.
    pub error: Option<String>,
    /// The selected entity, when one is.
    pub selection: Option<Selection>,
    /// The view-projection the frame was drawn with, when it is not the main view's (the
    /// window's drawing camera while the culling view is pinned); the selection's box is
    /// projected with it.
    pub drawn_view: Option<Mat4>,
    /// Held by "freeze and explain" ([`Snapshot::hold`]): the selection and the culling
    /// counters read then, which [`Snapshot::read`] shows in place of the live ones.
    pub held: Option<HeldFrame>,
    /// The selection's world box as drawn over the frame: its edges in pixels of the image,
    /// cut at the near plane ([`crate::box_segments`]); empty without a selection or a view.
    pub outline: Vec<Segment>,
}

impl Snapshot {
    /// Reads the figures of the frame `app` ran last; `device` gives the memory pools, asked
    /// when `refresh_memory` (the level table is rebuilt then too); `selected` is explained.
    pub fn read(&mut self, app: &App, device: Option<&Arc<GpuDevice>>, refresh_memory: bool, selected: Option<Entity>) {
        let reused = self.selection.take().map(|selection| selection.other_views).unwrap_or_default();
        self.selection = selected.and_then(|entity| Selection::read_into(app, entity, reused));
        self.cpu_ms = (app.frame_stats().last_seconds * 1e3) as f32;
        self.threads = app.job_system().threads();
        self.inline_batches = app.schedule().inline_batches();
        let jobs_total = app.job_system().counters();
        self.jobs = jobs_total.since(&self.jobs_total);
        self.jobs_total = jobs_total;
        if let Some(visibility) = app.resources().get::<culling::Visibility>() {
            let stats = visibility.stats();
            self.main.objects = stats.objects as u64;
            self.main.frustum = stats.frustum_rejected as u64;
            self.main.too_far = stats.distance_rejected as u64;
            self.main.too_small = stats.size_rejected as u64;
            self.main.occluded = stats.occluded as u64;
            self.main.visible = stats.visible as u64;
            if refresh_memory {
                self.levels.refresh(app.world());
            }
            self.main.cpu_lod_levels = self.levels.histogram(&visibility);
        }
        if let Some(report) = app.resources().get::<RenderReport>() {
            self.read_report(&report);
        }
        if let Some(held) = &self.held {
            self.selection.clone_from(&held.selection);
            self.main = held.main;
            self.shadows.clone_from(&held.shadows);
        }
        self.outline_selection(app);
        if refresh_memory {
            self.memory.resident = resident_bytes();
            if let Some(device) = device {
                let report = device.allocator().generate_report();
                self.memory.gpu_allocated = report.total_allocated_bytes;
                self.memory.gpu_reserved = report.total_capacity_bytes;
                self.memory.gpu_blocks = report.blocks.len() as u64;
            }
        }
    }

    /// Keeps the selection and the culling counters of the last read (see [`HeldFrame`]).
    pub fn hold(&mut self, app: &App) {
        let frame = app.last_frame_index().unwrap_or(0);
        self.held = Some(HeldFrame {
            frame,
            selection: self.selection.clone(),
            main: self.main,
            shadows: self.shadows.clone(),
        });
    }

    /// Returns to live figures from the next read.
    pub fn release(&mut self) {
        self.held = None;
    }

    /// Projects the selection's box by the drawn view (the main view's unless
    /// [`Snapshot::drawn_view`] says otherwise) onto the image.
    fn outline_selection(&mut self, app: &App) {
        self.outline.clear();
        let Some(world_box) = self.selection.as_ref().and_then(|selection| selection.world_box) else { return };
        let main = app
            .resources()
            .get::<Visibility>()
            .and_then(|visibility| visibility.view().map(|view| view.view_projection));
        let Some(view_projection) = self.drawn_view.or(main) else { return };
        let (width, height) = self.extent;
        if width > 0 && height > 0 {
            box_segments(view_projection, &world_box, (width as f32, height as f32), &mut self.outline);
        }
    }

    /// Notes a frame whose figures are not read (the panels were not rebuilt), so the next
    /// read's job counts are that frame's alone.
    pub fn skip_frame(&mut self, app: &App) {
        self.jobs_total = app.job_system().counters();
        // The graph's GPU series is recorded every frame.
        if let Some(report) = app.resources().get::<RenderReport>() {
            self.gpu_ms = report.passes.iter().filter_map(|pass| pass.gpu_ms).sum::<f64>() as f32;
        }
    }

    fn read_report(&mut self, report: &RenderReport) {
        self.frames = report.frames;
        self.extent = (report.extent.width, report.extent.height);
        self.error.clone_from(&report.error);
        self.gpu_culled = report.gpu.is_some();
        match &report.gpu {
            Some(gpu) => {
                self.main.frustum = u64::from(gpu.frustum_rejected);
                self.main.occluded = u64::from(gpu.occlusion_rejected);
                self.main.early_draws = u64::from(gpu.early_drawn);
                self.main.late_draws = u64::from(gpu.late_drawn);
                self.main.triangles = u64::from(gpu.triangles);
                self.main.gpu_lod_levels = Some(gpu.lod_levels);
            }
            None => {
                self.main.early_draws = u64::from(report.host_draw_commands);
                self.main.late_draws = 0;
                self.main.triangles = 0;
                self.main.gpu_lod_levels = None;
            }
        }
        self.shadows.clear();
        self.shadows.extend(report.shadows.views.iter().map(|view| ShadowCounters {
            casters: u64::from(view.casters),
            draws: u64::from(view.count),
            late: u64::from(view.late),
            triangles: view.triangles,
            gpu_ms: view.gpu_ms,
        }));
        let same = self.passes.len() == report.passes.len()
            && self.passes.iter().zip(&report.passes).all(|(known, pass)| known.0 == pass.name);
        if same {
            for (known, pass) in self.passes.iter_mut().zip(&report.passes) {
                known.1 = pass.gpu_ms;
                known.2 = pass.cpu_record_ms;
            }
        } else {
            self.passes.clear();
            self.passes.extend(report.passes.iter().map(|pass| (pass.name.clone(), pass.gpu_ms, pass.cpu_record_ms)));
        }
        self.gpu_ms = report.passes.iter().filter_map(|pass| pass.gpu_ms).sum::<f64>() as f32;
    }
}

/// The process's resident set in bytes, from `/proc/self/statm` (0 elsewhere).
fn resident_bytes() -> u64 {
    const PAGE_BYTES: u64 = 4096;
    let Ok(text) = std::fs::read_to_string("/proc/self/statm") else { return 0 };
    text.split_whitespace().nth(1).and_then(|pages| pages.parse::<u64>().ok()).map_or(0, |pages| pages * PAGE_BYTES)
}

//! `city --stream`: the districts' files ([`super::districts`]) loaded through the
//! [`AssetServer`] as a camera nears them and removed once every camera is far, while frames
//! run. Every camera counts (the split-screen's second view, the monitor's rooftop camera): a
//! district is as near as its nearest camera, so each view sees the districts around it.
//!
//! Between two frames, [`DistrictStreamer::update`] asks the server for the districts within
//! the radius that are not loaded, nearest first (a few at a time: the loader threads parse
//! and process them off the frame, and derive each mesh's occluder there), hands each ready
//! scene's meshes to the renderer's
//! [`RenderMeshes`] (and to the check's reference renderers, which number them alike) and
//! spawns its nodes; a district past the radius and a margin has its entities despawned and
//! its meshes removed. [`StreamReport`] adds up what happened, frame by frame. Headless the
//! city's loop calls the update between frames; in the window a
//! [`FrameHook`](crate::window::run::FrameHook) does, before each of the window's frames.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use assets::{spawn_model, AssetServer, LoadState, SceneHandle, ServerOptions, SpawnedModel};
use culling::{ViewVisibility, Visibility};
use ecs::{Camera, ShadowCaster, WorldTransform};
use glam::Vec3;
use hecs::World;
use renderer::{RenderMeshes, RenderReport};

use super::districts::{DistrictFiles, DistrictGrid};
use crate::mesh_render::{MeshRenderer, RenderError};

/// Loads asked for at once: enough to keep the loader threads busy, few enough that the
/// nearest districts are not queued behind far ones.
const LOADS_IN_FLIGHT: usize = 4;

/// A district loaded is removed once the camera is this much farther than the radius: a
/// camera on the border does not load and remove it frame after frame.
const REMOVE_MARGIN: f32 = 1.25;

/// Where one district stands.
enum DistrictState {
    /// Not loaded.
    Idle,
    /// Asked of the server.
    Loading(SceneHandle),
    /// In the world: its entities and the first level id of each of its meshes.
    Spawned { handle: SceneHandle, model: SpawnedModel, meshes: Vec<u32> },
}

/// What streaming did over a run (printed by the city's summary).
#[derive(Clone, Debug, Default)]
pub struct StreamReport {
    /// Districts spawned.
    pub loaded: usize,
    /// Districts removed.
    pub removed: usize,
    /// Entities spawned from the districts' files.
    pub spawned_objects: usize,
    /// Highest mesh bytes resident on the GPU in any frame.
    pub max_resident: u64,
    /// Mesh bytes resident after the last frame.
    pub resident_at_end: u64,
    /// The budget in force (last frame's).
    pub budget: Option<u64>,
    /// Frames whose resident bytes were above the budget.
    pub over_budget_frames: usize,
    /// Levels of detail loaded, all frames.
    pub levels_loaded: u64,
    /// Levels of detail evicted, all frames.
    pub levels_evicted: u64,
    /// Frame-levels a view needed that the budget kept off the GPU (their objects drew a
    /// coarser level), all frames.
    pub levels_deferred: u64,
    /// Frames on which a visible object drew a stand-in (a coarser level or its placeholder
    /// box) because its mesh was not resident.
    pub stand_in_frames: usize,
    /// Milliseconds spent between frames adding ready districts and removing far ones (the
    /// check's reference renderer taking the same meshes left out).
    pub update_ms: Vec<f64>,
}

impl StreamReport {
    /// Adds one frame's residency report and whether a visible object drew a stand-in.
    pub fn record_frame(&mut self, report: &RenderReport, visible_stand_in: bool) {
        let residency = &report.residency;
        self.max_resident = self.max_resident.max(residency.resident_bytes);
        self.resident_at_end = residency.resident_bytes;
        self.budget = residency.budget;
        if residency.budget.is_some_and(|budget| residency.resident_bytes > budget) {
            self.over_budget_frames += 1;
        }
        self.levels_loaded += u64::from(residency.levels_loaded);
        self.levels_evicted += u64::from(residency.levels_evicted);
        self.levels_deferred += u64::from(residency.levels_deferred);
        self.stand_in_frames += usize::from(visible_stand_in);
    }

    /// The summary's `stream:` lines.
    pub fn lines(&self) -> String {
        let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
        let budget = self.budget.map_or_else(|| String::from("none"), |budget| format!("{:.2} MiB", mib(budget)));
        let mut updates = self.update_ms.clone();
        updates.sort_by(f64::total_cmp);
        let (median, worst) =
            (updates.get(updates.len() / 2).copied().unwrap_or(0.0), updates.last().copied().unwrap_or(0.0));
        format!(
            "stream: districts loaded {} removed {} ({} objects spawned); resident mesh bytes max {} ({:.2} MiB) at end {} ({:.2} MiB), budget {budget}, frames over budget {}\n\
             stream: levels loaded {} evicted {} deferred by the budget {}; frames on which a visible object drew a stand-in {}; between-frame streaming work median {median:.3} ms worst {worst:.3} ms\n",
            self.loaded,
            self.removed,
            self.spawned_objects,
            self.max_resident,
            mib(self.max_resident),
            self.resident_at_end,
            mib(self.resident_at_end),
            self.over_budget_frames,
            self.levels_loaded,
            self.levels_evicted,
            self.levels_deferred,
            self.stand_in_frames,
        )
    }
}

/// How long waiting for one district's load may take (`--preload`, `--stream-wait`) before
/// it counts as stuck.
const LOAD_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Loads and removes the city's districts as the camera flies (see the module docs).
pub struct DistrictStreamer {
    server: AssetServer,
    grid: DistrictGrid,
    paths: Vec<PathBuf>,
    states: Vec<DistrictState>,
    /// Districts whose square is within this many metres of a camera are loaded.
    radius: f32,
    /// Scratch: the districts to ask for this frame, with their distances.
    wanted: Vec<(f32, usize)>,
    /// Scratch: every camera's eye this frame.
    eyes: Vec<Vec3>,
    /// Seconds the last update spent giving the check's renderer its meshes.
    checker_seconds: f64,
    /// Each update first waits for the loads asked for before it (`--stream-wait`).
    wait_for_loads: bool,
    /// What happened so far.
    pub report: StreamReport,
}

impl DistrictStreamer {
    /// A streamer of `files` within `radius` metres of the camera. One loader thread reads
    /// and parses the files, and one job thread of its own runs their meshopt processing:
    /// the loads go on beside the frames without taking the frame's job threads.
    pub fn new(files: &DistrictFiles, radius: f32) -> DistrictStreamer {
        let jobs = Some(Arc::new(runtime::JobSystem::new(1)));
        let server = AssetServer::new(ServerOptions { loader_threads: 1, jobs, ..ServerOptions::default() });
        DistrictStreamer {
            server,
            grid: files.grid,
            paths: files.paths.clone(),
            states: files.paths.iter().map(|_| DistrictState::Idle).collect(),
            radius,
            wanted: Vec::new(),
            eyes: Vec::new(),
            checker_seconds: 0.0,
            wait_for_loads: false,
            report: StreamReport::default(),
        }
    }

    /// With `wait` (`city --stream-wait`), each [`DistrictStreamer::update`] first waits for
    /// the districts asked for by the update before it: the loader thread still does the
    /// work, but a district asked for between frames N-1 and N is in the world from frame N+1
    /// on any machine, so a flight is the same run after run (tests, captures). The wait
    /// counts in the between-frame streaming time.
    pub fn waiting_for_loads(mut self, wait: bool) -> DistrictStreamer {
        self.wait_for_loads = wait;
        self
    }

    /// Seconds the last [`DistrictStreamer::update`] spent giving the check's renderers the
    /// meshes it gave the game's: the check's work, not the game's.
    pub fn checker_seconds(&self) -> f64 {
        self.checker_seconds
    }

    /// Districts in the world now.
    pub fn spawned(&self) -> usize {
        self.states.iter().filter(|state| matches!(state, DistrictState::Spawned { .. })).count()
    }

    /// One step between frames: removes the districts far from every camera, spawns the ready
    /// ones (their meshes to `meshes` and to each of `checkers`, the references of the checked
    /// frames' views) and asks for those near a camera, nearest first.
    pub fn update(
        &mut self,
        world: &mut World,
        meshes: &RenderMeshes,
        checkers: &mut [&mut MeshRenderer],
    ) -> Result<(), RenderError> {
        self.checker_seconds = 0.0;
        camera_positions(world, &mut self.eyes);
        if self.eyes.is_empty() {
            return Ok(());
        }
        if self.wait_for_loads {
            for state in &self.states {
                if let DistrictState::Loading(handle) = state {
                    self.server.wait(*handle, LOAD_WAIT).map_err(|error| error.to_string())?;
                }
            }
        }
        let far = self.radius * REMOVE_MARGIN;
        for district in 0..self.states.len() {
            let distance = self.distance(district);
            let state = std::mem::replace(&mut self.states[district], DistrictState::Idle);
            self.states[district] = match state {
                DistrictState::Loading(handle) if distance > far => {
                    // Not needed any more: what the loader made is dropped.
                    self.server.remove(handle).map_err(|error| error.to_string())?;
                    DistrictState::Idle
                }
                DistrictState::Spawned { handle, model, meshes: ids } if distance > far => {
                    for &entity in model.nodes.iter().chain([&model.root]) {
                        world.despawn(entity).map_err(|_| "a district's entity vanished")?;
                    }
                    for &mesh in &ids {
                        meshes.remove_mesh(mesh).map_err(|error| format!("district {district}: {error}"))?;
                    }
                    self.server.remove(handle).map_err(|error| error.to_string())?;
                    self.report.removed += 1;
                    DistrictState::Idle
                }
                DistrictState::Loading(handle) => match self.server.state(handle).map_err(|error| error.to_string())? {
                    LoadState::Loading => DistrictState::Loading(handle),
                    LoadState::Failed(error) => return Err(format!("district {district}: {error}").into()),
                    LoadState::Ready => {
                        let (model, ids) = self.spawn(world, handle, meshes, checkers)?;
                        DistrictState::Spawned { handle, model, meshes: ids }
                    }
                },
                other => other,
            };
        }
        let loading = self.states.iter().filter(|state| matches!(state, DistrictState::Loading(_))).count();
        self.wanted.clear();
        for (district, state) in self.states.iter().enumerate() {
            let distance = self.distance(district);
            if matches!(state, DistrictState::Idle) && distance <= self.radius {
                self.wanted.push((distance, district));
            }
        }
        self.wanted.sort_by(|one, other| one.0.total_cmp(&other.0));
        for &(_, district) in self.wanted.iter().take(LOADS_IN_FLIGHT.saturating_sub(loading)) {
            self.states[district] = DistrictState::Loading(self.server.load(&self.paths[district]));
        }
        Ok(())
    }

    /// How far district `district` is from its nearest camera (of `eyes`).
    fn distance(&self, district: usize) -> f32 {
        self.eyes.iter().map(|&eye| self.grid.distance(district, eye)).fold(f32::INFINITY, f32::min)
    }

    /// Loads every district and spawns it before the first frame, waiting for the loader
    /// (`city --stream --preload`: the same meshes and objects as a streamed flight, all in
    /// the world from the start, to measure streaming against); the radius then covers the
    /// whole city, so [`DistrictStreamer::update`] loads and removes nothing.
    pub fn preload(
        &mut self,
        world: &mut World,
        meshes: &RenderMeshes,
        checkers: &mut [&mut MeshRenderer],
    ) -> Result<(), RenderError> {
        self.radius = f32::INFINITY;
        let handles: Vec<SceneHandle> = self.paths.iter().map(|path| self.server.load(path)).collect();
        for (district, handle) in handles.into_iter().enumerate() {
            match self.server.wait(handle, LOAD_WAIT).map_err(|error| error.to_string())? {
                LoadState::Ready => {}
                LoadState::Loading => {
                    return Err(format!("district {district}: still loading after {} s", LOAD_WAIT.as_secs()).into())
                }
                LoadState::Failed(error) => return Err(format!("district {district}: {error}").into()),
            }
            let (model, ids) = self.spawn(world, handle, meshes, checkers)?;
            self.states[district] = DistrictState::Spawned { handle, model, meshes: ids };
        }
        Ok(())
    }

    /// Hands a ready district's meshes to the renderer and the references and spawns its nodes at the origin
    /// (the files hold world positions); returns the model and its meshes' first level ids.
    fn spawn(
        &mut self,
        world: &mut World,
        handle: SceneHandle,
        meshes: &RenderMeshes,
        checkers: &mut [&mut MeshRenderer],
    ) -> Result<(SpawnedModel, Vec<u32>), RenderError> {
        let scene =
            self.server.get(handle).map_err(|error| error.to_string())?.ok_or("a ready district has a scene")?;
        let mut mismatch = None;
        let mut checker_seconds = 0.0;
        // The loader thread derived each mesh's occluder: the frame only copies the meshes.
        let model = scene.add_model_with_occluders(|vertices, levels, occluder| {
            let ids: Range<u32> = meshes.add_mesh_levels_with_occluder(vertices, levels, occluder.cloned())?;
            for checker in checkers.iter_mut() {
                let started = Instant::now();
                // A reference adds the same meshes in the same order, so it gives the same
                // ids; a refusal or another id is reported once the model is made.
                match checker.add_mesh_levels(vertices, levels) {
                    Ok(twin) if twin == ids => {}
                    other => mismatch = Some(format!("the check's renderer numbered a mesh {other:?}, not {ids:?}")),
                }
                checker_seconds += started.elapsed().as_secs_f64();
            }
            Ok(ids)
        })?;
        self.checker_seconds += checker_seconds;
        if let Some(mismatch) = mismatch {
            return Err(mismatch.into());
        }
        let spawned = spawn_model(world, &model, ecs::Transform::IDENTITY);
        for &entity in &spawned.drawables {
            world.insert_one(entity, ShadowCaster).map_err(|_| "a district's entity vanished")?;
        }
        self.report.loaded += 1;
        self.report.spawned_objects += spawned.drawables.len();
        let ids = model.meshes().iter().map(|mesh| mesh.levels.start).collect();
        Ok((spawned, ids))
    }
}

/// Where every camera is, into `eyes`.
fn camera_positions(world: &World, eyes: &mut Vec<Vec3>) {
    eyes.clear();
    let mut query = world.query::<(&Camera, &WorldTransform)>();
    eyes.extend(query.iter().map(|(_, placed)| placed.0.w_axis.truncate()));
}

/// Whether a visible object of the frame drew a stand-in: a mesh in `report`'s
/// [`stand_ins`](RenderReport::stand_ins) named by an object the frame submitted.
pub fn visible_stand_in(report: &RenderReport, visibility: &Visibility, submitted: &[u32]) -> bool {
    if report.stand_ins.is_empty() {
        return false;
    }
    let draws = &visibility.objects().draws;
    submitted.iter().any(|&slot| {
        draws.get(slot as usize).is_some_and(|draw| report.stand_ins.iter().any(|(missing, _)| *missing == draw.mesh.0))
    })
}

/// Whether an object visible in `view` (another view of the frame, drawing its own levels)
/// drew a stand-in: the level the view picked for it is in `report`'s
/// [`stand_ins`](RenderReport::stand_ins).
pub fn view_stand_in(report: &RenderReport, view: &ViewVisibility<'_>) -> bool {
    if report.stand_ins.is_empty() {
        return false;
    }
    (0..view.visible().len()).any(|index| {
        let mesh = view.draw(index);
        mesh.is_some() && report.stand_ins.iter().any(|(missing, _)| *missing == mesh.0)
    })
}

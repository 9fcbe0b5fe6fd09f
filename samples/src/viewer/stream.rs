//! `viewer --stream`: the files load through the [`AssetServer`] on a loader thread while
//! frames run; each model is spawned the frame after it is ready, its meshes handed to the
//! renderer's [`RenderMeshes`] (they draw stand-ins until their bytes are on the GPU).
//!
//! Models stand side by side in the order they arrive (a tenth of the largest model so far
//! between two; `--as-is`: each at its own origin), and the framing camera is moved to see
//! every model arrived so far. [`install`] adds the system that does it, in the window and
//! headless alike; [`Arrivals`] tells the caller what came.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use assets::{spawn_model, AssetServer, GltfScene, LoadState, SceneHandle, ServerOptions};
use ecs::{Aabb, Camera, ShadowCaster, Transform};
use glam::Vec3;
use hecs::Entity;
use renderer::RenderMeshes;
use runtime::{App, Stage, System};

use super::{frame_bounds, scene_bounds, Placement};

/// What has arrived so far, shared between the streaming system and the caller.
#[derive(Default)]
pub struct Arrivals {
    /// The scenes whose meshes went to the renderer, in that order (a renderer given the
    /// same meshes in the same order numbers them alike), with their files.
    pub scenes: Vec<(PathBuf, Arc<GltfScene>)>,
    /// Files that failed to load, with the reason.
    pub failed: Vec<(PathBuf, String)>,
    /// Files still loading.
    pub pending: usize,
    /// Every entity with a mesh spawned so far.
    pub drawables: Vec<Entity>,
    /// The placed models' bounds together.
    pub bounds: Option<Aabb>,
    /// The frame each model was spawned in, by arrival.
    pub spawned_in: Vec<u64>,
}

impl Arrivals {
    /// Whether every file has arrived or failed.
    pub fn done(&self) -> bool {
        self.pending == 0
    }
}

/// The shared [`Arrivals`], locked (a panic elsewhere leaves the data usable).
pub fn lock(arrivals: &Mutex<Arrivals>) -> MutexGuard<'_, Arrivals> {
    arrivals.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the streaming system keeps between frames.
struct Streaming {
    server: AssetServer,
    loading: Vec<(PathBuf, SceneHandle)>,
    placement: Placement,
    /// The x where the next model's bounds may start, and the largest model's side so far.
    cursor: Option<f32>,
    largest: f32,
    camera: Entity,
    aspect: f32,
    shadows: bool,
    arrivals: Arc<Mutex<Arrivals>>,
}

/// Asks the server for `files` and adds a system (first in the Input stage) that spawns each
/// model once ready and frames `camera` on what has arrived; with `shadows` every drawable
/// casts shadows. Needs the renderer's [`RenderMeshes`] (installed before the first frame).
pub fn install(
    app: &mut App,
    files: &[PathBuf],
    placement: Placement,
    camera: Entity,
    aspect: f32,
    shadows: bool,
) -> Arc<Mutex<Arrivals>> {
    let jobs = Some(Arc::new(runtime::JobSystem::new(1)));
    let server = AssetServer::new(ServerOptions { loader_threads: 1, jobs, ..ServerOptions::default() });
    let loading: Vec<(PathBuf, SceneHandle)> = files.iter().map(|path| (path.clone(), server.load(path))).collect();
    let arrivals = Arc::new(Mutex::new(Arrivals { pending: files.len(), ..Arrivals::default() }));
    let mut streaming = Streaming {
        server,
        loading,
        placement,
        cursor: None,
        largest: 0.0,
        camera,
        aspect,
        shadows,
        arrivals: Arc::clone(&arrivals),
    };
    app.add_system(
        Stage::Input,
        System::new_exclusive("viewer stream", move |ctx| {
            let Some(meshes) = ctx.try_resource::<RenderMeshes>() else { return };
            let meshes = meshes.clone();
            streaming.step(ctx.world, &meshes, ctx.time.frame_index);
        }),
    );
    arrivals
}

impl Streaming {
    /// Spawns the models that are ready and reports the failed ones.
    fn step(&mut self, world: &mut hecs::World, meshes: &RenderMeshes, frame: u64) {
        let mut index = 0;
        while index < self.loading.len() {
            let (path, handle) = self.loading[index].clone();
            let state = self.server.state(handle).map_err(|error| error.to_string());
            match state {
                Ok(LoadState::Loading) => {
                    index += 1;
                    continue;
                }
                Ok(LoadState::Ready) => self.arrive(world, meshes, frame, path, handle),
                Ok(LoadState::Failed(error)) => self.fail(path, error.to_string()),
                Err(error) => self.fail(path, error),
            }
            self.loading.remove(index);
            lock(&self.arrivals).pending -= 1;
        }
    }

    fn fail(&mut self, path: PathBuf, reason: String) {
        eprintln!("viewer: {}: {reason}", path.display());
        lock(&self.arrivals).failed.push((path, reason));
    }

    /// Hands a ready scene's meshes to the renderer, spawns it beside the others and frames
    /// the camera on everything arrived.
    fn arrive(
        &mut self,
        world: &mut hecs::World,
        meshes: &RenderMeshes,
        frame: u64,
        path: PathBuf,
        handle: SceneHandle,
    ) {
        let scene = match self.server.get(handle) {
            Ok(Some(scene)) => scene,
            _ => return self.fail(path, String::from("a ready file has no scene")),
        };
        let model = match scene.add_model_with(|vertices, levels| meshes.add_mesh_levels(vertices, levels)) {
            Ok(model) => model,
            Err(error) => return self.fail(path, error.to_string()),
        };
        let bounds = scene_bounds(&scene);
        let offset = match (self.placement, bounds) {
            (Placement::SideBySide, Some(bounds)) => {
                self.largest = self.largest.max((bounds.max - bounds.min).max_element());
                let shift = self.cursor.map_or(0.0, |start| start - bounds.min.x);
                self.cursor = Some(bounds.max.x + shift + self.largest * 0.1);
                Vec3::new(shift, 0.0, 0.0)
            }
            _ => Vec3::ZERO,
        };
        let spawned = spawn_model(world, &model, Transform::from_translation(offset));
        for &entity in &spawned.cameras {
            if let Ok(mut camera) = world.get::<&mut Camera>(entity) {
                camera.active = false;
            }
        }
        if self.shadows {
            for &entity in &spawned.drawables {
                let _ = world.insert_one(entity, ShadowCaster);
            }
        }
        let timings = scene.timings;
        println!(
            "stream: frame {frame}: {} ready ({} meshes, {} triangles, loaded in {:.1} ms on a loader thread), {} objects spawned",
            path.display(),
            scene.meshes.len(),
            scene.triangle_count(),
            timings.total().as_secs_f64() * 1e3,
            spawned.drawables.len()
        );
        let mut arrivals = lock(&self.arrivals);
        if let Some(bounds) = bounds {
            let moved = Aabb::new(bounds.min + offset, bounds.max + offset);
            arrivals.bounds = Some(arrivals.bounds.map_or(moved, |all| all.union(&moved)));
        }
        if let Some(all) = arrivals.bounds {
            let framing = frame_bounds(all, self.aspect);
            if let Ok((camera, transform)) = world.query_one_mut::<(&mut Camera, &mut Transform)>(self.camera) {
                *camera = framing.camera;
                *transform = framing.pose;
            }
        }
        arrivals.drawables.extend(spawned.drawables);
        arrivals.spawned_in.push(frame);
        arrivals.scenes.push((path, scene));
    }
}

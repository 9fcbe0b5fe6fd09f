//! The preloaded viewer's scene: each file's model spawned where its placement puts it, the
//! camera that frames them (or the file's own), and the sun of `--shadows`.

use assets::{spawn_model_animated, GltfMaterial, Model, ModelAnimation};
use culling::occlusion::OccluderMeshes;
use ecs::{Aabb, Camera, Transform};
use glam::Vec3;
use renderer::MeshLibrary;
use runtime::App;

use super::load::Loaded;
use super::{frame_bounds, place_models, scene_bounds, Placement};

/// What the viewer spawned of every file.
pub(super) struct Spawned {
    /// Per spawned file: its model in the library and its scene's materials.
    pub(super) models: Vec<(Model, Vec<GltfMaterial>)>,
    /// Every entity with a mesh.
    pub(super) drawables: Vec<runtime::hecs::Entity>,
    /// Every entity with a camera, in file order.
    pub(super) cameras: Vec<runtime::hecs::Entity>,
    /// The placed scenes' bounds together (`None` when nothing is drawn).
    pub(super) bounds: Option<Aabb>,
}

/// Adds each file's model to the library once and spawns it where `placement` puts it,
/// playing `animate`'s clip (see [`model_animation`]; still without); a file whose model does
/// not fit the library, or has no such clip, is named and left out (`any_bad` set).
pub(super) fn spawn_files(
    app: &mut App,
    loaded: &[Loaded],
    placement: Placement,
    animate: Option<&Option<String>>,
    library: &mut MeshLibrary,
    occluders: &mut OccluderMeshes,
    any_bad: &mut bool,
) -> Spawned {
    let file_bounds: Vec<Option<Aabb>> = loaded.iter().map(|file| scene_bounds(&file.scene)).collect();
    let offsets = place_models(&file_bounds, placement);
    let mut spawned = Spawned { models: Vec::new(), drawables: Vec::new(), cameras: Vec::new(), bounds: None };
    for ((file, bounds), offset) in loaded.iter().zip(&file_bounds).zip(offsets) {
        let model = match file.scene.add_model(library, occluders) {
            Ok(model) => model,
            Err(error) => {
                eprintln!("viewer: {}: {error}", file.path.display());
                *any_bad = true;
                continue;
            }
        };
        let animation = match model_animation(&model, animate) {
            Ok(animation) => animation,
            Err(error) => {
                eprintln!("viewer: {}: {error}", file.path.display());
                *any_bad = true;
                continue;
            }
        };
        let placed = spawn_model_animated(app.world_mut(), &model, Transform::from_translation(offset), animation);
        spawned.drawables.extend(placed.drawables);
        spawned.cameras.extend(placed.cameras);
        if let Some(bounds) = bounds {
            let moved = Aabb::new(bounds.min + offset, bounds.max + offset);
            spawned.bounds = Some(spawned.bounds.map_or(moved, |all| all.union(&moved)));
        }
        spawned.models.push((model, file.scene.material_list.clone()));
    }
    spawned
}

/// What plays on `model` for `--animate` (`animate`): the clip named or numbered, or each
/// skin's first; nothing without `--animate`.
fn model_animation(model: &Model, animate: Option<&Option<String>>) -> Result<ModelAnimation, String> {
    let Some(clip) = animate else { return Ok(ModelAnimation::Still) };
    let Some(clip) = clip else { return Ok(ModelAnimation::First) };
    let index =
        clip.parse::<usize>().ok().filter(|&index| index < model.clips().len()).or_else(|| model.clip_named(clip));
    match index {
        Some(index) => Ok(ModelAnimation::Clip(index)),
        None => {
            let names: Vec<&str> = model.clips().map(|(clip, _)| clip.name()).collect();
            Err(format!("no animation '{clip}' (the file has {names:?})"))
        }
    }
}

/// Makes the camera the image is seen through: one file looks through its own first camera;
/// several (or one without a camera) are framed together by a new camera, the files' own
/// left inactive.
pub(super) fn frame_scene(app: &mut App, spawned: &Spawned, single_file: bool, aspect: f32) {
    if single_file && !spawned.cameras.is_empty() {
        println!("camera: the file's first camera");
        return;
    }
    for &entity in &spawned.cameras {
        if let Ok(mut camera) = app.world_mut().get::<&mut Camera>(entity) {
            camera.active = false;
        }
    }
    let bounds = spawned.bounds.unwrap_or(Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0)));
    let framing = frame_bounds(bounds, aspect);
    ecs::scene::spawn_camera(app.world_mut(), framing.camera, framing.pose);
    let (near, _) = framing.camera.projection.planes();
    println!(
        "camera: framing the scene's bounds (centre {:.4?}, radius {:.4}, distance {:.4}, near plane {:.4})",
        bounds.center().to_array(),
        framing.radius,
        framing.distance,
        near
    );
}

/// Lights the scene with a sun from above and behind the framing camera's side and makes
/// every drawable a shadow caster; the cascades reach as far as the scene is wide, three
/// times over.
pub(super) fn add_sun(app: &mut App, bounds: Option<Aabb>, drawables: &[runtime::hecs::Entity]) {
    let direction = Vec3::new(-0.5, -1.0, -0.35).normalize();
    let pose =
        ecs::Transform::from_translation_rotation(Vec3::ZERO, glam::Quat::from_rotation_arc(Vec3::NEG_Z, direction));
    app.world_mut().spawn((pose, ecs::DirectionalLight::default()));
    for &entity in drawables {
        let _ = app.world_mut().insert_one(entity, ecs::ShadowCaster);
    }
    let size = bounds.map_or(10.0, |bounds| (bounds.max - bounds.min).length());
    app.resource_mut::<ecs::ShadowSettings>().max_distance = (size * 3.0).max(1.0);
}

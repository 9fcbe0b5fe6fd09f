//! `--views 2`: split-screen. A second camera flies another street the other way (half a
//! flight ahead, looking towards -z, so the two often see the same buildings from opposite
//! sides); the first camera draws into the window's left half, the second into its right
//! half ([`CameraRect`]). With `--truth` each view's rectangle is judged against its own
//! answer ([`renderer::truth::check_view`]; culled on the GPU, against its own bits,
//! [`renderer::truth::check_gpu_view`]): `frame N view V false_hidden X`.

use animation::SkinPalette;
use culling::Visibility;
use ecs::{scene, Camera, CameraRect, ResolvedViews, ViewTarget};
use hecs::{Entity, World};
use renderer::truth::{check_gpu_view, check_view, FrameCheck};
use renderer::{Capture, RenderReport};

use super::motion::CameraPath;
use super::{City, CityConfig, RenderError};
use crate::mesh_render::MeshRenderer;

/// Spawns the second camera of `--views 2` and splits the window between it (right half) and
/// the city's camera (left half). Returns the second camera.
pub fn add_second_view(world: &mut World, config: &CityConfig, city: &City) -> Result<Entity, RenderError> {
    let first = city.camera.ok_or("the city has no camera")?;
    let path = world.get::<&CameraPath>(first).map(|path| *path).map_err(|_| "the city's camera has no path")?;
    let other = CameraPath {
        street_x: path.street_x + 2.0 * config.pitch(),
        phase: path.period * 0.5,
        facing: -path.facing,
        ..path
    };
    let second = scene::spawn_camera(world, Camera { order: 1, ..Camera::default() }, other.pose_at(0.0));
    world.insert_one(second, other).map_err(|_| "the second camera vanished")?;
    world.insert_one(first, CameraRect::new(0.0, 0.0, 0.5, 1.0)).map_err(|_| "the city's camera vanished")?;
    world.insert_one(second, CameraRect::new(0.5, 0.0, 0.5, 1.0)).map_err(|_| "the second camera vanished")?;
    Ok(second)
}

/// The checks of every window view of the frame `capture` holds (judged on `geometry`, the
/// colour before the users' passes drew over it, when given): `checker` draws at the
/// window's size, each view into its rectangle, with the frame's stand-ins and, given the
/// frame's `palette`, its skinned objects in their poses (the walking pedestrians); a frame the
/// GPU culled (its `report` read back with `BitsReadback::Wait`) judges each view against its
/// own bits. With `shadows` (the frame's light views) every view's reference is lit and
/// shadowed as the frame is: the lights every view sees, the sun's cascades the main view's.
/// Returns each view's id and checks, in render order.
pub fn check_views(
    checker: &mut MeshRenderer,
    (capture, geometry): (&Capture, Option<&[u8]>),
    (views, visibility, shadows): (&ResolvedViews, &Visibility, Option<&culling::ShadowViews>),
    (world, palette): (&World, Option<&SkinPalette>),
    report: &RenderReport,
) -> Result<Vec<(u32, FrameCheck)>, RenderError> {
    if !capture.captured {
        return Err("the Render stage did not capture the frame".into());
    }
    checker.follow_stand_ins(report);
    checker.set_shadows(shadows, visibility);
    if let Some(palette) = palette {
        checker.set_palette(palette)?;
    }
    let gpu = report.gpu.is_some().then_some(report);
    let mut checks = Vec::with_capacity(views.len());
    // The GPU culls the main view as its view 0, the other window views from 1 in render order.
    let mut culled = 0;
    for view in views.views() {
        let ViewTarget::Window(rect) = &view.target else { continue };
        let rect = [rect.x, rect.y, rect.width, rect.height];
        let image = (geometry.unwrap_or(&capture.pixels[..]), capture.extent);
        let check = match gpu {
            Some(report) => {
                let index = if views.main() == Some(view.id) {
                    0
                } else {
                    culled += 1;
                    culled
                };
                check_gpu_view(checker, image, rect, (world, visibility), (view.id, index), report)
            }
            None => check_view(checker, image, rect, world, visibility, view.id),
        }
        .map_err(|error| format!("view {}: {error}", view.id.0))?;
        checks.push((view.id.0, check));
    }
    Ok(checks)
}

//! The city's rendering in one call: [`install`] hands the city to
//! [`renderer::install_render_to`], whose Render-stage system draws every frame through
//! the render graph (GPU or CPU culling, the library's meshes at each object's level of
//! detail) into a [`FrameTarget`]: the engine's [`renderer::HeadlessTarget`] copies chosen
//! frames to the host for PNGs and checks; a window presents them.

use std::sync::Arc;

use culling::{CullingBackend, CullingChoice, ObjectColumns};
use ecs::{BaseColor, Mesh};
use hecs::World;
use render_graph::{vk, GpuDevice};
use renderer::{install_render_to, BitsReadback, FrameTarget, RenderSetup};
use runtime::App;

use super::RenderError;
use renderer::MeshLibrary;

/// The sky the image is cleared to.
pub const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

/// Each object's colour as the Render stage draws it: the packed [`BaseColor`] of the slot's
/// entity (white without one), for the checker that draws the same frame with culling off.
#[derive(Clone, Copy, Debug, Default)]
pub struct CityColors;

impl CityColors {
    /// Colours of every slot of `columns`, read from `world`.
    pub fn of(world: &World, columns: &ObjectColumns) -> Vec<u32> {
        columns
            .entities
            .iter()
            .map(|&entity| world.get::<&BaseColor>(entity).map_or(BaseColor::WHITE, |color| *color).packed())
            .collect()
    }
}

/// How the city's frames are drawn (see [`install`]).
pub struct CityFrames {
    /// The culling backend.
    pub backend: CullingBackend,
    /// The image's size.
    pub extent: vk::Extent2D,
    /// How the GPU's visibility bits come back: headless checks use [`BitsReadback::Wait`],
    /// so a frame's GPU statistics and bits are its own (a checking demo trades the overlap
    /// for exact answers); a window lags them.
    pub bits: BitsReadback,
    /// The user's passes for the frame (`RenderSetup::passes`).
    pub passes: Vec<renderer::AddPasses>,
    /// Draw the world's lights and shadows (`RenderSetup::shadows`).
    pub shadows: bool,
}

/// The object slots the city's rendering has room for: the mesh entities of `world` plus some
/// that appear later (none do today). The users' frame passes and the check's reference
/// renderer cover as many.
pub fn capacity(world: &hecs::World) -> u32 {
    let objects = world.query::<&Mesh>().iter().count() as u32;
    objects + objects / 8 + 64
}

/// Installs the city's rendering on `device`: the Render stage draws every frame the
/// `target` lets it, as `frames` says.
pub fn install(
    app: &mut App,
    device: &Arc<GpuDevice>,
    meshes: &MeshLibrary,
    target: Box<dyn FrameTarget>,
    frames: CityFrames,
) -> Result<CullingChoice, RenderError> {
    let CityFrames { backend, extent, bits, passes, shadows } = frames;
    let setup = RenderSetup {
        shadows,
        backend,
        device: Some(Arc::clone(device)),
        extent,
        capacity: capacity(app.world()),
        meshes: meshes.clone(),
        clear_color: SKY,
        bits,
        passes,
    };
    let choice = install_render_to(app, setup, Some(target))?;
    if let Some(error) = &app.resource::<renderer::RenderReport>().error {
        return Err(format!("rendering could not be set up: {error}").into());
    }
    Ok(choice)
}

//! `--monitor`: a security camera on a rooftop renders into a 256x256 image
//! ([`ecs::CameraTarget::Image`] named [`MONITOR`]), which a billboard carried in the corner
//! of the street camera's view shows through its material (a texture layer added with
//! [`MeshLibrary::add_view_texture`]), in the same frame. The rooftop camera looks away from the
//! street the street camera flies along, so it never sees its own screen (that would be a
//! cycle: the renderer leaves such a screen out of the monitor's view).
//!
//! On the CPU backend the monitor's view is drawn from its own answer (the CPU's frustum,
//! distance and size culls for that view); with GPU culling it is culled on the GPU by its
//! own two-phase cull (its own pyramid, bits and lists). With `--truth` a user's pass reads the
//! image back by its name, a reference at the image's size draws the monitor's view unculled
//! and finds every object owning a pixel in the view's own answer
//! ([`renderer::truth::check_view`]) or, culled on the GPU, its own bits
//! ([`renderer::truth::check_gpu_image_view`]). The street view's reference shows the same picture on
//! its billboard: it uploads the frame's monitor image and copies it into the layer as the
//! frame did ([`ViewTexturePass`]), so the two compare pixel for pixel. With `--shadows` the
//! monitor is lit with the frame's lights and atlas (the sun's cascades follow the street
//! view), and its reference draws the same shadows.

use std::sync::{Arc, Mutex, PoisonError};

use animation::SkinPalette;
use culling::Visibility;
use ecs::{scene, Aabb, Camera, CameraTarget, ImageFormat, ImageTarget, MaterialHandle, Mesh, MeshHandle, Transform};
use ecs::{ResolvedViews, ViewTarget};
use glam::Vec3;
use hecs::{Entity, World};
use render_graph::readback::{ImageReadback, ReadbackPass};
use render_graph::{vk, Access, Binding, ExecuteContext, ImageDesc, ImageSize, ImageWrite, PrepareContext};
use render_graph::{Registry, TypedPass};
use renderer::truth::{check_gpu_image_view, check_view, FrameCheck};
use renderer::{points, AddPasses, Material, MeshLibrary, MeshVertices, RenderReport, ViewTexturePass};

use super::{City, CityConfig, RenderError};
use crate::mesh_render::MeshRenderer;

/// The image the rooftop camera renders into.
pub const MONITOR: &str = "monitor";
/// Its side in pixels.
pub const MONITOR_SIDE: u32 = 256;
/// Materials the city's objects name (0 to 7, one per kind of object).
const CITY_MATERIALS: u32 = 8;

/// What the monitor added to the city's library.
#[derive(Clone, Copy, Debug)]
pub struct MonitorMeshes {
    /// The billboard: a unit quad facing +z, its texture coordinates the whole image.
    pub quad: MeshHandle,
    /// The material showing the monitor's image.
    pub material: u32,
    /// Its texture layer.
    pub layer: u32,
}

/// Adds the billboard's quad, the monitor's texture layer and its material to `library`.
pub fn add_to_library(library: &mut MeshLibrary) -> Result<MonitorMeshes, RenderError> {
    let positions = [[-0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.5, -0.5, 0.0], [-0.5, -0.5, 0.0]];
    let normals = [[0.0, 0.0, 1.0]; 4];
    // The image's top row at the quad's top edge.
    let uvs = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let indices = [0, 3, 2, 0, 2, 1];
    let vertices = MeshVertices { positions: &positions, normals: &normals, uvs: &uvs };
    let quad = library.add_mesh_levels(vertices, &[(&indices, &[])])?.start;
    // The city's objects name materials 0 to 7 by kind (`scene.rs`), past its empty table:
    // their plain colours. Plain materials in those places keep them so.
    while library.materials().len() < CITY_MATERIALS as usize {
        library.add_material(Material::default())?;
    }
    let layer = library.add_view_texture(MONITOR)?;
    let material = library.add_material(Material { texture: Some(layer), ..Material::default() })?;
    Ok(MonitorMeshes { quad: MeshHandle(quad), material, layer })
}

/// Spawns the rooftop camera (rendering into [`MONITOR`], before the street camera) and the
/// billboard, a child of the street camera in the top-right corner of its view. Returns the
/// rooftop camera.
pub fn spawn(
    world: &mut World,
    config: &CityConfig,
    city: &City,
    meshes: MonitorMeshes,
) -> Result<Entity, RenderError> {
    let street_camera = city.camera.ok_or("the city has no camera")?;
    // Over the third block from the corner, looking down and away from the middle street the
    // street camera flies along (its screen never enters this view).
    let corner = 3.0 * config.pitch();
    let eye = Vec3::new(corner, 70.0, corner);
    let rooftop = scene::spawn_camera(
        world,
        Camera { order: -1, ..Camera::default() },
        scene::look_at(eye, eye + Vec3::new(-40.0, -56.0, 40.0)),
    );
    let target = ImageTarget::new(MONITOR, MONITOR_SIDE, MONITOR_SIDE, ImageFormat::Rgba8Unorm);
    world.insert_one(rooftop, CameraTarget::Image(target)).map_err(|_| "the rooftop camera vanished")?;
    let bounds = Aabb::new(Vec3::new(-0.5, -0.5, -0.01), Vec3::new(0.5, 0.5, 0.01));
    let billboard = Mesh::new(meshes.quad, MaterialHandle(meshes.material), bounds);
    let place = Transform::from_translation(Vec3::new(1.1, 0.55, -3.0)).with_scale(Vec3::splat(0.9));
    scene::spawn_chain(world, Some(street_camera), &[place], billboard);
    Ok(rooftop)
}

/// The monitor's image as the newest checked frame drew it (`MONITOR_SIDE` squared RGBA8
/// texels), shared by the readback and the reference's upload.
pub type MonitorPixels = Arc<Mutex<Vec<u8>>>;

/// A users' pass reading the monitor back after the geometry, and its copy.
pub fn readback() -> (AddPasses, Arc<Mutex<Option<ImageReadback>>>) {
    let copy = Arc::new(Mutex::new(None));
    let kept = Arc::clone(&copy);
    let add: AddPasses = Box::new(move |graph| {
        let (pass, readback) = ReadbackPass::following(MONITOR);
        *kept.lock().unwrap_or_else(PoisonError::into_inner) = Some(readback);
        graph.add_typed_pass_at(points::AFTER_GEOMETRY, pass)
    });
    (add, copy)
}

/// Gives the street view's reference the frame's monitor: `pixels` uploaded into an image
/// named [`MONITOR`], copied into the monitor's texture `layer` as the frame copies it.
pub fn show_on_reference(checker: &mut MeshRenderer, pixels: &MonitorPixels, layer: u32) -> Result<(), RenderError> {
    let upload = MonitorUpload { pixels: Arc::clone(pixels), staged: None };
    checker.add_passes(|graph| {
        graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, upload)?;
        graph.add_typed_pass_at(points::AFTER_DEPTH_PREPASS, ViewTexturePass::new(Arc::from(MONITOR), layer))
    })?;
    Ok(())
}

/// What judges the monitor's view in a checked frame.
pub struct MonitorCheck {
    /// The reference at the image's size.
    pub checker: MeshRenderer,
    /// The users' pass's copy of the image ([`readback`]).
    pub copy: Arc<Mutex<Option<ImageReadback>>>,
    /// The newest checked frame's image, which the street view's reference shows
    /// ([`show_on_reference`]).
    pub pixels: MonitorPixels,
}

impl MonitorCheck {
    /// Reads the frame's monitor back (keeping it for the street view's reference) and judges
    /// the monitor's view: its image against the unculled reference of it (with the frame's
    /// stand-ins, given the frame's `palette` its skinned objects in their poses, and given
    /// `shadows` the frame's shadows, lit as for the main view as the frame is), and its answer
    /// against every object owning a pixel. Returns the view's id and checks.
    pub fn check(
        &mut self,
        (views, visibility, shadows): (&ResolvedViews, &Visibility, Option<&culling::ShadowViews>),
        world: &World,
        (report, palette): (&RenderReport, Option<&SkinPalette>),
    ) -> Result<(u32, FrameCheck), RenderError> {
        self.checker.follow_stand_ins(report);
        self.checker.set_shadows(shadows, visibility);
        if let Some(palette) = palette {
            self.checker.set_palette(palette)?;
        }
        let copy = self.copy.lock().unwrap_or_else(PoisonError::into_inner);
        let (extent, texels) = copy.as_ref().ok_or("the monitor's readback was not added")?.read()?;
        drop(copy);
        if (extent.width, extent.height) != (MONITOR_SIDE, MONITOR_SIDE) {
            return Err(format!("the monitor read back {}x{}", extent.width, extent.height).into());
        }
        let view = views
            .views()
            .iter()
            .find(|view| matches!(&view.target, ViewTarget::Image(image) if &*image.name == MONITOR))
            .ok_or("the frame has no monitor view")?;
        let side = MONITOR_SIDE;
        let image = (&texels[..], (side, side));
        // Culled on the GPU by its own cull: judged against its own bits.
        let check = if report.image_views.iter().any(|own| &*own.name == MONITOR) {
            check_gpu_image_view(&mut self.checker, image, (world, visibility), (view.id, MONITOR), report)?
        } else {
            check_view(&mut self.checker, image, [0, 0, side, side], world, visibility, view.id)?
        };
        *self.pixels.lock().unwrap_or_else(PoisonError::into_inner) = texels;
        Ok((view.id.0, check))
    }
}

/// Uploads the monitor's pixels into the image [`MONITOR`] (zeros before the first frame).
struct MonitorUpload {
    pixels: MonitorPixels,
    staged: Option<Binding>,
}

impl TypedPass for MonitorUpload {
    type Handles = ImageWrite;

    fn name(&self) -> &str {
        "monitor upload"
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> ImageWrite {
        let size = ImageSize::Absolute { width: MONITOR_SIDE, height: MONITOR_SIDE };
        let image = registry.create_image(MONITOR, ImageDesc::new(vk::Format::R8G8B8A8_UNORM, size));
        registry.write_image(image, Access::TransferWrite)
    }

    fn prepare(&mut self, _image: &ImageWrite, context: &mut PrepareContext<'_>) {
        let pixels = self.pixels.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = u64::from(MONITOR_SIDE * MONITOR_SIDE * 4);
        let staged = context.stage_with(bytes, |out| {
            if pixels.len() == out.len() {
                out.copy_from_slice(&pixels);
            } else {
                out.fill(0);
            }
        });
        match staged {
            Ok(staged) => self.staged = Some(staged),
            Err(error) => context.fail(error),
        }
    }

    fn execute(&mut self, image: &ImageWrite, context: &mut ExecuteContext<'_>) {
        let Some(staged) = self.staged.take() else { return };
        let region = vk::BufferImageCopy::default()
            .image_subresource(
                vk::ImageSubresourceLayers::default().aspect_mask(vk::ImageAspectFlags::COLOR).layer_count(1),
            )
            .image_extent(vk::Extent3D { width: MONITOR_SIDE, height: MONITOR_SIDE, depth: 1 });
        context.copy_staged_to_image(&staged, image, &[region]);
    }
}

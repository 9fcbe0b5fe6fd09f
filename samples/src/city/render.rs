//! Drawing the city with the render graph's standard passes (depth prepass, geometry,
//! readback): every object as its box, coloured by what it is, from the Visibility stage's
//! columns and visible list.
//!
//! It also renders the same frame with every drawable object (culling off) and compares the
//! two images pixel for pixel: the engine's rule "false-hidden never", checked live.

use std::path::Path;
use std::sync::Arc;

use culling::gpu::{add_gpu_culled_scene_passes, GpuCullSettings, GpuCullStats, SharedCullSettings};
use culling::Visibility;
use ecs::{Aabb, MeshHandle};
use glam::Mat4;
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::passes::{self, lock_scene, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};
use render_graph::{vk, ReadbackBuffer, RenderGraph};

use super::scene::CityMeshes;

/// What went wrong while drawing, as text for the demo's report.
pub type RenderError = Box<dyn std::error::Error>;

/// The sky the image is cleared to.
const SKY: [f32; 4] = [0.55, 0.70, 0.90, 1.0];

/// A headless renderer of the city's boxes.
pub struct CityRenderer {
    device: Arc<GpuDevice>,
    graph: RenderGraph,
    scene: SharedScene,
    readback: ReadbackBuffer,
    extent: vk::Extent2D,
    /// Every drawable object, in object order, for the culling-off image.
    all_drawable: Vec<u32>,
}

/// The city drawn with GPU culling (two-phase, Hi-Z occlusion) on a graph of its own.
pub struct GpuCityRenderer {
    graph: RenderGraph,
    scene: SharedScene,
    color: ReadbackBuffer,
    stats: ReadbackBuffer,
    settings: SharedCullSettings,
}

impl GpuCityRenderer {
    /// A GPU-culled renderer on the device of `renderer`, with the same extent and capacity.
    pub fn new(renderer: &CityRenderer) -> Result<GpuCityRenderer, RenderError> {
        let capacity = lock_scene(&renderer.scene).capacity();
        let mut scene = GpuScene::new(&renderer.device, MeshLibrary::with_unit_cube(), capacity)?;
        scene.set_upload_budget(u64::from(capacity) * passes::OBJECT_RECORD_BYTES);
        let scene = scene.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(&renderer.device), renderer.extent)?;
        let options = ScenePassOptions { clear_color: SKY, ..ScenePassOptions::default() };
        let settings = Arc::new(std::sync::Mutex::new(GpuCullSettings::default()));
        let culled = add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, false)?;
        let color = culled.color.ok_or("the GPU-culled passes were asked for a readback")?;
        Ok(GpuCityRenderer { graph, scene, color, stats: culled.stats, settings })
    }

    /// Draws the frame's objects `frames` times from its view with GPU culling (the first
    /// time without history: everything in view is drawn late; later times draw last
    /// time's visible set early and cull the rest against its pyramid); returns the last
    /// image and its statistics.
    pub fn render(&mut self, visibility: &Visibility, frames: u32) -> Result<(Vec<u8>, GpuCullStats), RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        upload_objects(&self.scene, visibility)?;
        {
            let mut scene = lock_scene(&self.scene);
            scene.set_view_projection((view.projection * view.view).to_cols_array_2d());
            // Devices without drawIndirectCount draw every command (unused ones are zeroed).
            scene.draw_all_objects();
        }
        *self.settings.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = GpuCullSettings::default();
        for _ in 0..frames.max(1) {
            self.graph.execute_frame()?;
        }
        self.graph.wait_idle()?;
        let stats = GpuCullStats::from_counters(self.stats.read()?, self.graph.stats());
        Ok((self.color.read()?.to_vec(), stats))
    }
}

/// The outcome of [`CityRenderer::render_and_check`].
#[derive(Clone, Copy, Debug)]
pub struct RenderCheck {
    /// Objects drawn with culling on.
    pub drawn: usize,
    /// Objects drawn with culling off.
    pub drawn_without_culling: usize,
    /// Pixels that differ between the two images (0 is the only right answer).
    pub differing_pixels: usize,
}

impl CityRenderer {
    /// A renderer of `width` x `height` pixels for up to `capacity` objects, on the best
    /// Vulkan device there is. Fails with the reason when there is none (no loader, no
    /// device, missing features).
    pub fn new(width: u32, height: u32, capacity: u32) -> Result<CityRenderer, RenderError> {
        let device = Arc::new(GpuDevice::new(&DeviceConfig { app_name: "city".into(), ..DeviceConfig::default() })?);
        let extent = vk::Extent2D { width, height };
        let mut scene = GpuScene::new(&device, MeshLibrary::with_unit_cube(), capacity)?;
        // The demo draws single frames, each of which must see every record: no spreading of
        // uploads over later frames.
        scene.set_upload_budget(u64::from(capacity) * passes::OBJECT_RECORD_BYTES);
        let scene = scene.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(&device), extent)?;
        let options = ScenePassOptions { clear_color: SKY, ..ScenePassOptions::default() };
        let readback = passes::add_scene_passes(&mut graph, &scene, &options)?
            .ok_or("the scene passes were asked for a readback")?;
        Ok(CityRenderer { device, graph, scene, readback, extent, all_drawable: Vec::new() })
    }

    /// The Vulkan device.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device.capabilities().name
    }

    /// Draws this frame's visible objects and, for the check, every drawable object; returns
    /// the culled image (RGBA8, rows top first) and the comparison.
    pub fn render_and_check(&mut self, visibility: &Visibility) -> Result<(Vec<u8>, RenderCheck), RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        self.upload_objects(visibility)?;
        let view_projection = (view.projection * view.view).to_cols_array_2d();
        self.all_drawable.clear();
        self.all_drawable.extend(visibility.scene());
        self.all_drawable.sort_unstable();
        let culled = self.draw(view_projection, visibility.visible())?;
        let all = std::mem::take(&mut self.all_drawable);
        let reference = self.draw(view_projection, &all);
        self.all_drawable = all;
        let reference = reference?;
        let differing_pixels = culled.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
        let check = RenderCheck {
            drawn: visibility.visible().len(),
            drawn_without_culling: self.all_drawable.len(),
            differing_pixels,
        };
        Ok((culled, check))
    }

    /// Draws every drawable object of the frame without culling (the reference image) and
    /// compares it with `culled`, an image of the same frame culled another way.
    pub fn check_against_unculled(
        &mut self,
        visibility: &Visibility,
        culled: &[u8],
    ) -> Result<RenderCheck, RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        upload_objects(&self.scene, visibility)?;
        self.all_drawable.clear();
        self.all_drawable.extend(visibility.scene());
        self.all_drawable.sort_unstable();
        let all = std::mem::take(&mut self.all_drawable);
        let reference = self.draw((view.projection * view.view).to_cols_array_2d(), &all);
        self.all_drawable = all;
        let reference = reference?;
        let differing_pixels = culled.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
        Ok(RenderCheck { drawn: 0, drawn_without_culling: self.all_drawable.len(), differing_pixels })
    }

    fn upload_objects(&mut self, visibility: &Visibility) -> Result<(), RenderError> {
        upload_objects(&self.scene, visibility)
    }
    fn draw(&mut self, view_projection: [[f32; 4]; 4], list: &[u32]) -> Result<Vec<u8>, RenderError> {
        {
            let mut scene = lock_scene(&self.scene);
            scene.set_view_projection(view_projection);
            scene.set_draw_list(list)?;
        }
        self.graph.execute_frame()?;
        let missing = lock_scene(&self.scene).last_upload().drawn_missing;
        if missing > 0 {
            return Err(
                format!("{missing} drawn objects had no record on the GPU yet (raise the upload budget)").into()
            );
        }
        self.graph.wait_idle()?;
        Ok(self.readback.read()?.to_vec())
    }

    /// Writes `pixels` (from [`CityRenderer::render_and_check`]) as a PNG.
    pub fn write_png(&self, path: &Path, pixels: &[u8]) -> Result<(), RenderError> {
        let file = std::io::BufWriter::new(std::fs::File::create(path)?);
        let mut encoder = png::Encoder::new(file, self.extent.width, self.extent.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.write_header()?.write_image_data(pixels)?;
        Ok(())
    }

    /// Validation warnings and errors so far (validation is on with `ENGINE_VALIDATION=1`).
    pub fn validation_problems(&self) -> Vec<String> {
        if self.device.validation_counts().has_problems() {
            self.device.validation_messages()
        } else {
            Vec::new()
        }
    }
}

/// Writes object (slot) `i` of the frame as object `i` of the GPU scene (only changed
/// records are uploaded: slots are stable, so a record changes only when its object moved,
/// changed level of detail or was replaced).
fn upload_objects(scene: &SharedScene, visibility: &Visibility) -> Result<(), RenderError> {
    let objects = visibility.objects();
    let mut scene = lock_scene(scene);
    if objects.len() as u32 > scene.capacity() {
        return Err(format!("{} objects exceed the renderer's capacity of {}", objects.len(), scene.capacity()).into());
    }
    for index in 0..objects.len() {
        let draw = objects.draws[index];
        let world = match CityMeshes::local_bounds(draw.mesh) {
            Some(local) => objects.models[index] * cube_onto(&local),
            // A mesh without a fixed box (the ground): its world box.
            None => cube_onto(&objects.bounds[index]),
        };
        let object =
            ObjectDesc { world: world.to_cols_array_2d(), color: color_of(draw.mesh, index), mesh: 0, material: 0 };
        if (index as u32) < scene.object_count() {
            scene.set_object(index as u32, object)?;
        } else {
            scene.push_object(object)?;
        }
    }
    Ok(())
}

/// The transform of the unit cube onto `bounds`: the city's meshes are drawn as their boxes
/// (the culling only ever sees those too).
fn cube_onto(bounds: &Aabb) -> Mat4 {
    Mat4::from_translation(bounds.center()) * Mat4::from_scale(bounds.max - bounds.min)
}

/// A flat colour per kind of object, varied a little per object so boxes stand apart.
fn color_of(mesh: MeshHandle, index: usize) -> u32 {
    let shade = (index.wrapping_mul(2_654_435_761) >> 13) as u8 % 40;
    let [red, green, blue]: [u8; 3] = match mesh {
        CityMeshes::BUILDING => [150, 140, 130],
        CityMeshes::GROUND => [60, 60, 64],
        CityMeshes::LAMP => [230, 200, 60],
        CityMeshes::BENCH => [120, 80, 40],
        CityMeshes::TREE_HIGH => [40, 140, 50],
        CityMeshes::TREE_MEDIUM => [50, 120, 50],
        CityMeshes::TREE_LOW => [60, 100, 50],
        CityMeshes::CAR => [200, 40, 40],
        CityMeshes::WHEEL => [20, 20, 20],
        CityMeshes::PEDESTRIAN => [40, 70, 200],
        _ => [255, 0, 255],
    };
    passes::pack_rgba8(red.saturating_add(shade), green.saturating_add(shade), blue.saturating_add(shade), 255)
}

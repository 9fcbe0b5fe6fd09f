//! Drawing a frame's [`Visibility`] with real meshes through the render graph's standard
//! passes (depth prepass, lit geometry, readback): object `i` is drawn with the mesh its
//! level of detail chose (`draws[i].mesh`, an id of the renderer's [`MeshLibrary`]) at its
//! world matrix, in a colour the caller gives.
//!
//! Each frame is drawn twice, with the visible list and with every drawable object, and the
//! two images are compared pixel for pixel: culling must never hide what the camera sees.

use std::path::Path;
use std::sync::Arc;

use culling::Visibility;

use crate::cluster_render::ClusterRenderer;
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::{vk, ReadbackBuffer, RenderGraph};
use renderer::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, ShadowFrame, SharedScene};

/// What went wrong while drawing, as text for a report.
pub type RenderError = Box<dyn std::error::Error>;

/// What one checked frame drew.
#[derive(Clone, Debug, Default)]
pub struct MeshFrame {
    /// Objects drawn with culling on.
    pub drawn: usize,
    /// Objects drawn with culling off.
    pub drawn_without_culling: usize,
    /// Triangles drawn with culling on.
    pub triangles: u64,
    /// Pixels that differ between the two images (0 is the only right answer).
    pub differing_pixels: usize,
    /// GPU milliseconds of each pass of the culled frame, by the pass's name in
    /// `GraphStats` (`None` where the device has no timestamps).
    pub gpu_ms: Vec<(String, Option<f64>)>,
    /// Bytes the culled frame uploaded (object records and the draw list).
    pub uploaded_bytes: u64,
}

/// A headless renderer of meshes of one [`MeshLibrary`].
pub struct MeshRenderer {
    device: Arc<GpuDevice>,
    graph: RenderGraph,
    scene: SharedScene,
    readback: ReadbackBuffer,
    extent: vk::Extent2D,
    clear_color: [f32; 4],
    /// The library again, for the cluster renderer made on first use.
    meshes: MeshLibrary,
    /// Every drawable object, for the culling-off image.
    all_drawable: Vec<u32>,
    /// The cluster-culling renderer beside this one, made on first use
    /// ([`crate::cluster_render::report_frame`]).
    clusters: Option<ClusterRenderer>,
    /// Most objects.
    capacity: u32,
    /// The light views every frame draws shadows from (every caster kept), with the eye and
    /// view axis they are lit for; `None` draws no shadows.
    shadows: Option<(culling::ShadowViews, glam::Vec3, glam::Vec3)>,
}

impl MeshRenderer {
    /// A renderer of `width` x `height` pixels for up to `capacity` objects drawing meshes of
    /// `meshes`, cleared to `clear_color`, on the best Vulkan device there is. Fails with the
    /// reason when there is none.
    pub fn new(
        width: u32,
        height: u32,
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
    ) -> Result<MeshRenderer, RenderError> {
        let device = Arc::new(GpuDevice::new(&DeviceConfig { app_name: "meshes".into(), ..DeviceConfig::default() })?);
        MeshRenderer::with_device(device, width, height, capacity, meshes, clear_color)
    }

    /// Adds passes to the renderer's graph (its frame has the engine's insertion points,
    /// `renderer::points`), as `RenderSetup::passes` does for the Render stage's.
    pub fn add_passes(
        &mut self,
        add: impl FnOnce(&mut RenderGraph) -> render_graph::Result<()>,
    ) -> Result<(), RenderError> {
        add(&mut self.graph)?;
        Ok(())
    }

    /// [`MeshRenderer::new`] on an existing device (shared with the game's own renderer, so
    /// validation and memory are counted once).
    pub fn with_device(
        device: Arc<GpuDevice>,
        width: u32,
        height: u32,
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
    ) -> Result<MeshRenderer, RenderError> {
        MeshRenderer::with_shadows(device, (width, height), capacity, meshes, clear_color, 0)
    }

    /// [`MeshRenderer::with_device`] drawing shadows into an atlas `shadow_atlas` texels
    /// square (0: no shadows), from the views [`MeshRenderer::set_shadows`] gives it, with
    /// the host's caster lists.
    pub fn with_shadows(
        device: Arc<GpuDevice>,
        (width, height): (u32, u32),
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
        shadow_atlas: u32,
    ) -> Result<MeshRenderer, RenderError> {
        let extent = vk::Extent2D { width, height };
        let capacity = capacity.max(1);
        let scene = GpuScene::new(&device, meshes.clone(), capacity)?.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(&device), extent)?;
        graph.set_name("reference render");
        let options = ScenePassOptions { clear_color, shadow_atlas, ..ScenePassOptions::default() };
        let readback = renderer::add_scene_passes(&mut graph, &scene, &options)?
            .ok_or("the scene passes were asked for a readback")?;
        Ok(MeshRenderer {
            device,
            graph,
            scene,
            readback,
            extent,
            clear_color,
            meshes,
            all_drawable: Vec::new(),
            clusters: None,
            capacity,
            shadows: None,
        })
    }

    /// The device, meshes, size and clear colour, for a renderer beside this one
    /// ([`crate::cluster_render::ClusterRenderer`]).
    pub(crate) fn parts(&self) -> (&Arc<GpuDevice>, &MeshLibrary, vk::Extent2D, [f32; 4]) {
        (&self.device, &self.meshes, self.extent, self.clear_color)
    }

    /// Most objects the renderer draws.
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Takes the cluster renderer kept beside this one (put it back after use).
    pub(crate) fn take_clusters(&mut self) -> Option<ClusterRenderer> {
        self.clusters.take()
    }

    /// Keeps `clusters` for the next frame.
    pub(crate) fn put_clusters(&mut self, clusters: ClusterRenderer) {
        self.clusters = Some(clusters);
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device.capabilities().name
    }

    /// Draws the frame's visible objects, object `i` in `color_of(i)` (RGBA8 packed), and
    /// for the check every drawable object; returns the culled image (RGBA8, rows top first).
    pub fn render_and_check(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<(Vec<u8>, MeshFrame), RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        let triangles = self.upload_objects(visibility, color_of)?;
        let view_projection = (view.projection * view.view).to_cols_array_2d();
        self.all_drawable.clear();
        self.all_drawable.extend(visibility.scene());
        self.all_drawable.sort_unstable();
        let culled = self.draw(view_projection, visibility.visible())?;
        let gpu_ms = self.graph.stats().passes.iter().map(|pass| (pass.name.clone(), pass.gpu_ms)).collect();
        let upload = lock_scene(&self.scene).last_upload();
        let all = std::mem::take(&mut self.all_drawable);
        let reference = self.draw(view_projection, &all);
        self.all_drawable = all;
        let reference = reference?;
        let differing_pixels = culled.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count();
        let frame = MeshFrame {
            drawn: visibility.visible().len(),
            drawn_without_culling: self.all_drawable.len(),
            triangles: visibility.visible().iter().map(|&object| triangles[object as usize]).sum(),
            differing_pixels,
            gpu_ms,
            uploaded_bytes: upload.bytes + upload.draw_bytes,
        };
        Ok((culled, frame))
    }

    /// The shadows the next frames draw: every caster of every view of `shadows` (whatever
    /// the views' own culling kept), lit as for `visibility`'s camera; `None` draws none.
    /// Only for a renderer made [`MeshRenderer::with_shadows`].
    pub fn set_shadows(&mut self, shadows: Option<&culling::ShadowViews>, visibility: &Visibility) {
        self.shadows = match (shadows, visibility.view()) {
            (Some(shadows), Some(view)) => {
                let mut every = shadows.clone();
                every.keep_every_caster();
                Some((every, view.position, view.rotation * glam::Vec3::NEG_Z))
            }
            _ => None,
        };
    }

    /// The objects among `objects` owning at least one pixel when they alone are drawn
    /// from `view_projection` (a camera's, or a light view's), sorted: the id image of
    /// [`MeshRenderer::objects_with_pixels`] for any view.
    pub fn owners_in_view(
        &mut self,
        visibility: &Visibility,
        view_projection: [[f32; 4]; 4],
        objects: &[u32],
    ) -> Result<Vec<u32>, RenderError> {
        let pixels = (self.extent.width * self.extent.height) as usize;
        let mut ids = vec![0u32; pixels];
        let mut sky = vec![false; pixels];
        for digit in 0..3u32 {
            let place = 255u32.pow(digit);
            self.upload_objects(visibility, |object| ((object as u32 + 1) / place % 255) << 24)?;
            let image = self.draw(view_projection, objects)?;
            for ((id, sky), pixel) in ids.iter_mut().zip(&mut sky).zip(image.chunks_exact(4)) {
                if pixel[3] == 255 {
                    *sky = true;
                } else {
                    *id += u32::from(pixel[3]) * place;
                }
            }
        }
        let mut owners: Vec<u32> = ids.iter().zip(&sky).filter(|(_, &sky)| !sky).map(|(&id, _)| id - 1).collect();
        owners.sort_unstable();
        owners.dedup();
        Ok(owners)
    }

    /// The culling truth of the frame: draws every drawable object with culling off as an
    /// object-id image and returns the objects owning at least one pixel, sorted. The id is
    /// written through the colour's alpha byte, which the geometry shader passes through
    /// unlit: `id + 1` in base 255, one digit per draw (three draws, up to 16.5M objects),
    /// while the sky clears to alpha 255, a value no digit takes. Call after
    /// [`MeshRenderer::render_and_check`] for the same `visibility`; the next call of that
    /// re-uploads the real colours.
    pub fn objects_with_pixels(&mut self, visibility: &Visibility) -> Result<Vec<u32>, RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        let view_projection = (view.projection * view.view).to_cols_array_2d();
        let all = std::mem::take(&mut self.all_drawable);
        let owners = self.owners_in_view(visibility, view_projection, &all);
        self.all_drawable = all;
        owners
    }

    /// The reference of a frame drawn elsewhere (by the Render stage): every drawable object
    /// of `visibility` with culling off, object `i` in `color_of(i)`; returns the image
    /// (RGBA8, rows top first). Afterwards [`MeshRenderer::objects_with_pixels`] and
    /// [`MeshRenderer::draw_all`] draw the same objects.
    pub fn draw_reference(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<Vec<u8>, RenderError> {
        self.all_drawable.clear();
        self.all_drawable.extend(visibility.scene());
        self.all_drawable.sort_unstable();
        self.draw_all(visibility, color_of)
    }

    /// Draws every drawable object with culling off, object `i` in `color_of(i)`; returns
    /// the image (RGBA8, rows top first). Used for `--classify`: the next
    /// [`MeshRenderer::render_and_check`] re-uploads the real colours.
    pub fn draw_all(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<Vec<u8>, RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        let view_projection = (view.projection * view.view).to_cols_array_2d();
        self.upload_objects(visibility, color_of)?;
        let all = std::mem::take(&mut self.all_drawable);
        let image = self.draw(view_projection, &all);
        self.all_drawable = all;
        image
    }

    /// The image's size in pixels.
    pub fn extent(&self) -> (u32, u32) {
        (self.extent.width, self.extent.height)
    }

    /// Writes every object as a record, and the shadows' caster draws from those records;
    /// returns each object's triangle count.
    fn upload_objects(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<Vec<u64>, RenderError> {
        let triangles = upload_objects(&self.scene, visibility, &color_of)?;
        // The shadow views are the graph's parameter (its frame set it when it has shadows).
        if let Some(frame) = self.graph.param_mut::<ShadowFrame>() {
            match &self.shadows {
                Some((shadows, eye, forward)) => {
                    frame.update(shadows, lock_scene(&self.scene).records(), (*eye, *forward))
                }
                None => frame.clear(),
            }
        }
        Ok(triangles)
    }

    fn draw(&mut self, view_projection: [[f32; 4]; 4], list: &[u32]) -> Result<Vec<u8>, RenderError> {
        lock_scene(&self.scene).set_draw_list(list)?;
        self.graph.set_param(FrameView::from_view_projection(glam::Mat4::from_cols_array_2d(&view_projection)));
        self.graph.execute_frame()?;
        self.graph.wait_idle()?;
        Ok(self.readback.read()?.to_vec())
    }

    /// Writes `pixels` (from [`MeshRenderer::render_and_check`]) as a PNG.
    pub fn write_png(&self, path: &Path, pixels: &[u8]) -> Result<(), RenderError> {
        Ok(renderer::write_png(path, pixels, self.extent.width, self.extent.height)?)
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

/// Writes object (slot) `i` of the frame as object `i` of `scene`, with the mesh its level of
/// detail chose; returns each object's triangle count.
pub(crate) fn upload_objects(
    scene: &SharedScene,
    visibility: &Visibility,
    color_of: &impl Fn(usize) -> u32,
) -> Result<Vec<u64>, RenderError> {
    let objects = visibility.objects();
    let mut scene = lock_scene(scene);

    if objects.len() as u32 > scene.capacity() {
        return Err(format!("{} objects exceed the renderer's capacity of {}", objects.len(), scene.capacity()).into());
    }
    scene.set_object_count(objects.len() as u32)?;
    let mut triangles = vec![0; objects.len()];
    for (index, count) in triangles.iter_mut().enumerate() {
        let draw = objects.draws[index];
        // An object that is not drawable is in no list: its slot holds the empty record.
        if !draw.mesh.is_some() {
            scene.clear_object(index as u32)?;
            continue;
        }
        let mesh = draw.mesh.0;
        if scene.meshes().range(mesh).is_none() {
            return Err(format!("object {index} names mesh {mesh}, which the library lacks").into());
        }
        *count = u64::from(scene.meshes().triangle_count(mesh));
        let world = objects.models[index].to_cols_array_2d();
        scene
            .set_object(index as u32, ObjectDesc { world, color: color_of(index), mesh, material: draw.material.0 })?;
    }
    Ok(triangles)
}

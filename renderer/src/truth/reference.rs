//! The reference renderer of the truth checks: a frame's [`Visibility`] drawn again through
//! the engine's standard passes (depth prepass, lit geometry, readback) on a graph of its own,
//! with culling off or with any list of objects. Object `i` is drawn with the mesh its level
//! of detail chose (`draws[i].mesh`, an id of the [`MeshLibrary`]) at its world matrix, in a
//! colour the caller gives, or as its id (see [`ReferenceRenderer::objects_with_pixels`]).

use std::path::Path;
use std::sync::Arc;

use culling::Visibility;
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::{vk, ReadbackBuffer, RenderGraph};

use runtime::hecs::World;

use super::view::IdView;
use super::TruthError;
use crate::passes::ObjectIdImage;
use crate::UploadReport;
use crate::{lock_scene, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, ShadowFrame, SharedScene};

/// A headless renderer of a frame's objects with culling off, for the truth checks: the
/// image of every drawable object, its object-id image, and light views' id images.
pub struct ReferenceRenderer {
    device: Arc<GpuDevice>,
    pub(super) graph: RenderGraph,
    pub(super) scene: SharedScene,
    readback: ReadbackBuffer,
    extent: vk::Extent2D,
    clear_color: [f32; 4],
    meshes: MeshLibrary,
    /// Every drawable object, for the culling-off image.
    all_drawable: Vec<u32>,
    /// Most objects the scene holds now (it grows with the frames drawn).
    capacity: u32,
    /// The scene's generation the graph imported.
    generation: u64,
    /// The meshes the frame checked drew a stand-in for ([`crate::RenderReport::stand_ins`]).
    pub(super) stand_ins: Vec<(u32, Option<u32>)>,
    /// The light views every frame draws shadows from (every caster kept), with the eye and
    /// view axis they are lit for; `None` draws no shadows.
    shadows: Option<(culling::ShadowViews, glam::Vec3, glam::Vec3)>,
    /// The last skin palette given ([`ReferenceRenderer::set_palette`]): skinned objects are
    /// then drawn in their pose, else in their bind pose.
    palette: Option<animation::SkinPalette>,
    /// By slot, the palette slice of its entity's rig (`(0, 0)`: none), for the frame checked.
    skins: Vec<(u32, u32)>,
    /// (slot, mesh): objects drawn at another level than their record's, the levels of a
    /// split-screen view (`check_view`), applied with every upload.
    pub(super) view_meshes: Vec<(u32, u32)>,
}

impl ReferenceRenderer {
    /// A renderer of `width` x `height` pixels for `capacity` objects at first (it grows with
    /// the frames it draws) drawing meshes of
    /// `meshes`, cleared to `clear_color`, on the best Vulkan device there is. Fails with the
    /// reason when there is none.
    pub fn new(
        width: u32,
        height: u32,
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
    ) -> Result<ReferenceRenderer, TruthError> {
        let device = Arc::new(GpuDevice::new(&DeviceConfig { app_name: "meshes".into(), ..DeviceConfig::default() })?);
        ReferenceRenderer::with_device(device, width, height, capacity, meshes, clear_color)
    }

    /// [`ReferenceRenderer::new`] on an existing device (shared with the game's own renderer,
    /// so validation and memory are counted once).
    pub fn with_device(
        device: Arc<GpuDevice>,
        width: u32,
        height: u32,
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
    ) -> Result<ReferenceRenderer, TruthError> {
        ReferenceRenderer::with_shadows(device, (width, height), capacity, meshes, clear_color, 0)
    }

    /// [`ReferenceRenderer::with_device`] drawing shadows into an atlas `shadow_atlas` texels
    /// square (0: no shadows), from the views [`ReferenceRenderer::set_shadows`] gives it,
    /// with the host's caster lists.
    pub fn with_shadows(
        device: Arc<GpuDevice>,
        (width, height): (u32, u32),
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
        shadow_atlas: u32,
    ) -> Result<ReferenceRenderer, TruthError> {
        let extent = vk::Extent2D { width, height };
        let capacity = capacity.max(1);
        let scene = GpuScene::new(&device, meshes.clone(), capacity)?.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(&device), extent)?;
        graph.set_name("reference render");
        let options = ScenePassOptions { clear_color, shadow_atlas, ..ScenePassOptions::default() };
        let readback = crate::add_scene_passes(&mut graph, &scene, &options)?.ok_or(TruthError::NoReadback)?;
        Ok(ReferenceRenderer {
            device,
            graph,
            scene,
            readback,
            extent,
            clear_color,
            meshes,
            all_drawable: Vec::new(),
            capacity,
            generation: 0,
            stand_ins: Vec::new(),
            palette: None,
            skins: Vec::new(),
            shadows: None,
            view_meshes: Vec::new(),
        })
    }

    /// Adds passes to the renderer's graph (its frame has the engine's insertion points,
    /// [`crate::points`]), as [`crate::RenderSetup::passes`] does for the Render stage's.
    pub fn add_passes(
        &mut self,
        add: impl FnOnce(&mut RenderGraph) -> render_graph::Result<()>,
    ) -> Result<(), TruthError> {
        add(&mut self.graph)?;
        Ok(())
    }

    /// The device, meshes, size and clear colour, for a renderer beside this one.
    pub fn parts(&self) -> (&Arc<GpuDevice>, &MeshLibrary, vk::Extent2D, [f32; 4]) {
        (&self.device, &self.meshes, self.extent, self.clear_color)
    }

    /// Most objects the renderer draws now (it grows to hold every frame's objects).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device.capabilities().name
    }

    /// The renderer's graph (its statistics: each pass's GPU time of the last draw).
    pub fn graph(&self) -> &RenderGraph {
        &self.graph
    }

    /// What the last draw uploaded.
    pub fn last_upload(&self) -> UploadReport {
        lock_scene(&self.scene).last_upload()
    }

    /// The shadows the next frames draw: every caster of every view of `shadows` (whatever
    /// the views' own culling kept), lit as for `visibility`'s camera; `None` draws none.
    /// Only for a renderer made [`ReferenceRenderer::with_shadows`].
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
    /// [`ReferenceRenderer::objects_with_pixels`] for any view. `world` gives each object's
    /// [`ecs::BaseColor`], whose alpha cuts a masked material's holes as in the frame.
    pub fn owners_in_view(
        &mut self,
        world: &World,
        visibility: &Visibility,
        view_projection: [[f32; 4]; 4],
        objects: &[u32],
    ) -> Result<Vec<u32>, TruthError> {
        if self.clear_color[3] * 255.0 < 0.5 {
            return Err(TruthError::ClearAlpha(self.clear_color[3]));
        }
        if visibility.objects().len() > ID_LIMIT {
            return Err(TruthError::Capacity { objects: visibility.objects().len(), capacity: ID_LIMIT as u32 });
        }
        let colors = super::slot_colors(world, visibility.objects());
        self.upload(visibility, |object| id_color(object, colors[object]))?;
        self.graph.set_param(ObjectIdImage(true));
        let image = self.draw_list(view_projection, objects);
        self.graph.remove_param::<ObjectIdImage>();
        let mut owners: Vec<u32> = image?.chunks_exact(4).filter_map(pixel_owner).collect();
        owners.sort_unstable();
        owners.dedup();
        Ok(owners)
    }

    /// The object owning pixel (`x`, `y`) (rows from the top, of this renderer's image) of
    /// view `view` with culling off: the id image of every drawable object of `visibility`
    /// ([`ReferenceRenderer::submit_owner_image`]), drawn now and waited for; `None` for the
    /// sky. Picking's answer, exact whatever the frame culled.
    pub fn owner_at(
        &mut self,
        world: &World,
        visibility: &Visibility,
        view: IdView,
        (x, y): (u32, u32),
    ) -> Result<Option<u32>, TruthError> {
        self.submit_owner_image(world, visibility, view)?;
        self.graph.wait_idle()?;
        Ok(self.owner_in_image(self.readback.read()?, x, y))
    }

    /// Submits the id image [`ReferenceRenderer::owner_at`] reads, without waiting for it:
    /// every drawable object seen through `view`'s camera, each object that view sees at the
    /// level it picked, drawn where `view` says (see [`IdView`]). Returns the graph frame
    /// drawing it, for [`ReferenceRenderer::owner_when_drawn`]. The image has one readback
    /// buffer: submit the next one only once this one was read.
    pub fn submit_owner_image(
        &mut self,
        world: &World,
        visibility: &Visibility,
        view: IdView,
    ) -> Result<u64, TruthError> {
        if visibility.objects().len() > ID_LIMIT {
            return Err(TruthError::Capacity { objects: visibility.objects().len(), capacity: ID_LIMIT as u32 });
        }
        let view_projection = self.place_id_view(visibility, view)?;
        self.collect_drawable(visibility);
        let colors = super::slot_colors(world, visibility.objects());
        let submitted = self.upload(visibility, |object| id_color(object, colors[object])).and_then(|_| {
            self.graph.set_param(ObjectIdImage(true));
            let all = std::mem::take(&mut self.all_drawable);
            let submitted = self.submit_list(view_projection, &all);
            self.all_drawable = all;
            submitted
        });
        self.graph.remove_param::<ObjectIdImage>();
        self.unplace_id_view();
        submitted
    }

    /// The owner of pixel (`x`, `y`) of the id image graph frame `frame` drew
    /// ([`ReferenceRenderer::submit_owner_image`]), asked without waiting: `None` while the
    /// GPU still draws it, `Some(None)` for the sky.
    pub fn owner_when_drawn(&self, frame: u64, x: u32, y: u32) -> Result<Option<Option<u32>>, TruthError> {
        if !self.graph.frame_complete(frame)? {
            return Ok(None);
        }
        // The graph's own clock counts the frame finished only once it waited for it; the
        // fence said it has, so the mapped bytes hold what the frame wrote.
        let buffer = self.readback.buffer();
        buffer.invalidate()?;
        let bytes = buffer.mapped().ok_or(TruthError::NoReadback)?;
        Ok(Some(self.owner_in_image(bytes, x, y)))
    }

    fn owner_in_image(&self, image: &[u8], x: u32, y: u32) -> Option<u32> {
        let offset = (y as usize * self.extent.width as usize + x as usize) * 4;
        image.get(offset..offset + 4).and_then(pixel_owner)
    }

    /// The culling truth of the frame: draws every drawable object of `visibility` (in
    /// `world`) with culling off as an object-id image and returns the objects owning at
    /// least one pixel, sorted. Object `i` is drawn with `i + 1` in its colour's red, green
    /// and blue bytes and its [`ecs::BaseColor`]'s alpha, which the geometry pass's id image
    /// writes back whole with alpha 0 (see [`crate::passes`]' `ObjectIdImage`): one draw,
    /// up to 16.7M objects, where the sky keeps the clear colour's alpha (which must not
    /// round to 0). A masked material cuts the same holes as in the frame, and a blended one
    /// owns no pixel (it hides nothing). The next drawing call re-uploads its own colours.
    pub fn objects_with_pixels(&mut self, world: &World, visibility: &Visibility) -> Result<Vec<u32>, TruthError> {
        let view_projection = view_projection_of(visibility)?;
        self.collect_drawable(visibility);
        let all = std::mem::take(&mut self.all_drawable);
        let owners = self.owners_in_view(world, visibility, view_projection, &all);
        self.all_drawable = all;
        owners
    }

    /// The reference of a frame drawn elsewhere (by the Render stage): every drawable object
    /// of `visibility` with culling off, object `i` in `color_of(i)` (RGBA8 packed; see
    /// [`super::slot_colors`]); returns the image (RGBA8, rows top first).
    pub fn draw_reference(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<Vec<u8>, TruthError> {
        self.collect_drawable(visibility);
        self.draw_all(visibility, color_of)
    }

    /// Draws every drawable object of the last [`ReferenceRenderer::draw_reference`] (or
    /// [`ReferenceRenderer::objects_with_pixels`]) with culling off, object `i` in
    /// `color_of(i)`; returns the image (RGBA8, rows top first): an image of each object's
    /// verdict, say.
    pub fn draw_all(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<Vec<u8>, TruthError> {
        let view_projection = view_projection_of(visibility)?;
        self.upload(visibility, color_of)?;
        let all = std::mem::take(&mut self.all_drawable);
        let image = self.draw_list(view_projection, &all);
        self.all_drawable = all;
        image
    }

    /// Every drawable object of `visibility`, sorted, as the list the culling-off image draws.
    pub fn collect_drawable(&mut self, visibility: &Visibility) {
        self.all_drawable.clear();
        // From the drawable bits, which every answer policy keeps (`scene` may be refused).
        self.all_drawable.extend((0..visibility.len() as u32).filter(|&slot| visibility.is_drawable(slot as usize)));
    }

    /// The objects the culling-off image draws (see [`ReferenceRenderer::collect_drawable`]).
    pub fn drawable(&self) -> &[u32] {
        &self.all_drawable
    }

    /// The image's size in pixels.
    pub fn extent(&self) -> (u32, u32) {
        (self.extent.width, self.extent.height)
    }

    /// Adds a material as the renderer under test was given it
    /// ([`GpuScene::add_material`](crate::GpuScene::add_material)), so that the reference
    /// draws the same picture; returns its id (the same, given the same calls in order).
    pub fn add_material(&mut self, material: meshes::Material) -> Result<u32, crate::MaterialError> {
        let mut scene = lock_scene(&self.scene);
        let id = scene.add_material(material)?;
        self.meshes = scene.meshes().clone();
        Ok(id)
    }

    /// Replaces a material as the renderer under test did
    /// ([`GpuScene::replace_material`](crate::GpuScene::replace_material)).
    pub fn replace_material(&mut self, id: u32, material: meshes::Material) -> Result<(), crate::MaterialError> {
        let mut scene = lock_scene(&self.scene);
        scene.replace_material(id, material)?;
        self.meshes = scene.meshes().clone();
        Ok(())
    }

    /// Adds a texture as the renderer under test was given it
    /// ([`GpuScene::add_texture`](crate::GpuScene::add_texture)); the reference's frames take
    /// it whole (no budget), so the reference draws it at full detail from its first frame.
    /// A removed texture's layer is given again by the reference's own frames in flight: its
    /// ids match the game's while its frames keep step with the game's.
    pub fn add_texture(&mut self, size: u32, mips: Vec<Vec<u8>>) -> Result<u32, crate::MaterialError> {
        let mut scene = lock_scene(&self.scene);
        let id = scene.add_texture(size, mips)?;
        self.meshes = scene.meshes().clone();
        Ok(id)
    }

    /// Replaces a texture as the renderer under test did
    /// ([`GpuScene::replace_texture`](crate::GpuScene::replace_texture)).
    pub fn replace_texture(&mut self, id: u32, size: u32, mips: Vec<Vec<u8>>) -> Result<(), crate::MaterialError> {
        let mut scene = lock_scene(&self.scene);
        scene.replace_texture(id, size, mips)?;
        self.meshes = scene.meshes().clone();
        Ok(())
    }

    /// Removes a texture as the renderer under test did
    /// ([`GpuScene::remove_texture`](crate::GpuScene::remove_texture)).
    pub fn remove_texture(&mut self, id: u32) -> Result<(), crate::MaterialError> {
        lock_scene(&self.scene).remove_texture(id)
    }

    /// Removes a material as the renderer under test did
    /// ([`GpuScene::remove_material`](crate::GpuScene::remove_material)): objects naming it
    /// draw with the default material.
    pub fn remove_material(&mut self, id: u32) -> Result<(), crate::MaterialError> {
        lock_scene(&self.scene).remove_material(id)
    }

    /// Adds a mesh with its levels as the game's renderer did
    /// ([`GpuScene::add_mesh_levels`]; the same meshes in the same order give the same ids).
    /// This renderer has no budget: the whole mesh is on its GPU with the next image it
    /// draws, and each object draws what the frame checked drew
    /// ([`ReferenceRenderer::follow_stand_ins`]).
    pub fn add_mesh_levels(
        &mut self,
        vertices: meshes::MeshVertices<'_>,
        levels: &[(&[u32], &[meshes::Meshlet])],
    ) -> Result<std::ops::Range<u32>, TruthError> {
        let mut scene = lock_scene(&self.scene);
        let ids = scene.add_mesh_levels(vertices, levels).map_err(TruthError::Mesh)?;
        self.meshes = scene.meshes().clone();
        Ok(ids)
    }

    /// Draws, from now on, each mesh of `report`'s [`stand_ins`](crate::RenderReport::stand_ins)
    /// as the frame it describes drew it, and samples each texture of its
    /// [`texture_mips`](crate::RenderReport::texture_mips) from the same finest mip ([`check_frame`](super::check_frame) calls it).
    pub fn follow_stand_ins(&mut self, report: &crate::RenderReport) {
        self.stand_ins.clone_from(&report.stand_ins);
        lock_scene(&self.scene).follow_texture_mips(&report.texture_mips);
    }

    /// Draws skinned objects with `palette` (the frame's, the `animation` resource) from now
    /// on, each with its entity's rig ([`ReferenceRenderer::follow_skins`], which
    /// [`check_frame`](super::check_frame) calls): the reference then draws the pose the frame
    /// drew. Without it, skinned objects are drawn in their bind pose. Call it before each
    /// frame's check; an error when the palette buffer cannot grow.
    pub fn set_palette(&mut self, palette: &animation::SkinPalette) -> Result<(), TruthError> {
        lock_scene(&self.scene).sync_palette(palette)?;
        self.palette.get_or_insert_with(animation::SkinPalette::new).clone_from(palette);
        Ok(())
    }

    /// Writes the frame's objects into `scene` (another renderer's scene of the same meshes,
    /// such as a cluster-culled one) as this reference draws them: object `i` in
    /// `color_of(i)`, the stand-ins it follows and, once given a palette, each skinned object
    /// in its pose. Returns each object's triangle count.
    pub fn upload_as_drawn(
        &self,
        scene: &SharedScene,
        visibility: &Visibility,
        color_of: &impl Fn(usize) -> u32,
    ) -> Result<Vec<u64>, TruthError> {
        if let Some(palette) = &self.palette {
            lock_scene(scene).sync_palette(palette)?;
        }
        upload_objects_skinned(scene, visibility, color_of, &self.stand_ins, &self.skins)
    }

    /// Takes each slot's rig from `world` (its entity's `animation::Skin`), for skinned
    /// objects drawn in their pose once a palette was given.
    pub fn follow_skins(&mut self, world: &World, visibility: &Visibility) {
        self.skins.clear();
        if self.palette.is_none() {
            return;
        }
        let entities = &visibility.objects().entities;
        self.skins.extend(entities.iter().map(|&entity| {
            world.get::<&animation::Skin>(entity).map_or((0, 0), |skin| (skin.skin_first(), skin.skin_count()))
        }));
    }

    /// Writes every object as a record, object `i` in `color_of(i)`, and the shadows' caster
    /// draws from those records; returns each object's triangle count.
    pub fn upload(&mut self, visibility: &Visibility, color_of: impl Fn(usize) -> u32) -> Result<Vec<u64>, TruthError> {
        lock_scene(&self.scene).stream_frame(u64::MAX)?;
        let triangles = upload_objects_skinned(&self.scene, visibility, &color_of, &self.stand_ins, &self.skins)?;
        {
            let mut scene = lock_scene(&self.scene);
            scene.follow_growth(&mut self.graph, &mut self.generation);
            self.capacity = scene.capacity();
        }
        // The shadow views are the graph's parameter (its frame set it when it has shadows).
        // Their casters draw the records' levels, as the frame's do: taken before a view's
        // levels replace them.
        if let Some(frame) = self.graph.param_mut::<ShadowFrame>() {
            match &self.shadows {
                Some((shadows, eye, forward)) => {
                    frame.update(shadows, lock_scene(&self.scene).records(), (*eye, *forward))
                }
                None => frame.clear(),
            }
        }
        self.apply_view_meshes(visibility)?;
        Ok(triangles)
    }

    /// Draws the objects of `list` as last uploaded, seen from `view_projection`; returns the
    /// image (RGBA8, rows top first). Waits for the GPU.
    pub fn draw_list(&mut self, view_projection: [[f32; 4]; 4], list: &[u32]) -> Result<Vec<u8>, TruthError> {
        self.submit_list(view_projection, list)?;
        self.graph.wait_idle()?;
        Ok(self.readback.read()?.to_vec())
    }

    /// Submits the draw of `list` seen from `view_projection`; returns its graph frame.
    fn submit_list(&mut self, view_projection: [[f32; 4]; 4], list: &[u32]) -> Result<u64, TruthError> {
        lock_scene(&self.scene).set_draw_list(list)?;
        self.graph.set_param(FrameView::from_view_projection(glam::Mat4::from_cols_array_2d(&view_projection)));
        self.graph.execute_frame()?;
        Ok(self.graph.frame_index() - 1)
    }

    /// Writes `pixels` (an image of this renderer's size) as a PNG.
    pub fn write_png(&self, path: &Path, pixels: &[u8]) -> Result<(), TruthError> {
        crate::write_png(path, pixels, self.extent.width, self.extent.height)
            .map_err(|error| TruthError::Png(path.to_path_buf(), error))
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

/// Objects the id image tells apart: ids `1..=ID_LIMIT` fill the 24 bits of red, green and
/// blue, 0 being no object.
const ID_LIMIT: usize = (1 << 24) - 1;

/// The colour object `object` is drawn with in the id image: `object + 1` in the red, green
/// and blue bytes (red lowest, as [`ecs::BaseColor::packed`]) and the alpha byte of its frame
/// colour `color` (packed RGBA8), which the masked materials' hole test reads.
fn id_color(object: usize, color: u32) -> u32 {
    (object as u32 + 1) & 0x00ff_ffff | color & 0xff00_0000
}

/// The object owning an id-image pixel (RGBA8), or `None` for the sky (alpha not 0: the
/// clear colour's).
fn pixel_owner(pixel: &[u8]) -> Option<u32> {
    let id = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], 0]);
    (pixel[3] == 0 && id > 0).then(|| id - 1)
}

/// The camera's view-projection of the frame (column-major).
pub(super) fn view_projection_of(visibility: &Visibility) -> Result<[[f32; 4]; 4], TruthError> {
    let view = visibility.view().ok_or(TruthError::NoView)?;
    Ok((view.projection * view.view).to_cols_array_2d())
}

/// Writes object (slot) `i` of the frame as object `i` of `scene`, with the mesh its level of
/// detail chose, in `color_of(i)`; returns each object's triangle count. The scene grows to
/// hold them ([`GpuScene::reserve`]: a graph drawing it must follow,
/// [`GpuScene::follow_growth`]); [`TruthError::Capacity`] when it cannot.
pub fn upload_objects(
    scene: &SharedScene,
    visibility: &Visibility,
    color_of: &impl Fn(usize) -> u32,
) -> Result<Vec<u64>, TruthError> {
    upload_objects_drawing(scene, visibility, color_of, &[])
}

/// [`upload_objects`], where an object naming a mesh of `stand_ins` draws its stand-in instead
/// (nothing for `None`), as the frame checked did ([`crate::RenderReport::stand_ins`]).
pub fn upload_objects_drawing(
    scene: &SharedScene,
    visibility: &Visibility,
    color_of: &impl Fn(usize) -> u32,
    stand_ins: &[(u32, Option<u32>)],
) -> Result<Vec<u64>, TruthError> {
    upload_objects_skinned(scene, visibility, color_of, stand_ins, &[])
}

/// [`upload_objects_drawing`], where the object of slot `i` drawing a skinned mesh is skinned
/// with the palette slice `skins[i]` (none past the list, or for `(_, 0)`).
fn upload_objects_skinned(
    scene: &SharedScene,
    visibility: &Visibility,
    color_of: &impl Fn(usize) -> u32,
    stand_ins: &[(u32, Option<u32>)],
    skins: &[(u32, u32)],
) -> Result<Vec<u64>, TruthError> {
    let objects = visibility.objects();
    let mut scene = lock_scene(scene);
    // The scene grows to hold every object; a graph drawing it follows
    // (`GpuScene::follow_growth`).
    let wanted = u32::try_from(objects.len()).unwrap_or(u32::MAX);
    if let Err(error) = scene.reserve(wanted) {
        log::warn!("{error}");
        return Err(TruthError::Capacity { objects: objects.len(), capacity: error.capacity });
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
        let mesh = match stand_ins.iter().find(|(wanted, _)| *wanted == draw.mesh.0) {
            None => draw.mesh.0,
            Some(&(_, Some(drawn))) => drawn,
            Some(&(_, None)) => {
                scene.clear_object(index as u32)?;
                continue;
            }
        };
        if scene.meshes().range(mesh).is_none() {
            return Err(TruthError::MissingMesh { object: index, mesh });
        }
        *count = u64::from(scene.meshes().triangle_count(mesh));
        let world = objects.models[index].to_cols_array_2d();
        scene
            .set_object(index as u32, ObjectDesc { world, color: color_of(index), mesh, material: draw.material.0 })?;
        if let Some(&(skin_first, skin_count)) = skins.get(index).filter(|skin| skin.1 > 0) {
            if crate::mesh_is_skinned(scene.meshes(), mesh) {
                let record = crate::ObjectRecord { skin_first, skin_count, ..scene.records()[index] };
                let transform = scene.transforms()[index];
                scene.set_parts(index as u32, transform, record)?;
            }
        }
    }
    Ok(triangles)
}

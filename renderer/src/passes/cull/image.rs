//! An image-target view's object cull on the GPU ([`ImageCullPass`]): the camera's two-phase
//! cull ([`GpuCullPass`](super::GpuCullPass)'s shader, `gpu_cull.h` with `CULL_IMAGE_VIEW`)
//! for the one camera that renders into the image `<image>`, with resources of its own, so no
//! other view's history, pyramid or lists ever reach it:
//!
//! - `<image> visibility_bits`: its bits (the late phase writes them; last frame's version is
//!   both phases' history), the capacity's words as the window's;
//! - `<image> hiz`: the pyramid of its own depth (`<image> depth`, the early list drawn by its
//!   depth prepass), built by [`HiZBuildPass::image_view`](crate::HiZBuildPass::image_view);
//! - `<image> commands` (its early list, then its late list, the capacity's commands each, one
//!   per object: not batched), `<image> draw count` (a count per list), `<image> cull stats`
//!   (its counters, as `cull_stats`' first view) and `<image> instances` (bound, unused: the
//!   lists are not batched), created and zeroed each frame by its [`ImageCullSetupPass`];
//! - `<image> excluded`: the slots left out of the view (an object whose material samples the
//!   view's own image: a cycle), uploaded each frame by the same pass.
//!
//! The dispatch is one row (view 0, the image's camera); the main camera is staged as view 1 so
//! that the view's levels of detail measure their hysteresis from the main view's level of
//! this frame, as the CPU's other views do, and the view writes no slot's level state.

use std::sync::Arc;

use render_graph::{
    Binding, BindingKind, BufferDesc, BufferRead, BufferWrite, ExecuteContext, GpuDevice, PrepareContext, Registry,
    ShaderStage, TypedPass,
};

use super::camera::{
    lock_settings, visibility_bits_bytes, SharedCullSettings, CULL_GROUP, CULL_STAT_WORDS, VISIBILITY_BITS,
};
use super::skeleton::{CullKind, CullPhase, TwoPhaseCull};
use super::view::{CullConstants, CullView};
use crate::names::{LOD_ENTRIES, OBJECT_BATCHES, OBJECT_LOD_LEVELS};
use crate::passes::hiz::{image_view_hiz_name, HIZ_DEPTH};
use crate::scene::{as_bytes, lock_scene, FrameView, ImageRun, ImageViews, SharedScene, DRAW_COMMAND_BYTES};

/// The names of an image-target view's own cull resources and passes (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageCullNames {
    /// `<image> visibility_bits`.
    pub bits: String,
    /// `<image> commands`: the early list, then the late list.
    pub commands: String,
    /// `<image> draw count`: the early and the late list's lengths.
    pub counts: String,
    /// `<image> cull stats`: [`CULL_STAT_WORDS`] counters.
    pub stats: String,
    /// `<image> instances` (the lists are not batched: bound, never read).
    pub instances: String,
    /// `<image> excluded`: the slots left out, one bit each.
    pub excluded: String,
    /// `<image> hiz`: the pyramid of `<image> depth`.
    pub pyramid: String,
    /// The passes: `<image> cull early`, `<image> cull late`, `<image> cull setup`.
    pub early: String,
    /// See [`ImageCullNames::early`].
    pub late: String,
    /// See [`ImageCullNames::early`].
    pub setup: String,
}

impl ImageCullNames {
    /// The names for the view drawn into the image `image`.
    pub fn new(image: &str) -> ImageCullNames {
        ImageCullNames {
            bits: format!("{image} {VISIBILITY_BITS}"),
            commands: format!("{image} commands"),
            counts: format!("{image} draw count"),
            stats: format!("{image} cull stats"),
            instances: format!("{image} instances"),
            excluded: format!("{image} excluded"),
            pyramid: image_view_hiz_name(image),
            early: format!("{image} cull early"),
            late: format!("{image} cull late"),
            setup: format!("{image} cull setup"),
        }
    }
}

/// An image-target view's object cull: the [`CullKind`] of [`ImageCullPass`].
pub struct ImageObjectCull {
    image: Arc<str>,
    names: ImageCullNames,
    scene: SharedScene,
    settings: SharedCullSettings,
    capacity: u32,
}

/// The image cull's own resources (as the camera's, with the excluded slots in place of this
/// frame's levels).
pub struct ImageCullHandles {
    bits: Option<BufferWrite>,
    commands: BufferWrite,
    count: BufferWrite,
    stats: BufferWrite,
    batches: BufferRead,
    instances: BufferWrite,
    lod_entries: BufferRead,
    lod_history: BufferRead,
    excluded: BufferRead,
}

/// One phase of an image-target view's object cull (see the module docs).
pub type ImageCullPass = TwoPhaseCull<ImageObjectCull>;

impl TwoPhaseCull<ImageObjectCull> {
    /// The cull of `phase` of the view drawn into `image`, over the objects of `scene`, with
    /// the tests `settings` asks for (the window's).
    pub fn image_view(
        device: &Arc<GpuDevice>,
        scene: SharedScene,
        settings: SharedCullSettings,
        image: Arc<str>,
        phase: CullPhase,
    ) -> render_graph::Result<ImageCullPass> {
        let capacity = lock_scene(&scene).capacity();
        let names = ImageCullNames::new(&image);
        TwoPhaseCull::with_kind(device, ImageObjectCull { image, names, scene, settings, capacity }, phase)
    }
}

impl CullKind for ImageObjectCull {
    type Handles = ImageCullHandles;

    // The defaults; every instance names its own (`history_name`, `pyramid_name`).
    const HISTORY: &'static str = VISIBILITY_BITS;
    const PYRAMID: &'static str = HIZ_DEPTH;

    fn name(&self, phase: CullPhase) -> &str {
        match phase {
            CullPhase::Early => &self.names.early,
            CullPhase::Late => &self.names.late,
        }
    }

    fn history_name(&self) -> &str {
        &self.names.bits
    }

    fn pyramid_name(&self) -> &str {
        &self.names.pyramid
    }

    fn shader(&self, phase: CullPhase) -> (&'static [u32], &'static [BindingKind]) {
        // The bits (late), the commands, counts, counters, batches, instances, LOD entries,
        // last frame's levels and the excluded slots.
        const OUTPUTS: [BindingKind; 9] = [BindingKind::StorageBuffer; 9];
        match phase {
            CullPhase::Early => (shaders::IMAGE_CULL_EARLY_COMP.words(), &OUTPUTS[1..]),
            CullPhase::Late => (shaders::IMAGE_CULL_LATE_COMP.words(), &OUTPUTS),
        }
    }

    fn register(&mut self, phase: CullPhase, registry: &mut Registry<'_>) -> ImageCullHandles {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        // The scene may have grown since the last compile.
        self.capacity = lock_scene(&self.scene).capacity();
        let names = &self.names;
        let bits = (phase == CullPhase::Late).then(|| {
            let size = visibility_bits_bytes(self.capacity);
            let bits = registry.create_buffer(&names.bits, BufferDesc { size });
            registry.write_storage_buffer(bits, COMPUTE)
        });
        let [commands, count, stats, instances] =
            [&names.commands, &names.counts, &names.stats, &names.instances].map(|name| registry.buffer(name));
        let [batches, lod_entries, excluded] =
            [OBJECT_BATCHES, LOD_ENTRIES, &names.excluded].map(|name| registry.buffer(name));
        let lod_history = registry.history_buffer(OBJECT_LOD_LEVELS);
        ImageCullHandles {
            bits,
            commands: registry.read_write_storage_buffer(commands, COMPUTE),
            count: registry.read_write_storage_buffer(count, COMPUTE),
            stats: registry.read_write_storage_buffer(stats, COMPUTE),
            batches: registry.read_storage_buffer(batches, COMPUTE),
            instances: registry.read_write_storage_buffer(instances, COMPUTE),
            lod_entries: registry.read_storage_buffer(lod_entries, COMPUTE),
            lod_history: registry.read_storage_buffer(lod_history, COMPUTE),
            excluded: registry.read_storage_buffer(excluded, COMPUTE),
        }
    }

    fn prepare(
        &mut self,
        _phase: CullPhase,
        context: &mut PrepareContext<'_>,
        views: &mut Vec<CullView>,
    ) -> Option<CullConstants> {
        let main = match context.require_param::<FrameView>() {
            Ok(view) => view,
            Err(error) => {
                context.fail(error);
                return None;
            }
        };
        // A frame without this view (its camera gone, or drawn from host lists) culls nothing.
        let image = context.param::<ImageViews>()?.get(&self.image).filter(|view| view.run == ImageRun::Gpu)?;
        let (object_count, lod, every_object) = {
            let scene = lock_scene(&self.scene);
            (scene.object_count(), scene.lod_view(), scene.lod_every_object())
        };
        let settings = *lock_settings(&self.settings);
        let (frustum, occlusion) = (settings.frustum, settings.occlusion);
        let size = render_graph::vk::Extent2D { width: image.size.0.max(1), height: image.size.1.max(1) };
        let view_projection = glam::Mat4::from_cols_array_2d(&image.view_projection);
        let own = CullView::window(view_projection, [0, 0, size.width, size.height], size, frustum, occlusion);
        views.push(
            own.with_lod(image.lod.filter(|_| lod.is_some()), every_object).with_distance_lod(image.lod_distance),
        );
        // The main camera, for the hysteresis of the levels alone (its row is not dispatched).
        let main = CullView::camera(main, context.output_extent(), frustum, occlusion);
        views.push(main.with_lod(lod, every_object));
        Some(CullConstants {
            item_count: object_count.min(self.capacity),
            words_per_view: self.capacity.div_ceil(64) * 2,
            region: self.capacity,
            ..CullConstants::default()
        })
    }

    fn bind(&self, handles: &ImageCullHandles, bind: &mut dyn FnMut(Binding)) {
        if let Some(bits) = &handles.bits {
            bind(Binding::buffer(bits));
        }
        bind(Binding::buffer(&handles.commands));
        bind(Binding::buffer(&handles.count));
        bind(Binding::buffer(&handles.stats));
        bind(Binding::buffer(handles.batches));
        bind(Binding::buffer(&handles.instances));
        bind(Binding::buffer(handles.lod_entries));
        bind(Binding::buffer(handles.lod_history));
        bind(Binding::buffer(handles.excluded));
    }

    fn dispatch(&self, _handles: &ImageCullHandles, constants: &CullConstants, context: &mut ExecuteContext<'_>) {
        // One row: view 0, the image's camera (view 1 is read for the levels alone).
        let groups = constants.item_count.div_ceil(CULL_GROUP);
        if groups > 0 {
            context.dispatch(groups, 1, 1);
        }
    }
}

/// Creates an image-target view's cull buffers each frame (see the module docs): zeroes its
/// list counts and counters (and, with `zero_commands`, its commands, for draws without a
/// count), and uploads its excluded slots' bits from the frame's [`ImageViews`]. Named
/// `<image> cull setup`.
pub struct ImageCullSetupPass {
    image: Arc<str>,
    names: ImageCullNames,
    scene: SharedScene,
    zero_commands: bool,
    /// Scratch: this frame's excluded bits.
    excluded: Vec<u32>,
}

impl ImageCullSetupPass {
    /// The setup of the cull of the view drawn into `image`.
    pub fn new(scene: SharedScene, image: Arc<str>, zero_commands: bool) -> ImageCullSetupPass {
        let names = ImageCullNames::new(&image);
        ImageCullSetupPass { image, names, scene, zero_commands, excluded: Vec::new() }
    }
}

impl TypedPass for ImageCullSetupPass {
    /// The commands, counts, counters, instances and excluded bits.
    type Handles = [BufferWrite; 5];

    fn name(&self) -> &str {
        &self.names.setup
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> [BufferWrite; 5] {
        let capacity = u64::from(lock_scene(&self.scene).capacity().max(1));
        let names = &self.names;
        let sizes = [
            (&names.commands, 2 * capacity * DRAW_COMMAND_BYTES),
            (&names.counts, 2 * 4),
            (&names.stats, CULL_STAT_WORDS as u64 * 4),
            (&names.instances, capacity * 4),
            (&names.excluded, visibility_bits_bytes(capacity as u32)),
        ];
        sizes.map(|(name, size)| {
            let buffer = registry.create_buffer(name, BufferDesc { size });
            registry.write_buffer(buffer, render_graph::Access::TransferWrite)
        })
    }

    fn prepare(&mut self, handles: &[BufferWrite; 5], context: &mut PrepareContext<'_>) {
        let capacity = lock_scene(&self.scene).capacity();
        self.excluded.clear();
        self.excluded.resize(capacity.div_ceil(64) as usize * 2, 0);
        let views = context.param::<ImageViews>();
        let excluded = views.and_then(|views| Some(views.excluded(views.get(&self.image)?)));
        for &slot in excluded.unwrap_or(&[]) {
            if let Some(word) = self.excluded.get_mut(slot as usize / 32) {
                *word |= 1 << (slot % 32);
            }
        }
        if let Err(error) = context.upload_buffer(&handles[4], 0, as_bytes(&self.excluded)) {
            context.fail(error);
        }
    }

    fn execute(&mut self, handles: &[BufferWrite; 5], context: &mut ExecuteContext<'_>) {
        let whole = render_graph::vk::WHOLE_SIZE;
        if self.zero_commands {
            context.fill_buffer(&handles[0], 0, whole, 0);
        }
        context.fill_buffer(&handles[1], 0, whole, 0);
        context.fill_buffer(&handles[2], 0, whole, 0);
    }
}

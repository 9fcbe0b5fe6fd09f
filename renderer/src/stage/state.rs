//! The renderer the Render stage owns: its graph, its GPU scene and the bookkeeping of the
//! GPU's answers; one frame is the changed slots into the scene, then the graph executed.

use std::sync::{Arc, Mutex};

use culling::Visibility;
use render_graph::{GpuDevice, Owner, RenderGraph};

use super::debug_view::{DebugView, DebugViewPass};
use super::image_views::ImageViewPasses;
use super::outcome::{report_user_passes, FrameOutcome};
use super::readback::{add_ring, ReadbackRing, READBACK_RING, SHADOW_BITS_RING, VISIBILITY_RING};
use super::screenshot::{develop, lock_copied, Screenshot, ScreenshotPass, ScreenshotRequest, Screenshots, SharedCopy};
use super::sync::SceneSync;
use super::window_views::{list_window_views, SplitInputs, SplitWarnings};
use super::{BitsReadback, FrameTarget, RenderReport, RenderSetup, TargetFrame};
use crate::frame::{add_gpu_culled_scene_passes, add_scene_passes, points, ScenePassOptions};
use crate::passes::{
    lock_settings, shadow_bits_words, visibility_bits_bytes, GpuCullSettings, SharedCullSettings, CULL_STATS,
    CULL_STAT_WORDS, SHADOW_CASTER_BITS, SHADOW_DRAW_COUNTS, SHADOW_DRAW_COUNT_BYTES, VISIBILITY_BITS,
};
use crate::scene::{
    lock_scene, FrameView, GpuScene, ImageViews, ShadowCulling, ShadowFrame, SharedScene, WindowViews, MAX_WINDOW_VIEWS,
};

/// What the Render stage's extract reads of the frame.
#[derive(Clone, Copy)]
pub(super) struct FrameInputs<'a> {
    pub(super) world: &'a runtime::hecs::World,
    pub(super) changes: &'a runtime::changes::Changes,
    pub(super) visibility: &'a Visibility,
    pub(super) shadows: Option<&'a culling::ShadowViews>,
    /// Whether the frame batches its draws ([`ecs::RenderSettings::batch_draws`]).
    pub(super) batch_draws: bool,
    /// Whether the GPU cull chooses levels of detail ([`ecs::RenderSettings::gpu_lod_selection`]).
    pub(super) gpu_lod_selection: bool,
    /// The global level-of-detail bias ([`ecs::RenderSettings::effective_lod_bias`]).
    pub(super) lod_bias: f32,
    /// Most bytes of added meshes the frame copies ([`ecs::RenderSettings::transfer_budget`]).
    pub(super) transfer_budget: u64,
    /// [`ecs::RenderSettings::mesh_memory_budget`].
    pub(super) mesh_memory_budget: Option<u64>,
    /// [`ecs::RenderSettings::evict_after_frames`].
    pub(super) evict_after_frames: u32,
    /// The animation system's skin palette, when animation is installed.
    pub(super) palette: Option<&'a animation::SkinPalette>,
    /// Each mesh's simplification error, for the LOD chains the GPU chooses levels of.
    pub(super) lod_errors: Option<&'a ecs::LodErrors>,
    /// Every view of the frame (split-screen draws each window view into its rectangle).
    pub(super) views: Option<&'a ecs::ResolvedViews>,
    /// The window's size: the image of a frame of several window views.
    pub(super) window: Option<ecs::Viewport>,
}

/// The shadows of the frame as the renderer was installed (all zero without shadows).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ShadowSetup {
    /// Side of the shadow atlas.
    pub(super) atlas: u32,
    /// Most shadow views a frame draws.
    pub(super) views: u32,
    /// Side of the atlas's square holding the cascades.
    pub(super) pyramid: u32,
}

/// The renderer the Render-stage system owns.
pub(super) struct RenderState {
    /// Side of the shadow atlas; 0 without shadows.
    pub(super) shadow_atlas: u32,
    /// Whether the GPU culls the shadow casters.
    pub(super) shadows_on_device: bool,
    pub(super) graph: RenderGraph,
    pub(super) scene: SharedScene,
    pub(super) sync: SceneSync,
    pub(super) on_device: bool,
    pub(super) bits_mode: BitsReadback,
    /// The GPU's statistics and bits read back, lagged.
    pub(super) ring: ReadbackRing,
    pub(super) frames: u64,
    /// Where frames go besides `color`.
    pub(super) target: Option<Box<dyn FrameTarget>>,
    /// The GPU culling's switches (GPU backend only).
    pub(super) cull_settings: Option<SharedCullSettings>,
    /// Their `per_view_dispatch` last frame: the cull's steps follow it (a change recompiles).
    per_view_compiled: bool,
    /// The debug view the graph shows now (see [`DebugView`]).
    debug_view: DebugView,
    /// The camera of the prepared frame's main view (`None`: the host's free view).
    main_camera: Option<runtime::hecs::Entity>,
    /// The main view of the last frame drawn, with its camera: the next frame's `previous_*`
    /// matrices while its main view is seen through the same camera.
    last_view: Option<(Option<runtime::hecs::Entity>, FrameView)>,
    /// The window views' cameras and blocks of the last frame drawn: each next frame's view
    /// takes its `previous_*` matrices from the one of its camera ([`WindowViews::follow`]).
    last_window_uniforms: Vec<(Option<runtime::hecs::Entity>, FrameView)>,
    /// The images screenshots were asked of, each with its pass's copy.
    screenshot_copies: Vec<(String, SharedCopy)>,
    /// This frame's due screenshot requests.
    due_shots: Vec<ScreenshotRequest>,
    /// The scale their depth pictures are developed on, taken with them.
    depth_log_decades: f32,
    /// The scene's generation the graph imported ([`GpuScene::follow_growth`]).
    scene_generation: u64,
    /// Most shadow views a frame draws (the rings of their bits are sized for them).
    shadow_views: u32,
    /// Scratch: the host's list of the objects the scene holds, while it holds fewer slots
    /// than the Visibility stage (a growth failed).
    fitting: Vec<u32>,
    /// What the extract has said once about window views it does not draw.
    split_warnings: SplitWarnings,
    /// The image-target views' passes the graph holds.
    image_views: ImageViewPasses,
}

impl RenderState {
    pub(super) fn new(
        device: &Arc<GpuDevice>,
        setup: RenderSetup,
        on_device: bool,
        mut target: Option<Box<dyn FrameTarget>>,
        shadows: ShadowSetup,
    ) -> render_graph::Result<RenderState> {
        let shadow_atlas = shadows.atlas;
        let scene = GpuScene::new(device, setup.meshes, setup.capacity)?.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(device), setup.extent)?;
        graph.set_name("renderer");
        let options = ScenePassOptions {
            clear_color: setup.clear_color,
            readback: false,
            shadow_atlas,
            shadow_views: shadows.views,
            shadow_pyramid: shadows.pyramid,
            ..ScenePassOptions::default()
        };
        let mut cull_settings = None;
        let mut ring = ReadbackRing::default();
        if on_device {
            let settings = Arc::new(Mutex::new(GpuCullSettings::default()));
            cull_settings = Some(Arc::clone(&settings));
            let culled = add_gpu_culled_scene_passes(&mut graph, &scene, &options, &settings, false)?;
            // Room for every window view of a split-screen frame.
            let views = MAX_WINDOW_VIEWS as u64;
            ring.stats = Some(add_ring(&mut graph, "cull stats ring", CULL_STATS, views * CULL_STAT_WORDS as u64 * 4)?);
            let read_bits = setup.bits != BitsReadback::None;
            if read_bits {
                let bytes = visibility_bits_bytes(setup.capacity);
                ring.bits = Some(add_ring(&mut graph, VISIBILITY_RING, VISIBILITY_BITS, views * bytes)?);
                ring.words_per_view = bytes as usize / 8;
            }
            if culled.shadows_on_device {
                ring.shadow_counts =
                    Some(add_ring(&mut graph, "shadow counts ring", SHADOW_DRAW_COUNTS, SHADOW_DRAW_COUNT_BYTES)?);
                ring.shadow_views = (0..READBACK_RING).map(|_| Vec::new()).collect();
                if read_bits {
                    let words = shadow_bits_words(setup.capacity);
                    let bytes =
                        u64::from(words) * 4 * u64::from(shadows.views.clamp(1, crate::MAX_SHADOW_VIEWS as u32));
                    ring.shadow_bits = Some(add_ring(&mut graph, SHADOW_BITS_RING, SHADOW_CASTER_BITS, bytes)?);
                    ring.shadow_words_per_view = words as usize / 2;
                }
            }
        } else {
            add_scene_passes(&mut graph, &scene, &options)?;
        }
        // The users' passes: each closure's passes one group, dropped together (logged, in
        // `RenderReport::dropped_passes`) when one fails, while the engine's frame goes on.
        graph.set_owner(Owner::User);
        for (index, add) in setup.passes.into_iter().enumerate() {
            let _ = graph.add_group_named(format!("RenderSetup::passes[{index}]"), add);
        }
        graph.set_owner(Owner::Engine);
        if let Some(target) = &mut target {
            target.add_passes(&mut graph)?;
        }
        let words = visibility_bits_bytes(setup.capacity) as usize / 8;
        ring.in_view = (0..READBACK_RING).map(|_| Vec::with_capacity(words)).collect();
        let shadows_on_device = ring.shadow_counts.is_some();
        let image_cull = cull_settings.clone();
        Ok(RenderState {
            shadow_atlas,
            shadows_on_device,
            graph,
            scene,
            sync: SceneSync::default(),
            on_device,
            bits_mode: setup.bits,
            ring,
            frames: 0,
            target,
            cull_settings,
            per_view_compiled: false,
            screenshot_copies: Vec::new(),
            due_shots: Vec::new(),
            depth_log_decades: 0.0,
            debug_view: DebugView::default(),
            main_camera: None,
            last_view: None,
            last_window_uniforms: Vec::with_capacity(MAX_WINDOW_VIEWS),
            scene_generation: 0,
            shadow_views: shadows.views,
            fitting: Vec::new(),
            split_warnings: SplitWarnings::default(),
            image_views: ImageViewPasses::new(setup.clear_color, shadow_atlas > 0, image_cull),
        })
    }

    /// The host half of a frame, on the Render stage's thread (the extract): the changed
    /// slots into the GPU scene (every frame, drawn or not), the host's list, the view and
    /// the shadow views into the graph's parameters ([`FrameView`], [`ShadowFrame`]) and the
    /// screenshots due. Afterwards the scene and the graph hold everything the frame draws,
    /// so the next frame's systems may change the world while [`RenderState::submit`] runs.
    /// Returns whether there is a frame to submit (not without a view or under a zero
    /// viewport).
    /// What the extract did goes to `outcome` ([`FrameOutcome::publish_prepared`]), to be
    /// published with the frame it belongs to.
    pub(super) fn prepare(
        &mut self,
        inputs: FrameInputs<'_>,
        outcome: &mut FrameOutcome,
        shots: &mut Screenshots,
    ) -> render_graph::Result<bool> {
        let FrameInputs { visibility, shadows, .. } = inputs;
        let game_frame = outcome.game_frame;
        let report = &mut outcome.report;
        report.sync_seconds = 0.0;
        report.synced_slots = 0;
        report.missing_meshes = 0;
        report.host_draw_commands = 0;
        outcome.host_shadows = false;
        outcome.growth_error = None;
        let grew = self.sync_scene(&inputs, outcome)?;
        if let Some(capacity) = grew {
            self.ring.follow_growth(&mut self.graph, capacity, self.shadow_views, self.frames)?;
            if let Some(frame) = self.graph.param_mut::<ShadowFrame>() {
                if let ShadowCulling::Device { views, pyramid, .. } = frame.culling() {
                    frame.set_culling(ShadowCulling::Device { region: capacity.max(1), views, pyramid });
                }
            }
        }
        // A slot whose object appeared (a new owner, or newly drawable) has no GPU answer of
        // its own yet: the older frames' in-view bits must not make it look occluded.
        for slot in visibility.changes().appeared_slots() {
            let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
            for in_view in &mut self.ring.in_view {
                if let Some(word) = in_view.get_mut(word) {
                    *word &= !bit;
                }
            }
        }
        let Some(view) = visibility.view() else { return Ok(false) };
        self.main_camera = view.camera;
        let viewport = (view.viewport.width, view.viewport.height);
        if viewport.0 == 0 || viewport.1 == 0 {
            // A view resolved for a zero viewport: nothing to draw into.
            return Ok(false);
        }
        let mut frame_view = FrameView::new(view.view, view.projection, view.position, viewport, view.near, view.far);
        if let Some(draw_view) = self.target.as_ref().and_then(|target| target.draw_view()) {
            frame_view.set_view_projection(glam::Mat4::from_cols_array_2d(&draw_view));
        }
        // The view goes from the View stage to the passes as the graph's parameter: what this
        // frame's culls, draws and `view` uniform use.
        self.graph.set_param(frame_view);
        let shadowed = shadows.is_some() && self.shadow_atlas > 0;
        let mut window_views = self.graph.param_mut::<WindowViews>().map(std::mem::take).unwrap_or_default();
        let mut image_views = self.graph.param_mut::<ImageViews>().map(std::mem::take).unwrap_or_default();
        let split;
        {
            let mut scene = lock_scene(&self.scene);
            if !self.on_device {
                let count = scene.object_count();
                if visibility.len() <= count as usize {
                    scene.set_draw_list(visibility.visible())?;
                } else {
                    // The scene could not grow: the objects that fit are drawn.
                    self.fitting.clear();
                    self.fitting.extend(visibility.visible().iter().copied().filter(|&slot| slot < count));
                    scene.set_draw_list(&self.fitting)?;
                }
            }
            let split_inputs = SplitInputs {
                views: inputs.views,
                window: inputs.window,
                visibility,
                main: &frame_view,
                on_device: self.on_device,
                lod_bias: inputs.lod_bias,
            };
            let mut room_grew = false;
            split = list_window_views(
                split_inputs,
                &mut scene,
                &mut window_views,
                &mut self.split_warnings,
                &mut room_grew,
            );
            let per_view =
                self.cull_settings.as_ref().is_some_and(|settings| lock_settings(settings).per_view_dispatch);
            if room_grew || std::mem::replace(&mut self.per_view_compiled, per_view) != per_view {
                // The cull's lists, counts and bits are declared for the new room, its steps
                // for the dispatches the setting asks for.
                self.graph.invalidate();
            }
            self.image_views.list(
                (inputs.views, visibility),
                &mut scene,
                (self.on_device, inputs.lod_bias),
                &mut image_views,
            );
            if !self.on_device {
                outcome.report.host_draw_commands = scene.draw_commands().len() as u32;
            }
            // The shadow views likewise, updated in place (the frames with shadows set it).
            if let Some(frame) = self.graph.param_mut::<ShadowFrame>() {
                match shadows {
                    Some(shadows) if self.shadow_atlas > 0 => {
                        let forward = view.rotation * glam::Vec3::NEG_Z;
                        frame.update(shadows, scene.records(), (view.position, forward));
                    }
                    _ => frame.clear(),
                }
            }
        }
        self.graph.set_param(window_views);
        self.graph.set_param(image_views);
        self.image_views.follow(&mut self.graph, &self.scene, (&mut self.ring, self.frames))?;
        // The image follows the view it was culled for (the whole window when it shows several
        // views), unless the target owns the extent (see `FrameTarget::follows_view`).
        let extent = split.unwrap_or(viewport);
        if self.target.as_ref().is_none_or(|target| target.follows_view()) {
            self.graph.set_output_extent(render_graph::vk::Extent2D { width: extent.0, height: extent.1 });
        }
        outcome.host_shadows = self.report_shadows(shadowed, &mut outcome.report);
        // What the GPU's answer of this frame is compared with (its ring region). A frame
        // answered on request has no CPU bits in view: the region stays empty (all in view),
        // and the Visibility stage tests the box against that frame's view when asked.
        let in_view = &mut self.ring.in_view[(self.frames % READBACK_RING) as usize];
        in_view.clear();
        if visibility.answers() == ecs::CpuAnswers::EveryFrame {
            let occluded = visibility.occluded_words();
            let words = visibility.bits().words().iter().enumerate();
            in_view.extend(words.map(|(index, word)| word | occluded.get(index).copied().unwrap_or(0)));
        }
        shots.due(game_frame, &mut self.due_shots);
        self.depth_log_decades = shots.depth_log_decades();
        self.arm_screenshots(shots, game_frame);
        Ok(true)
    }

    /// The scene half of [`RenderState::prepare`]: the frame's slice of added meshes, the
    /// changed slots into the GPU scene and the growth the graph must follow. Returns the new
    /// capacity when the object slots grew.
    fn sync_scene(
        &mut self,
        inputs: &FrameInputs<'_>,
        outcome: &mut FrameOutcome,
    ) -> render_graph::Result<Option<u32>> {
        let FrameInputs { world, changes, visibility, batch_draws, transfer_budget, .. } = *inputs;
        let (memory_budget, evict_after) = (inputs.mesh_memory_budget, inputs.evict_after_frames);
        let report = &mut outcome.report;
        let mut scene = {
            runtime::profile_zone!("lock wait: scene");
            lock_scene(&self.scene)
        };
        runtime::profile_zone!("lock held: scene");
        scene.set_batch_draws(batch_draws);
        let started = std::time::Instant::now();
        let capacity_before = scene.capacity();
        // The frame's slice of added meshes first: the records written next may name what
        // it completes.
        // A mesh buffer that cannot grow leaves the added meshes' objects on their
        // stand-ins; the frame is drawn and the error reported.
        let mut stream_error = None;
        scene.plan_residency(visibility, inputs.shadows, memory_budget, evict_after);
        scene.plan_texture_residency(visibility, inputs.shadows, evict_after);
        if let Err(error) = scene.stream_frame(transfer_budget) {
            stream_error = Some(format!("the mesh buffers could not grow for the meshes added: {error}"));
        }
        scene.stand_ins(&mut report.stand_ins);
        scene.texture_stand_ins(&mut report.texture_mips);
        report.residency = scene.residency_report();
        plot_residency(&report.residency);
        let lod_view = visibility.lod_error_view().filter(|_| inputs.gpu_lod_selection);
        scene.set_lod_view(lod_view, !visibility.stats().tracked);
        let synced = self.sync.apply(world, changes, visibility, inputs.lod_errors, &mut scene)?;
        if let Some(palette) = inputs.palette {
            if let Err(error) = scene.sync_palette(palette) {
                stream_error = Some(format!("the skin palette buffer could not grow: {error}"));
            }
        }
        report.sync_seconds = started.elapsed().as_secs_f64();
        report.synced_slots = synced.slots;
        report.missing_meshes = synced.missing_meshes;
        outcome.growth_error = synced.growth_error.map(|error| error.to_string()).or(stream_error);
        // Passes sized by the capacity declare again, in the frame that grows (the mesh
        // buffers growing alone leaves the rings of bits as they are).
        let followed = scene.follow_growth(&mut self.graph, &mut self.scene_generation);
        let grown = (followed && scene.capacity() != capacity_before).then(|| scene.capacity());
        Ok(grown)
    }

    /// The device half of the frame [`RenderState::prepare`] made, on the render thread
    /// when frames are pipelined (else right after it): the target's image, the graph
    /// executed, the screenshots developed, the waited readback, the present. Reads the
    /// GPU scene and the passes, never the world. What it produced goes to `outcome`.
    pub(super) fn submit(&mut self, game_frame: u64, outcome: &mut FrameOutcome) {
        runtime::profile_zone_value!("render frame", game_frame);
        outcome.drawn = false;
        outcome.read_bits = false;
        if let Err(error) = self.submit_inner(game_frame, outcome) {
            outcome.error = Some(error);
        }
    }

    fn submit_inner(&mut self, game_frame: u64, outcome: &mut FrameOutcome) -> render_graph::Result<()> {
        if let Some(target) = &mut self.target {
            if !target.begin_frame(&mut self.graph, TargetFrame { game: game_frame, drawn: self.frames })? {
                outcome.deferred.append(&mut self.due_shots);
                return Ok(());
            }
        }
        // The image's size as the graph draws it, now that the target has set it: the view's
        // viewport is never a stale window size.
        // Last frame's matrices are those of the last frame drawn through the same camera (a
        // frame that failed is not one; another camera's history is never taken).
        let extent = self.graph.output_extent();
        if let Some(view) = self.graph.param_mut::<FrameView>() {
            view.set_viewport((extent.width, extent.height));
            // A camera that was another window view last frame brings that view's history.
            let views = self.last_view.iter().chain(&self.last_window_uniforms);
            if let Some((_, last)) = views.into_iter().find(|(camera, _)| *camera == self.main_camera) {
                view.set_previous(last);
            }
        }
        self.follow_window_views();
        let mut executed = self.execute();
        if let Err(error) = &executed {
            if self.debug_view.image.is_some() && error.pass() == Some(DebugViewPass::NAME) {
                // The view cannot be shown (no such image, an integer image): the frame is
                // drawn without it, this frame still, and the view is not tried again until
                // the resource changes.
                log::warn!(
                    "debug view of `{}` (mip {}): {error}; the frame is shown instead",
                    self.debug_view.image.as_deref().unwrap_or_default(),
                    self.debug_view.mip
                );
                self.graph.remove_pass(DebugViewPass::NAME);
                executed = self.execute();
            }
        }
        report_user_passes(&self.graph, &mut outcome.report);
        let frame = match executed {
            Ok(frame) => frame,
            Err(error) => {
                // Not drawn: the requests wait for the next frame that is.
                outcome.deferred.append(&mut self.due_shots);
                return Err(error);
            }
        };
        if !self.due_shots.is_empty() {
            self.graph.wait_idle()?;
            for request in self.due_shots.drain(..) {
                if let Some((_, copy)) = self.screenshot_copies.iter().find(|(image, _)| *image == request.image) {
                    let scale = self.depth_log_decades;
                    outcome.shots.push(develop(&request, game_frame, &lock_copied(copy), scale));
                }
            }
        }
        outcome.drawn = true;
        // The ring regions this frame writes answer for its game frame.
        self.ring.game_frames[(frame % READBACK_RING) as usize] = game_frame;
        let split = self.graph.param::<WindowViews>().filter(|views| views.is_split() && self.on_device);
        self.ring.view_counts[(frame % READBACK_RING) as usize] = split.map_or(1, |views| views.views().len() as u32);
        self.last_view = self.graph.param::<FrameView>().map(|view| (self.main_camera, *view));
        self.last_window_uniforms.clear();
        if let Some(views) = self.graph.param::<WindowViews>() {
            views.remember(&mut self.last_window_uniforms);
        }
        let report = &mut outcome.report;
        report.upload = lock_scene(&self.scene).last_upload();
        report.frames = self.frames;
        report.extent = self.graph.output_extent();
        if self.bits_mode == BitsReadback::Wait {
            self.graph.wait_idle()?;
            self.ring.read_frame(&self.graph, frame, report)?;
            outcome.read_bits = true;
        }
        if let Some(target) = &mut self.target {
            target.end_frame(&mut self.graph, TargetFrame { game: game_frame, drawn: frame })?;
        }
        Ok(())
    }

    /// Puts the frame's shadow views (`shadowed`: the frame has some) where they are
    /// reported: at once when the host culled them (or there are none); culled on the GPU,
    /// into the frame's ring region, whose counts come back with the frame's other answers.
    /// Returns whether `report.shadows` took them.
    fn report_shadows(&mut self, shadowed: bool, report: &mut RenderReport) -> bool {
        let Some(frame) = self.graph.param::<ShadowFrame>() else {
            report.shadows.update(&ShadowFrame::default());
            return true;
        };
        if shadowed && self.shadows_on_device {
            let region = &mut self.ring.shadow_views[(self.frames % READBACK_RING) as usize];
            region.clear();
            region.extend_from_slice(frame.views());
            false
        } else {
            report.shadows.update(frame);
            true
        }
    }

    /// Shows `wanted` from this frame on when it differs from what is shown: the debug view's
    /// pass is replaced (the graph recompiles). An image that cannot be shown (unknown, or of
    /// integer texels) is logged once and the frame shown instead.
    pub(super) fn show_debug_view(&mut self, wanted: &DebugView) {
        if *wanted == self.debug_view {
            return;
        }
        self.debug_view = wanted.clone();
        self.graph.remove_pass(DebugViewPass::NAME);
        let Some(image) = &wanted.image else { return };
        // The graph compiles with the frame, once the target has imported what it writes (a
        // swapchain image): a view that cannot be shown fails that frame's compile, which
        // draws the frame without it (see `frame`).
        let added = DebugViewPass::new(self.graph.device(), image, wanted.mip, wanted.log_decades)
            .and_then(|pass| self.graph.add_typed_pass_at(points::BEFORE_OUTPUT, pass));
        if let Err(error) = added {
            self.graph.remove_pass(DebugViewPass::NAME);
            log::warn!("debug view of `{image}` (mip {}): {error}; the frame is shown instead", wanted.mip);
        }
    }

    /// Arms the screenshot pass of every image a due request names, adding the pass the first
    /// time an image is asked for; a request the graph cannot serve (no such image) is
    /// answered at once with the error.
    fn arm_screenshots(&mut self, shots: &mut Screenshots, game_frame: u64) {
        let mut index = 0;
        while index < self.due_shots.len() {
            let image = self.due_shots[index].image.clone();
            if !self.screenshot_copies.iter().any(|(known, _)| *known == image) {
                let copy = SharedCopy::default();
                self.graph.add_typed_pass(ScreenshotPass::new(&image, Arc::clone(&copy)));
                if let Err(error) = self.graph.compile() {
                    self.graph.remove_pass(&format!("screenshot {image}"));
                    let request = self.due_shots.remove(index);
                    let error = Some(format!("no screenshot of `{image}`: {error}"));
                    shots.deliver(Screenshot {
                        image: request.image,
                        frame: game_frame,
                        error,
                        ..Screenshot::default()
                    });
                    continue;
                }
                lock_copied(&copy).found = true;
                self.screenshot_copies.push((image.clone(), copy));
            }
            if let Some((_, copy)) = self.screenshot_copies.iter().find(|(known, _)| *known == image) {
                lock_copied(copy).armed = true;
            }
            index += 1;
        }
    }

    /// Executes the graph once for the prepared frame (what the scene holds now); returns
    /// the frame's index (its ring regions).
    /// Gives each window view's block of the `view` uniform last frame's matrices of the view
    /// of its camera (else its own, as after a cut).
    fn follow_window_views(&mut self) {
        if let Some(views) = self.graph.param_mut::<WindowViews>() {
            views.follow(&self.last_window_uniforms);
        }
    }

    fn execute(&mut self) -> render_graph::Result<u64> {
        self.graph.execute_frame()?;
        // The frame compiled after the last growth, waiting for every frame that could
        // write the rings it replaced.
        self.ring.outgrown.clear();
        let frame = self.frames;
        self.frames += 1;
        Ok(frame)
    }
}

/// Plots the frame's mesh residency in Tracy: resident bytes against the budget (0: none),
/// what was loaded and evicted, what waits.
fn plot_residency(residency: &crate::ResidencyReport) {
    runtime::profile_plot!("mesh resident bytes", residency.mesh_bytes);
    runtime::profile_plot!("texture resident bytes", residency.texture_bytes);
    runtime::profile_plot!("mesh budget bytes", residency.budget.unwrap_or(0));
    runtime::profile_plot!("mesh loaded bytes", residency.loaded_bytes);
    runtime::profile_plot!("mesh levels loaded", residency.levels_loaded);
    runtime::profile_plot!("mesh levels evicted", residency.levels_evicted);
    runtime::profile_plot!("mesh pending bytes", residency.pending_bytes);
    runtime::profile_plot!("texture mips loaded", residency.texture_mips_loaded);
    runtime::profile_plot!("texture mips evicted", residency.texture_mips_evicted);
}

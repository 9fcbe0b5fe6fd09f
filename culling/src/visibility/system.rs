//! The Visibility-stage system: the cull pass on the job system, then the serial gather.

use ecs::{CpuAnswers, Lod, LodErrors, RenderSettings, ResolvedView, ResolvedViews, Viewport};
use runtime::{App, Frame, Res, ResMut, Stage, System};

use super::answer::{Visibility, VisibilityStats};
use super::cache::ViewKey;
use super::cull::{pack_slot_flags, run_range, PassInputs, PassOutputs, PassTotals};
use super::gather::{gather, GatherLists};
use super::level::LevelRule;
use super::reads::CullColumns;
use super::segments::{list_segments, GRAIN};
use super::slots::SlotWork;
use super::state::StageState;
use super::tags::{record_tag_changes, record_tags_cleared, visibility_tags_system, TagChanges, TagColumns};
use super::tracked::{watched_types, TrackedState};
use crate::backend::{CullingChoice, GpuFeedback};
use crate::bits::words_for;
use crate::kernels::Kernel;
use crate::lod::lod_scale;
use crate::lod_error::LodErrorView;
use crate::occlusion::OccluderMeshes;
use crate::view::{CullParams, ViewCullContext};

/// What [`visibility_system`] receives each frame: the columns it reads, then its resources
/// and frame value (each declared by its type).
type VisibilityParams = (
    CullColumns<'static>,
    Res<'static, RenderSettings>,
    Res<'static, Viewport>,
    Option<Res<'static, OccluderMeshes>>,
    Option<Res<'static, CullingChoice>>,
    Option<Res<'static, GpuFeedback>>,
    Option<Res<'static, LodErrors>>,
    Option<Frame<'static, ResolvedView>>,
    Option<Res<'static, ResolvedViews>>,
    ResMut<'static, Visibility>,
    Option<ResMut<'static, TagChanges>>,
);

/// Name of the system [`visibility_system`] returns.
pub const VISIBILITY_SYSTEM: &str = "culling::visibility";

/// Adds the engine's ECS ([`ecs::install`]), the [`Visibility`] resource and
/// [`visibility_system`] in [`Stage::Visibility`] to `app`. Calling it again does nothing.
///
/// ```
/// use culling::Visibility;
/// use ecs::{scene, Camera, Transform};
/// use glam::Vec3;
/// let mut app = runtime::App::new();
/// culling::install(&mut app);
/// scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 10.0)));
/// scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
/// scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 20.0)));
/// app.run_frame();
/// let visibility = app.resource::<Visibility>();
/// assert_eq!(visibility.visible().len(), 1, "the cube behind the camera is culled");
/// assert_eq!(visibility.scene().len(), 2, "both are drawable");
/// ```
pub fn install(app: &mut App) {
    ecs::install(app);
    if app.resources().contains::<Visibility>() {
        return;
    }
    app.insert_resource(Visibility::default());
    app.insert_resource(TagChanges::default());
    app.add_system(Stage::Visibility, visibility_system());
    app.add_system(Stage::Visibility, visibility_tags_system());
    crate::shadow::install(app);
}

/// The Visibility-stage system: culls every mesh entity against the frame's
/// [`ResolvedView`] and fills the [`Visibility`] resource.
///
/// Steps: list the archetypes holding a `Mesh` and size the persistent columns to the mesh
/// count; one parallel pass over 64-object words (skip the undrawable; world matrix from
/// `WorldTransform` or else `Transform`; posed box for a mesh with a `SkinnedPose`; world
/// box by Arvo's method unless the slot's cached box came from the same bits; columns and LOD
/// for every drawable mesh; the SIMD frustum kernel on the word's boxes, then distance and
/// screen size on the survivors, unless a static box's verdict under the same view is
/// cached); occlusion (see `crate::occlusion::stage`, reading the [`OccluderMeshes`]
/// resource when present); a serial gather of `visible` and `scene` (casters first); the
/// `Culled` and `Occluded` tag changes, recorded for [`visibility_tags_system`] to apply
/// right after.
///
/// Reads `Mesh`, `Transform`, `WorldTransform`, `Visible`, `SkinnedPose`, `Lod`,
/// `ShadowCaster`, the tags and the `VisibilityTagged` marker (under
/// [`VisibilityTags::Marked`](ecs::VisibilityTags) only marked entities get tags), the [`RenderSettings`], [`Viewport`], [`OccluderMeshes`] and
/// [`CullingChoice`] resources (with GPU culling chosen, occlusion is left to the GPU and
/// taken from its fed-back bits, while the frustum test stays here) and the `ResolvedView`
/// frame value; writes the [`Visibility`] resource, whose [`Visibility::changes`] say which
/// slots the cull wrote. Runs on
/// the job system the app installed; its answer does not depend on the number of threads.
///
/// A frame without a view (no camera, see `ecs::CameraSelection::no_view_reason`) gives an
/// empty result with `view` `None` and removes every `Culled` and `Occluded` tag, so tags never
/// describe an old view: without a view every object counts as visible. A 0x0 viewport (the
/// view's own, `ResolvedView::viewport`: a camera's `CameraViewport`, else the [`Viewport`]
/// resource; a minimised window) renders nothing and changes nothing here: the last answer and
/// the tags stay as they were until the viewport has an area again. The screen-size cull uses
/// the view's own height too.
///
/// Under [`RenderSettings::cpu_answers`] other than `EveryFrame` (and a backend that does not
/// draw the CPU's list) the gather and the tag search are left out: the lists are emptied
/// and refused, the tags an earlier frame gave are removed once, and
/// [`Visibility::state_of`] answers one entity when asked (see [`Visibility::answers`]).
pub fn visibility_system() -> System {
    let mut state = StageState::default();
    let watched = watched_types();
    System::with_params::<VisibilityParams>(VISIBILITY_SYSTEM, move |ctx, params| {
        runtime::profile_zone!("visibility");
        let (
            world,
            settings,
            viewport,
            occluders,
            choice,
            feedback,
            lod_errors,
            view,
            views,
            mut visibility,
            mut tag_changes,
        ) = params;
        let tracked = &mut state.tracked;
        ctx.changes().collect(&mut tracked.cursor, &watched, &mut tracked.changed);
        let (lod_cursor, lod_changed) = &mut state.lod_watch;
        ctx.changes().collect(lod_cursor, &[std::any::TypeId::of::<Lod>()], lod_changed);
        let mut settings = *settings;
        // With GPU culling the device culls what it draws; the frustum test stays here too (it
        // is cheap, and gives the GPU's bits), so the answer says `Culled` for what is off
        // screen on every backend. Occlusion comes from the GPU's bits when they are fed back.
        let on_device = choice.as_ref().is_some_and(|choice| choice.on_device);
        if on_device {
            settings.occlusion_culling = false;
        }
        // The CPU backend draws the `visible` list: there the lists are the renderer's, and
        // are built (and every answer kept) each frame whatever the game asked.
        if choice.is_some_and(|choice| !choice.on_device) {
            settings.cpu_answers = ecs::CpuAnswers::EveryFrame;
        }
        let frame = FrameInputs {
            frame_index: ctx.time.frame_index,
            view: view.map(|view| *view),
            settings: &settings,
            viewport: *viewport,
            feedback: feedback.as_deref().filter(|_| on_device),
            occluders: occluders.as_deref(),
            lod_errors: lod_errors.as_deref().filter(|errors| !errors.is_empty()),
            views: views.as_deref(),
        };
        // Without the tags system (an app that added this system alone) no tag changes.
        run_visibility(&world, &mut visibility, tag_changes.as_deref_mut(), &mut state, frame);
    })
}

/// What one frame of the stage is culled for.
#[derive(Clone, Copy)]
struct FrameInputs<'a> {
    /// The frame's `FrameTime::frame_index`.
    frame_index: u64,
    view: Option<ResolvedView>,
    settings: &'a RenderSettings,
    viewport: Viewport,
    /// The GPU's fed-back bits, when occlusion comes from them.
    feedback: Option<&'a GpuFeedback>,
    /// The occluders, when the app gave some.
    occluders: Option<&'a OccluderMeshes>,
    /// The levels' errors, when some mesh has one.
    lod_errors: Option<&'a LodErrors>,
    /// Every view of the frame, when the view stage lists them.
    views: Option<&'a ResolvedViews>,
}

/// The view's cull parameters and context, and whether they are trusted: a non-finite view
/// keeps everything (no cull is trusted with bad planes or a bad eye), so its distance and
/// size culls are switched off.
fn trusted_view_context(
    view: &ResolvedView,
    height: f32,
    settings: &RenderSettings,
) -> (CullParams, ViewCullContext, bool) {
    let params = CullParams {
        max_distance: settings.cull_max_distance,
        min_pixels: settings.cull_min_pixels,
        lod_bias: settings.effective_lod_bias(),
    };
    let context = ViewCullContext::new(view.view, view.projection, height, &params);
    if context.is_finite() {
        return (params, context, true);
    }
    let params = CullParams { max_distance: 0.0, min_pixels: 0.0, ..params };
    (params, ViewCullContext::new(view.view, view.projection, height, &params), false)
}

/// One frame of the stage.
fn run_visibility(
    world: &CullColumns<'_>,
    visibility: &mut Visibility,
    tag_changes: Option<&mut TagChanges>,
    state: &mut StageState,
    frame: FrameInputs<'_>,
) {
    let FrameInputs { view, settings, viewport, .. } = frame;
    let StageState { segments, work, tracked, .. } = state;
    let last_answers = std::mem::replace(&mut visibility.answers, settings.cpu_answers);
    // Nothing is written until the cull says so.
    visibility.run.advance();
    visibility.changes.begin(work.slots.len());
    work.slots.begin_frame();
    // The view's own size (a camera's `CameraViewport`, else the global resource).
    let viewport = view.map_or(viewport, |view| view.viewport);
    if viewport.width == 0 || viewport.height == 0 {
        // The changes seen now are not applied: the next frame checks everything.
        tracked.invalidate();
        return;
    }
    let objects = list_segments(world, segments);
    let Some(view) = view else {
        work.slots.update(&mut visibility.index, world, segments, objects);
        visibility.clear(objects);
        state.clear_view();
        visibility.changes.begin(0);
        if let Some(tag_changes) = tag_changes {
            visibility.stats.tags_removed = record_tags_cleared(tag_changes, world);
        }
        state.tracked.invalidate();
        return;
    };
    let on_request = settings.cpu_answers != CpuAnswers::EveryFrame;
    let answers_switched = (last_answers == CpuAnswers::EveryFrame) == on_request;
    if answers_switched && !on_request {
        visibility.asked.every_frame_since = frame.frame_index;
    }
    let (params, context, trusted) = trusted_view_context(&view, viewport.height as f32, settings);
    let frustum_culling = settings.frustum_culling && trusted;
    let error_pixels = settings.effective_lod_error_pixels();
    let error_band = settings.effective_lod_error_band();
    let generation = f32::from_bits(frame.lod_errors.map_or(0, LodErrors::generation));
    let thresholds = [params.max_distance, params.min_pixels, params.lod_bias, error_pixels, error_band, generation];
    let key = ViewKey::new(&view.view, &view.projection, viewport.height as f32, thresholds, frustum_culling);
    let (view_epoch, wrapped) = state.view_epoch.advance(key);
    let StageState { segments, work, tracked, .. } = state;
    if wrapped {
        visibility.objects.cache.iter_mut().for_each(|entry| entry.forget_verdict());
        tracked.invalidate();
    }
    let inputs = PassInputs {
        world,
        segments,
        view: &context,
        kernel: Kernel::detect(),
        frustum_culling,
        lod_scale: lod_scale(&view.projection),
        lod_bias: params.lod_bias,
        levels: LevelRule {
            errors: frame.lod_errors,
            error_view: LodErrorView::new(&view.projection, viewport.height as f32, error_pixels, error_band),
            lod_scale: lod_scale(&view.projection),
            lod_bias: params.lod_bias,
        },
        view_epoch,
    };
    // A tracked frame when the change log names every change since the last frame (see
    // `tracked/`); else the full pass over every object.
    let tracked_frame = tracked.plan(world, visibility, work, segments, objects);
    if tracked_frame {
        let (totals, decided) = tracked.run(&inputs, visibility, work, on_request.then_some(view.position));
        // Without the word pass the drawable objects are counted from their words.
        let drawable = if decided { totals.drawable } else { count_bits(&visibility.drawable) };
        visibility.stats = VisibilityStats {
            objects,
            drawable,
            visible: totals.visible,
            frustum_rejected: totals.frustum_rejected,
            distance_rejected: totals.distance_rejected,
            size_rejected: totals.size_rejected,
            occluded: 0,
            non_finite: if trusted { totals.non_finite } else { drawable },
            bounds_computed: totals.bounds_computed,
            tracked: true,
            objects_culled: decided,
            ..VisibilityStats::default()
        };
    } else {
        work.slots.update(&mut visibility.index, world, segments, objects);
        run_full_pass(visibility, work, tracked, &inputs, objects, trusted);
    }
    visibility.view = Some(view);
    visibility.context = Some((context, frustum_culling));
    let Visibility { asked, changes, .. } = &mut *visibility;
    asked.record_frame(frame.frame_index, (context, frustum_culling), changes, work.slots.len());
    // No slot's columns written (moves, spawns, despawns, new draws and drawability all mark
    // their slot) and no levels replaced: the other views' inputs are last frame's.
    let objects_unchanged = tracked_frame && visibility.changes.count() == 0 && state.lod_watch.1.is_empty();
    cull_other_views(world, visibility, &tracked.with_lod, &frame, (inputs.kernel, objects_unchanged));
    let publishes_errors = inputs.levels.errors.is_some_and(|errors| !errors.is_empty());
    visibility.lod_view = publishes_errors.then(|| (inputs.levels.error_view, context.camera_position()));
    let frame = FrameInputs { view: Some(view), viewport, ..frame };
    finish_frame(world, visibility, tag_changes, state, !tracked_frame, frame, trusted);
    if answers_switched {
        // The tag columns describe what the world carries: the next frame reads it again.
        state.tracked.invalidate();
    }
}

/// Culls the frame's other views (every listed view but the main one; see `views.rs`) with
/// the world boxes the main view's cull wrote, unless nothing they depend on changed.
fn cull_other_views(
    world: &CullColumns<'_>,
    visibility: &mut Visibility,
    with_lod: &[u64],
    frame: &FrameInputs<'_>,
    (kernel, objects_unchanged): (Kernel, bool),
) {
    let Some(views) = frame.views else {
        visibility.others.clear();
        return;
    };
    let Visibility { others, objects, drawable, .. } = visibility;
    let generation = frame.lod_errors.map_or(0, LodErrors::generation);
    let made_under = (*frame.settings, generation, objects.len());
    if others.still_answered(views, views.main(), made_under, objects_unchanged) {
        return;
    }
    others.set_views(views, views.main(), made_under);
    others.cull(objects, drawable, kernel);
    others.gather(world, objects, with_lod, frame.lod_errors, frame.settings);
}

/// The full pass over every object (see `cull.rs`); leaves the tracked state ready for the
/// next frame.
fn run_full_pass(
    visibility: &mut Visibility,
    work: &mut SlotWork,
    tracked: &mut TrackedState,
    inputs: &PassInputs<'_>,
    objects: usize,
    trusted: bool,
) {
    let slot_count = work.slots.len();
    let words = words_for(slot_count);
    visibility.objects.resize(slot_count);
    visibility.objects.entities.copy_from_slice(work.slots.entities());
    visibility.changes.begin(slot_count);
    for &slot in work.slots.freed() {
        visibility.objects.reset(slot as usize);
        visibility.changes.mark(slot as usize);
    }
    visibility.bits.reset(slot_count);
    for column in [
        &mut visibility.drawable,
        &mut visibility.casters,
        &mut work.tagged,
        &mut work.occluded_tag,
        &mut tracked.forced,
        &mut tracked.with_lod,
    ] {
        column.clear();
        column.resize(words, 0);
    }
    work.slot_flags.clear();
    work.slot_flags.resize(slot_count, 0);
    let outputs = PassOutputs::of(visibility, work, objects);
    let totals = PassTotals::default();
    {
        runtime::profile_zone!("visibility cull");
        let _job_label = runtime::profiling::job_label("visibility cull job");
        runtime::jobs::parallel_for_ranges(0..objects, GRAIN, |range| run_range(inputs, &outputs, &totals, range));
    }
    {
        let Visibility { bits, drawable, casters, .. } = &mut *visibility;
        let SlotWork { slot_flags, tagged, occluded_tag, .. } = &mut *work;
        let to = [
            bits.words_mut(),
            &mut drawable[..],
            &mut casters[..],
            &mut tagged[..],
            &mut occluded_tag[..],
            &mut tracked.forced[..],
            &mut tracked.with_lod[..],
        ];
        pack_slot_flags(slot_flags, to);
    }
    tracked.after_full_frame(words, visibility, &work.slots);
    let load = |value: &std::sync::atomic::AtomicUsize| value.load(std::sync::atomic::Ordering::Relaxed);
    let drawable = load(&totals.drawable);
    visibility.stats = VisibilityStats {
        objects,
        drawable,
        visible: load(&totals.visible),
        frustum_rejected: load(&totals.frustum_rejected),
        distance_rejected: load(&totals.distance_rejected),
        size_rejected: load(&totals.size_rejected),
        occluded: 0,
        non_finite: if trusted { load(&totals.non_finite) } else { drawable },
        bounds_computed: load(&totals.bounds_computed),
        tracked: false,
        objects_culled: true,
        tags_inserted: 0,
        tags_removed: 0,
        tags_traded: 0,
        tag_seconds: 0.0,
        tag_apply_seconds: 0.0,
    };
}

/// What every frame with a view does after the culls: occlusion, GPU feedback, the lists and
/// the tag changes.
fn finish_frame(
    world: &CullColumns<'_>,
    visibility: &mut Visibility,
    tag_changes: Option<&mut TagChanges>,
    state: &mut StageState,
    full_frame: bool,
    FrameInputs { settings, viewport, feedback, occluders, .. }: FrameInputs<'_>,
    trusted: bool,
) {
    let StageState { work, tag_marked, scene_source, gather_runs, occlusion, tracked, .. } = state;
    if settings.cpu_answers != CpuAnswers::EveryFrame {
        // No occlusion pass over the objects: `state_of` finds one object's occlusion when
        // asked, from the fed-back bits kept here.
        tracked.forget_occluder_bits();
        visibility.asked.keep_feedback(feedback);
        visibility.occluded.clear();
        bits_on_request(visibility);
        refuse_lists(world, visibility, tag_changes, work, scene_source);
        return;
    }
    // Occlusion: survivors hidden behind the chosen occluders lose their bit and
    // are counted in `stats.occluded`, when `settings.occlusion_culling` is on and an
    // `OccluderMeshes` resource is present (see `crate::occlusion::stage`).
    {
        let enabled = settings.occlusion_culling && trusted;
        let with_occluders = enabled && occluders.is_some();
        if let (Some(meshes), true) = (occluders, enabled) {
            tracked.update_occluder_bits(visibility, meshes, full_frame);
        } else {
            tracked.forget_occluder_bits();
        }
        let groups = tracked.groups(with_occluders);
        occlusion.run(visibility, occluders, groups, enabled, settings, [viewport.width, viewport.height]);
    }
    // Bits fed back from frames answered on request carry no in-view bits of the CPU's.
    let since = visibility.asked.every_frame_since;
    if let Some(feedback) = feedback.filter(|feedback| feedback.frame.is_some_and(|frame| frame >= since)) {
        apply_gpu_occlusion(visibility, &feedback.visible, &feedback.in_view);
    }

    // The gather and the search for tag changes read the final bits and write apart: one
    // runs beside the other.
    let Visibility { bits, objects, visible, scene, caster_count, drawable, casters, index, occluded, stats, .. } =
        visibility;
    let lists = GatherLists { visible, scene, caster_count, scene_source, run_starts: gather_runs };
    let SlotWork { tagged, occluded_tag, .. } = work;
    let tag_columns = tag_changes.map(|changes| TagColumns {
        visible: bits.words(),
        drawable,
        occluded,
        entities: &objects.entities,
        index,
        tagged,
        occluded_tag,
        tag_marked,
        changes,
    });
    let (bits, drawable, casters) = (&*bits, &drawable[..], &casters[..]);
    // The tag search is the half that may run on another thread, as a job.
    let _job_label = runtime::profiling::job_label("visibility tags job");
    let ((), ([inserted, removed, traded], tag_seconds)) = runtime::jobs::join(
        || gather(bits, drawable, casters, lists),
        || {
            let Some(tag_columns) = tag_columns else { return ([0; 3], 0.0) };
            let started = std::time::Instant::now();
            let counts = record_tag_changes(tag_columns, world, settings.visibility_tags);
            (counts, started.elapsed().as_secs_f64())
        },
    );
    stats.tags_inserted = inserted;
    stats.tags_removed = removed;
    stats.tags_traded = traded;
    stats.tag_seconds = tag_seconds;
    runtime::profile_plot!("objects", visibility.stats.objects as f64);
    runtime::profile_plot!("visible", visibility.stats.visible as f64);
    runtime::profile_plot!("occluded", visibility.stats.occluded as f64);
}

/// The end of a frame answered on request or not at all: the lists are emptied (never left
/// stale), and the first such frame removes every tag, so none describes an old view. Later
/// frames give no tags, so they have none to remove.
fn refuse_lists(
    world: &CullColumns<'_>,
    visibility: &mut Visibility,
    tag_changes: Option<&mut TagChanges>,
    work: &mut SlotWork,
    scene_source: &mut (Vec<u64>, Vec<u64>),
) {
    visibility.visible.clear();
    visibility.scene.clear();
    visibility.caster_count = 0;
    scene_source.0.clear();
    scene_source.1.clear();
    let tagged = work.tagged.iter().chain(&work.occluded_tag).any(|&word| word != 0);
    if let (Some(tag_changes), true) = (tag_changes, tagged) {
        visibility.stats.tags_removed = record_tags_cleared(tag_changes, world);
        work.tagged.iter_mut().chain(work.occluded_tag.iter_mut()).for_each(|word| *word = 0);
    }
}

/// The bits of a frame answered on request, which no per-object pass decided: the drawable
/// objects the GPU drew in the fed-back frame (words past its bits all set) and those that
/// appeared this frame; every drawable object without fed-back bits. What the readers of
/// [`Visibility::bits`] that want the camera's objects (mesh residency) take instead.
fn bits_on_request(visibility: &mut Visibility) {
    let Visibility { bits, objects, drawable, asked, changes, stats, .. } = visibility;
    let gpu = asked.gpu_visible();
    bits.resize(objects.len());
    let mut visible = 0;
    for (index, (word, drawable)) in bits.words_mut().iter_mut().zip(drawable.iter()).enumerate() {
        let drawn = gpu.map_or(u64::MAX, |gpu| gpu.get(index).copied().unwrap_or(u64::MAX));
        *word = drawable & (drawn | changes.appeared_word(index));
        visible += word.count_ones() as usize;
    }
    stats.visible = visible;
    stats.occluded = 0;
    (stats.frustum_rejected, stats.distance_rejected, stats.size_rejected) = (0, 0, 0);
}

/// How many bits `words` hold.
fn count_bits(words: &[u64]) -> usize {
    words.iter().map(|word| word.count_ones() as usize).sum()
}

/// Takes occlusion from the GPU's (earlier) bits: a survivor whose GPU bit is clear is
/// occluded, when it was in view in the bits' frame (`in_view`) and its object did not appear
/// since (an object that appeared this frame has no GPU answer of its own; the Render stage
/// clears the in-view bits of the ones that appeared in between). Words past the GPU's count
/// as visible, words past `in_view`'s as in view.
fn apply_gpu_occlusion(visibility: &mut Visibility, gpu_visible: &[u64], in_view: &[u64]) {
    let mut occluded_count = 0;
    let Visibility { bits, occluded, changes, .. } = visibility;
    for (index, (word, occluded)) in bits.words_mut().iter_mut().zip(occluded.iter_mut()).enumerate() {
        let gpu = gpu_visible.get(index).copied().unwrap_or(u64::MAX);
        let was_in_view = in_view.get(index).copied().unwrap_or(u64::MAX);
        let hidden = *word & !gpu & was_in_view & !changes.appeared_word(index);
        *occluded |= hidden;
        *word &= !hidden;
        occluded_count += hidden.count_ones() as usize;
    }
    visibility.stats.occluded += occluded_count;
    visibility.stats.visible -= occluded_count;
}

//! The GPU-culled frame: the standard passes with the draw list written by two-phase GPU
//! culling instead of the host, and the readback of the bits and counters.

use std::sync::Arc;

use render_graph::readback::{image_readback_buffer, BufferReadbackPass};
use render_graph::{vk, GraphError, ReadbackBuffer, RenderGraph, Result};

use crate::frame::{points, ScenePassOptions};
use crate::names::{COLOR, COLOR_READBACK, DRAW_COMMANDS};
use crate::passes::{
    color_readback_pass, visibility_bits_bytes, BlendedPass, CullPhase, CullResetPass, DepthPrepass, DrawBatchPass,
    DrawMode, GeometryPass, GpuCullPass, HiZBuildPass, MeshUploadPass, ObjectUploadPass, ShadowAtlasPass,
    ShadowCullPass, SharedCullSettings, ViewUploadPass, CULL_STATS, CULL_STAT_WORDS, SHADOW_DRAWS_MAX_BYTES,
    VISIBILITY_BITS,
};
use crate::scene::{lock_scene, ShadowCulling, ShadowFrame, SharedScene};

/// Name of the imported host-visible buffer the bits are copied into.
pub const VISIBILITY_READBACK: &str = "visibility_readback";

/// Name of the imported host-visible buffer the cull counters are copied into.
pub const CULL_STATS_READBACK: &str = "cull_stats_readback";

/// What [`add_gpu_culled_scene_passes`] made.
pub struct GpuCulledScene {
    /// The readback of `color`, when asked for.
    pub color: Option<ReadbackBuffer>,
    /// The readback of [`VISIBILITY_BITS`], when asked for: this frame's bits once the
    /// frame has finished ([`RenderGraph::wait_idle`]).
    pub bits: Option<ReadbackBuffer>,
    /// The readback of [`CULL_STATS`] (always): this frame's counters once the frame has
    /// finished; decode with [`GpuCullStats::from_counters`](crate::GpuCullStats::from_counters).
    pub stats: ReadbackBuffer,
    /// Whether the shadow casters are culled on the GPU ([`ShadowCullPass`]); false without
    /// shadows, or when the lists would not fit (see [`shadow_culling_on_device`]).
    pub shadows_on_device: bool,
    /// How the scene passes draw: [`DrawMode::IndirectCount`] where the device has it, else
    /// [`DrawMode::Indirect`] over one command per object (the reset pass zeroes unused ones;
    /// the scene draws from the GPU's list, [`GpuScene::draw_gpu_list`](crate::GpuScene::draw_gpu_list)).
    pub mode: DrawMode,
}

/// Imports the scene's buffers and adds the GPU-culled scene passes, in order: object
/// upload, [`CullResetPass::objects`], [`DrawBatchPass`], [`GpuCullPass`] early, depth
/// prepass (the early list), [`HiZBuildPass`], [`GpuCullPass`] late, late depth prepass (the
/// late list alone), geometry (both lists), and the readbacks asked for. The lists are
/// batched while the scene says so ([`GpuScene::set_batch_draws`](crate::GpuScene::set_batch_draws)).
///
/// Returns [`GraphError::InvalidDescription`] when the output extent is zero or the device
/// cannot draw indirectly with a first instance (then cull on the CPU).
pub fn add_gpu_culled_scene_passes(
    graph: &mut RenderGraph,
    scene: &SharedScene,
    options: &ScenePassOptions,
    settings: &SharedCullSettings,
    read_bits: bool,
) -> Result<GpuCulledScene> {
    let (extent, mode) =
        culled_frame_mode(graph, "GPU culling needs indirect draws with a first instance (drawIndirectFirstInstance)")?;
    let device = Arc::clone(graph.device());
    let capacity = lock_scene(scene).capacity();
    let early = GpuCullPass::new(&device, Arc::clone(scene), Arc::clone(settings), CullPhase::Early)?;
    let late = GpuCullPass::new(&device, Arc::clone(scene), Arc::clone(settings), CullPhase::Late)?;
    let depth = DepthPrepass::with_mode(&device, Arc::clone(scene), mode)?;
    let late_depth = DepthPrepass::late(&device, Arc::clone(scene), mode)?;
    let geometry = if options.shadow_atlas > 0 {
        GeometryPass::shadowed(&device, Arc::clone(scene), options.clear_color, mode)?
    } else {
        GeometryPass::with_mode(&device, Arc::clone(scene), options.clear_color, mode)?
    };
    let hiz = HiZBuildPass::new(&device)?;
    let color = if options.readback { Some(image_readback_buffer(&device, COLOR_READBACK, extent)?) } else { None };
    let bits = if read_bits {
        Some(ReadbackBuffer::new(&device, VISIBILITY_READBACK, visibility_bits_bytes(capacity))?)
    } else {
        None
    };
    let stats = ReadbackBuffer::new(&device, CULL_STATS_READBACK, CULL_STAT_WORDS as u64 * 4)?;
    {
        let mut scene = lock_scene(scene);
        scene.import_into(graph);
        scene.draw_gpu_list();
    }
    // Post-processes rewrite the colour in place; every other engine resource is read-only
    // to the users' passes (see `render_graph::Owner`).
    graph.share_resource(COLOR);
    graph.add_typed_pass(ObjectUploadPass::new(&device, Arc::clone(scene))?);
    graph.add_typed_pass(MeshUploadPass::new(Arc::clone(scene)));
    graph.add_typed_pass(ViewUploadPass::new(Arc::clone(scene)));
    graph.add_insertion_point(points::AFTER_UPLOAD)?;
    graph.add_insertion_point(points::BEFORE_CULL)?;
    let zero_commands = mode != DrawMode::IndirectCount;
    let views = lock_scene(scene).gpu_view_room();
    let reset = CullResetPass::objects(capacity, views, zero_commands);
    let reset_of =
        move |scene: &crate::GpuScene| CullResetPass::objects(scene.capacity(), scene.gpu_view_room(), zero_commands);
    graph.add_typed_pass(reset.following(Arc::clone(scene), reset_of));
    graph.add_typed_pass(DrawBatchPass::new(&device, Arc::clone(scene))?);
    graph.add_typed_pass(early);
    graph.add_typed_pass(depth);
    graph.add_typed_pass(hiz);
    graph.add_insertion_point(points::BETWEEN_CULL_PHASES)?;
    graph.add_typed_pass(late);
    graph.add_typed_pass(late_depth);
    graph.add_typed_pass(HiZBuildPass::final_depth(&device)?);
    let shadows_on_device = options.shadow_atlas > 0 && shadow_culling_on_device(mode, capacity, options.shadow_views);
    if shadows_on_device {
        // Every view's casters, then the cascades' occlusion: the pyramid of what the early
        // lists drew, the casters it does not hide drawn over it.
        let (views, atlas) = (options.shadow_views, options.shadow_atlas);
        let atlas_side = 1 << (31 - atlas.clamp(256, 16_384).leading_zeros());
        let pyramid = if options.shadow_pyramid == 0 { atlas_side } else { options.shadow_pyramid.min(atlas_side) };
        let region = capacity.max(1);
        graph.set_param(ShadowFrame::with_culling(ShadowCulling::Device { region, views, pyramid }));
        let reset = CullResetPass::shadows(capacity, views);
        graph.add_typed_pass(
            reset.following(Arc::clone(scene), move |scene| CullResetPass::shadows(scene.capacity(), views)),
        );
        graph.add_typed_pass(ShadowCullPass::new(&device, Arc::clone(scene), views)?);
        graph.add_typed_pass(ShadowAtlasPass::device_culled(&device, Arc::clone(scene), atlas)?);
        graph.add_typed_pass(HiZBuildPass::shadow_atlas(&device, pyramid)?);
        graph.add_typed_pass(ShadowCullPass::late(&device, Arc::clone(scene), views)?);
        graph.add_typed_pass(ShadowAtlasPass::device_culled_late(&device, Arc::clone(scene), atlas)?);
    } else if options.shadow_atlas > 0 {
        graph.set_param(ShadowFrame::with_culling(ShadowCulling::Host));
        graph.add_typed_pass(ShadowAtlasPass::new(&device, Arc::clone(scene), options.shadow_atlas, mode)?);
    }
    graph.add_insertion_point(points::AFTER_DEPTH_PREPASS)?;
    graph.add_typed_pass(geometry);
    let (blended_levels, blended) = BlendedPass::gpu_culled_levels(&device, Arc::clone(scene))?;
    graph.add_typed_pass(blended_levels);
    graph.add_typed_pass(blended);
    graph.add_insertion_point(points::AFTER_GEOMETRY)?;
    graph.add_insertion_point(points::BEFORE_OUTPUT)?;
    if let Some(color) = &color {
        graph.import_buffer(COLOR_READBACK, color.shared());
        graph.add_typed_pass(color_readback_pass());
    }
    if let Some(bits) = &bits {
        graph.import_buffer(VISIBILITY_READBACK, bits.shared());
        graph.add_typed_pass(BufferReadbackPass::new(VISIBILITY_BITS, VISIBILITY_READBACK));
    }
    graph.import_buffer(CULL_STATS_READBACK, stats.shared());
    graph.add_typed_pass(BufferReadbackPass::new(CULL_STATS, CULL_STATS_READBACK));
    Ok(GpuCulledScene { color, bits, stats, shadows_on_device, mode })
}

/// Side of the square at the top-left corner of an atlas `atlas` texels square that holds the
/// sun's cascades, `cascade_resolution` texels each: the atlas places them there first, four
/// in a square of twice their side.
pub fn shadow_pyramid_side(atlas: u32, cascade_resolution: u32) -> u32 {
    let atlas = 1 << (31 - atlas.clamp(256, 16_384).leading_zeros());
    let cascade = cascade_resolution.clamp(64, atlas / 2);
    (2 * cascade).next_power_of_two().min(atlas)
}

/// Whether a GPU-culled frame culls its shadow casters on the GPU: it draws with
/// indirect-count draws and one list per view, `capacity` commands each for `views` views
/// and the cascades' late lists, fits in [`SHADOW_DRAWS_MAX_BYTES`] (else the host culls, as
/// on the CPU backend).
pub fn shadow_culling_on_device(mode: DrawMode, capacity: u32, views: u32) -> bool {
    let lists = views.min(crate::MAX_SHADOW_VIEWS as u32) + ecs::MAX_CASCADES as u32;
    let bytes = crate::passes::shadow_draws_bytes(capacity, lists);
    mode == DrawMode::IndirectCount && bytes <= SHADOW_DRAWS_MAX_BYTES
}

/// The output extent and draw mode of a GPU-culled frame: an error when the extent is zero
/// or the device cannot draw indirectly with a first instance (`needs` says what needs it).
pub(crate) fn culled_frame_mode(graph: &RenderGraph, needs: &'static str) -> Result<(vk::Extent2D, DrawMode)> {
    let extent = graph.output_extent();
    if extent.width == 0 || extent.height == 0 {
        return Err(GraphError::InvalidDescription {
            resource: String::from(COLOR),
            reason: "the output extent is zero; give the graph a non-zero extent",
        });
    }
    let capabilities = graph.device().capabilities();
    if DrawMode::IndirectCount.is_supported(capabilities) {
        Ok((extent, DrawMode::IndirectCount))
    } else if DrawMode::Indirect.is_supported(capabilities) {
        Ok((extent, DrawMode::Indirect))
    } else {
        Err(GraphError::InvalidDescription { resource: String::from(DRAW_COMMANDS), reason: needs })
    }
}

/// Reads bits copied by a [`BufferReadbackPass`] as u64 words (bit `i` of word `i / 64`
/// = object `i`), the layout of [`VisibilityBits`](culling::VisibilityBits).
pub fn read_visibility_words(buffer: &ReadbackBuffer, out: &mut Vec<u64>) -> Result<()> {
    let bytes = buffer.read()?;
    out.clear();
    out.extend(bytes.chunks_exact(8).map(|word| u64::from_le_bytes(word.try_into().expect("chunks of 8 bytes"))));
    Ok(())
}

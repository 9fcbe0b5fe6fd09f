// The constants the engine's shaders share with the host, defined here once: every engine
// shader includes this header instead of writing a number, and `renderer/tests/shader_config.rs`
// checks each definition against its Rust twin (named beside it), so the two cannot drift.
#ifndef CONFIG_H
#define CONFIG_H

// Threads per workgroup of the object cull shaders: one 64-bit word of `visibility_bits`
// (two uints) per workgroup (renderer::CULL_GROUP).
#define CULL_GROUP 64
// `CullView::flags` bits (renderer::CULL_FRUSTUM, CULL_OCCLUSION, CULL_CONE, CULL_TWO_PHASE):
// test the frustum's planes, the pyramid (late phase), meshopt's normal cone (meshlets of a
// perspective view); cull in two phases (else the early phase decides the view alone).
#define CULL_FRUSTUM 1u
#define CULL_OCCLUSION 2u
#define CULL_CONE 4u
#define CULL_TWO_PHASE 8u
// Counters of `cull_stats`, in this order (renderer::GpuCullStats::from_counters); STAT_COUNT
// words in all (renderer::CULL_STAT_WORDS).
#define STAT_OBJECTS 0
#define STAT_FRUSTUM_REJECTED 1
#define STAT_EARLY_DRAWN 2
#define STAT_OCCLUSION_REJECTED 3
#define STAT_LATE_DRAWN 4
#define STAT_TRIANGLES 5
// Commands of the early and of the late list that draw something: one per drawn object, or,
// batched, one per batch with an instance in that list.
#define STAT_EARLY_COMMANDS 6
#define STAT_LATE_COMMANDS 7
// Objects drawn (both phases) at each level the cull chose, level LOD_STAT_LEVELS - 1 counting
// that level and every coarser one; objects whose level the cull does not choose count at 0.
#define STAT_LOD_LEVEL0 8
#define LOD_STAT_LEVELS 4
#define STAT_COUNT 12
// `CullView::flags` bit (renderer::CULL_LOD): the view's cull chooses each object's level of
// detail from its chain in `lod_entries` (`lod_table.h`).
#define CULL_LOD 16u
// `CullView::flags` bit (renderer::CULL_LOD_EVERY_OBJECT): the CPU re-picked every object's
// level this frame (its full pass), so the late cull keeps every object's level as its state,
// not only those the frustum keeps (the CPU's tracked frames re-pick only what is in view).
#define CULL_LOD_EVERY_OBJECT 32u
// `CullView::flags` bit (renderer::CULL_LOD_DISTANCE): the view's cull chooses the level of
// every object whose chain follows the distance rule (`lod_distance.h`) from its own eye
// (`lod_eye.xyz`), field-of-view scale (`lod_eye.w`) and global bias (`pad0`'s bits); a
// view without it draws such an object's record's level (the CPU's pick for the main view).
#define CULL_LOD_DISTANCE 64u
// Levels of a chain the GPU chooses from at most, and the entries each chain takes in
// `lod_entries` (renderer::MAX_GPU_LOD_LEVELS).
#define MAX_GPU_LOD_LEVELS 8u

// Threads per workgroup of the cluster cull shaders (renderer::CLUSTER_GROUP).
#define CLUSTER_GROUP 64
// Vulkan's guaranteed workgroups per dimension, the most one cluster dispatch takes
// (renderer::CLUSTER_MAX_GROUPS).
#define CLUSTER_MAX_GROUPS 65535u
// The meshlet field of a pair: bits 0-30 the meshlet, or PAIR_WHOLE for "draw the object
// whole"; bit 31 set on the first pair of each object (renderer::PAIR_WHOLE, PAIR_FIRST).
#define PAIR_MESHLET_MASK 0x7fffffffu
#define PAIR_WHOLE 0x7fffffffu
#define PAIR_FIRST 0x80000000u
// A pair drawing level k of its object's chain whole has the field PAIR_WHOLE - k. An object's
// word in `cluster_objects` with BUILT_CHAIN set names its block of level meshes (the mesh each
// level's pairs were built for, BUILT_NONE past the chain), after the covered objects' words
// (renderer::BUILT_CHAIN, BUILT_NONE).
#define BUILT_CHAIN 0x80000000u
#define BUILT_NONE 0xffffffffu
// A survivor of `cluster_survivors` is its object with, from this bit on, the level its slot's
// state names this frame (renderer::SURVIVOR_LEVEL_SHIFT).
#define SURVIVOR_LEVEL_SHIFT 29u
// Verdicts of `cluster_verdicts` (culling::cluster::ClusterVerdict's values).
#define VERDICT_UNTESTED 0u
#define VERDICT_VISIBLE 1u
#define VERDICT_FRUSTUM 2u
#define VERDICT_BACK_FACING 3u
#define VERDICT_OCCLUDED 4u
#define VERDICT_CONSERVATIVE 5u
// Counters of `cluster_stats`, in this order (culling::cluster::ClusterStats); CSTAT_COUNT
// words in all (culling::cluster::CLUSTER_STAT_WORDS). MESHLETS is added once (from the
// uniforms); TESTED counts the meshlets of objects the object pass kept (the host derives
// `object_culled` = MESHLETS - TESTED).
#define CSTAT_MESHLETS 0
#define CSTAT_TESTED 1
#define CSTAT_FRUSTUM 2
#define CSTAT_CONE 3
#define CSTAT_OCCLUSION 4
#define CSTAT_CONSERVATIVE 5
#define CSTAT_EARLY_DRAWN 6
#define CSTAT_LATE_DRAWN 7
#define CSTAT_TRIANGLES 8
#define CSTAT_OBJECT_TRIANGLES 9
#define CSTAT_WHOLE_OBJECTS 10
#define CSTAT_COUNT 16

// Workgroup side of the Hi-Z build shaders, 8x8 texels (renderer::HIZ_GROUP).
#define HIZ_GROUP 8
// The margins of the occlusion test (hiz_occlusion.h) for a camera's view against
// `hiz_depth` or `hiz_depth_final`, the engine's object cull's: the relative raise of a box's
// nearest depth and the footprint's widening in texels, both for the f32 rounding of the
// projection (renderer::DEPTH_MARGIN, renderer::FOOTPRINT_MARGIN). A pass of yours that tests
// its own boxes with `hiz_test` passes these and is exactly as conservative as the engine.
#define HIZ_DEPTH_MARGIN 4.0e-6
#define HIZ_FOOTPRINT_MARGIN 1.0e-2
// Threads per workgroup of the scene upload's scatter (renderer::SCATTER_GROUP).
#define SCATTER_GROUP 64
// Threads per workgroup of the blended pass's draws at the chosen levels
// (renderer::BLENDED_LEVELS_GROUP).
#define BLENDED_LEVELS_GROUP 64
// Local lights (spot and point) the shading loop reads at most (culling::shadow::MAX_LOCAL_LIGHTS).
#define MAX_LOCAL_LIGHTS 64
// Shadow views a frame draws at most: four sun cascades and six faces for each of 16
// shadowed lights (renderer::MAX_SHADOW_VIEWS).
#define MAX_SHADOW_VIEWS 100
// Sun cascades at most: the first views of a frame, the only ones culled by occlusion, with
// late lists of their own (ecs::MAX_CASCADES).
#define MAX_CASCADES 4
#endif

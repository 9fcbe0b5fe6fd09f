//! Load-time processing of one mesh with meshopt (Arseny Kapoulkine's meshoptimizer):
//!
//! 1. vertex-cache order of the triangles (`optimize_vertex_cache`, Forsyth-style), then
//!    vertex-fetch order of the vertices (`optimize_vertex_fetch`: vertices renumbered in
//!    first-use order, unused ones dropped);
//! 2. an LOD chain: each level simplified from the one before (`simplify`, edge collapse with
//!    quadric error) to about half the triangles of the level before, until the floor or
//!    until simplification stops paying; each level's error is the simplifier's own measure in
//!    mesh units, and its hand-over distance follows the screen-space-error rule (see
//!    [`hand_over_distance`]);
//! 3. meshlets per level (`build_meshlets`, ≤ 64 vertices and ≤ 124 triangles) with bounds and
//!    normal cones (`compute_meshlet_bounds`); each level's index list is rewritten as its
//!    meshlets one after another, so a meshlet is a contiguous index range of its level and
//!    drawing the level draws exactly its meshlets.
//!    Coarser levels are not cache-ordered on their own: meshlet order (meshopt optimizes each
//!    meshlet's triangles for locality) replaces it anyway.

use glam::Vec3;
use meshes::Meshlet;
use meshopt::{SimplifyOptions, VertexDataAdapter};

use crate::mesh::{MeshData, MeshError};

/// Most vertices of one meshlet.
pub const MAX_MESHLET_VERTICES: usize = 64;
/// Most triangles of one meshlet (a multiple of 4, as meshopt requires).
pub const MAX_MESHLET_TRIANGLES: usize = 124;

/// How meshes are processed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessOptions {
    /// No level is made with fewer triangles than this (the chain's floor).
    pub min_triangles: usize,
    /// Most levels, the finest included.
    pub max_levels: usize,
    /// A level is kept only when it has at most this fraction of the triangles of the level
    /// before (simplification that cannot usefully coarsen ends the chain).
    pub max_kept_fraction: f32,
    /// Screen-space error allowed at the reference resolution, in pixels.
    pub pixel_error: f32,
    /// Height of the reference image, in pixels (seen through a 60° vertical field of view).
    pub reference_height: f32,
    /// Weight of normal-cone tightness against spatial compactness when building meshlets
    /// (0 to 1). It only steers the choice among triangles sharing a vertex with the meshlet,
    /// so flat-shaded low-poly meshes (no vertex shared across faces) keep wide cones; 0.5
    /// gave the city the most cone rejects of 0, 0.25, 0.5 and 1.
    pub cone_weight: f32,
    /// Whether a file's loader also derives each rigid mesh's occluder, one box inside every
    /// level ([`culling::occlusion::streamed_occluder`], in [`crate::GltfScene::occluders`]):
    /// the inner-box search reads every triangle of every level some twenty times, work for
    /// the loader's thread rather than the frame that adds the mesh. The
    /// [`crate::AssetServer`]'s default options turn it on; a library built before the first
    /// frame derives its occluders itself (off here).
    pub occluders: bool,
}

impl Default for ProcessOptions {
    fn default() -> Self {
        ProcessOptions {
            min_triangles: 16,
            max_levels: 8,
            max_kept_fraction: 0.75,
            pixel_error: 1.0,
            reference_height: 1080.0,
            cone_weight: 0.5,
            occluders: false,
        }
    }
}

/// One level of detail of a processed mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessedLevel {
    /// Triangle list into the mesh's vertices, in meshlet order.
    pub indices: Vec<u32>,
    /// A bound on how far simplification moved the surface from the finest level, in mesh
    /// units: the sum of the simplifier's errors along the chain (0 for the finest level).
    pub error: f32,
    /// Farthest distance (mesh units, 60° vertical field of view) at which this level draws:
    /// where the next level's error falls under [`ProcessOptions::pixel_error`] pixels. The
    /// last level's is twice the hand-over into it (past it, it keeps drawing anyway).
    pub max_distance: f32,
    /// The level's meshlets; `first_index` is relative to `indices`.
    pub meshlets: Vec<Meshlet>,
}

impl ProcessedLevel {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// A mesh after processing: vertices in fetch order and its LOD chain, finest first.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessedMesh {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, one per vertex.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates, one per vertex, or empty when the source had none.
    pub uvs: Vec<[f32; 2]>,
    /// Levels of detail, finest first; never empty.
    pub levels: Vec<ProcessedLevel>,
    /// Minimum corner of the mesh's bounding box.
    pub bounds_min: [f32; 3],
    /// Maximum corner of the mesh's bounding box.
    pub bounds_max: [f32; 3],
    /// The vertices' skinning influences, in vertex order, for a skinned mesh.
    pub skin: Option<SkinnedVertices>,
}

impl ProcessedMesh {
    /// Meshlets over all levels.
    pub fn meshlet_count(&self) -> usize {
        self.levels.iter().map(|level| level.meshlets.len()).sum()
    }

    /// One line for a report: triangles, error and hand-over distance per level, meshlets.
    pub fn summary(&self) -> String {
        let levels: Vec<String> = self
            .levels
            .iter()
            .map(|level| {
                format!("{} tris (error {:.4}, to {:.1})", level.triangle_count(), level.error, level.max_distance)
            })
            .collect();
        format!("{}; {} meshlets", levels.join(" / "), self.meshlet_count())
    }
}

/// Distance beyond which a level with simplification error `error` (mesh units) stays under
/// `options.pixel_error` pixels: at distance `d` an error `e` covers
/// `e * (height / 2) * P11 / d` pixels of a `height`-pixel image with `P11 = 1 / tan(30°)`,
/// so the level may draw from `d = e * (height / 2) * P11 / pixel_error` on.
///
/// ```
/// use assets::{hand_over_distance, ProcessOptions};
/// let options = ProcessOptions::default();
/// let distance = hand_over_distance(0.01, &options);
/// assert!((distance - 0.01 * 540.0 * 1.732_050_8).abs() < 1e-3, "1 cm hands over at ~9.4 m");
/// ```
pub fn hand_over_distance(error: f32, options: &ProcessOptions) -> f32 {
    error * (options.reference_height * 0.5) * ecs::Lod::REFERENCE_P11 / options.pixel_error.max(f32::MIN_POSITIVE)
}

/// One interleaved vertex, so one fetch reorder moves every attribute together.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Vertex {
    position: [f32; 3],
    normal: [f32; 3],
    uv: [f32; 2],
}

/// A skinned vertex: the interleaved vertex and its influences, reordered together.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct SkinnedVertex {
    vertex: Vertex,
    joints: [u16; 4],
    weights: [f32; 4],
}

/// Per-vertex skinning influences of a mesh (four joints and their weights per vertex), as
/// the importer read them; processing reorders them with the vertices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedVertices {
    /// Joints, four per vertex (indices into the mesh's skeleton).
    pub joints: Vec<[u16; 4]>,
    /// Their weights, non-negative and summing to 1.
    pub weights: Vec<[f32; 4]>,
}

/// Vertex-cache order of the triangles, then vertex-fetch order of `vertices`.
fn cache_and_fetch_order<V: Clone + Default>(indices: &[u32], vertices: &[V]) -> (Vec<u32>, Vec<V>) {
    runtime::profile_zone!("meshopt vertex cache and fetch");
    let mut indices = meshopt::optimize_vertex_cache(indices, vertices.len());
    let vertices = meshopt::optimize_vertex_fetch(&mut indices, vertices);
    (indices, vertices)
}

/// Processes one mesh (see the module docs). Returns the first defect of a bad mesh.
pub fn process_mesh(source: &MeshData, options: &ProcessOptions) -> Result<ProcessedMesh, MeshError> {
    process_skinned_mesh(source, None, options)
}

/// [`process_mesh`] for a skinned mesh: `skin`'s influences (one per position; ignored
/// otherwise) are reordered with the vertices and returned in [`ProcessedMesh::skin`]. The
/// levels of detail index the same vertices, so they keep their joints and weights.
pub fn process_skinned_mesh(
    source: &MeshData,
    skin: Option<&SkinnedVertices>,
    options: &ProcessOptions,
) -> Result<ProcessedMesh, MeshError> {
    runtime::profile_zone!("process mesh");
    source.validate()?;
    let skin =
        skin.filter(|skin| skin.joints.len() == source.positions.len() && skin.weights.len() == source.positions.len());
    let computed;
    let normals = if source.normals.is_empty() {
        computed = source.computed_normals();
        &computed
    } else {
        &source.normals
    };
    let vertices: Vec<Vertex> = (0..source.positions.len())
        .map(|vertex| Vertex {
            position: source.positions[vertex],
            normal: normals[vertex],
            uv: source.uvs.get(vertex).copied().unwrap_or_default(),
        })
        .collect();
    let (indices, vertices, skin) = match skin {
        None => {
            let (indices, vertices) = cache_and_fetch_order(&source.indices, &vertices);
            (indices, vertices, None)
        }
        Some(skin) => {
            let skinned: Vec<SkinnedVertex> = vertices
                .iter()
                .zip(skin.joints.iter().zip(&skin.weights))
                .map(|(&vertex, (&joints, &weights))| SkinnedVertex { vertex, joints, weights })
                .collect();
            let (indices, skinned) = cache_and_fetch_order(&source.indices, &skinned);
            let influences = SkinnedVertices {
                joints: skinned.iter().map(|vertex| vertex.joints).collect(),
                weights: skinned.iter().map(|vertex| vertex.weights).collect(),
            };
            (indices, skinned.iter().map(|vertex| vertex.vertex).collect(), Some(influences))
        }
    };

    let positions: Vec<[f32; 3]> = vertices.iter().map(|vertex| vertex.position).collect();
    let (bounds_min, bounds_max) = bounds_of(&positions);
    let adapter = VertexDataAdapter::new(meshopt::typed_to_bytes(&positions), std::mem::size_of::<[f32; 3]>(), 0)
        .expect("a [f32; 3] array is whole vertices of 12 bytes with the position at offset 0");

    // Each level simplifies the one before it, so the chain is serial; the finest level's
    // meshlets (the largest share of the meshlet work) are built beside it, and the other
    // levels' meshlets in parallel afterwards. Every step is a pure function of its input, so
    // the result does not depend on how the jobs ran.
    let _job_label = runtime::profiling::job_label("process mesh levels job");
    let meshlets = |level_indices: &[u32]| {
        runtime::profile_zone!("meshopt meshlets");
        meshlets_of(level_indices, &adapter, options.cone_weight)
    };
    let (finest, chain) = runtime::jobs::join(
        || meshlets(&indices),
        || {
            runtime::profile_zone!("meshopt simplify (levels of detail)");
            lod_chain(&indices, &adapter, Vec3::from(bounds_max) - Vec3::from(bounds_min), options)
        },
    );
    let mut built: Vec<Option<(Vec<u32>, Vec<Meshlet>)>> = vec![None; chain.len()];
    built[0] = Some(finest);
    runtime::jobs::parallel_for_chunks(&mut built[1..], 1, |first, chunk| {
        for (offset, slot) in chunk.iter_mut().enumerate() {
            *slot = Some(meshlets(&chain[1 + first + offset].0));
        }
    });
    let count = chain.len();
    let mut levels = Vec::with_capacity(count);
    for (level, ((_, error), built)) in chain.iter().zip(built).enumerate() {
        let max_distance = match chain.get(level + 1) {
            Some((_, next_error)) => hand_over_distance(*next_error, options),
            None if count == 1 => f32::INFINITY,
            None => 2.0 * hand_over_distance(*error, options),
        };
        let (indices, meshlets) = built.expect("every level's meshlets were built");
        levels.push(ProcessedLevel { indices, error: *error, max_distance, meshlets });
    }
    Ok(ProcessedMesh {
        positions,
        normals: vertices.iter().map(|vertex| vertex.normal).collect(),
        uvs: if source.uvs.is_empty() { Vec::new() } else { vertices.iter().map(|vertex| vertex.uv).collect() },
        levels,
        bounds_min,
        bounds_max,
        skin,
    })
}

/// Processes many meshes in parallel on the job system, one job per mesh; the results are in
/// the order of `sources`.
pub fn process_meshes(sources: &[MeshData], options: &ProcessOptions) -> Vec<Result<ProcessedMesh, MeshError>> {
    process_skinned_meshes(sources, &[], options)
}

/// [`process_meshes`] with each source's skinning influences (`skins[i]` for `sources[i]`;
/// missing entries and `None` are rigid meshes), as [`process_skinned_mesh`].
pub fn process_skinned_meshes(
    sources: &[MeshData],
    skins: &[Option<SkinnedVertices>],
    options: &ProcessOptions,
) -> Vec<Result<ProcessedMesh, MeshError>> {
    runtime::profile_zone!("process meshes");
    let mut results: Vec<Option<Result<ProcessedMesh, MeshError>>> = vec![None; sources.len()];
    let _job_label = runtime::profiling::job_label("process mesh job");
    runtime::jobs::parallel_for_chunks(&mut results, 1, |first, chunk| {
        for (offset, slot) in chunk.iter_mut().enumerate() {
            let index = first + offset;
            *slot = Some(process_skinned_mesh(&sources[index], skins.get(index).and_then(Option::as_ref), options));
        }
    });
    results.into_iter().map(|result| result.expect("parallel_for_chunks visits every element")).collect()
}

fn bounds_of(positions: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut low = Vec3::splat(f32::INFINITY);
    let mut high = Vec3::splat(f32::NEG_INFINITY);
    for &position in positions {
        low = low.min(Vec3::from(position));
        high = high.max(Vec3::from(position));
    }
    (low.to_array(), high.to_array())
}

/// The finest level's indices, then each coarser level simplified from the level before it,
/// with its error: the simplifier's error of that step added to the error of the level it
/// started from. Distances add up along the chain (the triangle inequality), so the sum
/// bounds how far the level lies from the finest one; simplifying from the previous level
/// keeps each step's input halving, so the whole chain costs about two simplifications of
/// the finest level.
fn lod_chain(
    finest: &[u32],
    adapter: &VertexDataAdapter<'_>,
    extent: Vec3,
    options: &ProcessOptions,
) -> Vec<(Vec<u32>, f32)> {
    let mut chain = vec![(finest.to_vec(), 0.0_f32)];
    // An absolute error bound as large as the mesh: the triangle target decides the level.
    let error_bound = extent.length().max(f32::MIN_POSITIVE);
    while chain.len() < options.max_levels.max(1) {
        let (previous, previous_error) = chain.last().expect("the chain starts with the finest level");
        let previous_triangles = previous.len() / 3;
        let target_triangles = previous_triangles / 2;
        if target_triangles < options.min_triangles.max(1) {
            break;
        }
        let mut step_error = 0.0_f32;
        let simplified = meshopt::simplify(
            previous,
            adapter,
            target_triangles * 3,
            error_bound,
            SimplifyOptions::ErrorAbsolute,
            Some(&mut step_error),
        );
        let triangles = simplified.len() / 3;
        if triangles == 0 || triangles as f32 > previous_triangles as f32 * options.max_kept_fraction {
            break;
        }
        if !step_error.is_finite() {
            break;
        }
        let error = previous_error + step_error.max(0.0);
        chain.push((simplified, error));
    }
    chain
}

/// A mesh's index list rewritten in meshlet order and its meshlets, built as the processing
/// builds every level's (at most [`MAX_MESHLET_VERTICES`] vertices and
/// [`MAX_MESHLET_TRIANGLES`] triangles a meshlet, cones weighted by `cone_weight`): for
/// meshes made in code, such as tests' and benches' shapes.
pub fn meshlets_in_order(positions: &[[f32; 3]], indices: &[u32], cone_weight: f32) -> (Vec<u32>, Vec<Meshlet>) {
    let adapter = VertexDataAdapter::new(meshopt::typed_to_bytes(positions), std::mem::size_of::<[f32; 3]>(), 0)
        .expect("tightly packed positions make a valid adapter");
    meshlets_of(indices, &adapter, cone_weight)
}

/// The level's meshlets and its index list rewritten in meshlet order.
fn meshlets_of(indices: &[u32], adapter: &VertexDataAdapter<'_>, cone_weight: f32) -> (Vec<u32>, Vec<Meshlet>) {
    let built = meshopt::build_meshlets(indices, adapter, MAX_MESHLET_VERTICES, MAX_MESHLET_TRIANGLES, cone_weight);
    let mut ordered = Vec::with_capacity(indices.len());
    let mut meshlets = Vec::with_capacity(built.len());
    for meshlet in built.iter() {
        let bounds = meshopt::compute_meshlet_bounds(meshlet, adapter);
        let first_index = ordered.len() as u32;
        ordered.extend(meshlet.triangles.iter().map(|&local| meshlet.vertices[usize::from(local)]));
        meshlets.push(Meshlet {
            first_index,
            index_count: ordered.len() as u32 - first_index,
            vertex_count: meshlet.vertices.len() as u32,
            center: bounds.center,
            radius: bounds.radius,
            cone_apex: bounds.cone_apex,
            cone_axis: bounds.cone_axis,
            cone_cutoff: bounds.cone_cutoff,
        });
    }
    debug_assert_eq!(ordered.len(), indices.len(), "the meshlets hold every triangle of the level once");
    (ordered, meshlets)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UV sphere of `rings` x `segments` quads: a smooth closed mesh that simplifies well.
    pub(crate) fn sphere(rings: u32, segments: u32) -> MeshData {
        let mut positions = Vec::new();
        for ring in 0..=rings {
            let polar = std::f32::consts::PI * ring as f32 / rings as f32;
            for segment in 0..=segments {
                let azimuth = std::f32::consts::TAU * segment as f32 / segments as f32;
                positions.push([polar.sin() * azimuth.cos(), polar.cos(), polar.sin() * azimuth.sin()]);
            }
        }
        let mut indices = Vec::new();
        let row = segments + 1;
        for ring in 0..rings {
            for segment in 0..segments {
                let corner = ring * row + segment;
                indices.extend_from_slice(&[
                    corner,
                    corner + 1,
                    corner + row,
                    corner + 1,
                    corner + row + 1,
                    corner + row,
                ]);
            }
        }
        MeshData::new(positions, indices)
    }

    #[test]
    fn one_mesh_processed_on_one_thread_or_two_gives_the_same_result() {
        let source = sphere(48, 96);
        let on = |threads: usize| {
            runtime::jobs::JobSystem::new(threads).install(|| process_mesh(&source, &ProcessOptions::default()))
        };
        let (one, two) = (on(1).unwrap(), on(2).unwrap());
        assert!(one.levels.len() >= 4, "several levels, so the levels' meshlets run as jobs");
        assert_eq!(one, two);
    }

    #[test]
    fn lod_chain_halves_down_to_the_floor_with_growing_errors() {
        let source = sphere(32, 64);
        let mesh = process_mesh(&source, &ProcessOptions::default()).unwrap();
        let triangles: Vec<usize> = mesh.levels.iter().map(ProcessedLevel::triangle_count).collect();
        assert_eq!(triangles[0], source.triangle_count(), "the finest level keeps every triangle");
        assert!(mesh.levels.len() >= 4, "a 4096-triangle sphere gives several levels: {triangles:?}");
        for pair in mesh.levels.windows(2) {
            let (finer, coarser) = (&pair[0], &pair[1]);
            let ratio = coarser.triangle_count() as f32 / finer.triangle_count() as f32;
            assert!((0.3..=0.75).contains(&ratio), "each level about halves: {triangles:?}");
            assert!(coarser.error >= finer.error && coarser.error > 0.0, "errors grow along the chain");
            assert!(finer.max_distance <= coarser.max_distance, "hand-over distances grow");
            let expected = hand_over_distance(coarser.error, &ProcessOptions::default());
            assert_eq!(finer.max_distance, expected, "a level hands over where the next one's error is 1 px");
        }
        assert!(triangles.last().copied().unwrap() >= 16, "the floor holds: {triangles:?}");
        let last = mesh.levels.last().unwrap();
        assert_eq!(last.max_distance, 2.0 * hand_over_distance(last.error, &ProcessOptions::default()));
        assert!(mesh.levels[1].error < 0.05, "half the triangles of a fine sphere move it little");
    }

    #[test]
    fn meshlets_cover_each_level_once_within_limits() {
        let mesh = process_mesh(&sphere(16, 32), &ProcessOptions::default()).unwrap();
        for level in &mesh.levels {
            let mut next = 0;
            for meshlet in &level.meshlets {
                assert_eq!(meshlet.first_index, next, "meshlets lie back to back");
                next += meshlet.index_count;
                let range = meshlet.first_index as usize..(meshlet.first_index + meshlet.index_count) as usize;
                let mut used: Vec<u32> = level.indices[range].to_vec();
                used.sort_unstable();
                used.dedup();
                assert_eq!(used.len() as u32, meshlet.vertex_count);
                assert!(meshlet.vertex_count as usize <= MAX_MESHLET_VERTICES);
                assert!(meshlet.index_count as usize <= MAX_MESHLET_TRIANGLES * 3);
                for &vertex in &used {
                    let distance = Vec3::from(mesh.positions[vertex as usize]).distance(Vec3::from(meshlet.center));
                    assert!(distance <= meshlet.radius * 1.001 + 1e-5, "the sphere bounds its vertices");
                }
                let axis = Vec3::from(meshlet.cone_axis);
                assert!(meshlet.cone_cutoff >= 1.0 || (axis.length() - 1.0).abs() < 0.02, "a unit cone axis");
            }
            assert_eq!(next as usize, level.indices.len(), "the meshlets hold the whole level");
        }
    }

    #[test]
    fn processing_keeps_the_triangles_and_orders_vertices_by_first_use() {
        let mut source = sphere(8, 16);
        // An unused vertex is dropped by the fetch reorder.
        source.positions.push([9.0, 9.0, 9.0]);
        let mesh = process_mesh(&source, &ProcessOptions::default()).unwrap();
        assert_eq!(mesh.positions.len(), source.positions.len() - 1);
        assert_eq!(mesh.bounds_max, [1.0, 1.0, 1.0]);
        let triangle_set = |positions: &[[f32; 3]], indices: &[u32]| {
            let mut set: Vec<[u32; 9]> = indices
                .chunks_exact(3)
                .map(|triangle| {
                    let mut corners = [0; 9];
                    for (corner, &index) in triangle.iter().enumerate() {
                        for axis in 0..3 {
                            corners[corner * 3 + axis] = positions[index as usize][axis].to_bits();
                        }
                    }
                    // Rotate so the smallest corner comes first: winding kept, start ignored.
                    let start = (0..3).min_by_key(|&corner| corners[corner * 3..corner * 3 + 3].to_vec()).unwrap();
                    let mut rotated = [0; 9];
                    for corner in 0..3 {
                        let from = (start + corner) % 3;
                        rotated[corner * 3..corner * 3 + 3].copy_from_slice(&corners[from * 3..from * 3 + 3]);
                    }
                    rotated
                })
                .collect();
            set.sort_unstable();
            set
        };
        assert_eq!(
            triangle_set(&mesh.positions, &mesh.levels[0].indices),
            triangle_set(&source.positions, &source.indices),
            "reordering changes no triangle and no winding"
        );
        let mut used = vec![false; mesh.positions.len()];
        for &index in &mesh.levels[0].indices {
            used[index as usize] = true;
        }
        assert!(used.iter().all(|&used| used), "the fetch order keeps only used vertices");
    }

    #[test]
    fn cache_order_beats_a_shuffled_source() {
        let mut source = sphere(16, 32);
        // Shuffle the triangles (a fixed linear congruential sequence) to ruin their locality.
        let mut triangles: Vec<[u32; 3]> = source.indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
        let mut state = 12345_u64;
        for index in (1..triangles.len()).rev() {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            triangles.swap(index, (state >> 33) as usize % (index + 1));
        }
        source.indices = triangles.concat();
        let mesh = process_mesh(&source, &ProcessOptions::default()).unwrap();
        let acmr = |indices: &[u32], vertices: usize| meshopt::analyze_vertex_cache(indices, vertices, 16, 0, 0).acmr;
        let before = acmr(&source.indices, source.positions.len());
        let after = acmr(&mesh.levels[0].indices, mesh.positions.len());
        assert!(after < before * 0.6, "vertex cache misses per triangle: {before} shuffled, {after} processed");
    }

    #[test]
    fn small_meshes_keep_one_level_and_bad_ones_are_refused() {
        let quad =
            MeshData::new(vec![[0.0; 3], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]], vec![0, 1, 2, 0, 2, 3]);
        let mesh = process_mesh(&quad, &ProcessOptions::default()).unwrap();
        assert_eq!(mesh.levels.len(), 1);
        assert_eq!(mesh.levels[0].max_distance, f32::INFINITY, "a lone level draws at any distance");
        assert_eq!(mesh.normals, vec![[0.0, 0.0, 1.0]; 4]);
        let bad = MeshData::new(vec![[0.0; 3]], vec![0, 0, 5]);
        assert!(matches!(process_mesh(&bad, &ProcessOptions::default()), Err(MeshError::IndexOutOfRange { .. })));
        let results = process_meshes(&[quad, bad], &ProcessOptions::default());
        assert!(results[0].is_ok() && results[1].is_err(), "results stay in order");
    }
}

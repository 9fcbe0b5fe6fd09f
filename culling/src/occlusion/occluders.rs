//! Occluder meshes and the choice of which ones to rasterize this frame.
//!
//! An occluder is a closed, outward-wound (counter-clockwise seen from outside) low-poly
//! solid that lies **inside** the surface of the mesh it stands for: wherever the occluder
//! is, the rendered mesh is at least as near, so depth the occluder writes is depth the
//! renderer really draws. Only its front faces occlude (the renderer culls back faces), so a
//! camera inside an occluder sees through it, as it sees through the real mesh.
//!
//! Occluders are authored ([`OccluderMesh::from_box`] for the 12 triangles of a building's
//! inner box), generated from a closed render mesh as the largest proportional box inside
//! it ([`OccluderMesh::inner_box_of`]), or taken from a render mesh that is already
//! low-poly ([`OccluderMesh::from_render_mesh`]). We do not simplify render meshes with
//! meshopt: edge-collapse simplification moves the surface both inwards and outwards, and
//! an occluder that bulges out of its mesh hides what is really visible. An author (or an
//! offline tool) that shrinks a simplified mesh until it lies inside may register it here.

use std::sync::atomic::{AtomicUsize, Ordering};

use ecs::{Aabb, MeshHandle};
use glam::{Mat4, Vec3, Vec4};

use super::inner_box::{border_edges, largest_inner_box, signed_volume_from, welded};
use super::{OccluderMeshes, OcclusionError};

/// Most vertices of an occluder rasterized as one convex silhouette (see
/// [`OccluderMesh::is_convex`]).
pub const MAX_HULL_VERTICES: usize = 8;
/// Most distinct face planes of such an occluder.
pub const MAX_HULL_FACES: usize = 8;

/// A low-poly occluder in its mesh's own space.
#[derive(Clone, Debug, PartialEq)]
pub struct OccluderMesh {
    positions: Vec<Vec3>,
    indices: Vec<u32>,
    /// Distinct outward face planes (`xyz` normal, `w` offset: inside when `dot <= 0`) and
    /// three vertices on each, when the mesh is a small convex solid.
    hull_faces: Vec<(Vec4, [u32; 3])>,
    /// The smallest and largest coordinate of the positions on each axis.
    bounds: (Vec3, Vec3),
    /// See [`OccluderMesh::open_side`].
    open_side: Option<Vec4>,
}

impl OccluderMesh {
    /// An occluder from triangles (three indices each, counter-clockwise seen from outside).
    ///
    /// # Errors
    /// [`OcclusionError::BadMesh`] when the index count is not a multiple of three, an
    /// index is out of range, a position is not finite, there is no triangle, or the mesh is
    /// closed but wound inwards (negative volume): its "front" faces would be the inside,
    /// which a camera inside it would take for walls.
    pub fn new(positions: Vec<Vec3>, indices: Vec<u32>) -> Result<OccluderMesh, OcclusionError> {
        if indices.is_empty() || !indices.len().is_multiple_of(3) {
            return Err(OcclusionError::BadMesh("the index count must be a positive multiple of three"));
        }
        if indices.iter().any(|&index| index as usize >= positions.len()) {
            return Err(OcclusionError::BadMesh("an index is out of range of the positions"));
        }
        if positions.iter().any(|position| !position.is_finite()) {
            return Err(OcclusionError::BadMesh("a position is not finite"));
        }
        if is_closed(&indices) && signed_volume(&positions, &indices) <= 0.0 {
            return Err(OcclusionError::BadMesh("a closed occluder must be wound outwards (positive volume)"));
        }
        let hull_faces = convex_faces(&positions, &indices).unwrap_or_default();
        let bounds =
            positions.iter().fold((Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)), |(low, high), &p| {
                (low.min(p), high.max(p))
            });
        Ok(OccluderMesh { positions, indices, hull_faces, bounds, open_side: None })
    }

    /// The 12 triangles of `aabb`, wound outwards: the occluder of a building, a wall or a
    /// crate whose inner box the author knows.
    ///
    /// # Errors
    /// [`OcclusionError::BadMesh`] when the box is not finite or is flat in some axis.
    pub fn from_box(aabb: &Aabb) -> Result<OccluderMesh, OcclusionError> {
        if !aabb.is_finite() || !(aabb.max.cmpgt(aabb.min).all()) {
            return Err(OcclusionError::BadMesh("an occluder box must be finite with positive size"));
        }
        let (low, high) = (aabb.min, aabb.max);
        let positions = (0..8)
            .map(|corner| {
                Vec3::new(
                    if corner & 1 == 0 { low.x } else { high.x },
                    if corner & 2 == 0 { low.y } else { high.y },
                    if corner & 4 == 0 { low.z } else { high.z },
                )
            })
            .collect();
        // Two counter-clockwise triangles per face, seen from outside.
        #[rustfmt::skip]
        let indices = vec![
            0, 4, 6, 0, 6, 2, // -x
            1, 3, 7, 1, 7, 5, // +x
            0, 1, 5, 0, 5, 4, // -y
            2, 6, 7, 2, 7, 3, // +y
            0, 2, 3, 0, 3, 1, // -z
            4, 5, 7, 4, 7, 6, // +z
        ];
        OccluderMesh::new(positions, indices)
    }

    /// The render mesh itself as its occluder, when it has at most `max_triangles`
    /// triangles: exact, hence conservative. A larger mesh needs an authored occluder.
    ///
    /// # Errors
    /// [`OcclusionError::TooDetailed`] past the budget; otherwise as [`OccluderMesh::new`].
    pub fn from_render_mesh(
        positions: &[Vec3],
        indices: &[u32],
        max_triangles: usize,
    ) -> Result<OccluderMesh, OcclusionError> {
        if indices.len() / 3 > max_triangles {
            return Err(OcclusionError::TooDetailed { triangles: indices.len() / 3, budget: max_triangles });
        }
        OccluderMesh::new(positions.to_vec(), indices.to_vec())
    }

    /// A box occluder generated from a render mesh: the largest box proportional to the
    /// bounds of one of its parts (connected pieces of surface) and centred on them that lies
    /// entirely inside that part (exact inside/overlap tests, so conservative by
    /// construction), the part giving the largest box. Vertices at the same position count
    /// as one (render meshes split them for normals and UVs). A part must be closed, or open
    /// only through one face of its bounds (a crate or a house without a floor, standing on
    /// the ground): then the occluder has that [`OccluderMesh::open_side`] and is drawn only
    /// for views on the closed side of it (from below, the real mesh hides nothing).
    ///
    /// # Errors
    /// [`OcclusionError::BadMesh`] when the mesh is malformed, or no part of it is closed (or
    /// open through one side only), wound outwards, with the centre of its bounds inside it
    /// (a ring, an L): author an occluder for such a mesh.
    pub fn inner_box_of(positions: &[Vec3], indices: &[u32]) -> Result<OccluderMesh, OcclusionError> {
        let checked = OccluderMesh::new(positions.to_vec(), welded(positions, indices))?;
        let (inner, open_side) = largest_inner_box(&checked.positions, &checked.indices)?;
        Ok(OccluderMesh { open_side, ..OccluderMesh::from_box(&inner)? })
    }

    /// The plane (`xyz` outward normal, `w` offset: positive on the open side) through which
    /// the mesh this occluder stands for is open, if it is: the occluder hides nothing for a
    /// view whose eye is on that side or on the plane.
    pub fn open_side(&self) -> Option<Vec4> {
        self.open_side
    }

    /// Vertex positions in mesh space.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Triangle indices, three per triangle.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Whether the mesh is a small convex solid (at most [`MAX_HULL_VERTICES`] vertices and
    /// [`MAX_HULL_FACES`] face planes, every vertex behind every face). Such an occluder is
    /// rasterized as one convex silhouette whose depth is the exact front surface, with no
    /// crack along the edges between its triangles.
    pub fn is_convex(&self) -> bool {
        !self.hull_faces.is_empty()
    }

    /// Asks the CPU to start loading the data a setup reads (positions, hull faces), so
    /// that a loop over many occluders, each its own allocation, waits less for memory.
    #[inline]
    pub(crate) fn prefetch(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let positions = self.positions.as_ptr().cast::<i8>();
            let faces = self.hull_faces.as_ptr().cast::<i8>();
            // SAFETY: a prefetch is a hint that reads nothing architecturally, whatever the
            // address; SSE is part of every x86_64 CPU.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(positions);
                _mm_prefetch::<_MM_HINT_T0>(positions.wrapping_add(64));
                _mm_prefetch::<_MM_HINT_T0>(faces);
                _mm_prefetch::<_MM_HINT_T0>(faces.wrapping_add(64));
                _mm_prefetch::<_MM_HINT_T0>(faces.wrapping_add(128));
            }
        }
    }

    /// The smallest and largest object-space coordinate of the positions on each axis.
    pub(crate) fn bounds(&self) -> (Vec3, Vec3) {
        self.bounds
    }

    pub(crate) fn hull_faces(&self) -> &[(Vec4, [u32; 3])] {
        &self.hull_faces
    }
}

/// Whether every directed edge of `indices` is matched by the opposite edge of another
/// triangle (a closed, consistently wound surface).
fn is_closed(indices: &[u32]) -> bool {
    border_edges(indices).is_empty()
}

/// Six times the signed volume the triangles enclose (positive when wound outwards).
fn signed_volume(positions: &[Vec3], indices: &[u32]) -> f64 {
    signed_volume_from(positions, indices, glam::DVec3::ZERO)
}

/// The face planes of a small convex closed solid, or `None`.
fn convex_faces(positions: &[Vec3], indices: &[u32]) -> Option<Vec<(Vec4, [u32; 3])>> {
    if positions.len() > MAX_HULL_VERTICES || positions.len() < 4 {
        return None;
    }
    let extent = positions.iter().fold(0.0f32, |largest, position| largest.max(position.abs().max_element()));
    let tolerance = extent * 1.0e-5;
    let mut faces: Vec<(Vec4, [u32; 3])> = Vec::new();
    for triangle in indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|corner| positions[triangle[corner] as usize]);
        let normal = (b - a).cross(c - a).normalize_or_zero();
        if normal == Vec3::ZERO {
            return None;
        }
        let plane = normal.extend(-normal.dot(a));
        // Convex and outward: every vertex on or behind this face.
        if positions.iter().any(|position| plane.dot(position.extend(1.0)) > tolerance) {
            return None;
        }
        let known = faces
            .iter()
            .any(|(other, _)| other.truncate().dot(normal) > 1.0 - 1.0e-6 && (other.w - plane.w).abs() <= tolerance);
        if !known {
            faces.push((plane, [triangle[0], triangle[1], triangle[2]]));
        }
    }
    // A closed solid has at least four faces; more than the limit goes the triangle way.
    (faces.len() >= 4 && faces.len() <= MAX_HULL_FACES).then_some(faces)
}

/// One occluder to rasterize this frame: which occluder mesh, placed where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OccluderInstance {
    /// The mesh whose registered occluder is drawn.
    pub mesh: MeshHandle,
    /// Mesh space to world space.
    pub world: Mat4,
}

/// A candidate occluder: an object that survived the frustum and has an occluder mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OccluderCandidate {
    /// The occluder to draw if chosen.
    pub instance: OccluderInstance,
    /// The object's world box (for its projected size and distance).
    pub world_bounds: Aabb,
}

/// Chooses occluders: those whose projected size reaches a threshold, nearest first, until a
/// triangle budget is spent. Keeps its scratch between frames (no allocation in steady
/// state).
#[derive(Clone, Debug)]
pub struct OccluderSelector {
    /// Smallest projected size (bounding-sphere diameter over view depth, in units of the
    /// projection's vertical scale, i.e. a fraction of the viewport height) a candidate
    /// needs. Default 0.02 (2% of the viewport height).
    pub min_screen_size: f32,
    /// Most occluder triangles drawn per frame. Default 16,384.
    pub triangle_budget: usize,
    /// Per kept candidate: its depth's bits above its index, so that one integer sort orders
    /// them nearest first, index breaking ties (a positive finite `f32`'s bits order as the
    /// value does).
    scratch: Vec<u64>,
}

/// A candidate's key while it is not chosen (no depth's key reaches it).
const NOT_CHOSEN: u64 = u64::MAX;

/// Candidates per job of the scoring.
const SCORE_GRAIN: usize = 1024;

impl Default for OccluderSelector {
    fn default() -> Self {
        OccluderSelector { min_screen_size: 0.02, triangle_budget: 16 * 1024, scratch: Vec::new() }
    }
}

impl OccluderSelector {
    /// Writes into `chosen` (cleared first) the candidates to rasterize this frame for the
    /// view `view_projection`. A candidate whose bounds are not finite, whose mesh has no
    /// registered occluder, or which reaches behind the camera's near side is never chosen
    /// (choosing fewer occluders is always safe).
    pub fn select(
        &mut self,
        view_projection: Mat4,
        candidates: &[OccluderCandidate],
        meshes: &OccluderMeshes,
        chosen: &mut Vec<OccluderInstance>,
    ) {
        self.select_by(
            view_projection,
            candidates.len(),
            |index| (candidates[index].world_bounds, candidates[index].instance.mesh),
            |index| candidates[index].instance,
            meshes,
            chosen,
        );
    }

    /// [`OccluderSelector::select`] over `count` candidates given by index: `bounds_of`
    /// their world box and mesh, `instance_of` the occluder to draw, asked only of those
    /// chosen (the Visibility stage passes slots, so it copies no matrix it does not draw).
    pub(crate) fn select_by(
        &mut self,
        view_projection: Mat4,
        count: usize,
        bounds_of: impl Fn(usize) -> (Aabb, MeshHandle) + Sync,
        instance_of: impl Fn(usize) -> OccluderInstance,
        meshes: &OccluderMeshes,
        chosen: &mut Vec<OccluderInstance>,
    ) {
        chosen.clear();
        let scale = view_projection.row(1).truncate().length();
        let min_screen_size = self.min_screen_size;
        // Scored in parallel (the candidates' boxes are scattered over the object columns):
        // a key per candidate, `NOT_CHOSEN` for those left out, then only the keys kept.
        self.scratch.clear();
        self.scratch.resize(count, NOT_CHOSEN);
        let fewest = AtomicUsize::new(usize::MAX);
        let _job_label = runtime::profiling::job_label("occluder selection job");
        runtime::jobs::parallel_for_chunks(&mut self.scratch, SCORE_GRAIN, |first, keys| {
            let mut fewest_here = usize::MAX;
            for (offset, key) in keys.iter_mut().enumerate() {
                let index = first + offset;
                let (bounds, mesh) = bounds_of(index);
                let Some(mesh) = meshes.get(mesh) else {
                    continue;
                };
                if !bounds.is_finite() {
                    continue;
                }
                let center = view_projection * bounds.center().extend(1.0);
                let radius = bounds.half_extent().length();
                // Homogeneous w is the view depth for a perspective view, 1 for an orthographic one.
                let depth = center.w;
                if !(depth.is_finite() && depth > 0.0) {
                    continue;
                }
                // Half the NDC height is the viewport height, so this is the bounding sphere's
                // diameter as a fraction of the viewport height.
                let size = radius * scale / depth.max(f32::MIN_POSITIVE);
                if size >= min_screen_size {
                    // A positive finite depth's bits stay below `NOT_CHOSEN`'s.
                    *key = u64::from(depth.to_bits()) << 32 | index as u64;
                    fewest_here = fewest_here.min(mesh.triangle_count());
                }
            }
            fewest.fetch_min(fewest_here, Ordering::Relaxed);
        });
        self.scratch.retain(|&key| key != NOT_CHOSEN);
        let fewest_triangles = fewest.into_inner();
        // Nearest first (keys are unique: the index breaks ties). Every chosen occluder costs
        // at least `fewest_triangles`, so the greedy pick below chooses at most `budget /
        // fewest + 1` of them: those nearest are sorted first, and the rest only when the
        // budget still has room after them (some did not fit). Same picks as a full sort.
        let prefix = (self.triangle_budget / fewest_triangles.max(1)).saturating_add(1).min(self.scratch.len());
        if prefix < self.scratch.len() {
            self.scratch.select_nth_unstable(prefix);
        }
        self.scratch[..prefix].sort_unstable();
        let mut spent = 0usize;
        let mut take = |key: u64, spent: &mut usize| {
            let instance = instance_of((key & u64::from(u32::MAX)) as usize);
            let triangles = meshes.get(instance.mesh).map_or(0, OccluderMesh::triangle_count);
            if *spent + triangles <= self.triangle_budget {
                *spent += triangles;
                chosen.push(instance);
            }
        };
        for &key in &self.scratch[..prefix] {
            take(key, &mut spent);
        }
        if prefix < self.scratch.len() && spent.saturating_add(fewest_triangles) <= self.triangle_budget {
            self.scratch[prefix..].sort_unstable();
            for &key in &self.scratch[prefix..] {
                take(key, &mut spent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The selection as first written: a full sort, then the greedy pick.
    fn select_by_full_sort(
        selector: &OccluderSelector,
        view_projection: Mat4,
        candidates: &[OccluderCandidate],
        meshes: &OccluderMeshes,
    ) -> Vec<OccluderInstance> {
        let scale = view_projection.row(1).truncate().length();
        let mut keys: Vec<u64> = candidates
            .iter()
            .enumerate()
            .filter(|(_, candidate)| {
                candidate.world_bounds.is_finite() && meshes.get(candidate.instance.mesh).is_some()
            })
            .filter_map(|(index, candidate)| {
                let center = view_projection * candidate.world_bounds.center().extend(1.0);
                let depth = center.w;
                let size = candidate.world_bounds.half_extent().length() * scale / depth.max(f32::MIN_POSITIVE);
                (depth.is_finite() && depth > 0.0 && size >= selector.min_screen_size)
                    .then_some(u64::from(depth.to_bits()) << 32 | index as u64)
            })
            .collect();
        keys.sort_unstable();
        let mut spent = 0;
        let mut chosen = Vec::new();
        for key in keys {
            let instance = candidates[(key & u64::from(u32::MAX)) as usize].instance;
            let triangles = meshes.get(instance.mesh).map_or(0, OccluderMesh::triangle_count);
            if spent + triangles <= selector.triangle_budget {
                spent += triangles;
                chosen.push(instance);
            }
        }
        chosen
    }

    proptest::proptest! {
        #[test]
        fn the_partial_sort_picks_what_a_full_sort_picks(
            places in proptest::collection::vec((-60.0f32..60.0, -60.0f32..-1.0, 0.2f32..8.0, 0u32..4), 0..400),
            budget in 0usize..2000,
            min_screen_size in 0.0f32..0.1,
        ) {
            // Meshes of 12, 1, 4 and 200 triangles (handle 3 has none registered).
            let mut meshes = OccluderMeshes::new();
            meshes.insert(MeshHandle(0), OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::ONE)).expect("a box"));
            meshes.insert(MeshHandle(1), OccluderMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![0, 1, 2]).expect("one"));
            let fan = |count: u32| {
                let positions = (0..count + 2).map(|index| Vec3::new((index as f32).cos(), (index as f32).sin(), 0.0)).collect();
                let indices = (0..count).flat_map(|index| [0, index + 1, index + 2]).collect();
                OccluderMesh::new(positions, indices).expect("a fan")
            };
            meshes.insert(MeshHandle(2), fan(200));
            let candidates: Vec<OccluderCandidate> = places
                .iter()
                .map(|&(x, z, size, mesh)| OccluderCandidate {
                    instance: OccluderInstance { mesh: MeshHandle(mesh), world: Mat4::from_translation(Vec3::new(x, 0.0, z)) },
                    world_bounds: Aabb::new(Vec3::new(x, 0.0, z) - size, Vec3::new(x, 0.0, z) + size),
                })
                .collect();
            let view_projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.5, 0.1);
            let mut selector = OccluderSelector { min_screen_size, triangle_budget: budget, ..OccluderSelector::default() };
            let mut chosen = Vec::new();
            selector.select(view_projection, &candidates, &meshes, &mut chosen);
            proptest::prop_assert_eq!(chosen, select_by_full_sort(&selector, view_projection, &candidates, &meshes));
        }
    }

    #[test]
    fn a_box_is_a_convex_occluder_with_six_faces() {
        let occluder = OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::ONE)).expect("a unit box is valid");
        assert_eq!(occluder.triangle_count(), 12);
        assert!(occluder.is_convex(), "a box must be recognised as convex");
        assert_eq!(occluder.hull_faces().len(), 6, "six distinct faces");
        for (plane, _) in occluder.hull_faces() {
            assert!(plane.dot(Vec3::splat(0.5).extend(1.0)) < 0.0, "the centre is inside every face");
        }
    }

    #[test]
    fn bad_meshes_are_errors() {
        assert!(OccluderMesh::new(vec![Vec3::ZERO; 3], vec![0, 1]).is_err());
        assert!(OccluderMesh::new(vec![Vec3::ZERO; 3], vec![0, 1, 3]).is_err());
        assert!(OccluderMesh::new(vec![Vec3::NAN, Vec3::X, Vec3::Y], vec![0, 1, 2]).is_err());
        assert!(OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0))).is_err());
        assert!(OccluderMesh::from_render_mesh(&[Vec3::ZERO; 3], &[0, 1, 2, 0, 1, 2], 1).is_err());
    }

    #[test]
    fn an_open_or_inward_mesh_is_not_a_convex_occluder() {
        let single = OccluderMesh::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y], vec![0, 1, 2]).expect("one triangle");
        assert!(!single.is_convex(), "one triangle is not a solid");
        let mut inverted = OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::ONE)).expect("valid").indices;
        inverted.chunks_exact_mut(3).for_each(|triangle| triangle.swap(1, 2));
        let inside_out = OccluderMesh::new(
            OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::ONE)).expect("valid").positions,
            inverted,
        );
        assert!(inside_out.is_err(), "a closed mesh wound inwards is refused");
    }

    #[test]
    fn selection_takes_the_nearest_within_budget() {
        let mut meshes = OccluderMeshes::new();
        meshes.insert(MeshHandle(0), OccluderMesh::from_box(&Aabb::new(Vec3::splat(-1.0), Vec3::ONE)).expect("valid"));
        let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
        let view_projection = Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1) * view;
        let candidate = |z: f32, mesh: u32| OccluderCandidate {
            instance: OccluderInstance {
                mesh: MeshHandle(mesh),
                world: Mat4::from_translation(Vec3::new(0.0, 0.0, z)),
            },
            world_bounds: Aabb::new(Vec3::new(-1.0, -1.0, z - 1.0), Vec3::new(1.0, 1.0, z + 1.0)),
        };
        let candidates =
            [candidate(-30.0, 0), candidate(-10.0, 0), candidate(-20.0, 0), candidate(-5000.0, 0), candidate(-8.0, 7)];
        let mut selector = OccluderSelector { triangle_budget: 24, ..OccluderSelector::default() };
        let mut chosen = Vec::new();
        selector.select(view_projection, &candidates, &meshes, &mut chosen);
        let depths: Vec<f32> = chosen.iter().map(|instance| instance.world.w_axis.z).collect();
        assert_eq!(depths, vec![-10.0, -20.0], "nearest two fit the 24-triangle budget; tiny and meshless skipped");
    }
}

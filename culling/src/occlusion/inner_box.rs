//! A generated occluder that is conservative by construction: the largest box, centred on
//! a closed mesh's bounds and proportional to them, that lies entirely inside the mesh.
//!
//! A box lies inside a closed surface exactly when one point of it (its centre) is inside
//! and no triangle of the surface touches the box: the box is connected, and the surface
//! is what separates inside from outside. So the search is a bisection on the box's scale
//! with a triangle/box overlap test (separating axes, after Akenine-Möller, "Fast 3D
//! Triangle-Box Overlap Testing", 2001), where touching counts as overlap, and an inside
//! test by ray parity. Everything runs in `f64` and the result is shrunk before it is
//! rounded to `f32`, so rounding never moves a face outwards.
//!
//! Why not a simplified mesh: edge-collapse simplification (meshopt's included) moves the
//! surface both ways, and a bulging occluder hides what is visible. A box loses occlusion
//! on irregular shapes, never correctness.

use ecs::Aabb;
use glam::{DVec3, Vec3};

use super::OcclusionError;

/// Bisection steps on the scale (the last step is below 2^-20 of the bounds).
const STEPS: usize = 20;

/// Connected parts of a welded mesh tried for an inner box, largest (by triangles) first.
const MOST_PARTS: usize = 8;

/// The largest inner box of the parts of the welded surface `positions`/`indices` (see
/// [`OccluderMesh::inner_box_of`](super::OccluderMesh::inner_box_of)), with the plane of its
/// part's open side; the first part's error when no part has one.
pub(crate) fn largest_inner_box(
    positions: &[Vec3],
    indices: &[u32],
) -> Result<(Aabb, Option<glam::Vec4>), OcclusionError> {
    let mut best: Option<(Aabb, Option<glam::Vec4>)> = None;
    let mut first_error = None;
    for part in parts(positions.len(), indices).into_iter().take(MOST_PARTS) {
        let found = open_side(positions, &part).and_then(|open| {
            let bounds = Aabb::from_points(part.iter().map(|&vertex| positions[vertex as usize]))
                .ok_or(OcclusionError::BadMesh("an occluder needs positions"))?;
            // A closed part's volume is the same from any apex; an open one's is taken from a
            // point of its open side's plane.
            let apex = open.map_or(glam::DVec3::ZERO, |side| {
                let plane = side.plane(&bounds).as_dvec4();
                -plane.truncate() * plane.w
            });
            if signed_volume_from(positions, &part, apex) <= 0.0 {
                return Err(OcclusionError::BadMesh("an occluder's surface must be wound outwards"));
            }
            Ok((inner_box(positions, &part, open)?, open.map(|side| side.plane(&bounds))))
        });
        match found {
            Ok(found) if best.is_none_or(|(box_, _)| volume(&found.0) > volume(&box_)) => best = Some(found),
            Ok(_) => {}
            Err(error) => first_error = first_error.or(Some(error)),
        }
    }
    best.ok_or(first_error.unwrap_or(OcclusionError::BadMesh("an occluder needs triangles")))
}

fn volume(aabb: &Aabb) -> f32 {
    let size = aabb.max - aabb.min;
    size.x * size.y * size.z
}

/// The triangles of `indices` grouped by connected part (triangles sharing a vertex), each
/// part's indices, the parts with most triangles first.
fn parts(vertices: usize, indices: &[u32]) -> Vec<Vec<u32>> {
    let mut parent: Vec<u32> = (0..vertices as u32).collect();
    fn root(parent: &mut [u32], mut vertex: u32) -> u32 {
        while parent[vertex as usize] != vertex {
            parent[vertex as usize] = parent[parent[vertex as usize] as usize];
            vertex = parent[vertex as usize];
        }
        vertex
    }
    for triangle in indices.chunks_exact(3) {
        let first = root(&mut parent, triangle[0]);
        for &other in &triangle[1..] {
            let other = root(&mut parent, other);
            parent[other as usize] = first;
        }
    }
    let mut by_root: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
    for triangle in indices.chunks_exact(3) {
        by_root.entry(root(&mut parent, triangle[0])).or_default().extend_from_slice(triangle);
    }
    let mut parts: Vec<Vec<u32>> = by_root.into_values().collect();
    parts.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    parts
}

/// The side of a mesh's bounds through which its surface is open (a prop without a floor,
/// standing on the ground): `axis` 0, 1 or 2 and `sign` -1 (the low face) or +1 (the high).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpenSide {
    pub axis: usize,
    pub sign: i8,
}

impl OpenSide {
    /// The plane of this side of `bounds`, outward (positive on the open side), as
    /// `xyz` normal and `w` offset.
    pub(crate) fn plane(self, bounds: &Aabb) -> glam::Vec4 {
        let mut normal = Vec3::ZERO;
        normal[self.axis] = f32::from(self.sign);
        let offset = if self.sign < 0 { bounds.min[self.axis] } else { bounds.max[self.axis] };
        normal.extend(-f32::from(self.sign) * offset)
    }
}

/// Whether the boundary of the welded surface `indices` (its edges without a twin) lies in
/// one face plane of the bounds of `positions`: `Ok(None)` for a closed surface, the open
/// side for a surface open only there, an error otherwise.
pub(crate) fn open_side(positions: &[Vec3], indices: &[u32]) -> Result<Option<OpenSide>, OcclusionError> {
    let border = border_edges(indices);
    if border.is_empty() {
        return Ok(None);
    }
    let bounds = Aabb::from_points(indices.iter().map(|&vertex| positions[vertex as usize]))
        .ok_or(OcclusionError::BadMesh("an occluder needs positions"))?;
    let tolerance = bounds.half_extent().max_element() * 1.0e-5;
    let mut sides: Vec<OpenSide> =
        (0..3).flat_map(|axis| [OpenSide { axis, sign: -1 }, OpenSide { axis, sign: 1 }]).collect();
    for (from, to) in border {
        sides.retain(|side| {
            let face = if side.sign < 0 { bounds.min[side.axis] } else { bounds.max[side.axis] };
            [from, to].iter().all(|&vertex| (positions[vertex as usize][side.axis] - face).abs() <= tolerance)
        });
    }
    sides.first().copied().map(Some).ok_or(OcclusionError::BadMesh(
        "the surface is open other than through one face of its bounds; author an occluder",
    ))
}

/// The inner box of the outward-wound mesh `positions`/`indices` (see the module docs),
/// closed or open only through `open` (then the inside test casts its rays away from that
/// side, where the surface is whole, and the box never reaches it: it stays strictly inside
/// the bounds).
pub(crate) fn inner_box(positions: &[Vec3], indices: &[u32], open: Option<OpenSide>) -> Result<Aabb, OcclusionError> {
    let bounds = Aabb::from_points(indices.iter().map(|&vertex| positions[vertex as usize]))
        .ok_or(OcclusionError::BadMesh("an occluder needs positions"))?;
    let center = bounds.center().as_dvec3();
    let half = bounds.half_extent().as_dvec3();
    let triangles: Vec<[DVec3; 3]> = indices
        .chunks_exact(3)
        .map(|triangle| [0, 1, 2].map(|corner| positions[triangle[corner] as usize].as_dvec3()))
        .collect();
    if !is_inside(center, &triangles, open)? {
        return Err(OcclusionError::BadMesh("the centre of the mesh's bounds is outside it; author an occluder"));
    }
    let overlaps = |scale: f64| triangles.iter().any(|triangle| touches_box(center, half * scale, triangle));
    let (mut inside, mut outside) = (0.0f64, 1.0f64);
    if !overlaps(outside) {
        inside = outside;
    } else {
        for _ in 0..STEPS {
            let middle = 0.5 * (inside + outside);
            if overlaps(middle) {
                outside = middle;
            } else {
                inside = middle;
            }
        }
    }
    // Shrink by a margin far above f32 rounding before rounding.
    let scale = inside * (1.0 - 1.0e-4);
    let extent = half * scale;
    if !(extent.min_element() > 0.0) {
        return Err(OcclusionError::BadMesh("no box of positive size fits inside the mesh"));
    }
    Ok(Aabb::new((center - extent).as_vec3(), (center + extent).as_vec3()))
}

/// Whether the box `center +- half` and the triangle share any point (touching included):
/// no separating axis among the box faces, the triangle normal and the nine edge crosses.
fn touches_box(center: DVec3, half: DVec3, triangle: &[DVec3; 3]) -> bool {
    // Inflate a little: a touch within rounding counts as a touch.
    let half = half * (1.0 + 1.0e-9) + DVec3::splat(1.0e-12);
    let vertices = triangle.map(|vertex| vertex - center);
    let separated = |axis: DVec3| {
        let projections = vertices.map(|vertex| vertex.dot(axis));
        let radius = half.dot(axis.abs());
        projections.iter().copied().fold(f64::INFINITY, f64::min) > radius
            || projections.iter().copied().fold(f64::NEG_INFINITY, f64::max) < -radius
    };
    if [DVec3::X, DVec3::Y, DVec3::Z].into_iter().any(separated) {
        return false;
    }
    let edges = [vertices[1] - vertices[0], vertices[2] - vertices[1], vertices[0] - vertices[2]];
    if separated(edges[0].cross(edges[1])) {
        return false;
    }
    for edge in edges {
        for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
            let cross = axis.cross(edge);
            if cross != DVec3::ZERO && separated(cross) {
                return false;
            }
        }
    }
    true
}

/// `indices` with every vertex replaced by the first one at the same position, so that a
/// render mesh whose vertices are split (for normals, UVs) reads as the surface it is.
/// Positions closer than a millionth of the mesh's size count as the same: generated
/// meshes close their seams and poles with rounding (sin 2π is not 0). The inner box keeps
/// a margin far above that distance.
pub(crate) fn welded(positions: &[Vec3], indices: &[u32]) -> Vec<u32> {
    let size = Aabb::from_points(positions.iter().copied()).map_or(0.0, |bounds| bounds.half_extent().max_element());
    let cell = if size.is_finite() && size > 0.0 { size * 2.0f32.powi(-20) } else { 1.0 };
    let key = |position: Vec3| (position / cell).round().as_i64vec3().to_array();
    let mut first_at = std::collections::HashMap::with_capacity(positions.len());
    let canonical: Vec<u32> = (0..positions.len() as u32)
        .map(|vertex| *first_at.entry(key(positions[vertex as usize])).or_insert(vertex))
        .collect();
    indices.iter().map(|&index| canonical.get(index as usize).copied().unwrap_or(index)).collect()
}

/// Whether `point` is inside the closed surface `triangles`, by the parity of a ray's hits.
/// A ray that grazes an edge or vertex is retried in another direction.
/// With an `open` side, every ray leaves away from it (through the whole part of the surface).
fn is_inside(point: DVec3, triangles: &[[DVec3; 3]], open: Option<OpenSide>) -> Result<bool, OcclusionError> {
    let directions = [
        DVec3::new(0.573_462, 0.613_228, 0.543_381),
        DVec3::new(-0.612_117, 0.377_301, 0.694_919),
        DVec3::new(0.291_137, -0.811_463, 0.506_710),
    ];
    'directions: for mut direction in directions {
        if let Some(side) = open {
            direction[side.axis] = -f64::from(side.sign) * direction[side.axis].abs();
        }
        let mut hits = 0usize;
        for [a, b, c] in triangles {
            let (edge_1, edge_2) = (*b - *a, *c - *a);
            let normal_part = direction.cross(edge_2);
            let determinant = edge_1.dot(normal_part);
            let scale = edge_1.length() * edge_2.length();
            if determinant.abs() <= scale * 1.0e-12 {
                continue;
            }
            let offset = point - *a;
            let u = offset.dot(normal_part) / determinant;
            let across = offset.cross(edge_1);
            let v = direction.dot(across) / determinant;
            let distance = edge_2.dot(across) / determinant;
            let margin = 1.0e-9;
            let grazes = u.abs() < margin || v.abs() < margin || (u + v - 1.0).abs() < margin;
            if (-margin..=1.0 + margin).contains(&u) && (-margin..=1.0 + margin).contains(&v) && u + v <= 1.0 + margin {
                if grazes || distance.abs() < margin {
                    continue 'directions;
                }
                if distance > 0.0 {
                    hits += 1;
                }
            }
        }
        return Ok(hits % 2 == 1);
    }
    Err(OcclusionError::BadMesh("every test ray grazes an edge; author an occluder"))
}

/// The directed edges of `indices` that no other triangle matches with the opposite edge:
/// the border of an open surface (none for a closed one).
pub(super) fn border_edges(indices: &[u32]) -> Vec<(u32, u32)> {
    let mut edges: Vec<(u32, u32)> = indices
        .chunks_exact(3)
        .flat_map(|triangle| [(triangle[0], triangle[1]), (triangle[1], triangle[2]), (triangle[2], triangle[0])])
        .collect();
    edges.sort_unstable();
    edges.iter().copied().filter(|&(from, to)| edges.binary_search(&(to, from)).is_err()).collect()
}

/// Six times the signed volume of the tetrahedra from `apex` to each triangle: the volume a
/// closed surface encloses from any apex, and that of an open surface closed by a flat cap
/// when the apex lies in the cap's plane (the cap's own tetrahedra are flat).
pub(super) fn signed_volume_from(positions: &[Vec3], indices: &[u32], apex: glam::DVec3) -> f64 {
    indices
        .chunks_exact(3)
        .map(|triangle| {
            let [a, b, c] = [0, 1, 2].map(|corner| positions[triangle[corner] as usize].as_dvec3() - apex);
            a.dot(b.cross(c))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::occlusion::OccluderMesh;

    /// An L-shaped closed solid: a 4 x 1 x 1 bar along x and a 1 x 3 x 1 post on its left
    /// end, as boxes merged along their shared face.
    fn l_shape() -> (Vec<Vec3>, Vec<u32>) {
        // The outline in the xy plane, counter-clockwise, extruded along z from 0 to 1.
        let outline = [(0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (1.0, 1.0), (1.0, 3.0), (0.0, 3.0)];
        let mut positions = Vec::new();
        for z in [0.0, 1.0] {
            positions.extend(outline.iter().map(|&(x, y)| Vec3::new(x, y, z)));
        }
        let mut indices = Vec::new();
        // Caps: the outline split into two convex pieces (fans), -z wound clockwise seen from +z.
        for fan in [[0u32, 1, 2, 3], [0, 3, 4, 5]] {
            for step in 1..3 {
                let (a, b, c) = (fan[0], fan[step], fan[step + 1]);
                indices.extend([a, c, b]);
                indices.extend([a + 6, b + 6, c + 6]);
            }
        }
        // Sides.
        for edge in 0..6u32 {
            let next = (edge + 1) % 6;
            indices.extend([edge, next, next + 6, edge, next + 6, edge + 6]);
        }
        (positions, indices)
    }

    #[test]
    fn a_box_with_split_vertices_is_closed_once_welded() {
        let cube = OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::splat(2.0))).expect("valid");
        // Every triangle with its own three vertices, as a mesh with flat normals stores them.
        let positions: Vec<Vec3> = cube.indices().iter().map(|&index| cube.positions()[index as usize]).collect();
        let indices: Vec<u32> = (0..positions.len() as u32).collect();
        let occluder = OccluderMesh::inner_box_of(&positions, &indices).expect("the surface is closed");
        assert!(occluder.triangle_count() == 12, "a box: {}", occluder.triangle_count());
        let mut distinct = welded(&positions, &indices);
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "36 split vertices weld into the 8 corners");
    }

    /// The triangles of an axis-aligned box from `low` to `high`, with those of the faces
    /// `keep` refuses left out.
    fn box_without(low: Vec3, high: Vec3, keep: impl Fn(&[Vec3; 3]) -> bool) -> (Vec<Vec3>, Vec<u32>) {
        let cube = OccluderMesh::from_box(&Aabb::new(low, high)).expect("valid");
        let mut indices = Vec::new();
        for triangle in cube.indices().chunks_exact(3) {
            if keep(&[0, 1, 2].map(|corner| cube.positions()[triangle[corner] as usize])) {
                indices.extend_from_slice(triangle);
            }
        }
        (cube.positions().to_vec(), indices)
    }

    #[test]
    fn a_crate_without_a_floor_gets_the_box_of_its_largest_part_open_below() {
        // A crate open at its floor (y = 0), and a batten on its lid, open where it sits.
        let (mut positions, mut indices) = box_without(Vec3::ZERO, Vec3::ONE, |t| !t.iter().all(|p| p.y == 0.0));
        let (batten, batten_indices) =
            box_without(Vec3::new(0.0, 1.0, 0.4), Vec3::new(1.0, 1.1, 0.6), |t| !t.iter().all(|p| p.y == 1.0));
        let base = positions.len() as u32;
        positions.extend(batten);
        indices.extend(batten_indices.iter().map(|index| index + base));
        let occluder = OccluderMesh::inner_box_of(&positions, &indices).expect("the crate's body has an inner box");
        let (low, high) = occluder.bounds();
        assert!(low.cmpgt(Vec3::ZERO).all() && high.cmplt(Vec3::ONE).all(), "inside the body: {low} {high}");
        assert!(high.y - low.y > 0.99, "nearly all of it: {low} {high}");
        assert_eq!(occluder.open_side(), Some(glam::Vec4::new(0.0, -1.0, 0.0, 0.0)), "open below the body");
    }

    #[test]
    fn a_tube_open_at_both_ends_or_an_inward_box_gets_no_occluder() {
        let (positions, tube) =
            box_without(Vec3::ZERO, Vec3::ONE, |t| !t.iter().all(|p| p.y == 0.0) && !t.iter().all(|p| p.y == 1.0));
        assert!(OccluderMesh::inner_box_of(&positions, &tube).is_err(), "open through two sides");
        let (positions, open) = box_without(Vec3::ZERO, Vec3::ONE, |t| !t.iter().all(|p| p.x == 1.0));
        let inward: Vec<u32> = open.chunks_exact(3).flat_map(|t| [t[0], t[2], t[1]]).collect();
        assert!(OccluderMesh::inner_box_of(&positions, &inward).is_err(), "wound inwards");
        assert!(OccluderMesh::inner_box_of(&positions, &open).is_ok(), "open through +x only, wound outwards");
    }

    #[test]
    fn the_inner_box_of_a_box_is_almost_the_box() {
        let cube = OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::splat(2.0))).expect("valid");
        let inner = inner_box(cube.positions(), cube.indices(), None).expect("a cube has an inner box");
        assert!(
            inner.min.cmpgt(Vec3::ZERO).all() && inner.max.cmplt(Vec3::splat(2.0)).all(),
            "strictly inside: {inner:?}"
        );
        assert!(inner.half_extent().min_element() > 0.999, "and nearly all of it: {inner:?}");
    }

    #[test]
    fn the_inner_box_of_an_l_stays_inside_it() {
        let (positions, indices) = l_shape();
        OccluderMesh::new(positions.clone(), indices.clone()).expect("the L is closed and wound outwards");
        // Bounds centre (2, 1.5, 0.5) is outside the L: refused.
        assert!(inner_box(&positions, &indices, None).is_err(), "a centre outside the solid has no inner box");
        // Thicken the bar so the centre is inside: the box must stay below y = 2 and right of x = 1.
        let thick: Vec<Vec3> =
            positions.iter().map(|p| if p.y == 1.0 { Vec3::new(p.x, 2.0, p.z) } else { *p }).collect();
        let inner = inner_box(&thick, &indices, None).expect("the centre (2, 1.5, 0.5) is inside the thick bar");
        assert!(inner.max.y <= 2.0 && inner.min.y >= 0.0, "inside the bar's height: {inner:?}");
        assert!(inner.max.x <= 4.0 && inner.min.x >= 0.0 && inner.max.z <= 1.0 && inner.min.z >= 0.0, "{inner:?}");
        assert!(inner.half_extent().y > 0.4, "not needlessly small: {inner:?}");
    }
}

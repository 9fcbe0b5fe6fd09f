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

/// The inner box of the closed, outward-wound mesh `positions`/`indices` (see the module
/// docs).
pub(crate) fn inner_box(positions: &[Vec3], indices: &[u32]) -> Result<Aabb, OcclusionError> {
    let bounds =
        Aabb::from_points(positions.iter().copied()).ok_or(OcclusionError::BadMesh("an occluder needs positions"))?;
    let center = bounds.center().as_dvec3();
    let half = bounds.half_extent().as_dvec3();
    let triangles: Vec<[DVec3; 3]> = indices
        .chunks_exact(3)
        .map(|triangle| [0, 1, 2].map(|corner| positions[triangle[corner] as usize].as_dvec3()))
        .collect();
    if !is_inside(center, &triangles)? {
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

/// Whether `point` is inside the closed surface `triangles`, by the parity of a ray's hits.
/// A ray that grazes an edge or vertex is retried in another direction.
fn is_inside(point: DVec3, triangles: &[[DVec3; 3]]) -> Result<bool, OcclusionError> {
    let directions = [
        DVec3::new(0.573_462, 0.613_228, 0.543_381),
        DVec3::new(-0.612_117, 0.377_301, 0.694_919),
        DVec3::new(0.291_137, -0.811_463, 0.506_710),
    ];
    'directions: for direction in directions {
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
    fn the_inner_box_of_a_box_is_almost_the_box() {
        let cube = OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::splat(2.0))).expect("valid");
        let inner = inner_box(cube.positions(), cube.indices()).expect("a cube has an inner box");
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
        assert!(inner_box(&positions, &indices).is_err(), "a centre outside the solid has no inner box");
        // Thicken the bar so the centre is inside: the box must stay below y = 2 and right of x = 1.
        let thick: Vec<Vec3> =
            positions.iter().map(|p| if p.y == 1.0 { Vec3::new(p.x, 2.0, p.z) } else { *p }).collect();
        let inner = inner_box(&thick, &indices).expect("the centre (2, 1.5, 0.5) is inside the thick bar");
        assert!(inner.max.y <= 2.0 && inner.min.y >= 0.0, "inside the bar's height: {inner:?}");
        assert!(inner.max.x <= 4.0 && inner.min.x >= 0.0 && inner.max.z <= 1.0 && inner.min.z >= 0.0, "{inner:?}");
        assert!(inner.half_extent().y > 0.4, "not needlessly small: {inner:?}");
    }
}

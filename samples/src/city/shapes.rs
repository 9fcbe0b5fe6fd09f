//! Low-poly building blocks for the city's meshes: boxes, cylinders, spheres, cones and
//! hipped roofs, each appended to a [`MeshData`] with counter-clockwise outward triangles and
//! unit normals (flat faces get their own vertices; curved surfaces share them).

use assets::MeshData;
use glam::Vec3;

/// Appends one vertex and returns its index.
fn vertex(mesh: &mut MeshData, position: Vec3, normal: Vec3) -> u32 {
    mesh.positions.push(position.to_array());
    mesh.normals.push(normal.normalize_or(Vec3::Y).to_array());
    mesh.positions.len() as u32 - 1
}

/// Appends a flat polygon (a fan over `corners`, counter-clockwise seen from its front).
pub(crate) fn polygon(mesh: &mut MeshData, corners: &[Vec3]) {
    let normal = (corners[1] - corners[0]).cross(corners[2] - corners[0]);
    let first = mesh.positions.len() as u32;
    for &corner in corners {
        vertex(mesh, corner, normal);
    }
    for index in 1..corners.len() as u32 - 1 {
        mesh.indices.extend_from_slice(&[first, first + index, first + index + 1]);
    }
}

/// Appends an axis-aligned box, `bottom` false to leave its floor out (a box on the ground
/// shows none).
pub(crate) fn cuboid(mesh: &mut MeshData, min: Vec3, max: Vec3, bottom: bool) {
    let corner = |x: bool, y: bool, z: bool| {
        Vec3::new(if x { max.x } else { min.x }, if y { max.y } else { min.y }, if z { max.z } else { min.z })
    };
    let (f, t) = (false, true);
    polygon(mesh, &[corner(f, f, t), corner(t, f, t), corner(t, t, t), corner(f, t, t)]); // +z
    polygon(mesh, &[corner(t, f, f), corner(f, f, f), corner(f, t, f), corner(t, t, f)]); // -z
    polygon(mesh, &[corner(t, f, t), corner(t, f, f), corner(t, t, f), corner(t, t, t)]); // +x
    polygon(mesh, &[corner(f, f, f), corner(f, f, t), corner(f, t, t), corner(f, t, f)]); // -x
    polygon(mesh, &[corner(f, t, t), corner(t, t, t), corner(t, t, f), corner(f, t, f)]); // +y
    if bottom {
        polygon(mesh, &[corner(f, f, f), corner(t, f, f), corner(t, f, t), corner(f, f, t)]);
        // -y
    }
}

/// Appends a cylinder about the `axis` through `base` (unit axis), `segments` around, with
/// both caps.
pub(crate) fn cylinder(mesh: &mut MeshData, base: Vec3, axis: Vec3, radius: f32, length: f32, segments: u32) {
    let side = if axis.x.abs() < 0.9 { Vec3::X } else { Vec3::Y };
    let u = axis.cross(side).normalize();
    let v = axis.cross(u);
    let ring = |segment: u32| {
        let angle = std::f32::consts::TAU * segment as f32 / segments as f32;
        u * angle.cos() + v * angle.sin()
    };
    let first = mesh.positions.len() as u32;
    for segment in 0..=segments {
        let out = ring(segment);
        vertex(mesh, base + out * radius, out);
        vertex(mesh, base + axis * length + out * radius, out);
    }
    for segment in 0..segments {
        let (low, high) = (first + segment * 2, first + segment * 2 + 1);
        let (next_low, next_high) = (low + 2, high + 2);
        // u x v = axis, so increasing angle turns counter-clockwise seen from the top.
        mesh.indices.extend_from_slice(&[low, next_low, next_high, low, next_high, high]);
    }
    let top: Vec<Vec3> = (0..segments).map(|segment| base + axis * length + ring(segment) * radius).collect();
    polygon(mesh, &top);
    let bottom: Vec<Vec3> = (0..segments).rev().map(|segment| base + ring(segment) * radius).collect();
    polygon(mesh, &bottom);
}

/// Appends a smooth sphere (ellipsoid of `radii`) of `rings` x `segments` quads.
pub(crate) fn ellipsoid(mesh: &mut MeshData, center: Vec3, radii: Vec3, rings: u32, segments: u32) {
    let first = mesh.positions.len() as u32;
    for ring in 0..=rings {
        let polar = std::f32::consts::PI * ring as f32 / rings as f32;
        for segment in 0..=segments {
            let azimuth = std::f32::consts::TAU * segment as f32 / segments as f32;
            let unit = Vec3::new(polar.sin() * azimuth.cos(), polar.cos(), polar.sin() * azimuth.sin());
            // The normal of an ellipsoid is the unit direction divided by the radii.
            vertex(mesh, center + unit * radii, unit / radii);
        }
    }
    let row = segments + 1;
    for ring in 0..rings {
        for segment in 0..segments {
            let corner = first + ring * row + segment;
            mesh.indices.extend_from_slice(&[
                corner,
                corner + 1,
                corner + row,
                corner + 1,
                corner + row + 1,
                corner + row,
            ]);
        }
    }
}

/// Appends a smooth cone standing on `base` (a disc of `radius`) with its tip `height` up.
pub(crate) fn cone(mesh: &mut MeshData, base: Vec3, radius: f32, height: f32, segments: u32) {
    let slope = radius / height;
    let first = mesh.positions.len() as u32;
    for segment in 0..=segments {
        let angle = std::f32::consts::TAU * segment as f32 / segments as f32;
        let out = Vec3::new(angle.cos(), 0.0, -angle.sin());
        let normal = out + Vec3::Y * slope;
        vertex(mesh, base + out * radius, normal);
        vertex(mesh, base + Vec3::Y * height, normal);
    }
    for segment in 0..segments {
        let (rim, tip) = (first + segment * 2, first + segment * 2 + 1);
        mesh.indices.extend_from_slice(&[rim, rim + 2, tip]);
    }
    let bottom: Vec<Vec3> = (0..segments)
        .map(|segment| {
            let angle = std::f32::consts::TAU * segment as f32 / segments as f32;
            base + Vec3::new(angle.cos(), 0.0, angle.sin()) * radius
        })
        .collect();
    polygon(mesh, &bottom);
}

/// Appends a hipped roof over the rectangle `min`..`max` (at `min.y`) rising to `max.y`,
/// its ridge along the longer side.
pub(crate) fn hipped_roof(mesh: &mut MeshData, min: Vec3, max: Vec3) {
    let (y0, y1) = (min.y, max.y);
    let a = Vec3::new(min.x, y0, min.z);
    let b = Vec3::new(max.x, y0, min.z);
    let c = Vec3::new(max.x, y0, max.z);
    let d = Vec3::new(min.x, y0, max.z);
    let center = (min + max) * 0.5;
    let (half_x, half_z) = ((max.x - min.x) * 0.5, (max.z - min.z) * 0.5);
    let inset = half_x.min(half_z);
    let (ridge_a, ridge_b) = if half_x >= half_z {
        (Vec3::new(center.x - half_x + inset, y1, center.z), Vec3::new(center.x + half_x - inset, y1, center.z))
    } else {
        (Vec3::new(center.x, y1, center.z - half_z + inset), Vec3::new(center.x, y1, center.z + half_z - inset))
    };
    if half_x >= half_z {
        polygon(mesh, &[d, c, ridge_b, ridge_a]); // +z slope
        polygon(mesh, &[b, a, ridge_a, ridge_b]); // -z slope
        polygon(mesh, &[c, b, ridge_b]); // +x hip
        polygon(mesh, &[a, d, ridge_a]); // -x hip
    } else {
        polygon(mesh, &[c, b, ridge_a, ridge_b]); // +x slope
        polygon(mesh, &[a, d, ridge_b, ridge_a]); // -x slope
        polygon(mesh, &[d, c, ridge_b]); // +z hip
        polygon(mesh, &[b, a, ridge_a]); // -z hip
    }
}

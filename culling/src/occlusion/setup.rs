//! Occluder setup: from an occluder mesh placed in the world to screen-space primitives the
//! tile kernels rasterize.
//!
//! A primitive is a convex polygon of at most [`MAX_EDGES`] edges with a depth that is the
//! minimum of at most [`MAX_PLANES`] screen-space depth planes, clamped below by a floor.
//! Both are prepared so that the kernels evaluate them at **integer** pixel coordinates and
//! read off, for pixel `(x, y)` (the square `[x, x+1] x [y, y+1]`):
//!
//! - every edge value `>= 0` exactly when the whole square lies inside the polygon (the
//!   edge is normalised to `|a| + |b| = 1` and moved inwards by half that sum, the largest
//!   amount a corner of the square can lie outside its centre's value, plus a margin that
//!   covers the `f32` rounding of the kernel and the vertex snapping of a real rasterizer);
//! - the depth value `<=` the farthest (smallest reversed-Z) depth of the occluder's front
//!   surface anywhere in the square (each plane moved down by half its gradient's L1 norm,
//!   an error bound and a relative `2^-20`, and clamped below by the smallest vertex depth).
//!
//! Two kinds of primitive come out of an occluder:
//!
//! - **A triangle** (3 edges, 1 plane) of any occluder. Triangles that face away from the
//!   camera are dropped (the renderer culls back faces; a camera inside a solid sees
//!   through it). Triangles crossing the near plane are clipped to it (a clipped triangle is
//!   a convex quadrilateral, still one primitive).
//! - **A silhouette** (up to 8 edges, up to 4 planes) of a small convex occluder entirely in
//!   front of the near plane: the 2D convex hull of its projected vertices, with depth the
//!   minimum of its front-facing face planes. For a convex solid the nearest surface along
//!   a ray is where it enters the last front-facing half-space, i.e. the smallest reversed-Z
//!   value of the front planes, so this depth is exact and, unlike separate triangles,
//!   leaves no crack of partly covered pixels along the edges between faces.
//!
//! Setup runs in `f64` (positions are transformed by `clip_from_object` in double
//! precision), so only the kernels' own `f32` rounding needs a margin.

use glam::{DAffine3, DMat3, DMat4, DVec2, DVec3, DVec4, Mat4};

use super::occluders::{OccluderMesh, MAX_HULL_VERTICES};

/// Most edges of a primitive (a silhouette of at most eight vertices).
pub const MAX_EDGES: usize = 8;
/// Most depth planes of a primitive.
pub const MAX_PLANES: usize = 4;

/// Coverage margin in pixels of the depth buffer: beyond `f32` rounding, this absorbs the
/// sub-pixel vertex snapping of a full-resolution rasterizer.
const COVERAGE_MARGIN: f64 = 2.0e-3;
/// Relative error allowed for the kernels' `f32` evaluation (a few units in the last place).
const RELATIVE_ERROR: f64 = 2.0e-6;
/// Every depth written is scaled down (made farther) by this factor, covering the rounding
/// of depth a real rasterizer writes.
const DEPTH_SHRINK: f64 = 1.0 - 1.0 / (1u64 << 20) as f64;

/// One screen-space convex primitive, ready for the tile kernels.
#[derive(Clone, Copy, Debug, Default)]
pub struct Primitive {
    /// Live edges; 0 marks an empty slot.
    pub edge_count: u32,
    /// Live planes (at least one when `edge_count > 0`).
    pub plane_count: u32,
    /// Pixel rectangle (`x0, y0, x1, y1`, ends exclusive) holding every pixel that may be
    /// fully covered, clipped to the buffer.
    pub rect: [i32; 4],
    /// Edges `(a, b, c)`: pixel `(x, y)` fully covered when `a * x + b * y + c >= 0` for all.
    pub edges: [[f32; 3]; MAX_EDGES],
    /// Planes `(a, b, c)`: `a * x + b * y + c` is a lower bound of the depth in pixel `(x, y)`.
    pub planes: [[f32; 3]; MAX_PLANES],
    /// Lower bound of every depth of the primitive (its smallest vertex depth, shrunk).
    pub floor: f32,
}

impl Primitive {
    /// An empty slot.
    pub const EMPTY: Primitive = Primitive {
        edge_count: 0,
        plane_count: 0,
        rect: [0; 4],
        edges: [[0.0; 3]; MAX_EDGES],
        planes: [[0.0; 3]; MAX_PLANES],
        floor: 0.0,
    };
}

/// What one occluder needs for this frame, worked out once before its triangles are set up.
#[derive(Clone, Copy, Debug)]
pub struct InstanceSetup {
    /// Object space to clip space, in double precision.
    pub clip_from_object: DMat4,
    /// The eye in object space, homogeneous: a face (outward plane `p`) faces the camera
    /// when `p . eye > 0`. It is `(clip_from_object)^-1 * (0, 0, 1, 0)`, the limit of points
    /// approaching the eye from in front, so the sign is right for perspective and
    /// orthographic views alike.
    pub eye: DVec4,
    /// Whether the occluder is drawn as one silhouette (convex and entirely in front of the
    /// near plane); otherwise it is drawn triangle by triangle.
    pub silhouette: bool,
    /// Whether anything is drawn (a finite, invertible transform, and not a convex occluder
    /// wholly off the screen).
    pub usable: bool,
    /// Clip-space vertices of a convex occluder (its first `MAX_HULL_VERTICES`).
    pub clip: [DVec4; MAX_HULL_VERTICES],
}

impl InstanceSetup {
    /// An instance that draws nothing.
    pub const UNUSABLE: InstanceSetup = InstanceSetup {
        clip_from_object: DMat4::ZERO,
        eye: DVec4::ZERO,
        silhouette: false,
        usable: false,
        clip: [DVec4::ZERO; MAX_HULL_VERTICES],
    };

    /// Prepares, in place (a setup loop writes each slot once, without moving the whole
    /// large value), `mesh` placed by `world` for the view of `view`. A convex occluder
    /// entirely in front of the near plane and entirely beyond one side of the screen draws
    /// nothing, and is marked unusable before the costlier steps.
    pub fn prepare(&mut self, view: &ViewSetup, world: &Mat4, mesh: &OccluderMesh) {
        self.usable = false;
        let world = world.as_dmat4();
        let clip_from_object = view.clip_from_world * world;
        if !clip_from_object.is_finite() {
            return;
        }
        let mut silhouette = mesh.is_convex();
        if silhouette {
            for (slot, position) in self.clip.iter_mut().zip(mesh.positions()) {
                *slot = clip_from_object * position.as_dvec3().extend(1.0);
                silhouette &= in_front(*slot);
            }
            if silhouette && off_screen(&self.clip[..mesh.positions().len()]) {
                return;
            }
        }
        // det(clip_from_object) = det(view) det(world), and its inverse maps Z to the
        // world's inverse of the view's eye: no 4x4 inverse per occluder when the world
        // matrix is affine (the usual case), one 3x3 inverse instead.
        let affine = world.row(3) == DVec4::W;
        let determinant =
            view.determinant * if affine { DMat3::from_mat4(world).determinant() } else { world.determinant() };
        if !(determinant.abs() >= 1.0e-300) {
            return;
        }
        let eye = if affine {
            let inverse = DAffine3::from_mat4(world).inverse();
            inverse.transform_vector3(view.eye.truncate()).extend(0.0)
                + (inverse.translation * view.eye.w).extend(view.eye.w)
        } else {
            world.inverse() * view.eye
        };
        if !eye.is_finite() {
            return;
        }
        // An occluder of a mesh open on one side (a prop without a floor) stands for the
        // mesh only for eyes strictly on its closed side: from the open side the real mesh
        // is seen into, and hides nothing.
        if let Some(plane) = mesh.open_side() {
            let plane = plane.as_dvec4();
            let scale =
                (plane.truncate().length() + plane.w.abs()) * (eye.truncate().abs().max_element() + eye.w.abs());
            // The view arrives in f32: an eye within its rounding of the plane counts as on it.
            if plane.dot(eye) >= -1.0e-5 * scale {
                return;
            }
        }
        (self.clip_from_object, self.eye, self.silhouette, self.usable) = (clip_from_object, eye, silhouette, true);
    }
}

/// What every occluder of one view shares, worked out once per raster.
#[derive(Clone, Copy, Debug)]
pub struct ViewSetup {
    /// World space to clip space, in double precision.
    pub clip_from_world: DMat4,
    /// `det(clip_from_world)`.
    pub determinant: f64,
    /// The eye in world space, homogeneous: `clip_from_world^-1 * (0, 0, 1, 0)` (see
    /// [`InstanceSetup::eye`]); not finite for a singular view.
    pub eye: DVec4,
}

impl ViewSetup {
    /// The setup of the view `view_projection`.
    pub fn new(view_projection: &Mat4) -> ViewSetup {
        let clip_from_world = view_projection.as_dmat4();
        let determinant = clip_from_world.determinant();
        let eye = if determinant.abs() >= 1.0e-300 { clip_from_world.inverse() * DVec4::Z } else { DVec4::NAN };
        ViewSetup { clip_from_world, determinant, eye }
    }
}

/// Whether clip-space points, all with `w > 0`, lie beyond one side of the screen (all
/// `x > w`, all `x < -w`, all `y > w` or all `y < -w`): their convex hull covers no pixel.
fn off_screen(clip: &[DVec4]) -> bool {
    let beyond = |side: fn(&DVec4) -> bool| clip.iter().all(side);
    beyond(|point| point.x > point.w)
        || beyond(|point| point.x < -point.w)
        || beyond(|point| point.y > point.w)
        || beyond(|point| point.y < -point.w)
}

/// Whether a clip-space point lies strictly beyond the near plane (reversed-Z: `z < w`).
fn in_front(clip: DVec4) -> bool {
    clip.w > 0.0 && clip.z < clip.w && clip.is_finite()
}

/// The screen (pixel `x`, pixel `y`, reversed-Z depth) of a clip-space point with `w > 0`.
fn to_screen(clip: DVec4, size: DVec2) -> DVec3 {
    let inverse_w = 1.0 / clip.w;
    DVec3::new((clip.x * inverse_w * 0.5 + 0.5) * size.x, (clip.y * inverse_w * 0.5 + 0.5) * size.y, clip.z * inverse_w)
}

/// Sets up triangle `triangle` of `mesh` into `out`, or leaves it empty (back-facing,
/// wholly in front of the near plane, no area, or drawn as part of a silhouette).
pub fn setup_triangle(
    instance: &InstanceSetup,
    mesh: &OccluderMesh,
    triangle: usize,
    size: DVec2,
    out: &mut Primitive,
) {
    out.edge_count = 0;
    if !instance.usable || instance.silhouette {
        return;
    }
    let indices = &mesh.indices()[triangle * 3..triangle * 3 + 3];
    let [a, b, c] = [0, 1, 2].map(|corner| mesh.positions()[indices[corner] as usize].as_dvec3());
    // Front-facing only, with a margin towards dropping: drawing a back face could hide what
    // a camera inside the solid sees, dropping a face only costs occlusion.
    let normal = (b - a).cross(c - a);
    let plane = normal.extend(-normal.dot(a));
    let facing = plane.dot(instance.eye);
    let scale = normal.abs().dot(instance.eye.truncate().abs()) + plane.w.abs() * instance.eye.w.abs();
    if !(facing > scale * 1.0e-9) {
        return;
    }
    let clip = [a, b, c].map(|position| instance.clip_from_object * position.extend(1.0));
    let mut polygon = [DVec4::ZERO; 4];
    let count = clip_near(&clip, &mut polygon);
    if count < 3 || polygon[..count].iter().any(|vertex| !(vertex.w > 1.0e-12) || !vertex.is_finite()) {
        return;
    }
    let screen = polygon.map(|vertex| if vertex.w > 0.0 { to_screen(vertex, size) } else { DVec3::ZERO });
    // Clipping a triangle by a plane keeps it convex and planar: one primitive, whose depth
    // plane any three of its vertices give.
    // plane three of its vertices give (the better-conditioned of two fans for a quad).
    let area = |p: DVec3, q: DVec3, r: DVec3| ((q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x)).abs();
    let corners = if count == 4 && area(screen[0], screen[2], screen[3]) > area(screen[0], screen[1], screen[2]) {
        [screen[0], screen[2], screen[3]]
    } else {
        [screen[0], screen[1], screen[2]]
    };
    *out = convex_primitive(&screen[..count], &[corners], size);
}

/// Sets up the silhouette of a convex occluder into `out[0]`; when the silhouette cannot be
/// drawn as one primitive (more front planes than [`MAX_PLANES`]), its front triangles are
/// not drawn either, which is safe (less occlusion, never more).
pub fn setup_silhouette(instance: &InstanceSetup, mesh: &OccluderMesh, size: DVec2, out: &mut Primitive) {
    out.edge_count = 0;
    if !instance.usable || !instance.silhouette {
        return;
    }
    let mut screen = [DVec3::ZERO; MAX_HULL_VERTICES];
    let count = mesh.positions().len();
    for (slot, clip) in screen.iter_mut().zip(&instance.clip[..count]) {
        *slot = to_screen(*clip, size);
    }
    let mut planes = [[DVec3::ZERO; 3]; MAX_PLANES];
    let mut plane_count = 0;
    for (plane, corners) in mesh.hull_faces() {
        let plane = plane.as_dvec4();
        let facing = plane.dot(instance.eye);
        let scale = plane.truncate().abs().dot(instance.eye.truncate().abs()) + plane.w.abs() * instance.eye.w.abs();
        // Towards keeping: a grazing back plane only lowers the minimum (farther, safe); a
        // front plane left out would make the depth too near.
        if facing > -scale * 1.0e-6 {
            if plane_count == MAX_PLANES {
                return;
            }
            planes[plane_count] = corners.map(|corner| screen[corner as usize]);
            plane_count += 1;
        }
    }
    if plane_count == 0 {
        return;
    }
    let mut hull = [DVec3::ZERO; MAX_HULL_VERTICES];
    let hull_count = convex_hull(&screen[..count], &mut hull);
    if hull_count >= 3 {
        *out = convex_primitive(&hull[..hull_count], &planes[..plane_count], size);
    }
}

/// Clips a triangle to the near half-space `w - z >= 0`; returns the vertex count (0, 3 or 4).
fn clip_near(triangle: &[DVec4; 3], out: &mut [DVec4; 4]) -> usize {
    let distance = triangle.map(|vertex| vertex.w - vertex.z);
    let mut count = 0;
    for index in 0..3 {
        let next = (index + 1) % 3;
        let (here, there) = (distance[index], distance[next]);
        if here >= 0.0 {
            out[count] = triangle[index];
            count += 1;
        }
        if (here >= 0.0) != (there >= 0.0) {
            let along = here / (here - there);
            out[count] = triangle[index] + (triangle[next] - triangle[index]) * along;
            count += 1;
        }
    }
    count
}

/// The 2D convex hull (by pixel `x`, `y`) of `points`, counter-clockwise, into `out`;
/// returns its vertex count. Andrew's monotone chain.
fn convex_hull(points: &[DVec3], out: &mut [DVec3; MAX_HULL_VERTICES]) -> usize {
    let mut sorted = [DVec3::ZERO; MAX_HULL_VERTICES];
    sorted[..points.len()].copy_from_slice(points);
    let sorted = &mut sorted[..points.len()];
    sorted.sort_unstable_by(|left, right| left.x.total_cmp(&right.x).then(left.y.total_cmp(&right.y)));
    let turn = |o: DVec3, a: DVec3, b: DVec3| (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
    // Twice the points for the two chains; the hull keeps at most all of them.
    let mut chain = [DVec3::ZERO; 2 * MAX_HULL_VERTICES];
    let mut length = 0;
    for &point in sorted.iter() {
        while length >= 2 && turn(chain[length - 2], chain[length - 1], point) <= 0.0 {
            length -= 1;
        }
        chain[length] = point;
        length += 1;
    }
    let lower = length + 1;
    for &point in sorted.iter().rev().skip(1) {
        while length >= lower && turn(chain[length - 2], chain[length - 1], point) <= 0.0 {
            length -= 1;
        }
        chain[length] = point;
        length += 1;
    }
    let count = length.saturating_sub(1).min(out.len());
    out[..count].copy_from_slice(&chain[..count]);
    count
}

/// A primitive from a convex polygon (either winding) and depth planes given by three
/// screen points each. Empty when the polygon has no area or a number is not finite.
fn convex_primitive(polygon: &[DVec3], planes: &[[DVec3; 3]], size: DVec2) -> Primitive {
    let mut primitive = Primitive::EMPTY;
    let area: f64 = (0..polygon.len())
        .map(|index| {
            let (here, next) = (polygon[index], polygon[(index + 1) % polygon.len()]);
            here.x * next.y - next.x * here.y
        })
        .sum();
    if !(area.abs() > 1.0e-9) {
        return primitive;
    }
    let orientation = area.signum();
    let mut edge_count = 0;
    for index in 0..polygon.len() {
        let (here, next) = (polygon[index], polygon[(index + 1) % polygon.len()]);
        // Inside on the left of a counter-clockwise edge: -(dy) x + dx y + c >= 0.
        let a = -(next.y - here.y) * orientation;
        let b = (next.x - here.x) * orientation;
        let norm = a.abs() + b.abs();
        if !(norm > 0.0) {
            continue;
        }
        let (a, b) = (a / norm, b / norm);
        let c = -(a * here.x + b * here.y);
        // At integer (x, y): the centre is (x + 0.5, y + 0.5); the worst corner lies 0.5
        // (half the normalised L1 norm) lower.
        let at_pixel = c + 0.5 * a + 0.5 * b - 0.5;
        let margin = COVERAGE_MARGIN + (size.x + size.y + at_pixel.abs()) * RELATIVE_ERROR;
        primitive.edges[edge_count] = [a as f32, b as f32, (at_pixel - margin) as f32];
        edge_count += 1;
    }
    let mut floor = f64::INFINITY;
    for (slot, corners) in primitive.planes.iter_mut().zip(planes) {
        let [p, q, r] = *corners;
        let (u, v) = (q - p, r - p);
        let normal = u.cross(v);
        let (a, b) = if normal.z.abs() > 1.0e-12 { (-normal.x / normal.z, -normal.y / normal.z) } else { (0.0, 0.0) };
        let c = p.z - a * p.x - b * p.y;
        let at_pixel = c + 0.5 * a + 0.5 * b - 0.5 * (a.abs() + b.abs());
        let error = (a.abs() * size.x + b.abs() * size.y + at_pixel.abs()) * RELATIVE_ERROR;
        let edge_on = normal.z.abs() <= 1.0e-12 || !(a.is_finite() && b.is_finite());
        // An edge-on plane gives no usable bound: it leaves only the floor.
        let lowest = if edge_on { f64::NEG_INFINITY } else { at_pixel - error };
        *slot = if lowest.is_finite() {
            [(a * DEPTH_SHRINK) as f32, (b * DEPTH_SHRINK) as f32, (lowest * DEPTH_SHRINK) as f32]
        } else {
            [0.0, 0.0, f32::MIN]
        };
        floor = floor.min(p.z.min(q.z).min(r.z));
    }
    for vertex in polygon {
        floor = floor.min(vertex.z);
    }
    let floor = (floor * DEPTH_SHRINK) as f32;
    let finite = primitive.edges[..edge_count]
        .iter()
        .chain(&primitive.planes[..planes.len()])
        .flatten()
        .all(|value| value.is_finite());
    if edge_count < 3 || planes.is_empty() || !finite || !floor.is_finite() {
        return Primitive::EMPTY;
    }
    let (low, high) =
        polygon.iter().fold((DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)), |(low, high), vertex| {
            (low.min(vertex.truncate()), high.max(vertex.truncate()))
        });
    let clamp = |value: f64, limit: f64| value.clamp(0.0, limit) as i32;
    primitive.rect = [
        clamp(low.x.floor(), size.x),
        clamp(low.y.floor(), size.y),
        clamp(high.x.ceil(), size.x),
        clamp(high.y.ceil(), size.y),
    ];
    primitive.edge_count = edge_count as u32;
    primitive.plane_count = planes.len() as u32;
    primitive.floor = floor;
    primitive
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eye worked out from the view's eye and the world matrix (a 3x3 inverse for an
    /// affine world, a 4x4 one otherwise) is the inverse of the whole transform applied to
    /// `Z`, as before; a singular world makes the occluder unusable.
    #[test]
    fn the_eye_from_the_view_equals_the_inverse_of_the_whole_transform() {
        let view_projection = Mat4::perspective_infinite_reverse_rh(1.1, 1.6, 0.1)
            * Mat4::look_at_rh(glam::Vec3::new(3.0, 2.0, 9.0), glam::Vec3::new(-1.0, 0.5, -4.0), glam::Vec3::Y);
        let view = ViewSetup::new(&view_projection);
        let mesh =
            OccluderMesh::from_box(&ecs::Aabb::new(glam::Vec3::splat(-1.0), glam::Vec3::splat(1.0))).expect("valid");
        let mut projective = Mat4::from_translation(glam::Vec3::new(0.5, -1.0, -2.0));
        projective.x_axis.w = 0.01;
        let worlds = [
            Mat4::IDENTITY,
            Mat4::from_scale_rotation_translation(
                glam::Vec3::new(2.0, 0.5, 3.0),
                glam::Quat::from_rotation_y(0.7),
                glam::Vec3::new(4.0, 0.0, -20.0),
            ),
            projective,
        ];
        for world in worlds {
            let mut setup = InstanceSetup::UNUSABLE;
            setup.prepare(&view, &world, &mesh);
            assert!(setup.usable, "{world:?} is usable");
            let expected = (view_projection.as_dmat4() * world.as_dmat4()).inverse() * DVec4::Z;
            let error = (setup.eye - expected).abs().max_element();
            assert!(error <= 1.0e-9 * expected.abs().max_element(), "{world:?}: {:?} against {expected:?}", setup.eye);
        }
        let flat = Mat4::from_scale(glam::Vec3::new(1.0, 0.0, 1.0));
        let mut setup = InstanceSetup::UNUSABLE;
        setup.prepare(&view, &flat, &mesh);
        assert!(!setup.usable, "a singular world draws nothing");
    }

    #[test]
    fn an_open_bottomed_occluder_is_used_only_from_its_closed_side() {
        // A box without its floor, standing on y = 0.
        let cube = OccluderMesh::from_box(&ecs::Aabb::new(glam::Vec3::ZERO, glam::Vec3::ONE)).expect("valid");
        let walls: Vec<u32> = cube
            .indices()
            .chunks_exact(3)
            .filter(|triangle| !triangle.iter().all(|&vertex| cube.positions()[vertex as usize].y == 0.0))
            .flatten()
            .copied()
            .collect();
        let open = OccluderMesh::inner_box_of(cube.positions(), &walls).expect("open only through its floor");
        assert_eq!(open.open_side(), Some(glam::Vec4::new(0.0, -1.0, 0.0, 0.0)));
        let usable_from = |eye: glam::Vec3| {
            let view = ViewSetup::new(
                &(Mat4::perspective_infinite_reverse_rh(1.1, 1.6, 0.1)
                    * Mat4::look_at_rh(eye, glam::Vec3::new(0.5, 0.5, 0.5), glam::Vec3::Z)),
            );
            let mut setup = InstanceSetup::UNUSABLE;
            setup.prepare(&view, &Mat4::IDENTITY, &open);
            setup.usable
        };
        assert!(usable_from(glam::Vec3::new(3.0, 2.0, 0.5)), "above its floor's plane");
        assert!(usable_from(glam::Vec3::new(3.0, 0.01, 0.5)), "just above");
        assert!(!usable_from(glam::Vec3::new(3.0, -0.5, 0.5)), "below: the real box is seen into");
        assert!(!usable_from(glam::Vec3::new(3.0, 0.0, 0.5)), "on the plane");
    }

    #[test]
    fn clipping_keeps_the_part_beyond_the_near_plane() {
        let triangle = [DVec4::new(0.0, 0.0, 0.5, 1.0), DVec4::new(1.0, 0.0, 2.0, 1.0), DVec4::new(0.0, 1.0, 0.5, 1.0)];
        let mut out = [DVec4::ZERO; 4];
        let count = clip_near(&triangle, &mut out);
        assert_eq!(count, 4, "one vertex in front of the near plane makes a quadrilateral");
        assert!(
            out[..count].iter().all(|vertex| vertex.w - vertex.z >= -1.0e-12),
            "every vertex beyond the near plane"
        );
    }

    #[test]
    fn hull_of_a_square_with_an_inner_point() {
        let points = [
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(2.0, 0.0, 0.0),
            DVec3::new(1.0, 1.0, 0.0),
            DVec3::new(2.0, 2.0, 0.0),
            DVec3::new(0.0, 2.0, 0.0),
        ];
        let mut hull = [DVec3::ZERO; 8];
        assert_eq!(convex_hull(&points, &mut hull), 4, "the inner point is not on the hull");
    }

    #[test]
    fn a_pixel_square_is_covered_only_when_inside() {
        // The square [0.99, 3.01]^2 at depth 0.5 fully covers pixels 1 and 2 in each axis;
        // [1, 3]^2 exactly would not, by the rounding margin.
        let square = [
            DVec3::new(0.99, 0.99, 0.5),
            DVec3::new(3.01, 0.99, 0.5),
            DVec3::new(3.01, 3.01, 0.5),
            DVec3::new(0.99, 3.01, 0.5),
        ];
        let primitive = convex_primitive(&square, &[[square[0], square[1], square[2]]], DVec2::new(8.0, 8.0));
        let covered = |x: f32, y: f32| {
            primitive.edges[..primitive.edge_count as usize].iter().all(|[a, b, c]| a * x + b * y + c >= 0.0)
        };
        assert!(covered(1.0, 1.0) && covered(2.0, 2.0), "inner pixels are covered");
        assert!(!covered(0.0, 1.0) && !covered(3.0, 2.0) && !covered(2.0, 3.0), "pixels reaching outside are not");
        let exact = [
            DVec3::new(1.0, 1.0, 0.5),
            DVec3::new(3.0, 1.0, 0.5),
            DVec3::new(3.0, 3.0, 0.5),
            DVec3::new(1.0, 3.0, 0.5),
        ];
        let exact = convex_primitive(&exact, &[[exact[0], exact[1], exact[2]]], DVec2::new(8.0, 8.0));
        assert!(exact.edges[..4].iter().any(|[a, b, c]| a * 1.0 + b * 1.0 + c < 0.0), "an exact fit is not trusted");
        let [a, b, c] = primitive.planes[0];
        let depth = a * 1.0 + b * 1.0 + c;
        assert!(depth <= 0.5 && depth > 0.499, "a flat plane's bound is just below its depth: {depth}");
    }
}

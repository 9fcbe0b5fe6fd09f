//! The exact reference the occlusion cull is checked against: the same occluders drawn at a
//! multiple of the buffer's resolution, one sample at each sample centre, with `f64`
//! coverage and depth and no conservative rounding at all. It is slow and meant for tests
//! and for measuring the cull's quality in benchmarks, never for a frame.
//!
//! Like the renderer, it draws only front faces (a camera inside a solid sees through it).
//! A sample on an edge counts as covered (a real rasterizer's tie rule gives a sample on an
//! edge shared by two triangles to exactly one of them).

use ecs::Aabb;
use glam::{DMat4, DVec2, DVec3, DVec4, Mat4};

use super::occluders::OccluderInstance;
use super::OccluderMeshes;

/// A reversed-Z depth image of occluders at `samples` samples per buffer pixel and axis.
#[derive(Clone, Debug)]
pub struct ReferenceRaster {
    view_projection: DMat4,
    width: usize,
    height: usize,
    depth: Vec<f64>,
}

impl ReferenceRaster {
    /// Draws `occluders` for `view_projection` into a buffer of `buffer_width x
    /// buffer_height` pixels with `samples x samples` samples each.
    pub fn new(
        view_projection: Mat4,
        buffer_width: usize,
        buffer_height: usize,
        samples: usize,
        meshes: &OccluderMeshes,
        occluders: &[OccluderInstance],
    ) -> ReferenceRaster {
        let (width, height) = (buffer_width * samples, buffer_height * samples);
        let mut raster = ReferenceRaster {
            view_projection: view_projection.as_dmat4(),
            width,
            height,
            depth: vec![0.0; width * height],
        };
        if !raster.view_projection.is_finite() {
            return raster;
        }
        for occluder in occluders {
            let Some(mesh) = meshes.get(occluder.mesh) else { continue };
            let clip_from_object = raster.view_projection * occluder.world.as_dmat4();
            let eye = clip_from_object.inverse() * DVec4::Z;
            if !eye.is_finite() {
                continue;
            }
            // Seen from its open side, an open mesh's occluder hides nothing.
            if mesh.open_side().is_some_and(|plane| plane.as_dvec4().dot(eye) >= 0.0) {
                continue;
            }
            for triangle in mesh.indices().chunks_exact(3) {
                let [a, b, c] = [0, 1, 2].map(|corner| mesh.positions()[triangle[corner] as usize].as_dvec3());
                let normal = (b - a).cross(c - a);
                if normal.extend(-normal.dot(a)).dot(eye) <= 0.0 {
                    continue;
                }
                let clip = [a, b, c].map(|position| clip_from_object * position.extend(1.0));
                raster.draw(clip);
            }
        }
        raster
    }

    /// Width in samples.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in samples.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The depth at sample `(x, y)` (0 where nothing was drawn).
    pub fn depth(&self, x: usize, y: usize) -> f64 {
        self.depth[y * self.width + x]
    }

    fn screen(&self, clip: DVec4) -> DVec3 {
        DVec3::new(
            (clip.x / clip.w * 0.5 + 0.5) * self.width as f64,
            (clip.y / clip.w * 0.5 + 0.5) * self.height as f64,
            clip.z / clip.w,
        )
    }

    /// Clips a triangle to the near half-space and fills the samples inside it.
    fn draw(&mut self, clip: [DVec4; 3]) {
        let mut polygon = Vec::with_capacity(4);
        for index in 0..3 {
            let (here, next) = (clip[index], clip[(index + 1) % 3]);
            let (distance_here, distance_next) = (here.w - here.z, next.w - next.z);
            if distance_here >= 0.0 {
                polygon.push(here);
            }
            if (distance_here >= 0.0) != (distance_next >= 0.0) {
                polygon.push(here + (next - here) * (distance_here / (distance_here - distance_next)));
            }
        }
        if polygon.len() < 3 || polygon.iter().any(|vertex| !(vertex.w > 0.0)) {
            return;
        }
        let screen: Vec<DVec3> = polygon.iter().map(|&vertex| self.screen(vertex)).collect();
        for fan in 1..screen.len() - 1 {
            self.fill(screen[0], screen[fan], screen[fan + 1]);
        }
    }

    fn fill(&mut self, a: DVec3, b: DVec3, c: DVec3) {
        let edge = |p: DVec3, q: DVec3, x: f64, y: f64| (q.x - p.x) * (y - p.y) - (q.y - p.y) * (x - p.x);
        let area = edge(a, b, c.x, c.y);
        if !(area.abs() > 0.0) || !area.is_finite() {
            return;
        }
        let low = a.min(b).min(c).truncate().max(DVec2::ZERO);
        let high = a.max(b).max(c).truncate().min(DVec2::new(self.width as f64, self.height as f64));
        if !(low.x < high.x && low.y < high.y) {
            return;
        }
        for y in (low.y.floor() as usize)..(high.y.ceil() as usize).min(self.height) {
            for x in (low.x.floor() as usize)..(high.x.ceil() as usize).min(self.width) {
                let (sample_x, sample_y) = (x as f64 + 0.5, y as f64 + 0.5);
                let weights =
                    [edge(b, c, sample_x, sample_y), edge(c, a, sample_x, sample_y), edge(a, b, sample_x, sample_y)]
                        .map(|weight| weight / area);
                if weights.iter().all(|&weight| weight >= 0.0) {
                    let depth = weights[0] * a.z + weights[1] * b.z + weights[2] * c.z;
                    let slot = &mut self.depth[y * self.width + x];
                    *slot = slot.max(depth);
                }
            }
        }
    }

    /// Whether `aabb` is entirely hidden here: it lies beyond the near plane, and every
    /// sample whose square touches its projected rectangle holds a depth strictly nearer
    /// than its nearest corner. A box reaching the near plane and a non-finite one are not
    /// hidden; a box wholly off the buffer is (nothing of it can be seen).
    pub fn hides(&self, aabb: &Aabb) -> bool {
        self.footprint(aabb)
            .is_some_and(|(x0, y0, x1, y1, nearest)| (y0..y1).all(|y| (x0..x1).all(|x| self.depth(x, y) > nearest)))
    }

    /// Whether `aabb` lies beyond the near plane and its projection touches the buffer.
    pub fn on_screen(&self, aabb: &Aabb) -> bool {
        self.footprint(aabb).is_some_and(|(x0, y0, x1, y1, _)| x0 < x1 && y0 < y1)
    }

    /// The sample rectangle (ends exclusive, possibly empty) and nearest depth of `aabb`, or
    /// `None` when it is not finite or reaches the near plane.
    fn footprint(&self, aabb: &Aabb) -> Option<(usize, usize, usize, usize, f64)> {
        if !aabb.is_finite() || !self.view_projection.is_finite() {
            return None;
        }
        let (mut low, mut high, mut nearest) = (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY), f64::MIN);
        for corner in 0..8 {
            let pick = |bit: usize, low: f32, high: f32| f64::from(if corner & bit == 0 { low } else { high });
            let point = DVec4::new(
                pick(1, aabb.min.x, aabb.max.x),
                pick(2, aabb.min.y, aabb.max.y),
                pick(4, aabb.min.z, aabb.max.z),
                1.0,
            );
            let clip = self.view_projection * point;
            if !(clip.w > 0.0 && clip.z < clip.w) {
                return None;
            }
            let screen = self.screen(clip);
            low = low.min(screen.truncate());
            high = high.max(screen.truncate());
            nearest = nearest.max(screen.z);
        }
        let size = DVec2::new(self.width as f64, self.height as f64);
        if high.x <= 0.0 || high.y <= 0.0 || low.x >= size.x || low.y >= size.y {
            return Some((0, 0, 0, 0, nearest));
        }
        let (x0, y0) = (low.x.max(0.0).floor() as usize, low.y.max(0.0).floor() as usize);
        let (x1, y1) = ((high.x.ceil() as usize).min(self.width), (high.y.ceil() as usize).min(self.height));
        Some((x0, y0, x1, y1, nearest))
    }
}

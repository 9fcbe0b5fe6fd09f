//! Structure-of-arrays inputs of the batch kernels: one array per coordinate, so eight
//! objects load as eight lanes of one register.
//!
//! The owning types ([`SphereSoa`], [`AabbSoa`]) are reused across frames (`clear` keeps
//! their capacity). The kernels read borrowed views ([`SphereSlices`], [`AabbSlices`]) of any
//! length, so a parallel caller hands each job the view of its own 64-object-aligned range,
//! or fills a block on its stack and culls that.

use std::ops::Range;

use ecs::{Aabb, Sphere};

/// Bounding spheres, one array per component.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SphereSoa {
    /// Centre x of each sphere.
    pub x: Vec<f32>,
    /// Centre y.
    pub y: Vec<f32>,
    /// Centre z.
    pub z: Vec<f32>,
    /// Radius.
    pub radius: Vec<f32>,
}

impl SphereSoa {
    /// Empty, with room for `capacity` spheres.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            x: Vec::with_capacity(capacity),
            y: Vec::with_capacity(capacity),
            z: Vec::with_capacity(capacity),
            radius: Vec::with_capacity(capacity),
        }
    }

    /// Number of spheres.
    ///
    /// # Panics
    /// When the arrays have different lengths.
    pub fn len(&self) -> usize {
        self.slices().len()
    }

    /// Whether there are no spheres.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every sphere, keeping the capacity.
    pub fn clear(&mut self) {
        self.x.clear();
        self.y.clear();
        self.z.clear();
        self.radius.clear();
    }

    /// Appends a sphere.
    pub fn push(&mut self, sphere: &Sphere) {
        self.x.push(sphere.center.x);
        self.y.push(sphere.center.y);
        self.z.push(sphere.center.z);
        self.radius.push(sphere.radius);
    }

    /// A view of every sphere.
    ///
    /// # Panics
    /// When the arrays have different lengths.
    pub fn slices(&self) -> SphereSlices<'_> {
        SphereSlices::new(&self.x, &self.y, &self.z, &self.radius)
    }
}

/// A borrowed run of spheres; every array has the same length.
#[derive(Clone, Copy, Debug)]
pub struct SphereSlices<'a> {
    pub(crate) x: &'a [f32],
    pub(crate) y: &'a [f32],
    pub(crate) z: &'a [f32],
    pub(crate) radius: &'a [f32],
}

impl<'a> SphereSlices<'a> {
    /// Views four arrays as spheres.
    ///
    /// # Panics
    /// When the arrays have different lengths.
    pub fn new(x: &'a [f32], y: &'a [f32], z: &'a [f32], radius: &'a [f32]) -> Self {
        let len = x.len();
        assert!(
            y.len() == len && z.len() == len && radius.len() == len,
            "sphere arrays differ in length: x {len}, y {}, z {}, radius {}",
            y.len(),
            z.len(),
            radius.len()
        );
        Self { x, y, z, radius }
    }

    /// Number of spheres.
    #[inline]
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no spheres.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// The spheres of `range`.
    ///
    /// # Panics
    /// When `range` is out of bounds.
    pub fn sub(&self, range: Range<usize>) -> SphereSlices<'a> {
        SphereSlices {
            x: &self.x[range.clone()],
            y: &self.y[range.clone()],
            z: &self.z[range.clone()],
            radius: &self.radius[range],
        }
    }
}

/// Axis-aligned boxes as centre and half extents, one array per component.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AabbSoa {
    /// Centre x of each box.
    pub center_x: Vec<f32>,
    /// Centre y.
    pub center_y: Vec<f32>,
    /// Centre z.
    pub center_z: Vec<f32>,
    /// Half extent along x.
    pub half_x: Vec<f32>,
    /// Half extent along y.
    pub half_y: Vec<f32>,
    /// Half extent along z.
    pub half_z: Vec<f32>,
}

impl AabbSoa {
    /// Empty, with room for `capacity` boxes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            center_x: Vec::with_capacity(capacity),
            center_y: Vec::with_capacity(capacity),
            center_z: Vec::with_capacity(capacity),
            half_x: Vec::with_capacity(capacity),
            half_y: Vec::with_capacity(capacity),
            half_z: Vec::with_capacity(capacity),
        }
    }

    /// Number of boxes.
    ///
    /// # Panics
    /// When the arrays have different lengths.
    pub fn len(&self) -> usize {
        self.slices().len()
    }

    /// Whether there are no boxes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every box, keeping the capacity.
    pub fn clear(&mut self) {
        for array in self.arrays_mut() {
            array.clear();
        }
    }

    /// Appends a box (its centre and half extents).
    pub fn push(&mut self, aabb: &Aabb) {
        let center = aabb.center();
        let half = aabb.half_extent();
        self.center_x.push(center.x);
        self.center_y.push(center.y);
        self.center_z.push(center.z);
        self.half_x.push(half.x);
        self.half_y.push(half.y);
        self.half_z.push(half.z);
    }

    /// Writes a box at `index`.
    ///
    /// # Panics
    /// When `index >= len()`.
    pub fn set(&mut self, index: usize, aabb: &Aabb) {
        let center = aabb.center();
        let half = aabb.half_extent();
        self.center_x[index] = center.x;
        self.center_y[index] = center.y;
        self.center_z[index] = center.z;
        self.half_x[index] = half.x;
        self.half_y[index] = half.y;
        self.half_z[index] = half.z;
    }

    /// Sets the number of boxes; new ones are zero (centre at the origin, no size). Allocates
    /// only when the capacity is too small.
    pub fn resize(&mut self, len: usize) {
        for array in self.arrays_mut() {
            array.resize(len, 0.0);
        }
    }

    /// A view of every box.
    ///
    /// # Panics
    /// When the arrays have different lengths.
    pub fn slices(&self) -> AabbSlices<'_> {
        AabbSlices::new([&self.center_x, &self.center_y, &self.center_z], [&self.half_x, &self.half_y, &self.half_z])
    }

    fn arrays_mut(&mut self) -> [&mut Vec<f32>; 6] {
        [
            &mut self.center_x,
            &mut self.center_y,
            &mut self.center_z,
            &mut self.half_x,
            &mut self.half_y,
            &mut self.half_z,
        ]
    }
}

/// A borrowed run of boxes as centre and half extents; every array has the same length.
#[derive(Clone, Copy, Debug)]
pub struct AabbSlices<'a> {
    pub(crate) center: [&'a [f32]; 3],
    pub(crate) half: [&'a [f32]; 3],
}

impl<'a> AabbSlices<'a> {
    /// Views six arrays (centre x, y, z and half extents x, y, z) as boxes.
    ///
    /// # Panics
    /// When the arrays have different lengths.
    pub fn new(center: [&'a [f32]; 3], half: [&'a [f32]; 3]) -> Self {
        let len = center[0].len();
        assert!(
            center.iter().chain(half.iter()).all(|array| array.len() == len),
            "box arrays differ in length: centre {:?}, half {:?}",
            center.map(<[f32]>::len),
            half.map(<[f32]>::len)
        );
        Self { center, half }
    }

    /// Number of boxes.
    #[inline]
    pub fn len(&self) -> usize {
        self.center[0].len()
    }

    /// Whether there are no boxes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.center[0].is_empty()
    }

    /// The boxes of `range`.
    ///
    /// # Panics
    /// When `range` is out of bounds.
    pub fn sub(&self, range: Range<usize>) -> AabbSlices<'a> {
        AabbSlices {
            center: self.center.map(|array| &array[range.clone()]),
            half: self.half.map(|array| &array[range.clone()]),
        }
    }
}

/// Up to 64 boxes in structure-of-arrays form, on the stack: what one word of a
/// [`crate::VisibilityBits`] covers.
///
/// A parallel caller that computes world boxes as it culls fills one block per 64 objects
/// and culls it into that word, with no array sized to the scene and no allocation.
///
/// ```
/// use culling::{Aabb, AabbBlock, Frustum, Kernel};
/// use glam::{Mat4, Vec3};
/// let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
/// let frustum =
///     Frustum::from_view_projection(Mat4::perspective_infinite_reverse_rh(1.0, 1.0, 0.1) * view);
/// let mut block = AabbBlock::new();
/// block.push(&Aabb::new(Vec3::new(-1.0, -1.0, -6.0), Vec3::new(1.0, 1.0, -4.0)));
/// block.push(&Aabb::new(Vec3::new(-1.0, -1.0, 4.0), Vec3::new(1.0, 1.0, 6.0)));
/// let mut word = [0u64];
/// Kernel::detect().cull_aabbs(&frustum, block.slices(), &mut word);
/// assert_eq!(word[0], 0b01);
/// ```
#[derive(Clone, Debug)]
pub struct AabbBlock {
    center: [[f32; AabbBlock::CAPACITY]; 3],
    half: [[f32; AabbBlock::CAPACITY]; 3],
    len: usize,
}

impl Default for AabbBlock {
    fn default() -> Self {
        Self::new()
    }
}

impl AabbBlock {
    /// Boxes a block holds: one visibility word.
    pub const CAPACITY: usize = crate::bits::BITS_PER_WORD;

    /// An empty block.
    pub const fn new() -> Self {
        Self { center: [[0.0; Self::CAPACITY]; 3], half: [[0.0; Self::CAPACITY]; 3], len: 0 }
    }

    /// Number of boxes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no boxes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every box.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends a box.
    ///
    /// # Panics
    /// When the block already holds [`AabbBlock::CAPACITY`] boxes.
    #[inline]
    pub fn push(&mut self, aabb: &Aabb) {
        assert!(self.len < Self::CAPACITY, "an AabbBlock holds {} boxes", Self::CAPACITY);
        let center = aabb.center();
        let half = aabb.half_extent();
        for axis in 0..3 {
            self.center[axis][self.len] = center[axis];
            self.half[axis][self.len] = half[axis];
        }
        self.len += 1;
    }

    /// Appends a box given as centre and half extents (what Arvo's transform yields), with
    /// no round trip through corners.
    ///
    /// # Panics
    /// When the block already holds [`AabbBlock::CAPACITY`] boxes.
    #[inline]
    pub fn push_center_half(&mut self, center: glam::Vec3, half: glam::Vec3) {
        assert!(self.len < Self::CAPACITY, "an AabbBlock holds {} boxes", Self::CAPACITY);
        for axis in 0..3 {
            self.center[axis][self.len] = center[axis];
            self.half[axis][self.len] = half[axis];
        }
        self.len += 1;
    }

    /// A view of the boxes, for the kernels.
    #[inline]
    pub fn slices(&self) -> AabbSlices<'_> {
        let len = self.len;
        AabbSlices {
            center: [&self.center[0][..len], &self.center[1][..len], &self.center[2][..len]],
            half: [&self.half[0][..len], &self.half[1][..len], &self.half[2][..len]],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn push_set_and_sub_views() {
        let mut boxes = AabbSoa::with_capacity(4);
        boxes.push(&Aabb::new(Vec3::ZERO, Vec3::splat(2.0)));
        boxes.push(&Aabb::new(Vec3::splat(-4.0), Vec3::ZERO));
        boxes.resize(3);
        boxes.set(2, &Aabb::new(Vec3::ONE, Vec3::splat(3.0)));
        let view = boxes.slices().sub(1..3);
        assert_eq!(view.len(), 2);
        assert_eq!(view.center[0], &[-2.0, 2.0]);
        assert_eq!(view.half[2], &[2.0, 1.0]);
        boxes.clear();
        assert!(boxes.is_empty());
    }

    #[test]
    fn block_matches_the_growable_arrays() {
        let mut block = AabbBlock::new();
        let mut boxes = AabbSoa::default();
        for index in 0..AabbBlock::CAPACITY {
            let aabb = Aabb::new(Vec3::splat(index as f32), Vec3::splat(index as f32 + 2.0));
            block.push(&aabb);
            boxes.push(&aabb);
        }
        let (from_block, from_arrays) = (block.slices(), boxes.slices());
        assert_eq!(from_block.center, from_arrays.center);
        assert_eq!(from_block.half, from_arrays.half);
        block.clear();
        assert!(block.slices().is_empty());
    }

    #[test]
    #[should_panic(expected = "differ in length")]
    fn mismatched_sphere_arrays_panic() {
        SphereSlices::new(&[0.0], &[0.0], &[], &[1.0]);
    }
}

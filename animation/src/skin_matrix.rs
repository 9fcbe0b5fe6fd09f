//! One palette entry: a skin matrix as the GPU reads it, the three rows of an affine 3x4
//! matrix (48 bytes, std430 `vec4[3]`, the engine's `ObjectTransform`). A skin matrix is
//! affine (joint world times inverse bind, both affine), so a fourth row would be a quarter of
//! the palette's bytes for nothing; storing rows, not columns, lets the renderer upload the
//! palette as it is.

use glam::{Affine3A, Mat3A, Mat4, Vec3, Vec3A, Vec4};

/// A skin matrix as three rows: row `r` holds the `r`-th components of the x, y and z axes and
/// of the translation, so a point `p` moves to `(row(0) · (p, 1), row(1) · (p, 1), row(2) · (p, 1))`.
/// The layout is the GPU's (`skin_palette` in `skinning.h`): 48 bytes, rows in order.
///
/// ```
/// use animation::SkinMatrix;
/// use glam::{Affine3A, Vec3};
/// let moved = Affine3A::from_translation(Vec3::new(1.0, 2.0, 3.0));
/// let skin = SkinMatrix::from_affine(&moved);
/// assert_eq!(skin.transform_point3(Vec3::X), Vec3::new(2.0, 2.0, 3.0));
/// assert_eq!(skin.to_affine(), moved);
/// assert_eq!(std::mem::size_of::<SkinMatrix>(), 48);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinMatrix {
    rows: [Vec4; 3],
}

const _: () = assert!(size_of::<SkinMatrix>() == 48, "a palette entry is the GPU's three vec4 rows");

impl Default for SkinMatrix {
    fn default() -> Self {
        SkinMatrix::IDENTITY
    }
}

impl SkinMatrix {
    /// No movement (the bind pose).
    pub const IDENTITY: SkinMatrix = SkinMatrix { rows: [Vec4::X, Vec4::Y, Vec4::Z] };

    /// The matrix of three rows (see the type docs).
    #[inline(always)]
    pub const fn from_rows(rows: [Vec4; 3]) -> SkinMatrix {
        SkinMatrix { rows }
    }

    /// Its three rows (see the type docs).
    #[inline(always)]
    pub const fn rows(&self) -> [Vec4; 3] {
        self.rows
    }

    /// Its rows as plain floats, as the GPU buffer holds them.
    #[inline]
    pub fn to_rows_array(&self) -> [[f32; 4]; 3] {
        self.rows.map(|row| row.to_array())
    }

    /// The skin matrix of an affine transform.
    #[inline(always)]
    pub fn from_affine(affine: &Affine3A) -> SkinMatrix {
        let [x, y, z] = [affine.matrix3.x_axis, affine.matrix3.y_axis, affine.matrix3.z_axis];
        let transposed =
            Mat4::from_cols(x.extend(0.0), y.extend(0.0), z.extend(0.0), affine.translation.extend(1.0)).transpose();
        SkinMatrix { rows: [transposed.x_axis, transposed.y_axis, transposed.z_axis] }
    }

    /// The skin matrix of a 4x4 matrix, whose fourth row is dropped (taken as `0 0 0 1`).
    #[inline]
    pub fn from_mat4(matrix: &Mat4) -> SkinMatrix {
        SkinMatrix { rows: [matrix.row(0), matrix.row(1), matrix.row(2)] }
    }

    /// Its axes and translation: the columns of the 3x4 matrix.
    #[inline(always)]
    pub fn columns(&self) -> [Vec3A; 4] {
        let [a, b, c] = self.rows;
        let columns = Mat4::from_cols(a, b, c, Vec4::ZERO).transpose();
        [columns.x_axis, columns.y_axis, columns.z_axis, columns.w_axis].map(Vec3A::from_vec4)
    }

    /// The same transform as an [`Affine3A`].
    #[inline]
    pub fn to_affine(&self) -> Affine3A {
        let [x, y, z, translation] = self.columns();
        Affine3A { matrix3: Mat3A::from_cols(x, y, z), translation }
    }

    /// The same transform as a 4x4 matrix (fourth row `0 0 0 1`).
    #[inline]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from(self.to_affine())
    }

    /// `point` moved by the matrix.
    #[inline]
    pub fn transform_point3(&self, point: Vec3) -> Vec3 {
        let point = point.extend(1.0);
        Vec3::new(self.rows[0].dot(point), self.rows[1].dot(point), self.rows[2].dot(point))
    }

    /// Whether every entry is within `max_abs_diff` of `other`'s.
    #[inline]
    pub fn abs_diff_eq(&self, other: SkinMatrix, max_abs_diff: f32) -> bool {
        self.rows.iter().zip(&other.rows).all(|(row, other)| row.abs_diff_eq(*other, max_abs_diff))
    }

    /// Whether every entry is finite.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.rows.iter().all(|row| row.is_finite())
    }

    /// Entries as the bytes the GPU buffer holds (a plain copy uploads them).
    #[inline]
    pub fn as_bytes(entries: &[SkinMatrix]) -> &[u8] {
        // SAFETY: `SkinMatrix` is `repr(C)` of three `Vec4`s, each four `f32`s with no padding
        // (48 bytes, checked above), so every byte is initialised; the length covers exactly
        // the slice and `u8` has alignment 1.
        unsafe { std::slice::from_raw_parts(entries.as_ptr().cast::<u8>(), std::mem::size_of_val(entries)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn rows_are_the_transposed_columns_and_round_trip() {
        let affine = Affine3A::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 0.5),
            Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3),
            Vec3::new(4.0, -5.0, 6.0),
        );
        let skin = SkinMatrix::from_affine(&affine);
        let matrix = Mat4::from(affine);
        for row in 0..3 {
            assert_eq!(skin.rows()[row], matrix.row(row), "row {row}");
        }
        assert_eq!(SkinMatrix::from_mat4(&matrix), skin);
        assert_eq!(skin.to_affine(), affine);
        assert_eq!(skin.to_mat4(), matrix);
        let point = Vec3::new(0.25, -1.5, 3.0);
        assert!(skin.transform_point3(point).abs_diff_eq(affine.transform_point3(point), 1e-5));
        let bytes = SkinMatrix::as_bytes(std::slice::from_ref(&skin));
        assert_eq!(bytes.len(), 48);
        assert_eq!(bytes[12..16], affine.translation.x.to_ne_bytes(), "row 0 ends with the x translation");
    }
}

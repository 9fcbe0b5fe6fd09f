//! The raster in two passes: the nearest occluders first, then only those of the rest that
//! the first pass does not already hide.
//!
//! Occluders come nearest first (the selection orders them so), and in a city most of the
//! far ones stand behind the near ones: at street level in the occlusion bench, the nearest
//! quarter of 1,000 buildings hides 583 of the rest. Their setup (a transform, a silhouette
//! hull, a primitive) is most of the raster's cost, so after the first pass each remaining
//! occluder's world box is put through the ordinary object test against the first pass's
//! pyramid, and the occluders it proves hidden are not set up at all.
//!
//! Skipping them changes no bit of the buffer: an occluder's primitives write, where they
//! cover a pixel, at most the depth of its surface there (`setup.rs`), which is at most the
//! nearest depth of its world box; the test proved every pixel of the box's footprint
//! already stores something nearer, and the buffer only ever keeps the larger value.

use glam::{DMat3, Mat4, Vec3};

use super::occluders::{OccluderInstance, OccluderMeshes};

/// Occluders below this count are drawn in one pass (the second pyramid build would cost
/// more than the setups it saves).
pub(crate) const TWO_PASS_MIN: usize = 64;

/// How many of `count` occluders (nearest first) the first pass draws: all of a small set,
/// else the nearest quarter, at least [`TWO_PASS_MIN`].
pub(crate) fn first_pass_len(count: usize) -> usize {
    if count <= TWO_PASS_MIN {
        count
    } else {
        (count / 4).max(TWO_PASS_MIN)
    }
}

/// Marks in `words` (one bit per occluder of `occluders`, cleared first) the occluders
/// whose world box can be tested: a registered mesh and an affine, finite world matrix.
pub(crate) fn testable(meshes: &OccluderMeshes, occluders: &[OccluderInstance], words: &mut [u64]) {
    words.fill(0);
    for (index, occluder) in occluders.iter().enumerate() {
        let known = meshes.get(occluder.mesh).is_some();
        if known && world_box(&occluder.world, (Vec3::ZERO, Vec3::ZERO)).is_some() {
            words[index / 64] |= 1 << (index % 64);
        }
    }
}

/// A box (centre, half extents, in `f32`) that contains the image under the affine `world`
/// of the object-space box `(low, high)`; `None` when `world` is not affine or not finite.
///
/// Computed in `f64` (the centre's image and the half extents projected on the absolute
/// matrix, as in J. Arvo's box transform), then rounded outwards: the half extents grow by
/// the centre's rounding and round up, so the `f32` box holds the exact one.
pub(crate) fn world_box(world: &Mat4, (low, high): (Vec3, Vec3)) -> Option<(Vec3, Vec3)> {
    let world = world.as_dmat4();
    if world.row(3) != glam::DVec4::W || !world.is_finite() {
        return None;
    }
    // Exact in f64: sums and halves of f32 values.
    let (low, high) = (low.as_dvec3(), high.as_dvec3());
    let (center, half) = ((low + high) * 0.5, (high - low) * 0.5);
    let linear = DMat3::from_mat4(world);
    let absolute = DMat3::from_cols(linear.x_axis.abs(), linear.y_axis.abs(), linear.z_axis.abs());
    let world_center = world.transform_point3(center);
    let world_half = absolute * half;
    // The f64 arithmetic's own error, far above its few ulps, then the f32 rounding.
    let world_half = world_half + (world_center.abs() + world_half) * 1.0e-12;
    let center32 = world_center.as_vec3();
    let half = world_half + (world_center - center32.as_dvec3()).abs();
    let half32 = Vec3::from_array(half.to_array().map(round_up));
    (center32.is_finite() && half32.is_finite()).then_some((center32, half32))
}

/// The smallest `f32` at least `value`.
fn round_up(value: f64) -> f32 {
    let rounded = value as f32;
    if !(f64::from(rounded) < value) || rounded == f32::INFINITY {
        return rounded;
    }
    // The next f32 up (`f32::next_up` needs a newer Rust than the workspace's minimum).
    match rounded {
        0.0 => f32::from_bits(1),
        positive if positive > 0.0 => f32::from_bits(positive.to_bits() + 1),
        negative => f32::from_bits(negative.to_bits() - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DVec3, Quat};

    fn corners(low: DVec3, high: DVec3) -> impl Iterator<Item = DVec3> {
        (0..8).map(move |corner| {
            DVec3::new(
                if corner & 1 == 1 { high.x } else { low.x },
                if corner & 2 == 2 { high.y } else { low.y },
                if corner & 4 == 4 { high.z } else { low.z },
            )
        })
    }

    #[test]
    fn the_world_box_holds_every_corner_exactly() {
        let (low, high) = (Vec3::new(-1.3, 0.1, -2.7), Vec3::new(0.9, 7.3, 1.1));
        let worlds = [
            Mat4::IDENTITY,
            Mat4::from_scale_rotation_translation(
                Vec3::new(1.7, 0.3, 2.9),
                Quat::from_euler(glam::EulerRot::XYZ, 0.3, 1.1, -0.7),
                Vec3::new(3000.1, -17.3, -2500.7),
            ),
        ];
        for world in worlds {
            let (center, half) = world_box(&world, (low, high)).expect("affine");
            for corner in corners(low.as_dvec3(), high.as_dvec3()) {
                let image = world.as_dmat4().transform_point3(corner);
                let offset = (image - center.as_dvec3()).abs();
                assert!(
                    offset.cmple(half.as_dvec3()).all(),
                    "{world:?}: corner {image:?} outside {center:?} +- {half:?}"
                );
            }
        }
        let mut projective = Mat4::IDENTITY;
        projective.x_axis.w = 0.5;
        assert!(world_box(&projective, (low, high)).is_none(), "a projective world is not boxed");
        assert!(world_box(&Mat4::from_translation(Vec3::NAN), (low, high)).is_none(), "nor a non-finite one");
    }

    #[test]
    fn rounding_up_never_rounds_down() {
        for value in [0.1f64, 1.0e-40, 3.0, -0.1, -2.5e-38, 1.0e30, 0.0] {
            let rounded = round_up(value);
            assert!(f64::from(rounded) >= value, "{value} rounded to {rounded}");
            assert!(f64::from(rounded) - value <= value.abs() * 1.0e-6 + 1.0e-44, "{value} rounded far to {rounded}");
        }
    }

    #[test]
    fn small_sets_take_one_pass() {
        assert_eq!(first_pass_len(10), 10);
        assert_eq!(first_pass_len(TWO_PASS_MIN), TWO_PASS_MIN);
        assert_eq!(first_pass_len(TWO_PASS_MIN + 1), TWO_PASS_MIN);
        assert_eq!(first_pass_len(1000), 250);
    }
}

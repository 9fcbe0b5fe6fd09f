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

use glam::{Mat3, Mat4, Vec3, Vec4};

use super::occluders::OccluderInstance;
use super::OccluderMeshes;

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
/// whose world box can be tested: a registered mesh and an affine world matrix.
pub(crate) fn testable(meshes: &OccluderMeshes, occluders: &[OccluderInstance], words: &mut [u64]) {
    words.fill(0);
    for (index, occluder) in occluders.iter().enumerate() {
        if meshes.get(occluder.mesh).is_some() && occluder.world.row(3) == Vec4::W {
            words[index / 64] |= 1 << (index % 64);
        }
    }
}

/// Relative bound on the rounding of [`world_box`], as a fraction of the magnitudes that
/// enter it: the centre and half extents of the object box round by at most `f32::EPSILON`
/// of `|c| + h` each, the products and sums of the transform by at most a few units in the
/// last place of `|M| (|c| + h) + |t|`; 32 epsilons bound them all with room to spare.
const ROUNDING: f32 = 32.0 * f32::EPSILON;

/// A box (centre, half extents) that contains the image under the affine `world` of the
/// object-space box `(low, high)`; `None` when `world` is not affine or the box is not
/// finite.
///
/// The centre's image and the half extents projected on the absolute matrix (J. Arvo's box
/// transform), the half extents widened by the rounding bound of the magnitudes involved
/// (as the occludee projection does), so the box holds the exact image.
pub(crate) fn world_box(world: &Mat4, (low, high): (Vec3, Vec3)) -> Option<(Vec3, Vec3)> {
    if world.row(3) != Vec4::W {
        return None;
    }
    let linear = Mat3::from_mat4(*world);
    let absolute = Mat3::from_cols(linear.x_axis.abs(), linear.y_axis.abs(), linear.z_axis.abs());
    let translation = world.w_axis.truncate();
    let (center, half) = ((low + high) * 0.5, (high - low) * 0.5);
    let world_center = linear * center + translation;
    let magnitude = absolute * (center.abs() + half) + translation.abs();
    let world_half = absolute * half + magnitude * ROUNDING;
    (world_center.is_finite() && world_half.is_finite()).then_some((world_center, world_half))
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
        // And many random ones: rotations, uneven scales, translations far from the origin.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let random = (0..500).map(|_| {
            Mat4::from_scale_rotation_translation(
                Vec3::new(next() * 5.0 + 0.01, next() * 5.0 + 0.01, next() * 5.0 + 0.01),
                Quat::from_euler(glam::EulerRot::XYZ, next() * 6.3, next() * 6.3, next() * 6.3),
                Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5) * 20_000.0,
            )
        });
        for world in worlds.into_iter().chain(random) {
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
    fn small_sets_take_one_pass() {
        assert_eq!(first_pass_len(10), 10);
        assert_eq!(first_pass_len(TWO_PASS_MIN), TWO_PASS_MIN);
        assert_eq!(first_pass_len(TWO_PASS_MIN + 1), TWO_PASS_MIN);
        assert_eq!(first_pass_len(1000), 250);
    }
}

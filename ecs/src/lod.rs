//! Level of detail: coarser geometry as an entity recedes.

use std::sync::Arc;

use glam::Mat4;

use crate::camera::ProjectionKind;
use crate::render::MeshHandle;

/// One level: the mesh to draw while the (scaled) distance is at most `max_distance`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodLevel {
    /// The geometry of this level.
    pub mesh: MeshHandle,
    /// Farthest distance, in world units under the reference field of view, at which this
    /// level still draws.
    pub max_distance: f32,
}

/// Levels of detail of a mesh entity, ordered near to far.
///
/// Selection happens in the Visibility stage's cull (which has the camera distance already):
/// the first level with `distance * scale <= max_distance * bias * global_bias` is drawn, where
/// `scale` is [`Lod::distance_scale`] of the view, so a level's range is authored for a
/// 60-degree vertical field of view and a zoomed view holds each level further out. Past the
/// last level the last one keeps drawing: making something vanish is the distance cull's job.
///
/// The levels are shared: build the list once per mesh (`vec![...].into()`) and clone the
/// component for every entity that draws it, and a million trees hold one list, not a
/// million (no allocation per entity, and the cull, which picks a level for every object it
/// refreshes, reads one list that stays in cache instead of one scattered over the heap
/// each). An entity without `Lod` draws its [`Mesh`](crate::Mesh) handle unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct Lod {
    /// Levels, nearest first; `max_distance` should grow from one to the next.
    pub levels: Arc<[LodLevel]>,
    /// This entity's bias: above 1 holds finer levels further out.
    pub bias: f32,
}

impl Default for Lod {
    fn default() -> Self {
        Lod { levels: Arc::from([]), bias: 1.0 }
    }
}

impl Lod {
    /// `projection[1][1]` of a 60-degree vertical field of view, `1 / tan(30 degrees)`: the
    /// projection the levels' distances are authored for.
    pub const REFERENCE_P11: f32 = 1.732_050_8;

    /// How much a view magnifies relative to the reference: `REFERENCE_P11 / projection[1][1]`
    /// for a perspective view, 1 for an orthographic one or a degenerate matrix.
    pub fn distance_scale(projection: &Mat4, kind: ProjectionKind) -> f32 {
        let p11 = projection.y_axis.y;
        if kind == ProjectionKind::Orthographic || !p11.is_finite() || p11 <= 0.0 {
            return 1.0;
        }
        Lod::REFERENCE_P11 / p11
    }

    /// The mesh to draw at `distance` from the camera, or `None` when there are no levels.
    ///
    /// A NaN distance or bias picks the finest level (the conservative choice).
    ///
    /// ```
    /// use ecs::{Lod, LodLevel, MeshHandle};
    /// let lod = Lod {
    ///     levels: vec![
    ///         LodLevel { mesh: MeshHandle(0), max_distance: 10.0 },
    ///         LodLevel { mesh: MeshHandle(1), max_distance: 50.0 },
    ///     ]
    ///     .into(),
    ///     bias: 1.0,
    /// };
    /// let tree = lod.clone();
    /// assert!(std::sync::Arc::ptr_eq(&tree.levels, &lod.levels), "instances share one list");
    /// assert_eq!(lod.select(5.0, 1.0, 1.0), Some(MeshHandle(0)));
    /// assert_eq!(lod.select(20.0, 1.0, 1.0), Some(MeshHandle(1)));
    /// assert_eq!(lod.select(900.0, 1.0, 1.0), Some(MeshHandle(1)), "the last level keeps drawing");
    /// assert_eq!(lod.select(20.0, 1.0, 2.0), Some(MeshHandle(0)), "a higher bias holds finer levels");
    /// ```
    pub fn select(&self, distance: f32, scale: f32, global_bias: f32) -> Option<MeshHandle> {
        let bias = self.bias * global_bias;
        let level = select_level(distance, scale, bias, self.levels.iter().map(|level| level.max_distance));
        self.levels.get(level).map(|level| level.mesh)
    }
}

/// The level to draw at `distance` from the camera: the first whose
/// `distance * scale <= max_distance * bias`, else the last. Returns 0 for no levels and for
/// a NaN distance, scale or bias (bad input draws the finest level rather than guessing).
/// The one implementation of the rule: [`Lod::select`] and the culling crate use it.
///
/// ```
/// use ecs::lod::select_level;
/// let ranges = [10.0, 40.0, 100.0];
/// assert_eq!(select_level(5.0, 1.0, 1.0, ranges), 0);
/// assert_eq!(select_level(10.5, 1.0, 1.0, ranges), 1);
/// assert_eq!(select_level(1.0e6, 1.0, 1.0, ranges), 2, "past the last level, the last");
/// assert_eq!(select_level(10.5, 1.0, 2.0, ranges), 0, "a bias of 2 doubles each range");
/// ```
pub fn select_level(distance: f32, scale: f32, bias: f32, max_distances: impl IntoIterator<Item = f32>) -> usize {
    let scaled = distance * scale;
    if scaled.is_nan() || bias.is_nan() {
        return 0;
    }
    let mut last = 0;
    for (level, max_distance) in max_distances.into_iter().enumerate() {
        if scaled <= max_distance * bias {
            return level;
        }
        last = level;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_levels() -> Lod {
        Lod {
            levels: vec![
                LodLevel { mesh: MeshHandle(7), max_distance: 10.0 },
                LodLevel { mesh: MeshHandle(8), max_distance: 20.0 },
            ]
            .into(),
            bias: 1.0,
        }
    }

    #[test]
    fn narrower_field_of_view_holds_levels_further_out() {
        let reference = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
        let zoomed = Mat4::perspective_infinite_reverse_rh(20f32.to_radians(), 1.0, 0.1);
        let reference_scale = Lod::distance_scale(&reference, ProjectionKind::PerspectiveInfinite);
        let zoomed_scale = Lod::distance_scale(&zoomed, ProjectionKind::PerspectiveInfinite);
        assert!((reference_scale - 1.0).abs() < 1e-5, "60 degrees is the reference");
        assert!(zoomed_scale < 1.0, "a zoomed view magnifies");
        let lod = two_levels();
        assert_eq!(lod.select(15.0, reference_scale, 1.0), Some(MeshHandle(8)));
        assert_eq!(lod.select(15.0, zoomed_scale, 1.0), Some(MeshHandle(7)));
    }

    #[test]
    fn orthographic_and_degenerate_keep_the_reference() {
        let ortho = Mat4::orthographic_rh(-1.0, 1.0, -1.0, 1.0, 10.0, 0.1);
        assert_eq!(Lod::distance_scale(&ortho, ProjectionKind::Orthographic), 1.0);
        assert_eq!(Lod::distance_scale(&Mat4::ZERO, ProjectionKind::PerspectiveFinite), 1.0);
    }

    #[test]
    fn empty_and_nan_inputs_are_conservative() {
        assert_eq!(Lod::default().select(1.0, 1.0, 1.0), None);
        assert_eq!(two_levels().select(f32::NAN, 1.0, 1.0), Some(MeshHandle(7)));
    }
}

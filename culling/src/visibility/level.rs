//! The level of detail the Visibility stage picks for one object: one function for the full
//! pass, the tracked refresh and the tracked re-pick, so the three cannot drift apart.
//!
//! A chain whose every level has a simplification error in [`LodErrors`] is chosen by the
//! error rule of `crate::lod_error` (the GPU culls' rule, `lod_select.h`): the world box's
//! distance from the eye, the longest axis of the world matrix, and the hysteresis state, the
//! level drawn last frame, read from the slot's own draw (a new or emptied slot's draw names
//! no level of the chain: state 0). Any other chain keeps the distance rule of
//! [`Lod::select`], from the world centre's distance.

use ecs::{Aabb, Lod, LodErrors, MeshHandle};
use glam::{Mat4, Vec3};

use super::holds::{hold_of, LodHold, ROUNDING};
use crate::lod_error::{error_level_slack, lod_box_distance_sq, lod_scale_sq, select_lod_by_error_of, LodErrorView};
use crate::view::ViewCullContext;

/// What the picks of one view share.
#[derive(Clone, Copy)]
pub(crate) struct LevelRule<'a> {
    /// Each mesh's error, when a renderer or the game published them.
    pub errors: Option<&'a LodErrors>,
    /// The view's side of the error rule.
    pub error_view: LodErrorView,
    /// The distance rule's field-of-view scale and global bias.
    pub lod_scale: f32,
    pub lod_bias: f32,
}

impl LevelRule<'_> {
    /// The mesh to draw of `lods` for an object of world matrix `model` and local box `local`
    /// in `view`, `drawn` being the mesh its slot drew last frame; `None` for no levels.
    #[inline]
    pub(crate) fn pick(
        &self,
        view: &ViewCullContext,
        lods: &Lod,
        model: &Mat4,
        local: &Aabb,
        drawn: MeshHandle,
    ) -> Option<MeshHandle> {
        self.pick_with_center(view, lods, model, local, drawn, || model.transform_point3(local.center()))
    }

    /// [`LevelRule::pick`] with the world centre of the distance rule from `center` (the
    /// caller's, computed with the same operations, when it has one).
    #[inline]
    pub(crate) fn pick_with_center(
        &self,
        view: &ViewCullContext,
        lods: &Lod,
        model: &Mat4,
        local: &Aabb,
        drawn: MeshHandle,
        center: impl FnOnce() -> Vec3,
    ) -> Option<MeshHandle> {
        match self.errors.filter(|errors| errors.covers(lods)) {
            Some(errors) => Some(self.pick_by_error(errors, view.camera_position(), lods, *model, *local, drawn)),
            None => lods.select(view.distance_sq(center()).sqrt(), self.lod_scale, self.lod_bias),
        }
    }

    /// [`LevelRule::pick_with_center`] for the word pass, with the hold of the pick: where it
    /// stays the pick while the camera moves ([`LodHold`]). The distance rule's hold is the
    /// range of the centre's scaled distance; the error rule's, which depends on the box and on
    /// the level drawn, is the camera's own reach: the pick holds while the camera stays
    /// within [`error_level_slack`] (less a rounding allowance) of where it picked, measured
    /// as a scaled distance from there. None for no levels or a NaN.
    #[inline]
    pub(crate) fn pick_with_hold(
        &self,
        view: &ViewCullContext,
        lods: &Lod,
        model: &Mat4,
        local: &Aabb,
        drawn: MeshHandle,
        center: Vec3,
    ) -> (Option<MeshHandle>, LodHold) {
        match self.errors.filter(|errors| errors.covers(lods)) {
            Some(errors) => {
                let (mesh, hold) =
                    self.pick_by_error_with_hold(errors, view.camera_position(), lods, *model, *local, drawn);
                (Some(mesh), hold)
            }
            None => {
                let picked = lods.select(view.distance_sq(center).sqrt(), self.lod_scale, self.lod_bias);
                let scaled = view.distance_sq(center).sqrt() * self.lod_scale;
                (picked, hold_of(lods, center, scaled, self.lod_bias))
            }
        }
    }

    /// The error rule's pick and its hold (see [`LevelRule::pick_with_hold`]).
    #[inline(never)]
    fn pick_by_error_with_hold(
        &self,
        errors: &LodErrors,
        eye: Vec3,
        lods: &Lod,
        model: Mat4,
        local: Aabb,
        drawn: MeshHandle,
    ) -> (MeshHandle, LodHold) {
        let levels = &lods.levels;
        let last = levels.iter().position(|level| level.mesh == drawn).unwrap_or(0) as u32;
        let (center, half) = local.transformed_center_half(&model);
        let distance_sq = lod_box_distance_sq(eye, center, half);
        let scale_sq = lod_scale_sq([model.x_axis.truncate(), model.y_axis.truncate(), model.z_axis.truncate()]);
        let error_of = |level: u32| errors.get(levels[level as usize].mesh).unwrap_or(f32::NAN);
        let count = levels.len() as u32;
        let level = select_lod_by_error_of(count, error_of, scale_sq, distance_sq, &self.error_view, last);
        let mesh = levels[level as usize].mesh;
        // The next pick's state is the first level drawing this mesh: the hold is found for
        // that state, so a chain repeating a mesh holds nothing past its first.
        let state = levels.iter().position(|each| each.mesh == mesh).unwrap_or(0) as u32;
        if state != level {
            return (mesh, LodHold::NONE);
        }
        let room = error_level_slack(count, error_of, scale_sq, distance_sq, &self.error_view, level);
        // The box distance's own rounding, relative to the magnitudes it is found from.
        let magnitudes = center.abs().max_element() + half.abs().max_element() + eye.abs().max_element();
        // The limits' roundings are relative to them: the farther one is the distance plus the room.
        let slack =
            if room.is_infinite() { room } else { room - ROUNDING * (magnitudes + 2.0 * distance_sq.sqrt() + room) };
        (mesh, LodHold::around_eye(eye, slack, self.lod_scale))
    }

    /// The error rule's pick of a chain `errors` covers (at least one level). Not inlined, and
    /// given copies: the distance rule's callers are the word loops, whose matrix and box stay
    /// in registers.
    #[inline(never)]
    fn pick_by_error(
        &self,
        errors: &LodErrors,
        eye: Vec3,
        lods: &Lod,
        model: Mat4,
        local: Aabb,
        drawn: MeshHandle,
    ) -> MeshHandle {
        let levels = &lods.levels;
        let last = levels.iter().position(|level| level.mesh == drawn).unwrap_or(0) as u32;
        // The same operations as the columns' box (and the GPU's `object_world_box`).
        let (center, half) = local.transformed_center_half(&model);
        let distance_sq = lod_box_distance_sq(eye, center, half);
        let scale_sq = lod_scale_sq([model.x_axis.truncate(), model.y_axis.truncate(), model.z_axis.truncate()]);
        let error_of = |level: u32| errors.get(levels[level as usize].mesh).unwrap_or(f32::NAN);
        let level =
            select_lod_by_error_of(levels.len() as u32, error_of, scale_sq, distance_sq, &self.error_view, last);
        levels[level as usize].mesh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::CullParams;
    use ecs::LodLevel;

    fn view_at(eye: Vec3) -> ViewCullContext {
        let view = Mat4::look_at_rh(eye, eye + Vec3::NEG_Z, Vec3::Y);
        let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
        ViewCullContext::new(view, projection, 720.0, &CullParams { max_distance: 0.0, min_pixels: 0.0, lod_bias: 1.0 })
    }

    #[test]
    fn error_chains_follow_the_error_rule_and_others_the_distances() {
        let levels: Vec<LodLevel> = (0..3).map(|id| LodLevel { mesh: MeshHandle(id), max_distance: 1.0e6 }).collect();
        let lods = Lod { levels: levels.into(), bias: 1.0 };
        let errors = LodErrors::from_fn(3, |id| Some([0.0, 0.01, 0.1][id as usize]));
        let projection = Mat4::perspective_infinite_reverse_rh(60f32.to_radians(), 1.0, 0.1);
        let error_view = LodErrorView::new(&projection, 720.0, 1.0, 0.1);
        let rule = LevelRule { errors: Some(&errors), error_view, lod_scale: 1.0, lod_bias: 1.0 };
        let unit = Aabb { min: Vec3::splat(-0.5), max: Vec3::splat(0.5) };
        let view = view_at(Vec3::ZERO);
        let at = |distance: f32| Mat4::from_translation(Vec3::new(0.0, 0.0, -distance));
        for distance in [1.0f32, 5.0, 20.0, 80.0, 400.0, 3000.0] {
            let model = at(distance);
            let (center, half) = unit.transformed_center_half(&model);
            let expected = crate::select_lod_by_error(
                &[0.0, 0.01, 0.1],
                1.0,
                lod_box_distance_sq(Vec3::ZERO, center, half),
                &error_view,
                0,
            );
            let picked = rule.pick(&view, &lods, &model, &unit, MeshHandle(0));
            assert_eq!(picked, Some(MeshHandle(expected)), "at {distance}: the error rule's level");
            let unpublished = LevelRule { errors: None, ..rule };
            assert_eq!(unpublished.pick(&view, &lods, &model, &unit, MeshHandle(0)), Some(MeshHandle(0)), "distances");
        }
        // Hysteresis: the drawn level is the state.
        let hand_over = 0.01 * error_view.pixels_per_unit;
        let model = at(hand_over * 0.95 + 0.5);
        assert_eq!(rule.pick(&view, &lods, &model, &unit, MeshHandle(1)), Some(MeshHandle(1)), "kept inside the band");
        assert_eq!(rule.pick(&view, &lods, &model, &unit, MeshHandle(0)), Some(MeshHandle(0)), "not coarsened yet");
        assert_eq!(rule.pick(&view, &lods, &model, &unit, MeshHandle(9)), Some(MeshHandle(0)), "another mesh: state 0");
    }
}

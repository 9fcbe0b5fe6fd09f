//! The lights of the world, as the shadow views see them: the sun, and the spot and point
//! lights that may light the camera's frame, each with its screen contribution (`budget.rs`).

use ecs::{DirectionalLight, PointLight, ResolvedView, ShadowBias, SpotLight, Transform, WorldTransform};
use glam::{Mat4, Vec3};
use runtime::hecs::Entity;
use runtime::Columns;

use super::budget::screen_contribution;
use super::frame_lights::{Candidate, LocalLight, LocalLightKind, MAX_LOCAL_LIGHTS};
use crate::frustum::Frustum;

/// What [`shadow_views_system`](super::shadow_views_system) reads of the world: the lights
/// and their poses.
pub(super) type LightAccess = (
    Option<&'static DirectionalLight>,
    Option<&'static SpotLight>,
    Option<&'static PointLight>,
    Option<&'static Transform>,
    Option<&'static WorldTransform>,
);

/// The world as the shadow views see it: the columns of [`LightAccess`].
pub(super) type LightColumns<'a> = Columns<'a, LightAccess>;

/// Lists in `candidates` the spot and point lights that may light the frame of `camera` or
/// of one of the frame's `others` window views (each its frustum and eye: a split-screen
/// frame's lights, their shadow maps shared by every view that sees them), the nearest
/// [`MAX_LOCAL_LIGHTS`] of them, nearest first (ties by entity id), each scored by its
/// screen contribution and measured from the eye of a view that sees it (the largest
/// contribution; the camera's alone in a frame of one view).
pub(super) fn gather_local_lights(
    candidates: &mut Vec<Candidate>,
    world: &LightColumns<'_>,
    camera: Option<&ResolvedView>,
    others: &[(Frustum, Vec3)],
) {
    candidates.clear();
    let camera_frustum = camera.map(|view| Frustum::from_view_projection(view.view_projection));
    let eye = camera.map_or(Vec3::ZERO, |view| view.position);
    let mut consider =
        |entity: Entity, kind: LocalLightKind, pose: Mat4, light: (Vec3, f32), shadow: (u32, ShadowBias)| {
            let (radiance, range) = light;
            let position = pose.w_axis.truncate();
            if !(position.is_finite() && range.is_finite() && range > 0.0 && radiance.is_finite()) {
                return;
            }
            let sphere = ecs::Sphere { center: position, radius: range };
            let main_sees = camera_frustum.is_none_or(|frustum| frustum.may_intersect_sphere(&sphere));
            let seen_from = |eye: Vec3| (screen_contribution(position, range, radiance, eye), eye);
            let mut best = main_sees.then(|| seen_from(eye));
            for (_, other_eye) in others.iter().filter(|(frustum, _)| frustum.may_intersect_sphere(&sphere)) {
                let other = seen_from(*other_eye);
                if best.is_none_or(|(score, _)| other.0 > score) {
                    best = Some(other);
                }
            }
            let Some((score, eye)) = best else { return };
            candidates.push(Candidate {
                distance: (position.distance(eye) - range).max(0.0),
                id: entity.to_bits().get(),
                score,
                incumbent: false,
                light: LocalLight { entity, kind, position, radiance, range, score, first_view: None },
                resolution: shadow.0,
                bias: shadow.1,
            });
        };
    for (entity, spot, world_transform, transform) in
        world.query::<(Entity, &SpotLight, Option<&WorldTransform>, Option<&Transform>)>().iter()
    {
        let pose = pose_of(world_transform, transform);
        let direction = pose.transform_vector3(Vec3::NEG_Z).normalize_or_zero();
        let direction = if direction == Vec3::ZERO { Vec3::NEG_Y } else { direction };
        let outer = if spot.outer_angle.is_finite() { spot.outer_angle.clamp(0.01, 1.5) } else { 0.6 };
        let kind =
            LocalLightKind::Spot { direction, inner_angle: spot.inner_angle.clamp(0.0, outer), outer_angle: outer };
        let shadow = if spot.casts_shadows { spot.shadow_resolution.max(1) } else { 0 };
        let radiance = Vec3::from_array(spot.color) * spot.intensity;
        consider(entity, kind, pose, (radiance, spot.range), (shadow, spot.bias));
    }
    for (entity, point, world_transform, transform) in
        world.query::<(Entity, &PointLight, Option<&WorldTransform>, Option<&Transform>)>().iter()
    {
        let pose = pose_of(world_transform, transform);
        let shadow = if point.casts_shadows { point.shadow_resolution.max(1) } else { 0 };
        let radiance = Vec3::from_array(point.color) * point.intensity;
        consider(entity, LocalLightKind::Point, pose, (radiance, point.range), (shadow, point.bias));
    }
    // Unstable and total (ids are unique): no allocation, the same order every time.
    candidates.sort_unstable_by(|a, b| a.distance.total_cmp(&b.distance).then(a.id.cmp(&b.id)));
    candidates.truncate(MAX_LOCAL_LIGHTS);
}

/// The pose of a light: its world matrix, or its local transform before the first
/// Transform stage.
fn pose_of(world_transform: Option<&WorldTransform>, transform: Option<&Transform>) -> Mat4 {
    match (world_transform, transform) {
        (Some(world), _) => world.0,
        (None, Some(local)) => local.to_matrix(),
        (None, None) => Mat4::IDENTITY,
    }
}

/// The world's sun: the directional light with the lowest entity id.
pub(super) fn find_sun(world: &LightColumns<'_>) -> Option<(Entity, DirectionalLight, Mat4)> {
    world
        .query::<(Entity, &DirectionalLight, Option<&WorldTransform>, Option<&Transform>)>()
        .iter()
        .map(|(entity, light, world_transform, transform)| (entity, *light, pose_of(world_transform, transform)))
        .min_by_key(|(entity, _, _)| entity.to_bits())
}

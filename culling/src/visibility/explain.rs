//! "Why is this object not drawn?": [`Visibility::explain`] answers it for one entity, on
//! demand, from the world and the answer the stage left (no cost per frame for the rest).
//!
//! It repeats the stage's tests for that one object with the stage's own pieces (the view's
//! [`ViewCullContext`] built from the same settings, its reference classifier, the world box
//! the stage wrote) and adds what the stage does not keep: which frustum plane rejected the
//! box and by how much, the object's distance against the maximum, its screen size against
//! the threshold, and which level of detail its distance picks. Occlusion is read from the
//! stage's answer (the CPU occlusion's bits, or the GPU's fed-back bits); where the CPU
//! occlusion rasterized this frame, the box is tested again against its pyramid
//! ([`crate::OcclusionCuller::detail`]) for the mip read and the occluder depth against the
//! object's nearest depth ([`Explanation::occlusion`]).

use ecs::{Lod, Mesh, RenderSettings, ShadowCaster, Transform, Visible, WorldTransform};
use glam::{Mat4, Vec4};
use runtime::hecs::{Entity, World};

use super::answer::{ObjectState, Visibility};
use super::view_answer::ViewVisibility;
use crate::lod::{lod_scale, select_lod};
use crate::occlusion::{OcclusionCuller, OcclusionDetail};
use crate::view::{CullParams, CullVerdict, ViewCullContext};
use ecs::ResolvedView;

/// A frustum plane, in the order [`crate::Frustum`] extracts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrustumPlane {
    /// The left plane.
    Left,
    /// The right plane.
    Right,
    /// The bottom plane.
    Bottom,
    /// The top plane.
    Top,
    /// The near plane.
    Near,
    /// The far plane (finite projections only).
    Far,
}

/// Why a mesh entity cannot be drawn: the first missing piece, in the order the stage checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Missing {
    /// It carries `Visible(false)`.
    Hidden,
    /// Its [`Mesh`] names no mesh.
    MeshHandle,
    /// Its [`Mesh`] names no material.
    Material,
    /// Its [`Mesh`]'s bounds have no size.
    Bounds,
    /// It has neither a [`WorldTransform`] nor a [`Transform`].
    Transform,
}

/// Why an object was kept without being tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kept {
    /// Its matrix or world box is not finite: no cull trusts bad numbers.
    NonFinite,
    /// The view's matrices are not finite.
    ViewNotFinite,
}

/// The stage's verdict on one entity, with the figures behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// No answer: the last frame had no view, or the entity is not a mesh entity the stage
    /// has seen (not a mesh entity, or spawned since the last cull).
    NoAnswer,
    /// A mesh entity that cannot be drawn.
    NotDrawable(Missing),
    /// Its world box lies entirely outside `plane`: its nearest corner is `outside_by` world
    /// units behind it.
    OffFrustum {
        /// The plane.
        plane: FrustumPlane,
        /// How far the box's nearest corner is outside the plane, world units.
        outside_by: f32,
    },
    /// Its box centre is further from the camera than the maximum distance.
    TooFar {
        /// Distance from the camera to the box centre.
        distance: f32,
        /// [`RenderSettings::cull_max_distance`].
        max_distance: f32,
    },
    /// It looks smaller on screen than the threshold.
    TooSmall {
        /// Its projected size (the bounding sphere's diameter), pixels.
        pixels: f32,
        /// [`RenderSettings::cull_min_pixels`].
        min_pixels: f32,
    },
    /// In view, but hidden behind occluders (the CPU occlusion, or the GPU's bits fed back).
    Occluded,
    /// Kept without a test.
    Kept(Kept),
    /// Passed every test.
    Visible,
}

impl Reason {
    /// The [`ObjectState`] this reason stands for (`None` for [`Reason::NoAnswer`]).
    pub fn state(&self) -> Option<ObjectState> {
        Some(match self {
            Reason::NoAnswer => return None,
            Reason::NotDrawable(_) => ObjectState::NotDrawable,
            Reason::OffFrustum { .. } | Reason::TooFar { .. } | Reason::TooSmall { .. } => ObjectState::Culled,
            Reason::Occluded => ObjectState::Occluded,
            Reason::Kept(_) | Reason::Visible => ObjectState::Visible,
        })
    }
}

/// The level of detail an object's distance picks, and why: the distance rule's reading. A
/// chain the stage chose by its levels' errors (`ecs::LodErrors`) draws
/// [`ObjectColumns::draws`](super::ObjectColumns::draws)' level, which depends on the level
/// drawn before (hysteresis) and is not recomputed here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodChoice {
    /// The level drawn (0 the finest).
    pub level: usize,
    /// Levels the object has.
    pub levels: usize,
    /// Distance from the camera to the box centre, scaled by the projection's LOD scale.
    pub scaled_distance: f32,
    /// The chosen level's range times the biases (the object's and the settings'); the
    /// last level draws beyond its range.
    pub range: f32,
}

/// What [`Visibility::explain`] says about one entity.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The entity asked about.
    pub entity: Entity,
    /// Its slot, when it has one.
    pub slot: Option<u32>,
    /// What [`Visibility::state_of`] says.
    pub state: Option<ObjectState>,
    /// Why.
    pub reason: Reason,
    /// Its level of detail, for an object with levels in a view.
    pub lod: Option<LodChoice>,
    /// Whether it carries [`ShadowCaster`] (a drawable caster is tested against every
    /// shadow view; [`crate::ShadowViews::explain`] says which keep it).
    pub caster: bool,
    /// For an object in the main view's frustum, when the CPU occlusion rasterized this
    /// frame: what its test read (the pyramid's mip, the occluder depth against the
    /// object's nearest depth) and its verdict, which is the answer's
    /// ([`Reason::Occluded`] exactly when the verdict is `Occluded`).
    pub occlusion: Option<OcclusionDetail>,
}

impl Visibility {
    /// Why `entity` is drawn or not in the main view, as the last cull decided (see the
    /// module docs): computed now, for this entity only. `settings` are the render settings
    /// the stage culled with. Another view's: [`ViewVisibility::explain`].
    pub fn explain(&self, world: &World, settings: &RenderSettings, entity: Entity) -> Explanation {
        let view = self.view.as_ref();
        let culler = self.occlusion_culler.as_deref();
        self.explain_in(world, settings, entity, view, self.state_of(entity), |slot| self.is_occluded(slot), culler)
    }

    /// [`Visibility::explain`] against `view`, whose answer for the entity is `state`, whose
    /// occlusion says `occluded(slot)` and rasterized into `culler` (when it did).
    #[allow(clippy::too_many_arguments)]
    fn explain_in(
        &self,
        world: &World,
        settings: &RenderSettings,
        entity: Entity,
        view: Option<&ResolvedView>,
        state: Option<ObjectState>,
        occluded: impl Fn(usize) -> bool,
        culler: Option<&OcclusionCuller>,
    ) -> Explanation {
        let slot = self.slot_of(entity);
        let caster = world.get::<&ShadowCaster>(entity).is_ok();
        let mut explanation =
            Explanation { entity, slot, state, reason: Reason::NoAnswer, lod: None, caster, occlusion: None };
        let (Some(slot), Some(view), Some(_)) = (slot, view, state) else { return explanation };
        if let Some(missing) = missing_piece(world, entity) {
            explanation.reason = Reason::NotDrawable(missing);
            return explanation;
        }
        let slot = slot as usize;
        let params = CullParams {
            max_distance: settings.cull_max_distance,
            min_pixels: settings.cull_min_pixels,
            lod_bias: settings.effective_lod_bias(),
        };
        let height = view.viewport.height as f32;
        let context = ViewCullContext::new(view.view, view.projection, height, &params);
        let world_box = self.objects.bounds[slot];
        let center = world_box.center();
        if let Ok(lod) = world.get::<&Lod>(entity) {
            let distance = context.distance_sq(center).sqrt();
            let scale = lod_scale(&view.projection);
            let bias = lod.bias * params.lod_bias;
            let ranges = lod.levels.iter().map(|level| level.max_distance);
            let level = select_lod(distance, scale, bias, ranges);
            let range = lod.levels.get(level).map_or(f32::INFINITY, |chosen| chosen.max_distance * bias);
            explanation.lod =
                Some(LodChoice { level, levels: lod.levels.len(), scaled_distance: distance * scale, range });
        }
        explanation.reason = if !context.is_finite() {
            Reason::Kept(Kept::ViewNotFinite)
        } else if !self.objects.is_finite(slot) {
            Reason::Kept(Kept::NonFinite)
        } else {
            let verdict = if settings.frustum_culling {
                context.classify(&world_box)
            } else {
                secondary_verdict(&context, &world_box)
            };
            match verdict {
                CullVerdict::OutsideFrustum => off_frustum(view.view_projection, &world_box),
                CullVerdict::TooFar => {
                    Reason::TooFar { distance: context.distance_sq(center).sqrt(), max_distance: params.max_distance }
                }
                CullVerdict::TooSmall => Reason::TooSmall {
                    pixels: projected_pixels(&view.projection, height, &world_box, context.depth(center)),
                    min_pixels: params.min_pixels,
                },
                CullVerdict::NonFinite => Reason::Kept(Kept::NonFinite),
                CullVerdict::Visible => {
                    explanation.occlusion = culler.map(|culler| culler.detail(&world_box));
                    if occluded(slot) {
                        Reason::Occluded
                    } else {
                        Reason::Visible
                    }
                }
            }
        };
        explanation
    }
}

impl ViewVisibility<'_> {
    /// Why `entity` is drawn or not in this view, as the last cull decided: what
    /// [`Visibility::explain`] says for the main view, computed against this view's eye,
    /// frustum and viewport for another (which has no occlusion, so it never says
    /// [`Reason::Occluded`]). For this entity only, on demand.
    ///
    /// ```
    /// use culling::{Reason, Visibility};
    /// use ecs::{scene, Camera, RenderSettings, ResolvedViews, Transform};
    /// use glam::{Quat, Vec3};
    /// let mut app = runtime::App::new();
    /// culling::install(&mut app);
    /// scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 10.0)));
    /// let behind = Transform { translation: Vec3::new(0.0, 0.0, -10.0), rotation: Quat::from_rotation_y(std::f32::consts::PI), ..Transform::IDENTITY };
    /// scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, behind);
    /// let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 20.0)));
    /// app.run_frame();
    /// let (views, visibility) = (app.resource::<ResolvedViews>(), app.resource::<Visibility>());
    /// let settings = app.resource::<RenderSettings>();
    /// let second = visibility.for_view(views.views()[1].id).unwrap();
    /// assert!(matches!(visibility.explain(app.world(), &settings, cube).reason, Reason::OffFrustum { .. }));
    /// assert_eq!(second.explain(app.world(), &settings, cube).reason, Reason::Visible);
    /// ```
    pub fn explain(&self, world: &World, settings: &RenderSettings, entity: Entity) -> Explanation {
        if self.is_main() {
            return self.answer().explain(world, settings, entity);
        }
        self.answer().explain_in(world, settings, entity, Some(self.view()), self.state_of(entity), |_| false, None)
    }
}

/// The distance and screen-size culls alone (frustum culling off), in the stage's order.
fn secondary_verdict(context: &ViewCullContext, world_box: &ecs::Aabb) -> CullVerdict {
    let center = world_box.center();
    if !crate::size::is_near_enough(context.distance_sq(center), context.max_distance_sq()) {
        CullVerdict::TooFar
    } else if !context.screen_size().keeps(world_box.half_extent().length_squared(), context.depth(center)) {
        CullVerdict::TooSmall
    } else {
        CullVerdict::Visible
    }
}

/// The first piece a mesh entity lacks to be drawn, as the stage checks them; `None` when it
/// is drawable (or not a mesh entity).
fn missing_piece(world: &World, entity: Entity) -> Option<Missing> {
    let mesh = world.get::<&Mesh>(entity).ok()?;
    if world.get::<&Visible>(entity).is_ok_and(|shown| !shown.0) {
        return Some(Missing::Hidden);
    }
    if !mesh.mesh.is_some() {
        return Some(Missing::MeshHandle);
    }
    if !mesh.material.is_some() {
        return Some(Missing::Material);
    }
    if !mesh.bounds.is_valid() {
        return Some(Missing::Bounds);
    }
    let placed = world.get::<&WorldTransform>(entity).is_ok() || world.get::<&Transform>(entity).is_ok();
    (!placed).then_some(Missing::Transform)
}

/// The plane that rejects `world_box` entirely, and by how much: the plane whose nearest
/// corner of the box lies furthest outside, among the view-projection's planes (left,
/// right, bottom, top, near, far; the far plane of an infinite projection has no normal and
/// is skipped).
fn off_frustum(view_projection: Mat4, world_box: &ecs::Aabb) -> Reason {
    let rows = [0, 1, 2, 3].map(|index| view_projection.row(index));
    let candidates: [(FrustumPlane, Vec4); 6] = [
        (FrustumPlane::Left, rows[3] + rows[0]),
        (FrustumPlane::Right, rows[3] - rows[0]),
        (FrustumPlane::Bottom, rows[3] + rows[1]),
        (FrustumPlane::Top, rows[3] - rows[1]),
        (FrustumPlane::Near, rows[3] - rows[2]),
        (FrustumPlane::Far, rows[2]),
    ];
    let center = world_box.center();
    let half = world_box.half_extent();
    let mut worst = (FrustumPlane::Near, f32::NEG_INFINITY);
    for (plane, raw) in candidates {
        let length = raw.truncate().length();
        if length <= f32::EPSILON {
            continue;
        }
        let normal = raw.truncate() / length;
        // The corner furthest along the inward normal: outside when even it is behind.
        let nearest = normal.dot(center) + normal.abs().dot(half) + raw.w / length;
        let outside_by = -nearest;
        if outside_by > worst.1 {
            worst = (plane, outside_by);
        }
    }
    Reason::OffFrustum { plane: worst.0, outside_by: worst.1 }
}

/// The projected diameter of the box's bounding sphere, pixels, as the screen-size cull
/// takes it (see [`crate::ScreenSizeCull`]).
fn projected_pixels(projection: &Mat4, height: f32, world_box: &ecs::Aabb, depth: f32) -> f32 {
    let radius = world_box.half_extent().length();
    let p11 = projection.y_axis.y.abs();
    if crate::lod::is_orthographic(projection) {
        return radius * p11 * height;
    }
    radius * p11 * height / (depth * depth - radius * radius).max(f32::MIN_POSITIVE).sqrt()
}

//! The classification of one object and of one meshlet, in test order.

use glam::{Mat4, Vec3};

use super::cone::{cone_rejects, view_eye};
use super::hiz::{occlusion_test, HiZLevels, OcclusionAnswer};
use super::sphere::{sphere_outside, world_box, world_sphere};
use super::{ClusterBounds, ClusterMargins, ClusterVerdict};
use crate::frustum::Frustum;
use crate::Aabb;

/// Which cluster tests run. A view whose frustum is not finite runs none (as the GPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterSettings {
    /// Frustum test of objects' boxes and meshlets' spheres.
    pub frustum: bool,
    /// Normal-cone back-face test (perspective views only).
    pub cone: bool,
    /// Hi-Z occlusion of objects' and meshlets' boxes.
    pub occlusion: bool,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings { frustum: true, cone: true, occlusion: true }
    }
}

/// What the object pass decided for an object (and so for all its meshlets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectVerdict {
    /// In view and not proven hidden: its meshlets are tested.
    Visible,
    /// Its box is outside the frustum.
    Frustum,
    /// Its box is hidden by the pyramid.
    Occluded,
}

/// The view of one frame as the tests use it.
#[derive(Clone, Copy, Debug)]
pub struct ClusterView {
    /// World to clip (reversed-Z, glam conventions).
    pub view_projection: Mat4,
    /// Its planes.
    pub frustum: Frustum,
    /// The eye of a perspective view ([`view_eye`]); `None` turns the cone test off.
    pub eye: Option<Vec3>,
}

impl ClusterView {
    /// The view of `view_projection`.
    pub fn new(view_projection: Mat4) -> ClusterView {
        ClusterView {
            view_projection,
            frustum: Frustum::from_view_projection(view_projection),
            eye: view_eye(&view_projection),
        }
    }
}

/// The object pass: the object's world box against the frustum, then against `hiz` (when
/// given and occlusion is on).
pub fn classify_object(
    view: &ClusterView,
    min: Vec3,
    max: Vec3,
    hiz: Option<&HiZLevels<'_>>,
    settings: ClusterSettings,
    margins: ClusterMargins,
) -> ObjectVerdict {
    if !view.frustum.is_finite() {
        return ObjectVerdict::Visible;
    }
    if settings.frustum && !view.frustum.may_intersect_aabb(&Aabb { min, max }) {
        return ObjectVerdict::Frustum;
    }
    if let (true, Some(hiz)) = (settings.occlusion, hiz) {
        let answer = occlusion_test(&view.view_projection, min, max, hiz, margins.depth, margins.footprint);
        if answer == OcclusionAnswer::Hidden {
            return ObjectVerdict::Occluded;
        }
    }
    ObjectVerdict::Visible
}

/// The verdict on one meshlet of a visible object placed by `world`: its sphere against the
/// frustum, its cone against the eye, its box against `hiz` (when given and occlusion is
/// on), in that order.
pub fn classify_cluster(
    view: &ClusterView,
    world: &Mat4,
    bounds: &ClusterBounds,
    hiz: Option<&HiZLevels<'_>>,
    settings: ClusterSettings,
    margins: ClusterMargins,
) -> ClusterVerdict {
    if !view.frustum.is_finite() {
        return ClusterVerdict::Visible;
    }
    if settings.frustum {
        let (center, radius) = world_sphere(world, bounds.center, bounds.radius, margins.bounds);
        if sphere_outside(&view.frustum, center, radius) {
            return ClusterVerdict::Frustum;
        }
    }
    if let (true, Some(eye)) = (settings.cone, view.eye) {
        if cone_rejects(world, bounds, eye, margins.cone) {
            return ClusterVerdict::BackFacing;
        }
    }
    if let (true, Some(hiz)) = (settings.occlusion, hiz) {
        let (min, max) = world_box(world, bounds.box_min, bounds.box_max, margins.bounds);
        return match occlusion_test(&view.view_projection, min, max, hiz, margins.depth, margins.footprint) {
            OcclusionAnswer::Visible => ClusterVerdict::Visible,
            OcclusionAnswer::Hidden => ClusterVerdict::Occluded,
            OcclusionAnswer::Undecided => ClusterVerdict::Conservative,
        };
    }
    ClusterVerdict::Visible
}

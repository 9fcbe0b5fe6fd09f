//! What the frame's shadows are made of and what making them cost: the sun and the local
//! lights of the frame ([`SunLight`], [`LocalLight`]), how the shadow budget shared the views
//! ([`ShadowBudget`]), the work a frame redid ([`ShadowWork`]) and each view's casters
//! ([`ShadowViewStats`]). [`ShadowViews`](super::ShadowViews) holds them. A light that may
//! cast before the atlas is handed out is a `Candidate` (gathered in `lights.rs`, ranked in
//! `budget.rs`).

use glam::Vec3;
use runtime::hecs::Entity;

use ecs::{ShadowBias, MAX_CASCADES};

/// Most local lights (spot and point, shadowed or not) the frame lights with; the nearest
/// to the camera win.
pub const MAX_LOCAL_LIGHTS: usize = 64;

/// The sun of the frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SunLight {
    /// Its entity.
    pub entity: Entity,
    /// The direction its light travels (unit, world space).
    pub direction: Vec3,
    /// Colour times illuminance.
    pub radiance: Vec3,
    /// Camera distance each cascade ends at (the first `cascades` entries).
    pub cascade_ends: [f32; MAX_CASCADES],
    /// Number of cascades drawn this frame (0 when it casts no shadow).
    pub cascades: usize,
    /// Index of its first cascade in [`ShadowViews::views`](super::ShadowViews::views).
    pub first_view: usize,
}

/// What a local light is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalLightKind {
    /// A cone down `direction` (unit), full brightness inside `inner_angle`, none past
    /// `outer_angle` (half angles, radians).
    Spot {
        /// Where it points.
        direction: Vec3,
        /// Half angle of the core.
        inner_angle: f32,
        /// Half angle of the edge.
        outer_angle: f32,
    },
    /// Light in every direction.
    Point,
}

/// A spot or point light that lights this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalLight {
    /// Its entity.
    pub entity: Entity,
    /// Spot or point.
    pub kind: LocalLightKind,
    /// World position.
    pub position: Vec3,
    /// Colour times intensity.
    pub radiance: Vec3,
    /// Where its light ends.
    pub range: f32,
    /// Its screen contribution this frame, what the shadow budget ranks it by
    /// ([`screen_contribution`](super::screen_contribution)).
    pub score: f32,
    /// Index of its first view in [`ShadowViews::views`](super::ShadowViews::views) (one for
    /// a spot, six for a point), `None` when it casts no shadow this frame.
    pub first_view: Option<usize>,
}

impl LocalLight {
    /// Views its shadow takes: one for a spot light, six (a cube's faces) for a point light.
    pub fn view_count(&self) -> usize {
        match self.kind {
            LocalLightKind::Spot { .. } => 1,
            LocalLightKind::Point => 6,
        }
    }

    /// Its views in [`ShadowViews::views`](super::ShadowViews::views) this frame (empty when
    /// it casts no shadow).
    pub fn views(&self) -> std::ops::Range<usize> {
        self.first_view.map_or(0..0, |first| first..first + self.view_count())
    }
}

/// How the shadow budget shared this frame's views among the spot and point lights (see
/// [`ShadowSettings::max_light_views`](ecs::ShadowSettings::max_light_views)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowBudget {
    /// Lights that may light the frame and cast shadows: the candidates for a shadow.
    pub candidates: usize,
    /// Of them, those that cast this frame
    /// ([`ShadowViews::shadowed_lights`](super::ShadowViews::shadowed_lights)).
    pub shadowed: usize,
    /// Their views (the sun's cascades not counted).
    pub views: usize,
    /// The budget the views were held to
    /// ([`ShadowSettings::light_views`](ecs::ShadowSettings::light_views); 0 with shadows
    /// off).
    pub max_views: usize,
    /// Candidates passed over for the light cap or the views left.
    pub over_budget: usize,
    /// Of the lights that cast, those that did not cast last frame: shadows that came on
    /// (what the hysteresis keeps low while the lights and the camera move).
    pub new_casters: usize,
}

/// What the last [`ShadowViews::update`](super::ShadowViews::update) did: the share of the
/// work a frame whose lights and casters stand still is spared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowWork {
    /// The casters were gathered from every slot (the first frame with a shadow view, or one
    /// after a Visibility answer the views did not read); otherwise only the changed ones.
    pub rebuilt: bool,
    /// Words of 64 slots whose casters changed (moved, came or went) since the last frame:
    /// what the views that kept their bits redid.
    pub changed_words: usize,
    /// Views that kept last frame's bits (their volume did not move).
    pub kept_views: usize,
    /// Views culled afresh (new or moved).
    pub culled_views: usize,
    /// Words of 64 casters tested box by box, summed over the views; the others were decided
    /// by the union of their group's or word's boxes, or kept.
    pub kernel_words: usize,
}

/// Casters of one view before and after culling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowViewStats {
    /// Shadow casters tested.
    pub casters: usize,
    /// Casters kept for the view (drawn into its map).
    pub kept: usize,
}

/// A light that may light the frame, before the atlas is handed out.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    /// Distance from the camera to the light's sphere (0 inside).
    pub(super) distance: f32,
    /// Entity id, for a stable order among equals.
    pub(super) id: u64,
    /// Its screen contribution, what the shadow budget ranks it by.
    pub(super) score: f32,
    /// Whether it cast a shadow last frame (set by the ranking).
    pub(super) incumbent: bool,
    pub(super) light: LocalLight,
    /// Tile side asked for; 0 when it casts no shadow.
    pub(super) resolution: u32,
    pub(super) bias: ShadowBias,
}

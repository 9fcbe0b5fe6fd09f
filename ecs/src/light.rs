//! Lights as components, and the shadow settings of the frame.
//!
//! A light is placed by its entity's [`WorldTransform`](crate::WorldTransform) (or its
//! [`Transform`](crate::Transform) before the first Transform stage), like a camera: it
//! shines down its local -Z axis. A directional light (the sun) uses the orientation only,
//! a point light the position only, a spot light both.
//!
//! Shadows are drawn per *light view*: the sun gets [`ShadowSettings::cascade_count`]
//! cascades fitted to slices of the camera's view, a spot light one atlas tile, a point light
//! six (the faces of its cube). The spot and point lights that cast are chosen each frame by
//! their contribution to the camera's image (see [`ShadowSettings::max_light_views`]): at
//! most [`ShadowSettings::max_shadowed_lights`] of them, whose views fit
//! [`ShadowSettings::max_light_views`]; the rest shine without shadows.
//!
//! ```
//! use ecs::{DirectionalLight, SpotLight, Transform};
//! use glam::{Quat, Vec3};
//! let mut world = hecs::World::new();
//! let sun = Transform::from_translation_rotation(Vec3::ZERO, Quat::from_rotation_x(-1.0));
//! world.spawn((sun, DirectionalLight::default()));
//! let lamp = Transform::from_translation(Vec3::new(0.0, 6.0, 0.0));
//! world.spawn((lamp, SpotLight { range: 30.0, ..SpotLight::default() }));
//! ```

/// Depth offsets that keep a lit surface from shadowing itself (shadow acne), per light.
///
/// Both are in texels of the light's shadow map, so one setting holds at every cascade size:
/// `constant` pushes every depth away from the light by that many texels' worth of depth,
/// `slope` adds that many more times the surface's depth slope across a texel (grazing
/// surfaces need more).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowBias {
    /// Constant offset, in texels of depth. Default 1.
    pub constant: f32,
    /// Offset per unit of depth slope, in texels. Default 1.5.
    pub slope: f32,
}

impl Default for ShadowBias {
    fn default() -> Self {
        ShadowBias { constant: 1.0, slope: 1.5 }
    }
}

/// The sun: parallel light from the entity's -Z axis, shadows in cascades.
///
/// When several entities carry one, the one with the lowest entity id lights the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionalLight {
    /// Linear colour, multiplied by `illuminance`.
    pub color: [f32; 3],
    /// Brightness: 1 is the engine's reference sun.
    pub illuminance: f32,
    /// Whether it casts shadows (cascades of [`ShadowSettings`]).
    pub casts_shadows: bool,
    /// Its shadows' depth offsets.
    pub bias: ShadowBias,
}

impl Default for DirectionalLight {
    fn default() -> Self {
        DirectionalLight { color: [1.0; 3], illuminance: 1.0, casts_shadows: true, bias: ShadowBias::default() }
    }
}

/// A cone of light from the entity's position down its -Z axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotLight {
    /// Linear colour, multiplied by `intensity`.
    pub color: [f32; 3],
    /// Brightness at one unit of distance.
    pub intensity: f32,
    /// Distance where its light (and its shadow view) ends, world units.
    pub range: f32,
    /// Half angle of the full-brightness core, radians.
    pub inner_angle: f32,
    /// Half angle of the cone's edge, radians, in `(0, pi/2)`; the shadow view's field of
    /// view is twice this.
    pub outer_angle: f32,
    /// Whether it casts shadows (one tile of the shadow atlas).
    pub casts_shadows: bool,
    /// Side of its atlas tile in texels (rounded down to a power of two, at least 64).
    pub shadow_resolution: u32,
    /// Its shadows' depth offsets.
    pub bias: ShadowBias,
}

impl Default for SpotLight {
    fn default() -> Self {
        SpotLight {
            color: [1.0; 3],
            intensity: 10.0,
            range: 20.0,
            inner_angle: 0.4,
            outer_angle: 0.6,
            casts_shadows: true,
            shadow_resolution: 512,
            bias: ShadowBias::default(),
        }
    }
}

/// Light in every direction from the entity's position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLight {
    /// Linear colour, multiplied by `intensity`.
    pub color: [f32; 3],
    /// Brightness at one unit of distance.
    pub intensity: f32,
    /// Distance where its light (and its shadow views) end, world units.
    pub range: f32,
    /// Whether it casts shadows (six faces of a cube in the shadow atlas).
    pub casts_shadows: bool,
    /// Side of each face's atlas tile in texels (rounded down to a power of two, at least 64).
    pub shadow_resolution: u32,
    /// Its shadows' depth offsets.
    pub bias: ShadowBias,
}

impl Default for PointLight {
    fn default() -> Self {
        PointLight {
            color: [1.0; 3],
            intensity: 10.0,
            range: 15.0,
            casts_shadows: true,
            shadow_resolution: 256,
            bias: ShadowBias::default(),
        }
    }
}

/// How the camera's view depth is cut into cascades.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CascadeSplit {
    /// Equal slices of depth.
    Uniform,
    /// Each slice a constant ratio of the previous (equal texel density on screen).
    Logarithmic,
    /// The blend of the two (Zhang et al., "parallel-split shadow maps"): `lambda` 1 is
    /// logarithmic, 0 uniform. The usual choice, at `lambda` about 0.5-0.9.
    Practical {
        /// Weight of the logarithmic split, in `[0, 1]`.
        lambda: f32,
    },
    /// The far end of each cascade as a fraction of [`ShadowSettings::max_distance`],
    /// ascending; entries past the cascade count are ignored, the last used one is taken as 1.
    Manual([f32; 4]),
}

/// Most cascades the sun may have.
pub const MAX_CASCADES: usize = 4;
/// Most spot and point lights that cast shadows at once.
pub const MAX_SHADOWED_LIGHTS: usize = 16;
/// Most views of spot and point lights a frame may draw: six cube faces for each of
/// [`MAX_SHADOWED_LIGHTS`] point lights ([`ShadowSettings::max_light_views`] is capped here).
pub const MAX_LIGHT_VIEWS: usize = 6 * MAX_SHADOWED_LIGHTS;
/// The default of [`ShadowSettings::max_light_views`]: four point lights' cubes, or 24 spot
/// lights (as many as [`ShadowSettings::max_shadowed_lights`] allows).
pub const DEFAULT_MAX_LIGHT_VIEWS: u32 = 24;

/// The frame's shadow knobs, a resource read live like [`RenderSettings`](crate::RenderSettings).
///
/// ```
/// use ecs::{CascadeSplit, ShadowSettings};
/// let mut app = runtime::App::new();
/// ecs::install(&mut app);
/// let settings = &mut *app.resource_mut::<ShadowSettings>();
/// settings.max_distance = 80.0;
/// settings.split = CascadeSplit::Uniform;
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowSettings {
    /// Whether shadows are drawn at all. Default on (a scene without a shadow-casting light
    /// costs nothing).
    pub enabled: bool,
    /// Whether each light view draws only the casters that may touch it (on, the default).
    /// Off draws every caster into every view: the reference the culled maps are checked
    /// against, and the baseline of the cost.
    pub caster_culling: bool,
    /// Whether the sun's cascades also leave out casters hidden from the sun behind other
    /// casters (on, the default; with caster culling on, where the GPU culls the casters):
    /// two-phase occlusion against a depth pyramid of each cascade's map, as the camera's.
    pub caster_occlusion: bool,
    /// Number of sun cascades, 1 to [`MAX_CASCADES`]. Default 4.
    pub cascade_count: u32,
    /// Camera distance the last cascade ends at, world units. Default 120.
    pub max_distance: f32,
    /// How the distance is split among cascades. Default practical, lambda 0.75.
    pub split: CascadeSplit,
    /// Side of each cascade's map in texels. Default 1024.
    pub cascade_resolution: u32,
    /// Side of the spot and point lights' atlas in texels. Default 4096.
    pub atlas_resolution: u32,
    /// Most spot and point lights that cast at once, up to [`MAX_SHADOWED_LIGHTS`].
    pub max_shadowed_lights: u32,
    /// The shadow budget: most views of spot and point lights drawn per frame (a spot light
    /// is one view, a point light six, its cube's faces), up to [`MAX_LIGHT_VIEWS`]; the
    /// sun's cascades are not counted ([`ShadowSettings::cascade_count`] caps them). Default
    /// [`DEFAULT_MAX_LIGHT_VIEWS`]; [`MAX_LIGHT_VIEWS`] (or more) leaves only the light cap.
    ///
    /// The lights are ranked by their screen contribution, an estimate of how much of the
    /// image they light: `luminance(color * intensity) * min(1, (range / distance)^2)`, with
    /// `distance` from the camera to the light; `range / distance` is the projected radius of
    /// the lit sphere, squared the share of the image its disc covers (up to a factor of the
    /// field of view every light shares), 1 with the camera inside it. Highest first (ties by
    /// entity id), each light casts when it fits the light cap, the views left and the
    /// atlas. A light that cast last frame ranks as if its score were
    /// `culling::shadow::KEEP_MARGIN` (1.25) times higher, so it keeps its shadow until a
    /// challenger outscores it by that margin: a shadow does not flicker between two
    /// equal lights.
    pub max_light_views: u32,
}

impl Default for ShadowSettings {
    fn default() -> Self {
        ShadowSettings {
            enabled: true,
            caster_culling: true,
            caster_occlusion: true,
            cascade_count: MAX_CASCADES as u32,
            max_distance: 120.0,
            split: CascadeSplit::Practical { lambda: 0.75 },
            cascade_resolution: 1024,
            atlas_resolution: 4096,
            max_shadowed_lights: MAX_SHADOWED_LIGHTS as u32,
            max_light_views: DEFAULT_MAX_LIGHT_VIEWS,
        }
    }
}

impl ShadowSettings {
    /// The light cap clamped to `0..=MAX_SHADOWED_LIGHTS`.
    pub fn shadowed_lights(&self) -> usize {
        (self.max_shadowed_lights as usize).min(MAX_SHADOWED_LIGHTS)
    }

    /// The shadow budget clamped to `0..=MAX_LIGHT_VIEWS`.
    pub fn light_views(&self) -> usize {
        (self.max_light_views as usize).min(MAX_LIGHT_VIEWS)
    }

    /// The cascade count clamped to `1..=MAX_CASCADES`.
    pub fn cascades(&self) -> usize {
        (self.cascade_count as usize).clamp(1, MAX_CASCADES)
    }

    /// The far distance of each cascade, ascending, ending at `max_distance` (or at `far`
    /// when the camera's far plane is nearer); `near` is the camera's near plane. A
    /// non-finite or non-positive distance gives no cascades.
    ///
    /// ```
    /// use ecs::{CascadeSplit, ShadowSettings};
    /// let settings = ShadowSettings { split: CascadeSplit::Uniform, max_distance: 100.0, ..ShadowSettings::default() };
    /// let ends = settings.cascade_ends(0.1, f32::INFINITY);
    /// assert_eq!((ends.len(), ends[3]), (4, 100.0));
    /// assert!((ends[1] - 50.05).abs() < 1e-4); // halfway between the near plane and 100
    /// ```
    pub fn cascade_ends(&self, near: f32, far: f32) -> Vec<f32> {
        let mut ends = Vec::with_capacity(MAX_CASCADES);
        self.cascade_ends_into(near, far, &mut ends);
        ends
    }

    /// As [`ShadowSettings::cascade_ends`], into `out` (cleared first).
    pub fn cascade_ends_into(&self, near: f32, far: f32, out: &mut Vec<f32>) {
        out.clear();
        if !self.max_distance.is_finite() {
            return;
        }
        let last = self.max_distance.min(far);
        let near = if near.is_finite() && near > 0.0 { near } else { 0.1 };
        if !(last.is_finite() && last > near) {
            return;
        }
        let count = self.cascades();
        for i in 1..=count {
            let t = i as f32 / count as f32;
            let uniform = near + (last - near) * t;
            let logarithmic = near * (last / near).powf(t);
            let end = match self.split {
                CascadeSplit::Uniform => uniform,
                CascadeSplit::Logarithmic => logarithmic,
                CascadeSplit::Practical { lambda } => {
                    let lambda = if lambda.is_finite() { lambda.clamp(0.0, 1.0) } else { 0.5 };
                    lambda * logarithmic + (1.0 - lambda) * uniform
                }
                CascadeSplit::Manual(fractions) => {
                    let fraction = fractions[i - 1];
                    if i == count || !fraction.is_finite() {
                        last
                    } else {
                        near + (last - near) * fraction.clamp(0.0, 1.0)
                    }
                }
            };
            // Ascending whatever the input, so no cascade is empty of depth or inverted.
            let floor = out.last().copied().unwrap_or(near);
            out.push(if i == count { last } else { end.clamp(floor, last) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_ascend_and_end_at_the_shadow_distance() {
        for split in [
            CascadeSplit::Uniform,
            CascadeSplit::Logarithmic,
            CascadeSplit::Practical { lambda: 0.75 },
            CascadeSplit::Manual([0.5, 0.2, f32::NAN, 0.9]),
            CascadeSplit::Practical { lambda: f32::NAN },
        ] {
            let settings = ShadowSettings { split, max_distance: 200.0, ..ShadowSettings::default() };
            let ends = settings.cascade_ends(0.1, f32::INFINITY);
            assert_eq!(ends.len(), 4, "{split:?}");
            assert!(ends.windows(2).all(|pair| pair[0] <= pair[1]), "{split:?}: {ends:?}");
            assert_eq!(*ends.last().unwrap(), 200.0);
            assert!(ends[0] > 0.1);
        }
    }

    #[test]
    fn a_near_far_plane_caps_the_cascades_and_bad_distances_give_none() {
        let settings = ShadowSettings { cascade_count: 2, ..ShadowSettings::default() };
        assert_eq!(*settings.cascade_ends(0.1, 50.0).last().unwrap(), 50.0);
        assert!(ShadowSettings { max_distance: f32::NAN, ..settings }.cascade_ends(0.1, 1e9).is_empty());
        assert!(ShadowSettings { max_distance: -1.0, ..settings }.cascade_ends(0.1, 1e9).is_empty());
        assert_eq!(ShadowSettings { cascade_count: 0, ..settings }.cascades(), 1);
        assert_eq!(ShadowSettings { cascade_count: 9, ..settings }.cascades(), 4);
    }

    #[test]
    fn logarithmic_splits_are_geometric() {
        let settings =
            ShadowSettings { split: CascadeSplit::Logarithmic, max_distance: 1000.0, ..ShadowSettings::default() };
        let ends = settings.cascade_ends(1.0, f32::INFINITY);
        for (end, expected) in ends.iter().zip([1000f32.powf(0.25), 1000f32.powf(0.5), 1000f32.powf(0.75), 1000.0]) {
            assert!((end - expected).abs() < 1e-3 * expected, "{ends:?}");
        }
    }
}

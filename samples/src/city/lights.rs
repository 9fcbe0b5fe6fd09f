//! The city's lights for `--shadows`: a low afternoon sun and a row of street lamps along the
//! camera's street, one at every other crossing, shining down (spot lights). The renderer
//! gives shadows to the sun's cascades and to the lamps that light most of the image, as
//! many as [`ecs::ShadowSettings::max_shadowed_lights`] and the shadow budget
//! ([`ecs::ShadowSettings::max_light_views`]) allow; the other lamps light without.

use std::fmt::Write;

use culling::ShadowViews;
use ecs::{DirectionalLight, ShadowBias, SpotLight, Transform};
use glam::{Quat, Vec3};
use hecs::World;

use super::CityConfig;

/// Height of a lamp's light above the street, metres.
const LAMP_HEIGHT: f32 = 7.0;

/// Spawns the sun and the street lamps of `config`'s city; returns the number of lamps.
pub fn spawn_lights(world: &mut World, config: &CityConfig) -> usize {
    // The sun comes from the south-west, 35 degrees above the horizon: long shadows across
    // the streets.
    let sun = Quat::from_rotation_y(-0.8) * Quat::from_rotation_x(-35f32.to_radians());
    let sun_light = DirectionalLight { color: [1.0, 0.95, 0.85], illuminance: 1.0, ..DirectionalLight::default() };
    world.spawn((Transform::from_translation_rotation(Vec3::ZERO, sun), sun_light));
    let pitch = config.pitch();
    // The camera's street (see `CameraPath`), lamps on its side.
    let street_x = (config.blocks / 2) as f32 * pitch - config.street_width * 0.5;
    let lamp = SpotLight {
        color: [1.0, 0.85, 0.6],
        intensity: 40.0,
        range: 30.0,
        inner_angle: 0.6,
        outer_angle: 1.0,
        casts_shadows: true,
        shadow_resolution: 512,
        bias: ShadowBias::default(),
    };
    let mut lamps = 0;
    for crossing in (0..=config.blocks).step_by(2) {
        let position = Vec3::new(street_x + config.street_width * 0.35, LAMP_HEIGHT, crossing as f32 * pitch);
        // Straight down, tipped a little towards the street's middle.
        let down = Quat::from_rotation_z(0.25) * Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        world.spawn((Transform::from_translation_rotation(position, down), lamp));
        lamps += 1;
    }
    lamps
}

/// The frame's shadow budget as a line: `frame N shadowed lights 4 of 9, views 4 of 24 (and
/// 4 cascades): lamps 31 30 32 29` (the casting lamps' entity ids, best ranked first).
pub fn budget_line(shadows: &ShadowViews, frame: u64) -> String {
    let budget = shadows.budget();
    let mut line = format!(
        "frame {frame} shadowed lights {} of {}, views {} of {} (and {} cascades): lamps",
        budget.shadowed,
        budget.candidates,
        budget.views,
        budget.max_views,
        shadows.views().len() - budget.views
    );
    for light in shadows.shadowed_lights() {
        let _ = write!(line, " {}", light.entity.id());
    }
    line
}

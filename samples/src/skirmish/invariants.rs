//! What must hold after any frame of a skirmish: the volleys keep the sky's arrow count (each
//! frame's despawns as many as its spawns), every unit stands where its round puts it, and
//! every carried item and torch light sits on its parent where the hierarchy says.

use ecs::{Transform, WorldTransform};
use glam::Mat4;
use hecs::{Entity, World};

use super::motion::Arrow;
use super::scene::SkirmishState;

/// What [`check`] counted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Invariants {
    /// Arrows in the world.
    pub arrows: usize,
    /// Units whose pose was checked against their round.
    pub units: usize,
    /// Children (packs, torches, lights) checked against their parents.
    pub children: usize,
    /// The largest difference found between a child's world matrix and its parent's times
    /// its own, in any element.
    pub child_error: f32,
}

/// Largest element-wise difference between two matrices.
fn difference(a: &Mat4, b: &Mat4) -> f32 {
    a.to_cols_array().iter().zip(b.to_cols_array()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max)
}

/// The world matrix of `entity` and its local transform's matrix.
fn matrices(world: &World, entity: Entity) -> Result<(Mat4, Mat4), String> {
    let placed = world.get::<&WorldTransform>(entity).map_err(|_| format!("{entity:?} has no WorldTransform"))?.0;
    let local = world.get::<&Transform>(entity).map_err(|_| format!("{entity:?} has no Transform"))?.to_matrix();
    Ok((placed, local))
}

/// Checks the skirmish after a frame ran (so after its Transform stage): the arrow count and
/// the spawn and despawn totals, every unit where its round puts it at the frame its systems
/// ran, and every child placed by its parent (within `1e-3` per matrix element). Before the
/// units are mustered only the arrows are checked. Returns the counts, or what broke.
pub fn check(world: &World, state: &SkirmishState) -> Result<Invariants, String> {
    let frame = state.frame;
    let arrows = world.query::<&Arrow>().iter().count();
    let config = state.config;
    let mut found = Invariants { arrows, ..Invariants::default() };
    if state.mustered.is_none() {
        return if arrows == 0 { Ok(found) } else { Err(format!("{arrows} arrows before the muster")) };
    }
    if arrows != config.arrows() || state.arrows.len() != arrows {
        return Err(format!(
            "{arrows} arrows in the world, {} in flight, {} expected",
            state.arrows.len(),
            config.arrows()
        ));
    }
    if state.fired - state.despawned != arrows as u64 {
        return Err(format!("{} fired and {} despawned leave {arrows} arrows", state.fired, state.despawned));
    }
    for (index, &(unit, item)) in state.units.iter().enumerate() {
        let (unit_world, unit_local) = matrices(world, unit)?;
        let expected = state.unit_pose(index, frame).to_matrix();
        if difference(&unit_local, &expected) > 1e-4 || difference(&unit_world, &unit_local) > 1e-4 {
            return Err(format!("unit {index} ({unit:?}) is not where its round puts it at frame {frame}"));
        }
        found.units += 1;
        let mut parent = unit_world;
        let mut child = Some(item);
        while let Some(entity) = child.take() {
            let (placed, local) = matrices(world, entity)?;
            let error = difference(&placed, &(parent * local));
            if error > 1e-3 {
                return Err(format!("{entity:?} of unit {index} is {error} off its parent's pose"));
            }
            found.child_error = found.child_error.max(error);
            found.children += 1;
            parent = placed;
            child = state.lights.get(index).copied().filter(|_| entity == item);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skirmish::{skirmish_app, SkirmishConfig, Still};
    use ecs::Viewport;

    fn small(still: Still) -> SkirmishConfig {
        SkirmishConfig {
            objects: 3_000,
            units: 60,
            torches: 3,
            volley: 10,
            arrow_frames: 4,
            still,
            ..SkirmishConfig::default()
        }
    }

    #[test]
    fn every_frame_keeps_the_volleys_and_the_children_on_their_parents() {
        let config = small(Still::default());
        let (mut app, _, built) = skirmish_app(config, 2, Viewport { width: 320, height: 180 });
        assert_eq!(built.objects, 3_000);
        assert_eq!(check(app.world(), &app.resource::<SkirmishState>()).map(|found| found.arrows), Ok(0));
        let mut arrows_seen = Vec::new();
        for _ in 0..8 {
            app.run_frame();
            let frame = app.last_frame_index().expect("a frame was run");
            let found = check(app.world(), &app.resource::<SkirmishState>()).unwrap_or_else(|error| panic!("{error}"));
            assert_eq!((found.units, found.children), (60, 63), "frame {frame}: a child per unit, a light per torch");
            arrows_seen.push(app.resource::<SkirmishState>().arrows.front().copied());
            let meshes = app.world().query::<&ecs::Mesh>().iter().count();
            assert_eq!(meshes, 3_000, "frame {frame}: as many objects every frame");
        }
        let state = app.resource::<SkirmishState>();
        assert_eq!((state.fired, state.despawned), (40 + 7 * 10, 7 * 10), "the muster's 40, then 10 a frame");
        arrows_seen.dedup();
        assert_eq!(arrows_seen.len(), 8, "the oldest arrow changes every frame");
    }

    #[test]
    fn still_units_stand_where_they_were_mustered() {
        let (mut app, _, _) =
            skirmish_app(small(Still { units: true, ..Still::default() }), 2, Viewport { width: 320, height: 180 });
        app.run_frames(2);
        let place = |app: &runtime::App| {
            let (unit, _) = app.resource::<SkirmishState>().units[0];
            app.world().get::<&Transform>(unit).map(|transform| transform.translation).expect("the unit lives")
        };
        let before = place(&app);
        app.run_frames(5);
        assert_eq!(place(&app), before);
        check(app.world(), &app.resource::<SkirmishState>()).unwrap_or_else(|error| panic!("{error}"));
    }
}

//! A rig's palette slice belongs to the one entity the palette gave it to: a `Skin` cloned,
//! moved, swapped or put back after its slice was freed gets a slice of its own, never one
//! another rig writes, and no slice outlives its rig.

use std::sync::Arc;

use ecs::SkinnedPose;
use hecs::Entity;
use runtime::App;

use super::chain_skeleton;
use super::system_tests::{animated_app, chain_boxes, swing};
use crate::*;

/// Checks what the posing relies on: each entity with a `SkinnedMesh` and a `Skin` has one
/// palette record, the slice its `Skin` names; no two rigs' slices overlap; every record has
/// its rig; and each posed box is the one its own slice's matrices give.
fn assert_slices_owned(app: &App) {
    let palette = app.resource::<SkinPalette>();
    let mut claimed = Vec::new();
    let mut query = app.world().query::<(Entity, &Skin, &SkinnedMesh, Option<&SkinnedPose>)>();
    for (entity, skin, mesh, pose) in query.iter() {
        let records: Vec<PaletteRig> = palette.rigs().copied().filter(|rig| rig.entity == entity).collect();
        let named = PaletteRig { entity, first: skin.skin_first(), count: skin.skin_count() };
        assert_eq!(records, [named], "a rig's one palette record is the slice its Skin names");
        claimed.push((skin.skin_first(), skin.skin_count()));
        if let Some(pose) = pose {
            let slice = palette.slice(skin.skin_first(), skin.skin_count());
            assert_eq!(pose.bounds(0.0), mesh.joint_boxes.posed(slice), "a rig's box comes from its own slice");
        }
    }
    assert_eq!(palette.rig_count(), claimed.len(), "no palette slice outlives its rig");
    claimed.sort_unstable();
    for pair in claimed.windows(2) {
        assert!(pair[0].0 + pair[0].1 <= pair[1].0, "two rigs share palette entries: {pair:?}");
    }
}

/// The entities of the app's rigs, in query order.
fn rig_entities(app: &App) -> Vec<Entity> {
    app.world().query::<(Entity, &Skin)>().iter().map(|(entity, _)| entity).collect()
}

/// A copy of `entity`'s `Skin`.
fn skin_of(app: &App, entity: Entity) -> Skin {
    Skin::clone(&app.world().get::<&Skin>(entity).unwrap())
}

/// A rig like `animated_app`'s, its clip at `time` (so its pose differs from its neighbours').
fn spawn_rig(app: &mut App, time: f32) -> Entity {
    let skeleton = Arc::new(chain_skeleton("chain", 8));
    let mut player = AnimationPlayer::new(swing(&skeleton), &skeleton).unwrap();
    player.time = time;
    app.world_mut().spawn((SkinnedMesh { joint_boxes: chain_boxes(8) }, Skin::new(skeleton), player))
}

#[test]
fn a_skin_put_back_after_its_slice_was_freed_gets_a_slice_of_its_own() {
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rig = rig_entities(&app)[0];
    let skin = app.world_mut().remove_one::<Skin>(rig).unwrap();
    app.run_frame();
    app.world_mut().insert_one(rig, skin).unwrap();
    app.run_frame();
    // A newcomer takes the first free slice: the one the clone still names.
    spawn_rig(&mut app, 0.77);
    app.run_frames(2);
    assert_slices_owned(&app);
}

#[test]
fn a_skin_put_back_after_a_newcomer_took_its_slice_gets_a_slice_of_its_own() {
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rig = rig_entities(&app)[0];
    let skin = app.world_mut().remove_one::<Skin>(rig).unwrap();
    app.run_frame();
    let newcomer = spawn_rig(&mut app, 0.77);
    app.run_frame();
    assert_eq!(
        app.world().get::<&Skin>(newcomer).unwrap().skin_first(),
        skin.skin_first(),
        "the freed slice is reused"
    );
    let entries = app.resource::<SkinPalette>().matrices().len();
    app.world_mut().insert_one(rig, skin).unwrap();
    app.run_frames(2);
    assert_slices_owned(&app);
    assert_eq!(app.resource::<SkinPalette>().matrices().len(), entries + 8, "no room left: the palette grows");
}

#[test]
fn a_skin_put_back_the_frame_another_rig_goes_is_counted_apart() {
    // The put-back clone must not stand in for the gone rig in the count that spares the
    // search for gone rigs: the gone rig's slice is freed and the clone gets one of its own.
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rigs = rig_entities(&app);
    let skin = app.world_mut().remove_one::<Skin>(rigs[0]).unwrap();
    app.run_frame();
    app.world_mut().insert_one(rigs[0], skin).unwrap();
    app.world_mut().despawn(rigs[1]).unwrap();
    app.run_frames(2);
    assert_slices_owned(&app);
}

#[test]
fn a_skin_naming_its_entitys_slice_under_another_record_gets_a_slice_of_its_own() {
    // What a clone of an entity's older `Skin` can name once the entity's newer one got the
    // same slice back under another record: the slice matches, the record does not.
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rig = rig_entities(&app)[0];
    let mut stale = skin_of(&app, rig);
    // Records take places in allocation order: place 1 is the second rig's.
    stale.set_slice((stale.skin_first(), 1));
    app.world_mut().insert_one(rig, stale).unwrap();
    app.run_frame();
    assert_slices_owned(&app);
}

#[test]
fn a_cloned_skin_on_another_entity_gets_a_slice_of_its_own() {
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rigs = rig_entities(&app);
    let skin = skin_of(&app, rigs[0]);
    let twin = spawn_rig(&mut app, 0.31);
    app.world_mut().insert_one(twin, skin).unwrap();
    app.run_frames(2);
    assert_slices_owned(&app);
    // The original moves to another entity once its own is gone.
    let moved = app.world_mut().remove_one::<Skin>(rigs[1]).unwrap();
    let heir = spawn_rig(&mut app, 0.52);
    app.world_mut().insert_one(heir, moved).unwrap();
    app.run_frames(2);
    assert_slices_owned(&app);
}

#[test]
fn a_reused_entity_id_with_a_clone_of_its_old_skin_gets_a_slice_of_its_own() {
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rigs = rig_entities(&app);
    for run_between in [false, true] {
        let old = rigs[usize::from(run_between)];
        let skin = skin_of(&app, old);
        app.world_mut().despawn(old).unwrap();
        if run_between {
            app.run_frame();
        }
        let reborn = spawn_rig(&mut app, 0.43);
        assert_eq!(reborn.id(), old.id(), "hecs reuses the id, with a new generation");
        assert_ne!(reborn, old);
        app.world_mut().insert_one(reborn, skin).unwrap();
        app.run_frames(2);
        assert_slices_owned(&app);
    }
}

#[test]
fn swapped_skins_each_get_a_slice_of_their_own() {
    let mut app = animated_app(2, 4);
    app.run_frame();
    let rigs = rig_entities(&app);
    let one = app.world_mut().remove_one::<Skin>(rigs[0]).unwrap();
    let other = app.world_mut().remove_one::<Skin>(rigs[1]).unwrap();
    app.world_mut().insert_one(rigs[0], other).unwrap();
    app.world_mut().insert_one(rigs[1], one).unwrap();
    app.run_frames(2);
    assert_slices_owned(&app);
    assert_eq!(app.resource::<SkinPalette>().matrices().len(), 4 * 8, "the swapped rigs reuse the freed slices");
}

/// Removes, puts back, clones, swaps and despawns rigs over a few frames on `threads`
/// threads; returns the palette's bits and each rig's first entry.
fn churn(threads: usize) -> (Vec<u32>, Vec<u32>) {
    let mut app = animated_app(threads, 300);
    app.run_frame();
    let rigs = rig_entities(&app);
    let mut kept = Vec::new();
    for (step, &rig) in rigs.iter().enumerate().take(120) {
        match step % 4 {
            0 => kept.push(app.world_mut().remove_one::<Skin>(rig).unwrap()),
            1 => {
                let twin = spawn_rig(&mut app, step as f32 * 0.01);
                let clone = skin_of(&app, rig);
                app.world_mut().insert_one(twin, clone).unwrap();
            }
            2 => app.world_mut().despawn(rig).unwrap(),
            _ => {}
        }
    }
    app.run_frame();
    for (rig, skin) in rigs.iter().step_by(4).zip(kept) {
        app.world_mut().insert_one(*rig, skin).unwrap();
    }
    spawn_rig(&mut app, 0.9);
    app.run_frames(3);
    assert_slices_owned(&app);
    let palette = app.resource::<SkinPalette>();
    let rows = palette.matrices().iter().flat_map(|matrix| matrix.to_rows_array().into_iter().flatten());
    let bits = rows.map(f32::to_bits).collect();
    let mut query = app.world().query::<&Skin>();
    (bits, query.iter().map(|skin| skin.skin_first()).collect())
}

#[test]
fn slices_churned_alike_on_one_and_two_threads_give_bit_identical_palettes() {
    assert_eq!(churn(1), churn(2), "the slices and the palette must not depend on the thread count");
}

/// One step of a game's handling of rigs, on the rig (or kept `Skin`) its number picks.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Takes a rig's `Skin` away and keeps it.
    Remove(usize),
    /// Puts a kept `Skin` back on the entity it came from, if that entity lives.
    PutBack(usize),
    /// Puts a kept `Skin` on a new entity.
    Adopt(usize),
    /// Clones a rig's `Skin` onto a new entity.
    Clone(usize),
    /// Swaps two rigs' `Skin`s.
    Swap(usize, usize),
    /// Despawns a rig.
    Despawn(usize),
    /// Spawns a rig.
    Spawn,
    /// Runs a frame.
    Frame,
}

/// Applies `step`; `kept` holds removed `Skin`s and the entities they came from.
fn apply(app: &mut App, kept: &mut Vec<(Entity, Skin)>, step: Step) {
    let rigs = rig_entities(app);
    let rig = |pick: usize| rigs.get(pick % rigs.len().max(1)).copied();
    match step {
        Step::Remove(pick) => {
            if let Some(rig) = rig(pick) {
                kept.push((rig, app.world_mut().remove_one::<Skin>(rig).unwrap()));
            }
        }
        Step::PutBack(pick) | Step::Adopt(pick) if !kept.is_empty() => {
            let (from, skin) = kept.swap_remove(pick % kept.len());
            let to = match step {
                Step::PutBack(_) if app.world().contains(from) => from,
                _ => spawn_rig(app, pick as f32 * 0.01),
            };
            app.world_mut().insert_one(to, skin).unwrap();
        }
        Step::Clone(pick) => {
            if let Some(rig) = rig(pick) {
                let skin = skin_of(app, rig);
                let twin = spawn_rig(app, pick as f32 * 0.01);
                app.world_mut().insert_one(twin, skin).unwrap();
            }
        }
        Step::Swap(one, other) => {
            if let (Some(one), Some(other)) = (rig(one), rig(other)) {
                let first = app.world_mut().remove_one::<Skin>(one).unwrap();
                if let Ok(second) = app.world_mut().remove_one::<Skin>(other) {
                    app.world_mut().insert_one(one, second).unwrap();
                }
                app.world_mut().insert_one(other, first).unwrap();
            }
        }
        Step::Despawn(pick) => {
            if let Some(rig) = rig(pick) {
                app.world_mut().despawn(rig).unwrap();
            }
        }
        Step::Spawn => {
            spawn_rig(app, 0.6);
        }
        Step::Frame => {
            app.run_frame();
            assert_slices_owned(app);
        }
        Step::PutBack(_) | Step::Adopt(_) => {}
    }
}

/// Any [`Step`], frames twice as likely as each other kind.
fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        (0..64usize).prop_map(Step::Remove),
        (0..64usize).prop_map(Step::PutBack),
        (0..64usize).prop_map(Step::Adopt),
        (0..64usize).prop_map(Step::Clone),
        (0..64usize, 0..64usize).prop_map(|(one, other)| Step::Swap(one, other)),
        (0..64usize).prop_map(Step::Despawn),
        Just(Step::Spawn),
        Just(Step::Frame),
        Just(Step::Frame),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever a game does with rigs and their `Skin`s between frames, after every frame each
    /// rig owns one slice of its own, and no slice outlives its rig.
    #[test]
    fn any_handling_of_skins_leaves_every_rig_a_slice_of_its_own(steps in proptest::collection::vec(step(), 1..40)) {
        let mut app = animated_app(2, 5);
        app.run_frame();
        let mut kept = Vec::new();
        for step in steps {
            apply(&mut app, &mut kept, step);
        }
        apply(&mut app, &mut kept, Step::Frame);
    }
}

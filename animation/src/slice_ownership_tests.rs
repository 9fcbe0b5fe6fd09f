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

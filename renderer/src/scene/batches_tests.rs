//! The batch table against a brute-force reference (every slot's key, grouped afresh) through
//! spawns, despawns and changes of mesh, level and material.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;

const SLOTS: u32 = 48;

/// The record of mesh `mesh` at level `level` with material `material` (a mesh's levels are
/// index ranges of their own).
fn record(mesh: u32, level: u32, material: u32) -> ObjectRecord {
    ObjectRecord {
        index_count: 36 - 6 * level,
        first_index: mesh * 1000 + level * 100,
        vertex_offset: (mesh * 50) as i32,
        material,
        mesh,
        ..ObjectRecord::EMPTY
    }
}

#[derive(Clone, Debug)]
enum Step {
    /// Slot `0` gets mesh `1`, level `2`, material `3` (a spawn, or a change of any of them).
    Set(u32, u32, u32, u32),
    /// Slot `0` is emptied (a despawn).
    Clear(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..SLOTS, 0..4u32, 0..3u32, 0..3u32).prop_map(|(slot, mesh, level, material)| Step::Set(slot, mesh, level, material)),
        2 => (0..SLOTS).prop_map(Step::Clear),
    ]
}

/// Checks the table against the reference records (by slot).
fn check(table: &mut BatchTable, records: &[ObjectRecord]) {
    let mut reference: BTreeMap<(u32, u32, u32, i32, u32), BTreeSet<u32>> = BTreeMap::new();
    for (slot, record) in records.iter().enumerate() {
        if let Some(key) = BatchKey::of(record) {
            let entry = (key.mesh, key.first_index, key.index_count, key.vertex_offset, key.material);
            reference.entry(entry).or_default().insert(slot as u32);
        }
    }
    assert_eq!(table.batches_in_use() as usize, reference.len(), "one batch per distinct key");
    assert!(table.len() as usize <= records.len().max(1), "ids stay below the objects alive");
    let mut ids = BTreeSet::new();
    for slots in reference.values() {
        let id = table.batch_of(*slots.iter().next().expect("a member"));
        assert_ne!(id, NO_BATCH);
        assert!(ids.insert(id), "two keys share batch {id}");
        let (key, members) = table.batch(id).expect("a batch in use");
        assert_eq!(members as usize, slots.len(), "the room is the batch's objects");
        for &slot in slots {
            assert_eq!(table.batch_of(slot), id, "slot {slot} is in its key's batch");
            assert_eq!(BatchKey::of(&records[slot as usize]), Some(key));
        }
    }
    for (slot, record) in records.iter().enumerate() {
        if record.is_empty() {
            assert_eq!(table.batch_of(slot as u32), NO_BATCH, "an empty slot is in no batch");
        }
    }
    for id in 0..table.len() {
        if !ids.contains(&id) {
            assert!(table.batch(id).is_none(), "id {id} is free");
            assert_eq!(table.template(id, 0).index_count, 0, "a free id draws nothing");
        }
    }
    // The runs tile the instance list without overlap.
    let total = table.layout();
    assert_eq!(total as usize, records.iter().filter(|record| !record.is_empty()).count());
    let mut runs: Vec<(u32, u32)> = ids.iter().map(|&id| table.run(id)).collect();
    runs.sort_unstable();
    let mut next = 0;
    for (base, room) in runs {
        assert_eq!(base, next, "runs follow one another");
        next = base + room;
    }
    assert_eq!(next, total);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_table_equals_a_fresh_grouping(steps in proptest::collection::vec(step(), 1..120)) {
        let mut table = BatchTable::new();
        let mut records = vec![ObjectRecord::EMPTY; SLOTS as usize];
        let mut changed = BTreeSet::new();
        for step in steps {
            let (slot, new) = match step {
                Step::Set(slot, mesh, level, material) => (slot, record(mesh, level, material)),
                Step::Clear(slot) => (slot, ObjectRecord::EMPTY),
            };
            let before = table.batch_of(slot);
            records[slot as usize] = new;
            table.set(slot, &new);
            if table.batch_of(slot) != before {
                changed.insert(slot);
            }
            check(&mut table, &records);
        }
        // Every slot whose id changed is handed, with its id now.
        let mut handed = BTreeMap::new();
        table.take_changed(SLOTS, |slot, id| {
            handed.insert(slot, id);
        });
        for slot in &changed {
            prop_assert_eq!(handed.get(slot).copied(), Some(table.batch_of(*slot)));
        }
        prop_assert_eq!(table.take_changed(SLOTS, |_, _| {}), 0, "handed once");
    }

    #[test]
    fn a_grouped_list_draws_each_listed_object_once(
        sets in proptest::collection::vec((0..4u32, 0..3u32, 0..3u32), 1..SLOTS as usize),
        listed in proptest::collection::vec(any::<bool>(), SLOTS as usize),
    ) {
        let mut table = BatchTable::new();
        let mut records = Vec::new();
        for (slot, &(mesh, level, material)) in sets.iter().enumerate() {
            let record = if mesh == 3 { ObjectRecord::EMPTY } else { record(mesh, level, material) };
            table.set(slot as u32, &record);
            records.push(record);
        }
        let objects: Vec<u32> = (0..sets.len() as u32).filter(|&slot| listed[slot as usize]).collect();
        let (mut commands, mut instances) = (Vec::new(), Vec::new());
        table.group(objects.iter().copied(), &mut commands, &mut instances);
        // Brute force: every listed drawable object appears once, under a command of its key.
        let mut drawn = BTreeSet::new();
        for command in &commands {
            prop_assert!(command.instance_count > 0, "no empty command on the host list");
            let run = &instances[command.first_instance as usize..(command.first_instance + command.instance_count) as usize];
            for &slot in run {
                let record = records[slot as usize];
                prop_assert_eq!(
                    (record.index_count, record.first_index, record.vertex_offset),
                    (command.index_count, command.first_index, command.vertex_offset)
                );
                prop_assert!(drawn.insert(slot), "slot drawn twice");
            }
        }
        let expected: BTreeSet<u32> =
            objects.iter().copied().filter(|&slot| !records[slot as usize].is_empty()).collect();
        prop_assert_eq!(drawn, expected);
        let keys: BTreeSet<_> = objects.iter().filter_map(|&slot| BatchKey::of(&records[slot as usize])).map(|key| (key.mesh, key.first_index, key.material)).collect();
        prop_assert_eq!(commands.len(), keys.len(), "one command per distinct key listed");
    }
}

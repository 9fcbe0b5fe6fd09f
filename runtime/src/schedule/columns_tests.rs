//! The declared-columns view: declared access works, undeclared access panics naming the
//! system and the component.

use std::any::TypeId;

use hecs::Entity;

use crate::changes::{ChangeCursor, ChangedSince};
use crate::{App, Columns, Stage, System};

struct Mass(f32);
struct Heat(f32);
struct Secret(u32);

/// Runs one frame of `app`, returning the panic message.
fn panic_message(app: &mut App) -> String {
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| app.run_frame())).expect_err("the frame should panic");
    payload.downcast_ref::<String>().cloned().unwrap_or_default()
}

fn app_with(system: System) -> App {
    let mut app = App::new();
    app.world_mut().spawn((Mass(2.0), Heat(0.0), Secret(7)));
    app.world_mut().spawn((Mass(3.0),));
    app.add_system(Stage::Transform, system);
    app
}

#[test]
fn declared_columns_are_read_and_written_and_writes_are_logged_as_recorded() {
    let mut app = app_with(System::with_params::<Columns<(&Mass, Option<&mut Heat>)>>("warm", |_, world| {
        for (position, archetype) in world.archetypes().enumerate() {
            if !archetype.has::<Mass>() || !archetype.has::<Heat>() {
                continue;
            }
            let masses = archetype.column::<Mass>().expect("has Mass");
            let mut heats = archetype.column_mut::<Heat>().expect("has Heat");
            for (heat, mass) in heats.iter_mut().zip(masses.iter()) {
                heat.0 += mass.0;
            }
            world.record_archetype_write::<Heat>(position);
        }
    }));
    let (mut cursor, mut changed) = (ChangeCursor::default(), ChangedSince::default());
    app.run_frame();
    app.changes().collect(&mut cursor, &[TypeId::of::<Heat>()], &mut changed);
    app.run_frame();
    app.changes().collect(&mut cursor, &[TypeId::of::<Heat>()], &mut changed);
    let heated = app.world().archetypes().position(|archetype| archetype.has::<Heat>()).expect("there");
    assert_eq!(changed.archetypes, vec![heated as u32], "the recorded write, and only it");
    assert_eq!(app.world().query::<&Heat>().iter().next().expect("one").0, 4.0, "two frames of warming");
}

#[test]
fn an_undeclared_column_read_panics_naming_system_and_component() {
    let mut app = app_with(System::with_params::<Columns<&Mass>>("snoop", |_, world| {
        for archetype in world.archetypes() {
            let _ = archetype.column::<Secret>();
        }
    }));
    let message = panic_message(&mut app);
    assert!(message.contains("system 'snoop' reads component") && message.contains("Secret"), "{message}");
}

#[test]
fn a_column_write_needs_a_declared_write() {
    let mut app = app_with(System::with_params::<Columns<&Mass>>("scribble", |_, world| {
        for archetype in world.archetypes() {
            let _ = archetype.column_mut::<Mass>();
        }
    }));
    let message = panic_message(&mut app);
    assert!(message.contains("system 'scribble' writes component") && message.contains("Mass"), "{message}");
}

#[test]
fn a_column_outside_the_declared_filters_panics() {
    // Heat is declared where Mass is: the archetype without Mass is not covered.
    let mut app = App::new();
    app.world_mut().spawn((Heat(1.0),));
    app.add_system(
        Stage::Transform,
        System::with_params::<Columns<(&Mass, Option<&Heat>)>>("filtered", |_, world| {
            for archetype in world.archetypes().filter(|archetype| archetype.has::<Heat>()) {
                let _ = archetype.column::<Heat>();
            }
        }),
    );
    let message = panic_message(&mut app);
    assert!(message.contains("system 'filtered' reads component") && message.contains("Heat"), "{message}");
}

#[test]
fn an_undeclared_recorded_write_panics() {
    let mut app = app_with(System::with_params::<Columns<&Mass>>("liar", |_, world| {
        world.record_entity_writes::<Mass>(&[Entity::DANGLING]);
    }));
    let message = panic_message(&mut app);
    assert!(message.contains("system 'liar' records a write of component") && message.contains("Mass"), "{message}");
}

#[test]
fn an_undeclared_query_panics() {
    let mut app = app_with(System::with_params::<Columns<&Mass>>("asker", |_, world| {
        let _ = world.query::<&Secret>().iter().count();
    }));
    let message = panic_message(&mut app);
    assert!(message.contains("system 'asker' reads component") && message.contains("Secret"), "{message}");
}

#[test]
fn entity_access_is_checked_in_debug_builds() {
    let mut app = app_with(System::with_params::<Columns<&Mass>>("peek", |_, world| {
        let entity = world.query::<(Entity, &Mass)>().iter().next().expect("one").0;
        assert_eq!(world.get::<Mass>(entity).expect("has Mass").0, 2.0);
        // SAFETY: Mass is declared read-only: no one writes it during the run.
        assert_eq!(unsafe { world.get_unborrowed::<Mass>(entity) }.map(|mass| mass.0), Some(2.0));
        assert!(world.entity(entity).expect("lives").has::<Secret>(), "what an entity has is not a read");
        let _ = world.get::<Secret>(entity);
    }));
    if cfg!(debug_assertions) {
        let message = panic_message(&mut app);
        assert!(message.contains("system 'peek' reads component") && message.contains("Secret"), "{message}");
    } else {
        app.run_frame();
    }
}

#[test]
fn the_whole_world_allows_everything_and_logs_nothing() {
    let mut world = hecs::World::new();
    let entity = world.spawn((Mass(1.0), Secret(3)));
    let columns = Columns::<()>::whole(&world);
    columns.get_mut::<Secret>(entity).expect("has Secret").0 += 1;
    columns.record_entity_writes::<Secret>(&[entity]);
    assert_eq!(world.get::<&Secret>(entity).expect("has Secret").0, 4);
}

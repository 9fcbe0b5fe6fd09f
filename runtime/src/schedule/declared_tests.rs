//! Scheduler tests: what a system's declared access lets it do, and the panic that names
//! the system and the component when it does more.

use crate::{App, Stage, System};

#[derive(Debug, PartialEq)]
struct Position(f32);
#[derive(Debug, PartialEq)]
struct Velocity(f32);

/// Runs one frame of `app`, returning the panic message.
fn panic_message(app: &mut App) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| app.run_frame())).expect_err("must panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
        .unwrap_or_default()
}

#[test]
fn an_undeclared_write_panics_naming_system_and_component_even_alone() {
    let mut app = App::with_threads(1);
    app.world_mut().spawn((Position(0.0), Velocity(1.0)));
    app.add_system(
        Stage::Transform,
        System::new("sneaky writer", |ctx| {
            for (position, velocity) in ctx.query::<(&mut Position, &Velocity)>().iter() {
                position.0 += velocity.0;
            }
        })
        .reads::<Position>()
        .reads::<Velocity>(),
    );
    let message = panic_message(&mut app);
    assert!(
        message.contains("'sneaky writer'") && message.contains("writes component") && message.contains("Position"),
        "message: {message}"
    );
}

#[test]
fn an_undeclared_writer_beside_a_reader_is_named_not_a_borrow_clash() {
    let mut app = App::with_threads(2);
    app.world_mut().spawn((Position(0.0), Velocity(1.0)));
    app.add_system(
        Stage::Transform,
        System::new("reader", |ctx| ctx.query::<&Position>().iter().for_each(drop)).reads::<Position>(),
    );
    app.add_system(
        Stage::Transform,
        System::new("writer", |ctx| ctx.query::<&mut Position>().iter().for_each(|position| position.0 = 1.0))
            .reads::<Velocity>(),
    );
    assert_eq!(app.schedule().batches(Stage::Transform).expect("stage"), vec![vec!["reader", "writer"]]);
    for _ in 0..5 {
        let message = panic_message(&mut app);
        assert!(message.contains("'writer'") && message.contains("Position"), "message: {message}");
    }
}

#[test]
fn two_undeclared_writers_panic_every_frame_on_any_thread_count() {
    for threads in [1, 2] {
        let mut app = App::with_threads(threads);
        app.world_mut().spawn_batch((0..100).map(|index| (Position(index as f32),)));
        for name in ["first writer", "second writer"] {
            app.add_system(
                Stage::Transform,
                System::new(name, |ctx| ctx.query::<&mut Position>().iter().for_each(|position| position.0 += 1.0)),
            );
        }
        for frame in 0..10 {
            let message = panic_message(&mut app);
            assert!(
                message.contains("writer'") && message.contains("Position"),
                "{threads} threads, frame {frame}: {message}"
            );
        }
    }
}

#[test]
fn writers_on_provably_disjoint_archetypes_share_a_batch_and_must_query_with_their_filters() {
    use hecs::{With, Without};
    struct Scout;
    struct Enemy;
    type Scouts = Without<With<&'static mut Velocity, &'static Scout>, &'static Enemy>;
    type Enemies = With<&'static mut Velocity, &'static Enemy>;
    let mut app = App::with_threads(2);
    let scout = app.world_mut().spawn((Velocity(1.0), Scout));
    let enemy = app.world_mut().spawn((Velocity(1.0), Enemy));
    app.add_system(
        Stage::Transform,
        System::new("scouts", |ctx| ctx.query::<Scouts>().iter().for_each(|velocity| velocity.0 = 2.0))
            .query::<Scouts>(),
    );
    app.add_system(
        Stage::Transform,
        System::new("enemies", |ctx| ctx.query::<Enemies>().iter().for_each(|velocity| velocity.0 = 3.0))
            .query::<Enemies>(),
    );
    assert_eq!(app.schedule().batches(Stage::Transform).expect("stage"), vec![vec!["scouts", "enemies"]]);
    app.run_frame();
    assert_eq!(*app.world().get::<&Velocity>(scout).expect("alive"), Velocity(2.0));
    assert_eq!(*app.world().get::<&Velocity>(enemy).expect("alive"), Velocity(3.0));

    app.add_system(
        Stage::Input,
        System::new("forgets the filter", |ctx| ctx.query::<&mut Velocity>().iter().for_each(drop)).query::<Enemies>(),
    );
    let message = panic_message(&mut app);
    assert!(message.contains("'forgets the filter'") && message.contains("With/Without"), "message: {message}");
}

#[test]
fn spawning_without_declaring_it_panics_naming_the_system() {
    let mut app = App::with_threads(1);
    app.add_system(
        Stage::Input,
        System::new("undeclared spawner", |ctx| {
            let _ = ctx.commands.spawn((Position(1.0),));
        }),
    );
    let message = panic_message(&mut app);
    assert!(message.contains("'undeclared spawner'") && message.contains("System::spawns"), "message: {message}");
}

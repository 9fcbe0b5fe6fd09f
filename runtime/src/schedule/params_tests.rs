//! Typed system parameters: what each declares, and what a run without its value says.

use hecs::World;

use crate::{App, Columns, Frame, Res, ResMut, Stage, System};

struct Position(f32);
struct Score(u32);
#[derive(Clone, Copy)]
struct Cursor(u32);

/// Runs one frame of `app`, returning the panic message.
fn panic_message(app: &mut App) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| app.run_frame())).expect_err("must panic");
    payload.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn parameters_declare_what_the_builder_would() {
    let mut app = App::new();
    app.insert_resource(Score(0));
    app.add_system(Stage::Input, System::with_params::<ResMut<Score>>("writer", |_, mut score| score.0 += 1));
    app.add_system(Stage::Input, System::with_params::<Res<Score>>("reader", |_, _| {}));
    app.add_system(Stage::Input, System::with_params::<Option<Res<Score>>>("maybe reader", |_, _| {}));
    app.add_system(Stage::Input, System::new("builder reader", |_| {}).reads_resource::<Score>());
    let batches = app.schedule().batches(Stage::Input).expect("the stage exists");
    assert_eq!(batches, vec![vec!["writer"], vec!["reader", "maybe reader", "builder reader"]]);
    app.run_frames(2);
    assert_eq!(app.resource::<Score>().0, 2);
}

#[test]
fn a_missing_resource_panics_naming_the_system_and_the_type() {
    let mut app = App::new();
    app.add_system(Stage::Input, System::with_params::<Res<Score>>("scorer", |_, _| {}));
    let message = panic_message(&mut app);
    assert!(message.contains("'scorer'") && message.contains("Score"), "{message}");
}

#[test]
fn an_optional_resource_or_frame_value_may_be_absent() {
    let mut app = App::new();
    app.add_system(
        Stage::Input,
        System::with_params::<(Option<Res<Score>>, Option<Frame<Cursor>>)>("optional", |_, (score, cursor)| {
            assert!(score.is_none() && cursor.is_none());
        }),
    );
    app.run_frame();
}

#[test]
fn a_frame_value_that_must_be_there_names_the_system_when_it_is_not() {
    let mut app = App::new();
    app.add_system(Stage::Input, System::with_params::<Frame<Cursor>>("aim", |_, cursor| assert_eq!(cursor.0, 0)));
    let message = panic_message(&mut app);
    assert!(message.contains("'aim'") && message.contains("frame value") && message.contains("Cursor"), "{message}");
}

#[test]
fn the_whole_world_is_a_read_of_every_component() {
    let mut app = App::with_threads(2);
    app.world_mut().spawn((Position(1.0),));
    app.add_system(
        Stage::Render,
        System::with_params::<&World>("extract", |_, world| {
            assert_eq!(world.query::<&Position>().iter().map(|position| position.0).sum::<f32>(), 1.0);
        }),
    );
    app.add_system(Stage::Render, System::with_params::<Columns<&Position>>("reader", |_, _| {}));
    app.add_system(Stage::Render, System::with_params::<Res<Score>>("resource reader", |_, _| {}));
    app.add_system(Stage::Render, System::new("writer", |_| {}).writes::<Position>());
    app.insert_resource(Score(0));
    let batches = app.schedule().batches(Stage::Render).expect("the stage exists");
    assert_eq!(
        batches,
        vec![vec!["extract", "reader", "resource reader"], vec!["writer"]],
        "a component writer waits for the whole-world reader; readers share its batch"
    );
    app.run_frame();
}

#[test]
fn the_whole_world_lets_a_query_read_anything_but_write_nothing() {
    let mut app = App::new();
    app.world_mut().spawn((Position(1.0),));
    app.add_system(
        Stage::Input,
        System::with_params::<&World>("reads all", |ctx, _| {
            assert_eq!(ctx.query::<&Position>().iter().count(), 1);
            let _ = ctx.query::<&mut Position>().iter().count();
        }),
    );
    let message = panic_message(&mut app);
    assert!(message.contains("'reads all' writes component") && message.contains("Position"), "{message}");
}

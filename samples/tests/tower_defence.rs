//! The example game is deterministic: the same world on 1 and 2 threads, frame after frame.

use samples::tower_defence::{self, Game};

#[test]
fn three_hundred_frames_hash_the_same_on_one_and_two_threads() {
    let mut single = tower_defence::build(1, 20);
    let mut double = tower_defence::build(2, 20);
    for checkpoint in 0..6 {
        single.run_frames(50);
        double.run_frames(50);
        assert_eq!(
            tower_defence::world_hash(&single),
            tower_defence::world_hash(&double),
            "worlds differ after {} frames",
            (checkpoint + 1) * 50
        );
    }
    let game = *single.resource::<Game>();
    let (enemies, culled, _) = tower_defence::census(&single);
    assert!(game.kills > 0, "turrets shot something: {game:?}");
    assert!(enemies > 1000 && culled > 0, "a populated scene with culled enemies: {enemies} / {culled}");
    let hierarchy = *single.resource::<ecs::HierarchyReport>();
    assert!(hierarchy.orphans_detached > 0, "the plain despawn at frame 199 left barrels standing");
    assert_eq!(single.command_report(), runtime::CommandReport::default(), "the game misuses no command");
}

#[test]
fn a_game_spawning_and_despawning_every_frame_stays_on_the_tracked_path() {
    // Enemies spawn every frame, die, reach the base, barrels lose their turret: after the
    // first frame the Visibility stage redoes only what the change log names.
    let mut game = tower_defence::build(2, 20);
    let mut full_frames = Vec::new();
    for frame in 0..240 {
        game.run_frame();
        if !game.resource::<culling::Visibility>().stats().tracked {
            full_frames.push(frame);
        }
    }
    assert_eq!(full_frames, [0], "only the first frame is a full pass");
}

//! A program built with `profile` leaves no zone open when its last app is dropped: Tracy
//! waits for every open zone before it lets a program exit under `TRACY_NO_EXIT=1`, and the
//! zones a worker keeps open are those around its sleeps.
#![cfg(feature = "profile")]

use std::time::Duration;

use runtime::{App, Stage, System};

#[test]
fn dropping_the_last_app_closes_every_sleep_zone() {
    let _client = runtime::profiling::tracy_client::Client::start();
    let mut app = App::new();
    app.add_system(
        Stage::Visibility,
        System::new("spread", |_| runtime::jobs::parallel_for(0..256, 1, |_| std::hint::black_box(()))),
    );
    app.run_frames(10);
    let workers = app.job_system().threads() - 1;
    // Idle workers spin for a while, then sleep.
    std::thread::sleep(Duration::from_millis(50));
    if workers > 0 {
        assert!(runtime::profiling::open_sleep_zones() > 0, "idle workers sleep in a zone");
    }
    drop(app);
    assert_eq!(runtime::profiling::open_sleep_zones(), 0, "the last app closed every sleep zone");
    runtime::jobs::parallel_for(0..256, 1, |_| std::hint::black_box(()));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(runtime::profiling::open_sleep_zones(), 0, "later sleeps carry no zone");
}

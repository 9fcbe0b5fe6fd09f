//! The skirmish against the city at the same object count, in the same run: the city built as
//! its own demo builds it (`--objects N`, levels of detail, occluding buildings, its motion),
//! each frame measured the same way, and the table of both side by side with the ratio of
//! their medians stage by stage.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Instant;

use culling::occlusion::OccluderMeshes;
use culling::Visibility;
use ecs::{RenderSettings, Viewport};
use runtime::App;

use crate::city::summary::{spread, FrameRecord};
use crate::city::{self, City, CityConfig, CityLibrary, CityMeshes};

/// Objects one city block holds on average with the city's default layout (as the city's own
/// `--objects` reckons them).
const CITY_OBJECTS_PER_BLOCK: f64 = 31.0;

/// The city of about `objects` mesh entities, as `city --objects N` lays it out.
pub fn city_config(objects: usize) -> CityConfig {
    let blocks = (objects as f64 / CITY_OBJECTS_PER_BLOCK).sqrt().round().max(1.0) as u32;
    CityConfig { blocks, ..CityConfig::default() }
}

/// The city's app as its demo sets it up headless: `threads` workers, a `viewport`, the
/// buildings as occluders, every entity with its level chain, the traffic, pedestrians and
/// camera flight; with `shadow_lights` above 0, its sun and street lamps (that many casting).
/// Returns the app, its meshes and what was spawned.
pub fn city_app(objects: usize, threads: usize, viewport: Viewport, shadow_lights: u32) -> (App, CityLibrary, City) {
    let mut app = App::with_threads(threads);
    culling::install(&mut app);
    city::install_motion(&mut app);
    app.set_fixed_delta(Some(1.0 / 60.0));
    app.insert_resource(viewport);
    app.resource_mut::<RenderSettings>().visibility_tags = ecs::VisibilityTags::Marked;
    let mut occluders = OccluderMeshes::new();
    occluders.insert(CityMeshes::BUILDING, city::building_occluder());
    app.insert_resource(occluders);
    let config = city_config(objects);
    let meshes = CityLibrary::build(&config);
    let built = city::build_city(app.world_mut(), &config, Some(&meshes));
    city::attach_lods(app.world_mut(), &meshes);
    if shadow_lights > 0 {
        city::lights::spawn_lights(app.world_mut(), &config);
        app.resource_mut::<ecs::ShadowSettings>().max_shadowed_lights = shadow_lights;
    }
    (app, meshes, built)
}

/// Runs one frame of `app` and measures it: wall-clock time, each stage's and system's time
/// and the Visibility stage's counts (the fields a drawn frame's checks add are left empty).
pub fn run_measured(app: &mut App) -> FrameRecord {
    let started = Instant::now();
    app.run_frame();
    let mut record = FrameRecord {
        frame: app.last_frame_index().expect("a frame was run"),
        frame_ms: started.elapsed().as_secs_f64() * 1e3,
        ..FrameRecord::default()
    };
    for (stage, system, seconds) in app.schedule().system_seconds() {
        record.system_ms.insert(format!("{stage}/{system}"), seconds * 1e3);
    }
    for (stage, seconds) in app.schedule().stage_seconds() {
        record.stage_ms.insert(stage.to_string(), seconds * 1e3);
    }
    let stats = *app.resource::<Visibility>().stats();
    record.objects = stats.objects;
    record.frustum_rejected = stats.frustum_rejected;
    record.occluded = stats.occluded;
    record.small_or_far = stats.size_rejected + stats.distance_rejected;
    record.visible = stats.visible;
    record.tracked = stats.tracked;
    record
}

/// A row's median and 95th percentile, or `None` when no frame has it.
fn median_p95(values: &[f64]) -> Option<(f64, f64)> {
    (!values.is_empty()).then(|| {
        let (median, p95, _) = spread(values);
        (median, p95)
    })
}

/// Systems shown in the table: those taking at least this many milliseconds (median) in
/// either scene.
const SYSTEM_FLOOR_MS: f64 = 0.05;

/// The side-by-side table: for the frame, every stage of either scene and the systems that
/// cost at least 0.05 ms in either, the skirmish's median and p95, the city's, and the ratio
/// of the medians (skirmish over city); then the objects and visible counts.
pub fn side_by_side(game: &[FrameRecord], city: &[FrameRecord]) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<48} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "skirmish vs city (cpu ms)", "game med", "game p95", "city med", "city p95", "ratio"
    );
    let mut row = |name: &str, of: &dyn Fn(&FrameRecord) -> Option<f64>, decimals: usize| {
        let values = |records: &[FrameRecord]| records.iter().filter_map(of).collect::<Vec<f64>>();
        let (game_row, city_row) = (median_p95(&values(game)), median_p95(&values(city)));
        let cell = |value: Option<(f64, f64)>, second: bool| {
            value.map_or_else(
                || String::from("-"),
                |(median, p95)| format!("{:.decimals$}", if second { p95 } else { median }),
            )
        };
        let ratio = match (game_row, city_row) {
            (Some((game, _)), Some((city, _))) if city > 0.0 => format!("{:.2}x", game / city),
            _ => String::from("-"),
        };
        let _ = writeln!(
            text,
            "{name:<48} {:>10} {:>10} {:>10} {:>10} {ratio:>8}",
            cell(game_row, false),
            cell(game_row, true),
            cell(city_row, false),
            cell(city_row, true)
        );
    };
    row("frame", &|record| Some(record.frame_ms), 3);
    let mut stages: Vec<String> = Vec::new();
    for record in game.iter().take(1).chain(city.iter().take(1)) {
        for stage in record.stage_ms.keys() {
            if !stages.contains(stage) {
                stages.push(stage.clone());
            }
        }
    }
    for stage in &stages {
        row(&format!("stage {stage}"), &|record| record.stage_ms.get(stage).copied(), 3);
    }
    let systems: BTreeSet<String> = game
        .iter()
        .chain(city)
        .flat_map(|record| record.system_ms.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|system| {
            let median = |records: &[FrameRecord]| {
                let values: Vec<f64> =
                    records.iter().filter_map(|record| record.system_ms.get(system).copied()).collect();
                median_p95(&values).map_or(0.0, |(median, _)| median)
            };
            median(game).max(median(city)) >= SYSTEM_FLOOR_MS
        })
        .collect();
    for system in &systems {
        row(&format!("system {system}"), &|record| record.system_ms.get(system).copied(), 3);
    }
    row("objects", &|record| Some(record.objects as f64), 0);
    row("visible", &|record| Some(record.visible as f64), 0);
    text
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn record(frame_ms: f64, stages: &[(&str, f64)], systems: &[(&str, f64)]) -> FrameRecord {
        FrameRecord {
            frame_ms,
            stage_ms: stages.iter().map(|(name, ms)| (name.to_string(), *ms)).collect::<BTreeMap<_, _>>(),
            system_ms: systems.iter().map(|(name, ms)| (name.to_string(), *ms)).collect::<BTreeMap<_, _>>(),
            objects: 10,
            ..FrameRecord::default()
        }
    }

    #[test]
    fn the_table_pairs_every_stage_with_its_ratio() {
        let game: Vec<FrameRecord> = (1..=3)
            .map(|frame| {
                record(
                    4.0 * frame as f64,
                    &[("Skirmish", 1.0), ("Transform", 2.0)],
                    &[("Transform/ecs::hierarchy", 2.0)],
                )
            })
            .collect();
        let city: Vec<FrameRecord> =
            (1..=3).map(|frame| record(frame as f64, &[("Transform", 0.5)], &[("Input/traffic", 0.01)])).collect();
        let table = side_by_side(&game, &city);
        let line =
            |name: &str| table.lines().find(|line| line.starts_with(name)).unwrap_or_else(|| panic!("{name}: {table}"));
        assert_eq!(
            line("frame").split_whitespace().collect::<Vec<_>>(),
            ["frame", "8.000", "12.000", "2.000", "3.000", "4.00x"]
        );
        assert!(line("stage Transform").ends_with("4.00x"), "{table}");
        assert!(line("stage Skirmish").contains(" - "), "the city has no such stage: {table}");
        assert!(line("system Transform/ecs::hierarchy").ends_with("-"), "{table}");
        assert!(!table.contains("Input/traffic"), "below the floor in both: {table}");
    }

    #[test]
    fn the_city_config_follows_the_object_count() {
        assert_eq!(city_config(31_000).blocks, 32);
        assert_eq!(city_config(10).blocks, 1);
    }
}

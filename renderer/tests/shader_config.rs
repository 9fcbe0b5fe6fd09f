//! The constants the engine's shaders share with the host are written once, in
//! `shaders/glsl/engine/config.h`; this test reads that header and checks every definition
//! against its Rust twin, and the counter layouts against the decoders that read them. A
//! `#define` that none of these checks names fails [`every_define_is_checked`], so a new
//! constant cannot go unchecked.

use std::collections::{HashMap, HashSet};

use culling::cluster::{ClusterStats, ClusterVerdict, CLUSTER_STAT_WORDS};
use renderer::{
    GpuCullStats, CLUSTER_GROUP, CLUSTER_MAX_GROUPS, CULL_CONE, CULL_FRUSTUM, CULL_GROUP, CULL_OCCLUSION,
    CULL_STAT_WORDS, CULL_TWO_PHASE, HIZ_GROUP, PAIR_FIRST, PAIR_WHOLE, SCATTER_GROUP,
};

/// Every `#define NAME VALUE` of the header with a number for a value (decimal or hex, an
/// optional `u`).
fn defines(header: &str) -> HashMap<String, u64> {
    let mut values = HashMap::new();
    for line in header.lines() {
        let mut words = line.split_whitespace();
        let (Some("#define"), Some(name), Some(value)) = (words.next(), words.next(), words.next()) else { continue };
        let value = value.trim_end_matches('u');
        let parsed = match value.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => value.parse(),
        };
        if let Ok(parsed) = parsed {
            assert!(values.insert(name.to_owned(), parsed).is_none(), "{name} is defined twice in config.h");
        }
    }
    values
}

/// Every `#define` of the header, whatever its value (none, a number, an expression), with
/// its line number.
fn define_names(header: &str) -> Vec<(usize, String)> {
    header
        .lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let mut words = line.split_whitespace();
            match (words.next(), words.next()) {
                (Some("#define"), Some(name)) => {
                    // A function-like macro's name ends at its parenthesis.
                    Some((index + 1, name.split('(').next().unwrap_or(name).to_owned()))
                }
                _ => None,
            }
        })
        .collect()
}

/// Macros of the header that are not constants shared with the host, so have no twin.
const NOT_CONSTANTS: [&str; 1] = [
    // The include guard.
    "CONFIG_H",
];

/// The constants with a Rust twin of the same value.
fn twins() -> [(&'static str, u64); 26] {
    [
        ("MAX_LOCAL_LIGHTS", culling::shadow::MAX_LOCAL_LIGHTS as u64),
        ("MAX_SHADOW_VIEWS", renderer::MAX_SHADOW_VIEWS as u64),
        ("MAX_CASCADES", ecs::MAX_CASCADES as u64),
        ("CULL_GROUP", CULL_GROUP.into()),
        ("CULL_FRUSTUM", CULL_FRUSTUM.into()),
        ("CULL_OCCLUSION", CULL_OCCLUSION.into()),
        ("CULL_CONE", CULL_CONE.into()),
        ("CULL_TWO_PHASE", CULL_TWO_PHASE.into()),
        ("CULL_LOD", renderer::CULL_LOD.into()),
        ("CULL_LOD_EVERY_OBJECT", renderer::CULL_LOD_EVERY_OBJECT.into()),
        ("CULL_LOD_DISTANCE", renderer::CULL_LOD_DISTANCE.into()),
        ("MAX_GPU_LOD_LEVELS", renderer::MAX_GPU_LOD_LEVELS.into()),
        ("LOD_STAT_LEVELS", renderer::LOD_STAT_LEVELS as u64),
        ("STAT_COUNT", CULL_STAT_WORDS as u64),
        ("CLUSTER_GROUP", CLUSTER_GROUP.into()),
        ("CLUSTER_MAX_GROUPS", CLUSTER_MAX_GROUPS.into()),
        ("PAIR_WHOLE", PAIR_WHOLE.into()),
        ("PAIR_MESHLET_MASK", PAIR_WHOLE.into()),
        ("PAIR_FIRST", PAIR_FIRST.into()),
        ("BUILT_CHAIN", renderer::BUILT_CHAIN.into()),
        ("BUILT_NONE", renderer::BUILT_NONE.into()),
        ("SURVIVOR_LEVEL_SHIFT", renderer::SURVIVOR_LEVEL_SHIFT.into()),
        ("CSTAT_COUNT", CLUSTER_STAT_WORDS as u64),
        ("HIZ_GROUP", HIZ_GROUP.into()),
        ("SCATTER_GROUP", SCATTER_GROUP.into()),
        ("BLENDED_LEVELS_GROUP", renderer::BLENDED_LEVELS_GROUP.into()),
    ]
}

/// The constants with a Rust twin of the same `f32` value (the occlusion margins).
const FLOAT_TWINS: [(&str, f32); 2] =
    [("HIZ_DEPTH_MARGIN", renderer::DEPTH_MARGIN), ("HIZ_FOOTPRINT_MARGIN", renderer::FOOTPRINT_MARGIN)];

/// The value of `#define NAME VALUE` in `header`, read as an `f32`.
fn float_define(header: &str, name: &str) -> Option<f32> {
    header.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("#define"), Some(defined), Some(value)) if defined == name => value.parse().ok(),
            _ => None,
        }
    })
}

/// The meshlet verdicts, twins of [`ClusterVerdict`]'s discriminants.
const VERDICTS: [(&str, ClusterVerdict); 6] = [
    ("VERDICT_UNTESTED", ClusterVerdict::Untested),
    ("VERDICT_VISIBLE", ClusterVerdict::Visible),
    ("VERDICT_FRUSTUM", ClusterVerdict::Frustum),
    ("VERDICT_BACK_FACING", ClusterVerdict::BackFacing),
    ("VERDICT_OCCLUDED", ClusterVerdict::Occluded),
    ("VERDICT_CONSERVATIVE", ClusterVerdict::Conservative),
];

/// The object cull's counter slots, which [`GpuCullStats::from_counters`] decodes.
const CULL_COUNTERS: [&str; 9] = [
    "STAT_OBJECTS",
    "STAT_FRUSTUM_REJECTED",
    "STAT_EARLY_DRAWN",
    "STAT_OCCLUSION_REJECTED",
    "STAT_LATE_DRAWN",
    "STAT_TRIANGLES",
    "STAT_EARLY_COMMANDS",
    "STAT_LATE_COMMANDS",
    "STAT_LOD_LEVEL0",
];

/// The meshlet cull's counter slots, which [`ClusterStats::from_counters`] decodes (with
/// `CSTAT_TESTED`, checked apart: it is a difference of two counters).
const CLUSTER_COUNTERS: [&str; 10] = [
    "CSTAT_MESHLETS",
    "CSTAT_FRUSTUM",
    "CSTAT_CONE",
    "CSTAT_OCCLUSION",
    "CSTAT_CONSERVATIVE",
    "CSTAT_EARLY_DRAWN",
    "CSTAT_LATE_DRAWN",
    "CSTAT_TRIANGLES",
    "CSTAT_OBJECT_TRIANGLES",
    "CSTAT_WHOLE_OBJECTS",
];

#[test]
fn every_shared_constant_equals_its_rust_twin() {
    let values = defines(shaders::ENGINE_CONFIG_H);
    for (name, rust) in twins() {
        assert_eq!(values.get(name).copied(), Some(rust), "config.h's {name} against the host's");
    }
    for (name, verdict) in VERDICTS {
        assert_eq!(values.get(name).copied(), Some(verdict as u64), "config.h's {name}");
    }
    for (name, rust) in FLOAT_TWINS {
        assert_eq!(float_define(shaders::ENGINE_CONFIG_H, name), Some(rust), "config.h's {name} against the host's");
    }
}

#[test]
fn every_define_is_checked() {
    let mut checked: HashSet<&str> = twins().iter().map(|(name, _)| *name).collect();
    checked.extend(VERDICTS.iter().map(|(name, _)| *name));
    checked.extend(FLOAT_TWINS.iter().map(|(name, _)| *name));
    checked.extend(CULL_COUNTERS);
    checked.extend(CLUSTER_COUNTERS);
    checked.insert("CSTAT_TESTED");
    let unchecked: Vec<String> = define_names(shaders::ENGINE_CONFIG_H)
        .into_iter()
        .filter(|(_, name)| !checked.contains(name.as_str()) && !NOT_CONSTANTS.contains(&name.as_str()))
        .map(|(line, name)| format!("config.h:{line}: {name}"))
        .collect();
    assert!(
        unchecked.is_empty(),
        "these #defines of shaders/glsl/engine/config.h have no Rust twin in this test (add one to `twins`, \
         a counter list or, for a macro that is no constant, NOT_CONSTANTS):\n{}",
        unchecked.join("\n")
    );
    let stale: Vec<&&str> = checked.iter().filter(|name| !shaders::ENGINE_CONFIG_H.contains(**name)).collect();
    assert!(stale.is_empty(), "this test checks names config.h no longer defines: {stale:?}");
}

/// Counter words holding `index + 1` at each index named by `names` (the rest zero).
fn counters(values: &HashMap<String, u64>, names: &[&str], words: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; words * 4];
    for name in names {
        let index = values[*name] as usize;
        assert!(index < words, "{name} = {index} is past the {words} counter words");
        bytes[index * 4..index * 4 + 4].copy_from_slice(&(index as u32 + 1).to_le_bytes());
    }
    bytes
}

#[test]
fn the_counter_layouts_are_the_decoders_layouts() {
    let values = defines(shaders::ENGINE_CONFIG_H);
    let bytes = counters(&values, &CULL_COUNTERS, CULL_STAT_WORDS);
    let stats = GpuCullStats::from_counters(&bytes, &render_graph::GraphStats::default());
    let at = |name: &str| values[name] as u32 + 1;
    assert_eq!(stats.objects, at("STAT_OBJECTS"));
    assert_eq!(stats.frustum_rejected, at("STAT_FRUSTUM_REJECTED"));
    assert_eq!(stats.early_drawn, at("STAT_EARLY_DRAWN"));
    assert_eq!(stats.occlusion_rejected, at("STAT_OCCLUSION_REJECTED"));
    assert_eq!(stats.late_drawn, at("STAT_LATE_DRAWN"));
    assert_eq!(stats.triangles, at("STAT_TRIANGLES"));
    assert_eq!(stats.early_commands, at("STAT_EARLY_COMMANDS"));
    assert_eq!(stats.late_commands, at("STAT_LATE_COMMANDS"));
    assert_eq!(stats.lod_levels[0], at("STAT_LOD_LEVEL0"));
    assert_eq!(
        values["STAT_LOD_LEVEL0"] + values["LOD_STAT_LEVELS"],
        values["STAT_COUNT"],
        "the histogram's levels follow its first word and end the counters"
    );

    let bytes = counters(&values, &CLUSTER_COUNTERS, CLUSTER_STAT_WORDS);
    let stats = ClusterStats::from_counters(&bytes);
    assert_eq!(stats.meshlets, at("CSTAT_MESHLETS"));
    assert_eq!(stats.object_culled, at("CSTAT_MESHLETS"), "TESTED is zero here: every meshlet's object was culled");
    assert_eq!(stats.frustum_rejected, at("CSTAT_FRUSTUM"));
    assert_eq!(stats.cone_rejected, at("CSTAT_CONE"));
    assert_eq!(stats.occlusion_rejected, at("CSTAT_OCCLUSION"));
    assert_eq!(stats.conservative, at("CSTAT_CONSERVATIVE"));
    assert_eq!(stats.early_drawn, at("CSTAT_EARLY_DRAWN"));
    assert_eq!(stats.late_drawn, at("CSTAT_LATE_DRAWN"));
    assert_eq!(stats.triangles, at("CSTAT_TRIANGLES"));
    assert_eq!(stats.object_triangles, at("CSTAT_OBJECT_TRIANGLES"));
    assert_eq!(stats.whole_objects, at("CSTAT_WHOLE_OBJECTS"));
    let mut tested = vec![0u8; CLUSTER_STAT_WORDS * 4];
    let (meshlets, kept) = (values["CSTAT_MESHLETS"] as usize, values["CSTAT_TESTED"] as usize);
    tested[meshlets * 4..meshlets * 4 + 4].copy_from_slice(&10u32.to_le_bytes());
    tested[kept * 4..kept * 4 + 4].copy_from_slice(&4u32.to_le_bytes());
    let stats = ClusterStats::from_counters(&tested);
    assert_eq!(
        (stats.object_culled, stats.after_objects()),
        (6, 4),
        "MESHLETS minus TESTED were culled with their objects"
    );
}

#[test]
fn no_engine_shader_writes_a_shared_constant_as_a_number() {
    // Workgroup sizes are the constants most easily written twice.
    for shader in shaders::ALL.iter().filter(|shader| shader.group == Some(shaders::Group::Engine)) {
        let source = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shaders").join(shader.source_path),
        )
        .expect("the source is there");
        for line in source.lines().filter(|line| line.contains("local_size_x")) {
            assert!(
                !line.chars().any(|character| character.is_ascii_digit()),
                "{}: a workgroup size is config.h's, not a number: {line}",
                shader.source_path
            );
        }
    }
}

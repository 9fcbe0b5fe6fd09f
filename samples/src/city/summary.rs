//! What the demo measured: one [`FrameRecord`] per frame, written as `stats.json` in
//! `--out`, and the end-of-run table of medians, 95th percentiles and maxima.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use renderer::truth::Truth;

use super::memory::MemoryReport;
use crate::mesh_render::MeshFrame;

/// One frame's measurements (an element of `stats.json`'s `frames`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FrameRecord {
    /// The frame's index ([`runtime::FrameTime::frame_index`]: 0 for the first frame run).
    pub frame: u64,
    /// Wall-clock milliseconds of the whole frame on the CPU.
    pub frame_ms: f64,
    /// CPU milliseconds of each stage, by stage name.
    pub stage_ms: BTreeMap<String, f64>,
    /// CPU milliseconds of each system, by `stage/system` (systems of one batch overlap).
    pub system_ms: BTreeMap<String, f64>,
    /// `--stream`: milliseconds of the streaming work before the frame (spawning ready
    /// districts, removing far ones), part of [`FrameRecord::frame_ms`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_ms: Option<f64>,
    /// Objects the Visibility stage saw.
    pub objects: usize,
    /// Objects outside the view frustum.
    pub frustum_rejected: usize,
    /// Objects hidden behind occluders.
    pub occluded: usize,
    /// Objects below the screen-size threshold or beyond the distance limit.
    pub small_or_far: usize,
    /// Objects culling submitted (visible).
    pub visible: usize,
    /// The Visibility stage redid only what the change log named
    /// (`culling::VisibilityStats::tracked`), not a full pass over every object.
    pub tracked: bool,
    /// The Visibility stage culled every object, or every word of 64
    /// (`culling::VisibilityStats::objects_culled`; false on frames answered on request that
    /// only refreshed what changed).
    pub objects_culled: bool,
    /// Objects the GPU drew (only on drawn frames).
    pub drawn: Option<usize>,
    /// Triangles the GPU drew (only on drawn frames).
    pub triangles: Option<u64>,
    /// Draw commands the camera's lists issued that draw something (only on drawn frames):
    /// the host's list on the CPU backend, the GPU's early and late lists (as the cull
    /// counted them, for the frame its statistics come from) on the GPU backend.
    pub draw_commands: Option<u64>,
    /// Objects drawn at each level of detail the GPU cull chose (level 3 counting every
    /// coarser one; objects whose level the CPU chose at 0), from its statistics (drawn
    /// frames with GPU culling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_lod_levels: Option<[u32; renderer::LOD_STAT_LEVELS]>,
    /// Visible objects at each level of detail the Visibility stage chose (level 3 counting
    /// every coarser one), on drawn frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_lod_levels: Option<[u32; renderer::LOD_STAT_LEVELS]>,
    /// Bytes uploaded to the GPU (only on drawn frames).
    pub uploaded_bytes: Option<u64>,
    /// CPU milliseconds of the Render stage's extract (`RenderReport::extract_seconds`) and
    /// of recording the graph's passes (the sum of their `cpu_record_ms`): the stage's CPU
    /// work apart from submitting and waiting for the device (drawn frames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub render_cpu_ms: Option<(f64, f64)>,
    /// GPU milliseconds of each render-graph pass, by its `GraphStats` name (drawn frames
    /// on devices with timestamps); a split-screen frame culled on the GPU adds each window
    /// view's share of the cull passes, `<pass> view N` (when the views are dispatched one
    /// by one).
    pub gpu_ms: BTreeMap<String, f64>,
    /// A split-screen frame culled on the GPU: the triangles the GPU drew for each window
    /// view (empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub view_triangles: Vec<u64>,
    /// Pixels that differ between the culled image and the image drawn with culling off.
    pub differing_pixels: Option<usize>,
    /// `--truth`: objects owning at least one pixel with culling off.
    pub objects_with_pixels: Option<usize>,
    /// `--truth`: objects with pixels that culling did not submit (must be 0).
    pub false_hidden: Option<usize>,
    /// `--truth`: objects with pixels / objects submitted.
    pub efficiency: Option<f64>,
    /// Slots where the GPU scene differs from a from-scratch upload of the world (the stress
    /// scene's `--truth`; must be 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_mismatches: Option<usize>,
}

impl FrameRecord {
    /// Fills a drawn frame's figures from its check: what was drawn and uploaded, how the
    /// image compares with the frame drawn with culling off, the GPU's pass times, and the
    /// truth when it was asked for.
    pub fn record_check(&mut self, check: &MeshFrame, truth: Option<&Truth>) {
        if let Some(truth) = truth {
            self.objects_with_pixels = Some(truth.objects_with_pixels);
            self.false_hidden = Some(truth.false_hidden);
            self.efficiency = Some(truth.efficiency);
        }
        self.drawn = Some(check.drawn);
        self.triangles = Some(check.triangles);
        self.uploaded_bytes = Some(check.uploaded_bytes);
        self.differing_pixels = Some(check.differing_pixels);
        self.gpu_ms = check.gpu_ms.iter().filter_map(|(pass, ms)| Some((pass.clone(), (*ms)?))).collect();
    }

    /// Fills the draw commands of a drawn frame from its report (see
    /// [`FrameRecord::draw_commands`]), and a split-screen frame's per-view triangles and
    /// cull times (after `gpu_ms` is filled).
    pub fn record_commands(&mut self, report: &renderer::RenderReport) {
        self.draw_commands = Some(match &report.gpu {
            Some(gpu) if gpu.culled_on_device => u64::from(gpu.early_commands) + u64::from(gpu.late_commands),
            _ => u64::from(report.host_draw_commands),
        });
        self.gpu_lod_levels = report.gpu.filter(|gpu| gpu.culled_on_device).map(|gpu| gpu.lod_levels);
        let record_ms = report.passes.iter().map(|pass| pass.cpu_record_ms).sum();
        self.render_cpu_ms = Some((report.extract_seconds * 1e3, record_ms));
        self.view_triangles = report.view_gpu.iter().map(|view| u64::from(view.triangles)).collect();
        let phases = [renderer::GpuCullPass::EARLY_NAME, renderer::GpuCullPass::LATE_NAME];
        for (index, view) in report.view_gpu.iter().enumerate() {
            for (pass, ms) in phases.iter().zip([view.gpu_ms[0], view.gpu_ms[2]]) {
                if let Some(ms) = ms {
                    self.gpu_ms.insert(format!("{pass} view {index}"), ms);
                }
            }
        }
    }

    /// Fills a frame drawn but not checked (`--checks last`) from its report alone: the
    /// draw commands and the Render stage's CPU times ([`FrameRecord::record_commands`]),
    /// what the GPU cull drew and the GPU times of the graph's passes.
    pub fn record_unchecked(&mut self, report: &renderer::RenderReport) {
        if let Some(gpu) = report.gpu.filter(|gpu| gpu.culled_on_device) {
            self.drawn = Some((gpu.early_drawn + gpu.late_drawn) as usize);
            self.triangles = Some(u64::from(gpu.triangles));
        }
        self.gpu_ms = report.passes.iter().filter_map(|pass| Some((pass.name.clone(), pass.gpu_ms?))).collect();
        self.record_commands(report);
    }
}

#[derive(Serialize)]
struct StatsFile<'a> {
    frames: &'a [FrameRecord],
    memory: &'a MemoryReport,
}

/// Writes `records` and `memory` as `{"frames":[...],"memory":{...}}` to `path` (memory in
/// bytes, `null` where unavailable).
pub fn write_stats_json(path: &Path, records: &[FrameRecord], memory: &MemoryReport) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer_pretty(file, &StatsFile { frames: records, memory }).map_err(std::io::Error::other)
}

/// Median, 95th percentile and maximum of `values` (zeros when empty).
pub fn spread(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |fraction: f64| sorted[((sorted.len() - 1) as f64 * fraction).round() as usize];
    (at(0.5), at(0.95), sorted[sorted.len() - 1])
}

/// The end-of-run table: CPU ms per stage and for the frame, GPU ms per pass (median, p95,
/// max), then the culling counts and what the GPU drew (median, p95, max per frame).
pub fn table(records: &[FrameRecord]) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{:<28} {:>10} {:>10} {:>10}", "summary", "median", "p95", "max");
    let mut row = |name: &str, values: Vec<f64>, decimals: usize| {
        if values.is_empty() {
            return;
        }
        let (median, p95, max) = spread(&values);
        let _ = writeln!(text, "{name:<28} {median:>10.decimals$} {p95:>10.decimals$} {max:>10.decimals$}");
    };
    row("cpu ms frame", records.iter().map(|record| record.frame_ms).collect(), 3);
    row("cpu ms streaming", records.iter().filter_map(|record| record.stream_ms).collect(), 3);
    let stages: Vec<&String> = records.first().map(|record| record.stage_ms.keys().collect()).unwrap_or_default();
    for stage in stages {
        row(
            &format!("cpu ms stage {stage}"),
            records.iter().filter_map(|record| record.stage_ms.get(stage).copied()).collect(),
            3,
        );
    }
    let systems: Vec<&String> = records.first().map(|record| record.system_ms.keys().collect()).unwrap_or_default();
    for system in systems {
        row(
            &format!("cpu ms system {system}"),
            records.iter().filter_map(|record| record.system_ms.get(system).copied()).collect(),
            3,
        );
    }
    let mut passes: Vec<&String> = records.iter().flat_map(|record| record.gpu_ms.keys()).collect();
    passes.sort();
    passes.dedup();
    for pass in passes {
        row(
            &format!("gpu ms pass {pass}"),
            records.iter().filter_map(|record| record.gpu_ms.get(pass).copied()).collect(),
            3,
        );
    }
    let views = records.iter().map(|record| record.view_triangles.len()).max().unwrap_or(0);
    for view in 0..views {
        let triangles = records.iter().filter_map(|record| Some(*record.view_triangles.get(view)? as f64));
        row(&format!("triangles view {view}"), triangles.collect(), 0);
    }
    let count = |of: fn(&FrameRecord) -> Option<f64>| records.iter().filter_map(of).collect::<Vec<f64>>();
    row("cpu ms render extract", count(|record| record.render_cpu_ms.map(|(extract, _)| extract)), 3);
    row("cpu ms render record", count(|record| record.render_cpu_ms.map(|(_, record)| record)), 3);
    row("objects", count(|record| Some(record.objects as f64)), 0);
    row("frustum rejects", count(|record| Some(record.frustum_rejected as f64)), 0);
    row("occluded", count(|record| Some(record.occluded as f64)), 0);
    row("small or far", count(|record| Some(record.small_or_far as f64)), 0);
    row("visible (submitted)", count(|record| Some(record.visible as f64)), 0);
    row("drawn", count(|record| record.drawn.map(|drawn| drawn as f64)), 0);
    row("triangles", count(|record| record.triangles.map(|triangles| triangles as f64)), 0);
    row("draw commands", count(|record| record.draw_commands.map(|commands| commands as f64)), 0);
    for level in 0..renderer::LOD_STAT_LEVELS {
        let name = format!("cpu lod level {level}{}", if level + 1 == renderer::LOD_STAT_LEVELS { "+" } else { "" });
        let of = |levels: Option<[u32; renderer::LOD_STAT_LEVELS]>| levels.map(|levels| f64::from(levels[level]));
        row(&name, records.iter().filter_map(|record| of(record.cpu_lod_levels)).collect(), 0);
        let name = format!("gpu lod level {level}{}", if level + 1 == renderer::LOD_STAT_LEVELS { "+" } else { "" });
        row(&name, records.iter().filter_map(|record| of(record.gpu_lod_levels)).collect(), 0);
    }
    row("bytes uploaded", count(|record| record.uploaded_bytes.map(|bytes| bytes as f64)), 0);
    row("objects with pixels", count(|record| record.objects_with_pixels.map(|objects| objects as f64)), 0);
    row("false_hidden", count(|record| record.false_hidden.map(|objects| objects as f64)), 0);
    row("efficiency", count(|record| record.efficiency), 3);
    row("scene mismatches", count(|record| record.scene_mismatches.map(|slots| slots as f64)), 0);
    if !records.is_empty() {
        let tracked = records.iter().filter(|record| record.tracked).count();
        text.push_str(&format!("tracked frames: {tracked} of {} (the rest were full passes)\n", records.len()));
        let culled = records.iter().filter(|record| record.objects_culled).count();
        text.push_str(&format!("frames that culled every object: {culled} of {}\n", records.len()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_median_p95_and_max() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(spread(&values), (51.0, 95.0, 100.0));
        assert_eq!(spread(&[3.0]), (3.0, 3.0, 3.0));
        assert_eq!(spread(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn the_table_lists_stages_passes_and_counts_and_the_json_has_every_frame() {
        let records: Vec<FrameRecord> = (1..=3)
            .map(|frame| FrameRecord {
                frame,
                frame_ms: frame as f64,
                stage_ms: BTreeMap::from([(String::from("Visibility"), 0.5 * frame as f64)]),
                system_ms: BTreeMap::from([(String::from("Visibility/cull"), 0.25 * frame as f64)]),
                objects: 10,
                occluded: frame as usize,
                drawn: (frame == 3).then_some(4),
                gpu_ms: BTreeMap::from([(String::from("geometry"), 0.25)]),
                ..FrameRecord::default()
            })
            .collect();
        let table = table(&records);
        assert!(table.contains("cpu ms stage Visibility"), "{table}");
        assert!(table.contains("gpu ms pass geometry"), "{table}");
        let system = table.lines().find(|line| line.starts_with("cpu ms system Visibility/cull")).expect("{table}");
        assert_eq!(system.split_whitespace().skip(4).collect::<Vec<_>>(), ["0.500", "0.750", "0.750"], "{table}");
        let occluded = table.lines().find(|line| line.starts_with("occluded")).expect("an occluded row");
        assert_eq!(occluded.split_whitespace().skip(1).collect::<Vec<_>>(), ["2", "3", "3"], "{table}");
        assert!(table.lines().any(|line| line.starts_with("drawn ")), "{table}");
        assert!(!table.contains("triangles"), "no frame drew, no row: {table}");

        let path = std::env::temp_dir().join(format!("stats-{}.json", std::process::id()));
        let memory = MemoryReport {
            after_setup_bytes: Some(1 << 20),
            frame_100_bytes: None,
            before_drawing: Some((1, Some(1 << 20))),
            last_frame: 3,
            last_frame_bytes: Some(2 << 20),
            peak_bytes: Some(3 << 20),
        };
        write_stats_json(&path, &records, &memory).expect("written");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let _ = std::fs::remove_file(&path);
        assert_eq!(json["frames"].as_array().map(Vec::len), Some(3));
        assert_eq!(json["frames"][2]["drawn"], 4);
        assert_eq!(json["frames"][0]["stage_ms"]["Visibility"], 0.5);
        assert_eq!(json["memory"]["peak_bytes"], 3 << 20);
        assert!(json["memory"]["frame_100_bytes"].is_null(), "not reached: null");
        assert_eq!(json["memory"]["before_drawing"], serde_json::json!([1, 1 << 20]));
    }
}

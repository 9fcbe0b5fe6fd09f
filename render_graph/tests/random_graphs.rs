//! Property test: 50 random graphs of probe passes (random reads and writes of buffers and
//! images, declared in random order) compile, run for two frames on a validated device, and
//! every reader reports exactly what the writer declared last before it wrote (compared by
//! checksum).

mod common;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;
use common::{checksum, filled, import_report, updated, ImageRead, ProbeKind, ProbeOp, ProbePass, ProbePipelines};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{GpuDevice, RenderGraph};

const FRAMES: u64 = 2;

/// SplitMix64: a small deterministic generator driven by the proptest seed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut value = self.0;
        value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        value ^ (value >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// A random graph: per pass (in logical rank order) its operations and the values each
/// report slot must hold; `declaration` lists ranks in the order they are added.
struct RandomGraph {
    ops: Vec<Vec<ProbeOp>>,
    expected: Vec<Vec<Vec<u32>>>,
    runs: Vec<bool>,
    declaration: Vec<usize>,
}

fn generate(seed: u64) -> RandomGraph {
    let mut random = SplitMix(seed);
    let pass_count = 3 + random.below(6);
    let resource_count = 2 + random.below(7);
    let mut declaration: Vec<usize> = (0..pass_count).collect();
    for index in (1..pass_count).rev() {
        declaration.swap(index, random.below(index + 1));
    }
    let mut declared_at = vec![0; pass_count];
    for (position, &rank) in declaration.iter().enumerate() {
        declared_at[rank] = position;
    }
    let mut ops = vec![Vec::new(); pass_count];
    let mut expected = vec![Vec::new(); pass_count];
    let mut runs = vec![false; pass_count];
    for resource in 0..resource_count {
        let name = format!("resource {resource}");
        let kind = if random.below(2) == 0 { ProbeKind::Buffer } else { ProbeKind::Image };
        let first = random.below(pass_count - 1);
        let first_seed = ((resource as u32 + 1) << 16) | (first as u32) << 4 | 1;
        ops[first].push(ProbeOp::Fill { resource: name.clone(), kind, seed: first_seed });
        let fill_value = filled(first_seed);
        let mut second_writer = None;
        if random.below(10) < 4 && first + 1 < pass_count - 1 {
            let second = first + 1 + random.below(pass_count - first - 2);
            // Writers run in declaration order; an update declared before the fill would form
            // a cycle through the readers, so it is only added in the consistent case.
            if declared_at[first] < declared_at[second] {
                let second_seed = first_seed ^ 0x00ab_cd00;
                ops[second].push(ProbeOp::Update { resource: name.clone(), kind, seed: second_seed });
                expected[second].push(fill_value.clone());
                runs[second] = true;
                second_writer = Some((second, updated(&fill_value, second_seed)));
            }
        }
        let mut writers = vec![first];
        writers.extend(second_writer.as_ref().map(|&(second, _)| second));
        let mut read = writers.len() > 1;
        for reader in first + 1..pass_count {
            // A read sees the version written last before it in declaration order. Readers
            // are placed where that agrees with rank order (anything else may form a cycle
            // through other resources): before the second writer, or after it.
            let value = match &second_writer {
                None => &fill_value,
                // Declared before the fill too, it still reads the first version.
                Some((second, _)) if reader < *second && declared_at[reader] < declared_at[*second] => &fill_value,
                Some((second, value)) if reader > *second && declared_at[reader] > declared_at[*second] => value,
                Some(_) => continue,
            };
            if random.below(2) == 0 {
                let image_read = if random.below(2) == 0 { ImageRead::Storage } else { ImageRead::Sampled };
                ops[reader].push(ProbeOp::Read { resource: name.clone(), kind, image_read });
                expected[reader].push(value.clone());
                runs[reader] = true;
                read = true;
            }
        }
        if read {
            for writer in writers {
                runs[writer] = true;
            }
        }
    }
    RandomGraph { ops, expected, runs, declaration }
}

fn check(seed: u64, device: &Arc<GpuDevice>, pipelines: &Arc<ProbePipelines>) {
    let random = generate(seed);
    let extent = vk::Extent2D { width: 16, height: 16 };
    let mut graph = RenderGraph::new(Arc::clone(device), extent).expect("graph creates");
    let mut reports = HashMap::new();
    let mut executed = HashMap::new();
    for &rank in &random.declaration {
        let pass = ProbePass::new(&format!("pass {rank}"), random.ops[rank].clone(), pipelines);
        if let Some(report) = import_report(device, &mut graph, &pass) {
            reports.insert(rank, report);
        }
        executed.insert(rank, Arc::clone(&pass.executed));
        graph.add_typed_pass(pass);
    }
    for _ in 0..FRAMES {
        graph.execute_frame().unwrap_or_else(|error| panic!("seed {seed}: {error}"));
    }
    graph.wait_idle().expect("frames finish");
    for (rank, expected_slots) in random.expected.iter().enumerate() {
        let runs = executed[&rank].load(Ordering::Relaxed);
        assert_eq!(runs as u64, if random.runs[rank] { FRAMES } else { 0 }, "seed {seed}: pass {rank} run count");
        if expected_slots.is_empty() {
            continue;
        }
        let seen = reports[&rank].read_u32().expect("report maps");
        for (slot, expected) in expected_slots.iter().enumerate() {
            let seen_slot = &seen[slot * expected.len()..(slot + 1) * expected.len()];
            assert_eq!(
                checksum(seen_slot),
                checksum(expected),
                "seed {seed}: pass {rank}, read #{slot} saw other values than its producer wrote ({:?})",
                random.ops[rank]
            );
        }
    }
    drop(graph);
    assert_no_validation_messages(device);
}

#[test]
fn fifty_random_graphs_deliver_what_producers_wrote() {
    let Some(device) = gpu_test_context() else { return };
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let config = Config { cases: 50, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    runner
        .run(&any::<u64>(), |seed| {
            check(seed, &device, &pipelines);
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
}

#[test]
fn generated_graphs_are_varied() {
    let graphs: Vec<RandomGraph> = (0..50).map(generate).collect();
    let updates =
        graphs.iter().flat_map(|graph| graph.ops.iter().flatten()).filter(|op| matches!(op, ProbeOp::Update { .. }));
    assert!(updates.count() > 5, "some graphs chain two writers");
    let sampled = graphs
        .iter()
        .flat_map(|graph| graph.ops.iter().flatten())
        .filter(|op| matches!(op, ProbeOp::Read { kind: ProbeKind::Image, image_read: ImageRead::Sampled, .. }));
    assert!(sampled.count() > 5, "some readers sample images");
    assert!(graphs.iter().any(|graph| graph.runs.iter().any(|&runs| !runs)), "some passes are culled");
    let reads_between_writers = graphs.iter().filter(|graph| {
        graph.ops.iter().enumerate().any(|(update_rank, ops)| {
            ops.iter().any(|op| match op {
                ProbeOp::Update { resource, .. } => graph.ops[..update_rank]
                    .iter()
                    .flatten()
                    .any(|earlier| matches!(earlier, ProbeOp::Read { resource: read, .. } if read == resource)),
                _ => false,
            })
        })
    });
    assert!(reads_between_writers.count() > 3, "some readers see the first version while a later pass modifies it");
    assert!(
        graphs.iter().any(|graph| graph.declaration.windows(2).any(|pair| pair[0] > pair[1])),
        "declaration order is shuffled"
    );
}

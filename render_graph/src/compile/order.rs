//! How declaration order becomes execution order: every read is bound to the version of its
//! resource written last before it, the dependencies that follow order the passes
//! topologically (declaration order breaks ties, a contradiction is a cycle naming its
//! passes), and passes whose results nobody reads are culled.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::decl::{GraphDecl, Origin};
use super::desc::{AttachmentLoad, ResourceKind};
use crate::error::{GraphError, Result};

/// The passes that write each resource, in declaration order (a pass writing several mips
/// of one image is one writer).
pub(super) fn writers_of(decl: &GraphDecl) -> Vec<Vec<usize>> {
    let mut writers: Vec<Vec<usize>> = vec![Vec::new(); decl.resources.len()];
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        for access in &pass.accesses {
            let writers = &mut writers[access.resource as usize];
            if access.access.is_write() && writers.last() != Some(&pass_index) {
                writers.push(pass_index);
            }
        }
    }
    writers
}

/// Every declared pass in an order that keeps each must-run-before pair of `edges`: among
/// the passes ready to run, the earliest declared first, or, with `shuffle`, one picked by a
/// generator seeded with it (see [`crate::RenderGraph::shuffle_independent`]).
pub(super) fn execution_order(decl: &GraphDecl, edges: &[(usize, usize)], shuffle: Option<u64>) -> Result<Vec<usize>> {
    let pass_count = decl.passes.len();
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); pass_count];
    let mut predecessor_count = vec![0_usize; pass_count];
    for &(from, to) in edges {
        if from != to && !successors[from].contains(&to) {
            successors[from].push(to);
            predecessor_count[to] += 1;
        }
    }
    topological_order(decl, &successors, predecessor_count, shuffle)
}

/// Kahn's algorithm; among ready passes the earliest declared goes first, or a random one
/// (the generator seeded with `shuffle`).
fn topological_order(
    decl: &GraphDecl,
    successors: &[Vec<usize>],
    mut predecessor_count: Vec<usize>,
    shuffle: Option<u64>,
) -> Result<Vec<usize>> {
    let pass_count = successors.len();
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..pass_count).filter(|&pass| predecessor_count[pass] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(pass_count);
    let mut random = shuffle.map(SplitMix::new);
    let mut drawn = Vec::new();
    loop {
        let pass = match &mut random {
            None => match ready.pop() {
                Some(Reverse(pass)) => pass,
                None => break,
            },
            Some(random) => {
                if ready.is_empty() {
                    break;
                }
                drawn.clear();
                drawn.extend(ready.drain().map(|Reverse(pass)| pass));
                drawn.sort_unstable();
                let pass = drawn.swap_remove((random.next() % drawn.len() as u64) as usize);
                ready.extend(drawn.iter().map(|&other| Reverse(other)));
                pass
            }
        };
        order.push(pass);
        for &next in &successors[pass] {
            predecessor_count[next] -= 1;
            if predecessor_count[next] == 0 {
                ready.push(Reverse(next));
            }
        }
    }
    if order.len() == pass_count {
        return Ok(order);
    }
    Err(GraphError::Cycle(find_cycle(decl, successors, &predecessor_count)))
}

/// A small generator (SplitMix64) for the shuffled orders: the same seed gives the same order
/// on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut value = self.0;
        value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        value ^ (value >> 31)
    }
}

/// Names the passes of one cycle among the passes Kahn's algorithm could not order.
fn find_cycle(decl: &GraphDecl, successors: &[Vec<usize>], remaining: &[usize]) -> Vec<String> {
    let stuck = |pass: usize| remaining[pass] > 0;
    let Some(start) = (0..successors.len()).find(|&pass| stuck(pass)) else {
        return Vec::new();
    };
    // Walk forward through stuck passes: every stuck pass has a stuck successor or lies
    // upstream of a cycle, so a walk from a pass on a cycle returns to a visited pass.
    let mut position_of = vec![usize::MAX; successors.len()];
    let mut path = Vec::new();
    let mut current = start;
    loop {
        if position_of[current] != usize::MAX {
            let mut names: Vec<String> =
                path[position_of[current]..].iter().map(|&pass: &usize| decl.passes[pass].name.clone()).collect();
            names.push(decl.passes[current].name.clone());
            return names;
        }
        position_of[current] = path.len();
        path.push(current);
        match successors[current].iter().copied().find(|&next| stuck(next)) {
            Some(next) => current = next,
            None => return path.iter().map(|&pass| decl.passes[pass].name.clone()).collect(),
        }
    }
}

/// A pass runs when it has a side effect, writes an imported resource, or writes a version
/// that a running pass reads (including last frame's version, written by every writer). A
/// read of version `v` keeps the writers of versions up to `v`.
pub(super) fn kept_passes(
    decl: &GraphDecl,
    writers: &[Vec<usize>],
    read_version: &[Vec<Option<usize>>],
    is_imported: &dyn Fn(&str, ResourceKind) -> bool,
) -> Vec<bool> {
    let mut kept = vec![false; decl.passes.len()];
    let mut work = Vec::new();
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        let writes_import = pass.accesses.iter().any(|access| {
            let resource = &decl.resources[access.resource as usize];
            access.access.is_write() && is_imported(&resource.name, resource.kind)
        });
        if pass.side_effect || writes_import {
            kept[pass_index] = true;
            work.push(pass_index);
        }
    }
    while let Some(pass_index) = work.pop() {
        for (slot, access) in decl.passes[pass_index].accesses.iter().enumerate() {
            let (source, last_writer) = match decl.resources[access.resource as usize].origin {
                Origin::History { of } => (of, writers[of as usize].len()),
                _ => match read_version[pass_index][slot] {
                    Some(version) => (access.resource, version + 1),
                    None => continue,
                },
            };
            for &writer in &writers[source as usize][..last_writer] {
                if !kept[writer] {
                    kept[writer] = true;
                    work.push(writer);
                }
            }
        }
    }
    kept
}

/// How declaration order binds reads to versions.
pub(super) struct Versions {
    /// Must-run-before pairs of passes.
    pub(super) edges: Vec<(usize, usize)>,
    /// Per pass and declared access: the index (into the resource's writers) of the write
    /// whose result the access reads, or `None` when it reads nothing of this frame.
    pub(super) read_version: Vec<Vec<Option<usize>>>,
}

/// Binds every read to a version of its resource by declaration order: each write makes a
/// new version, and a read sees the version written last *before* it in declaration order
/// (a reader declared before every writer sees the first version). Then:
/// - the writer of the version read runs before the reader (read after write);
/// - every reader of a version runs before the write that replaces it (write after read);
/// - writes of one resource run in declaration order (write after write).
///
/// A pass placed at an insertion point never moves to satisfy a read: a read of a resource
/// that no pass before it writes while a later one does is [`GraphError::ReadBeforeWrite`]
/// (other passes read the first version, and so run after its writer).
pub(super) fn bind_versions(decl: &GraphDecl, writers: &[Vec<usize>]) -> Result<Versions> {
    let mut edges = Vec::new();
    let mut read_version: Vec<Vec<Option<usize>>> =
        decl.passes.iter().map(|pass| vec![None; pass.accesses.len()]).collect();
    // Per resource: writes seen so far and the readers of the current version.
    let mut written = vec![0_usize; decl.resources.len()];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); decl.resources.len()];
    // Readers declared before the first writer read the first version.
    for (pass_index, pass) in decl.passes.iter().enumerate() {
        let is_history = |resource: usize| matches!(decl.resources[resource].origin, Origin::History { .. });
        // Reads first: a pass that reads one mip of an image and writes another reads the
        // version before its own write.
        for (slot, access) in pass.accesses.iter().enumerate() {
            let resource = access.resource as usize;
            let reads = access.access.is_read() || access.load == Some(AttachmentLoad::Load);
            if is_history(resource) || !reads || writers[resource].is_empty() {
                continue;
            }
            let first_writer = writers[resource][0];
            if let (0, Some(point), false) = (written[resource], &pass.point, first_writer == pass_index) {
                return Err(GraphError::ReadBeforeWrite {
                    pass: pass.name.clone(),
                    point: point.clone(),
                    resource: decl.resources[resource].name.clone(),
                    writer: decl.passes[first_writer].name.clone(),
                });
            }
            let version = written[resource].saturating_sub(1);
            read_version[pass_index][slot] = Some(version);
            edges.push((writers[resource][version], pass_index));
            if !access.access.is_write() {
                readers[resource].push(pass_index);
            }
        }
        for (slot, access) in pass.accesses.iter().enumerate() {
            let resource = access.resource as usize;
            let written_before = pass.accesses[..slot]
                .iter()
                .any(|earlier| earlier.resource == access.resource && earlier.access.is_write());
            if is_history(resource) || !access.access.is_write() || written_before {
                continue;
            }
            if let Some(&previous) = written[resource].checked_sub(1).and_then(|last| writers[resource].get(last)) {
                edges.push((previous, pass_index));
            }
            if written[resource] > 0 {
                for &reader in &readers[resource] {
                    edges.push((reader, pass_index));
                }
                readers[resource].clear();
            }
            written[resource] += 1;
        }
    }
    Ok(Versions { edges, read_version })
}

#[cfg(test)]
mod tests {
    use crate::access::ShaderStage;
    use crate::compile::decl::PassMeta;
    use crate::compile::{compile, compile_shuffled, BufferDesc, GraphDecl};
    use crate::error::GraphError;

    const COMPUTE: ShaderStage = ShaderStage::Compute;

    #[test]
    fn a_pass_at_a_point_reading_what_only_a_later_pass_writes_is_an_error_not_a_move() {
        let mut decl = GraphDecl::default();
        let at_point = PassMeta { point: Some(String::from("before cull")), ..PassMeta::default() };
        decl.declare_pass_of("grass", at_point, |registry| {
            let pyramid = registry.buffer("pyramid");
            registry.read_storage_buffer(pyramid, COMPUTE);
            registry.side_effect();
        });
        decl.declare_pass("hi-z", |registry| {
            let pyramid = registry.create_buffer("pyramid", BufferDesc { size: 4 });
            registry.write_storage_buffer(pyramid, COMPUTE);
        });
        let error = compile(&decl, &|_, _| false).expect_err("a point never moves a pass");
        assert!(
            matches!(&error, GraphError::ReadBeforeWrite { pass, point, resource, writer }
                if pass == "grass" && point == "before cull" && resource == "pyramid" && writer == "hi-z"),
            "{error}"
        );
    }

    #[test]
    fn a_pass_at_a_point_may_read_what_it_writes_itself() {
        let mut decl = GraphDecl::default();
        let at_point = PassMeta { point: Some(String::from("after geometry")), ..PassMeta::default() };
        decl.declare_pass_of("particles", at_point, |registry| {
            let particles = registry.create_buffer("particles", BufferDesc { size: 16 });
            registry.read_write_storage_buffer(particles, COMPUTE);
            registry.side_effect();
        });
        compile(&decl, &|_, _| false).expect("its own write is no later pass's");
    }

    #[test]
    fn shuffled_orders_keep_every_dependency_and_vary_the_rest() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("write", |registry| {
            let data = registry.create_buffer("data", BufferDesc { size: 4 });
            registry.write_storage_buffer(data, COMPUTE);
        });
        for name in ["a", "b", "c", "d", "e"] {
            decl.declare_pass(name, |registry| {
                let data = registry.buffer("data");
                registry.read_storage_buffer(data, COMPUTE);
                registry.side_effect();
            });
        }
        let plain = compile(&decl, &|_, _| false).expect("valid");
        assert_eq!(plain.order_names(&decl), ["write", "a", "b", "c", "d", "e"]);
        let mut orders = std::collections::HashSet::new();
        for seed in 0..16 {
            let shuffled = compile_shuffled(&decl, &|_, _| false, Some(seed)).expect("valid");
            let names = shuffled.order_names(&decl);
            assert_eq!(names[0], "write", "the readers wait for the writer (seed {seed})");
            let again = compile_shuffled(&decl, &|_, _| false, Some(seed)).expect("valid");
            assert_eq!(again.order_names(&decl), names, "a seed gives one order");
            orders.insert(names.join(" "));
        }
        assert!(orders.len() > 4, "independent readers change places: {orders:?}");
    }
}

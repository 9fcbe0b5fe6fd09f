//! The order of a stage's systems: declaration order, bent by `before`/`after` constraints, then
//! cut into conflict-free batches.
//!
//! 1. Each `before(x)` / `after(x)` becomes an edge between two systems of the stage. A system
//!    anchored at the stage's start (end) gets an edge to (from) every system not anchored the
//!    same way, unless an explicit edge already joins the two: explicit order wins.
//! 2. The run order is a topological order of those edges. Among the systems that are free to
//!    go next, the one with the smallest *pull* goes first: a system's pull is the smallest
//!    declaration index of itself and of every system that must run after it. So a system
//!    declared last with `before(x)` is pulled to just before `x`, and systems that no edge
//!    touches keep their declaration order relative to each other.
//! 3. A system's batch is one more than the latest batch of an earlier system (in run order)
//!    that it conflicts with or must follow.
//!
//! Nothing here depends on the thread count; it runs when systems are added, never per frame.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::access::Access;

/// What ordering needs to know of one system, in declaration order.
pub(crate) struct OrderInput<'a> {
    pub(crate) name: &'a str,
    pub(crate) access: &'a Access,
    pub(crate) before: &'a [std::borrow::Cow<'static, str>],
    pub(crate) after: &'a [std::borrow::Cow<'static, str>],
    pub(crate) anchor: Anchor,
}

/// Where a system is anchored in its stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// Ordered by declaration and explicit constraints only.
    #[default]
    Free,
    /// Before every system not anchored at the start.
    Start,
    /// After every system not anchored at the end.
    End,
}

/// Why a stage's systems cannot be ordered.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OrderError {
    /// System `system` names `missing` in `before`/`after`, and no system of the stage has it.
    Unknown { system: String, missing: String },
    /// The constraints loop: each system in the list must run before the next, the last
    /// before the first.
    Cycle(Vec<String>),
}

/// The outcome: declaration indices in run order, and each one's batch.
pub(crate) struct Order {
    pub(crate) run_order: Vec<usize>,
    pub(crate) batch_of: Vec<usize>,
}

/// Orders `systems` (in declaration order); see the module docs.
pub(crate) fn order(systems: &[OrderInput<'_>]) -> Result<Order, OrderError> {
    let count = systems.len();
    // successors[i]: systems that must run after i (explicit edges only).
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (index, system) in systems.iter().enumerate() {
        for (names, forward) in [(system.before, true), (system.after, false)] {
            for name in names {
                let mut found = false;
                for (other, candidate) in systems.iter().enumerate() {
                    if candidate.name == name.as_ref() {
                        found = true;
                        let (from, to) = if forward { (index, other) } else { (other, index) };
                        if from == to {
                            return Err(OrderError::Cycle(vec![system.name.to_string()]));
                        }
                        successors[from].push(to);
                    }
                }
                if !found {
                    return Err(OrderError::Unknown { system: system.name.to_string(), missing: name.to_string() });
                }
            }
        }
    }
    let explicit = successors.clone();
    let joined = |a: usize, b: usize| explicit[a].contains(&b) || explicit[b].contains(&a);
    for (anchored, system) in systems.iter().enumerate() {
        for (other, candidate) in systems.iter().enumerate() {
            if other == anchored || candidate.anchor == system.anchor || joined(anchored, other) {
                continue;
            }
            match system.anchor {
                Anchor::Start => successors[anchored].push(other),
                Anchor::End => successors[other].push(anchored),
                Anchor::Free => {}
            }
        }
    }
    let mut indegree = vec![0usize; count];
    for targets in &successors {
        for &target in targets {
            indegree[target] += 1;
        }
    }
    let pull = pulls(&successors)
        .map_err(|cycle| OrderError::Cycle(cycle.into_iter().map(|index| systems[index].name.to_string()).collect()))?;

    let mut ready: BinaryHeap<Reverse<(usize, usize)>> =
        (0..count).filter(|&index| indegree[index] == 0).map(|index| Reverse((pull[index], index))).collect();
    let mut run_order = Vec::with_capacity(count);
    while let Some(Reverse((_, index))) = ready.pop() {
        run_order.push(index);
        for &next in &successors[index] {
            indegree[next] -= 1;
            if indegree[next] == 0 {
                ready.push(Reverse((pull[next], next)));
            }
        }
    }
    debug_assert_eq!(run_order.len(), count, "pulls() returned Ok, so the edges have no cycle");

    let mut position_of = vec![0usize; count];
    for (position, &index) in run_order.iter().enumerate() {
        position_of[index] = position;
    }
    let mut batch_of = vec![0usize; count];
    for (position, &later) in run_order.iter().enumerate() {
        for &earlier in &run_order[..position] {
            let must_follow = successors[earlier].contains(&later);
            if must_follow || systems[later].access.conflicts_with(systems[earlier].access) {
                batch_of[later] = batch_of[later].max(batch_of[earlier] + 1);
            }
        }
    }
    Ok(Order { run_order, batch_of })
}

/// Each system's pull: the smallest index among itself and its descendants. Fails with the
/// indices of one loop, in edge order, when the edges have a cycle.
fn pulls(successors: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    const UNVISITED: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let count = successors.len();
    let mut state = vec![UNVISITED; count];
    let mut pull: Vec<usize> = (0..count).collect();
    // Iterative depth-first search: (node, next successor to visit).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..count {
        if state[root] != UNVISITED {
            continue;
        }
        state[root] = ON_STACK;
        stack.push((root, 0));
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = successors[node].get(*next) {
                *next += 1;
                match state[child] {
                    UNVISITED => {
                        state[child] = ON_STACK;
                        stack.push((child, 0));
                    }
                    ON_STACK => {
                        let start = stack.iter().position(|&(entry, _)| entry == child).expect("child is on the stack");
                        return Err(stack[start..].iter().map(|&(entry, _)| entry).collect());
                    }
                    _ => pull[node] = pull[node].min(pull[child]),
                }
            } else {
                state[node] = DONE;
                stack.pop();
                if let Some(&(parent, _)) = stack.last() {
                    pull[parent] = pull[parent].min(pull[node]);
                }
            }
        }
    }
    Ok(pull)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::access::{AccessEntry, Domain};
    use std::borrow::Cow;

    struct Spec {
        name: &'static str,
        access: Access,
        before: Vec<Cow<'static, str>>,
        after: Vec<Cow<'static, str>>,
        anchor: Anchor,
    }

    fn spec(name: &'static str, before: &[&'static str], after: &[&'static str]) -> Spec {
        Spec {
            name,
            access: Access::default(),
            before: before.iter().map(|name| Cow::Borrowed(*name)).collect(),
            after: after.iter().map(|name| Cow::Borrowed(*name)).collect(),
            anchor: Anchor::Free,
        }
    }

    fn run(specs: &[Spec]) -> Result<(Vec<&'static str>, Vec<usize>), OrderError> {
        let inputs: Vec<OrderInput<'_>> = specs
            .iter()
            .map(|spec| OrderInput {
                name: spec.name,
                access: &spec.access,
                before: &spec.before,
                after: &spec.after,
                anchor: spec.anchor,
            })
            .collect();
        let order = order(&inputs)?;
        let names = order.run_order.iter().map(|&index| specs[index].name).collect();
        let batches = order.run_order.iter().map(|&index| order.batch_of[index]).collect();
        Ok((names, batches))
    }

    #[test]
    fn a_late_system_with_before_is_pulled_in_front_only_of_its_target() {
        let mut writer = spec("follow", &["propagate"], &[]);
        writer.access.writes.push(AccessEntry::of::<u32>(Domain::Component));
        let mut reader = spec("propagate", &[], &[]);
        reader.access.reads.push(AccessEntry::of::<u32>(Domain::Component));
        let (names, batches) =
            run(&[spec("input", &[], &[]), reader, spec("other", &[], &[]), writer]).expect("no cycle");
        assert_eq!(names, vec!["input", "follow", "propagate", "other"]);
        assert_eq!(batches, vec![0, 0, 1, 0], "propagate waits for follow; the others share batch 0");
    }

    #[test]
    fn after_orders_even_without_a_conflict() {
        let (names, batches) = run(&[spec("b", &[], &["a"]), spec("a", &[], &[])]).expect("no cycle");
        assert_eq!(names, vec!["a", "b"]);
        assert_eq!(batches, vec![0, 1], "an explicit edge separates batches like a conflict does");
    }

    #[test]
    fn cycles_name_their_systems() {
        let error = run(&[spec("a", &["b"], &[]), spec("b", &["c"], &[]), spec("c", &["a"], &[])]).unwrap_err();
        assert_eq!(error, OrderError::Cycle(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(run(&[spec("self", &["self"], &[])]).unwrap_err(), OrderError::Cycle(vec!["self".into()]));
    }

    #[test]
    fn stage_anchors_order_against_everything_but_explicit_constraints_win() {
        let mut propagate = spec("propagate", &[], &[]);
        propagate.anchor = Anchor::End;
        let mut input = spec("input", &[], &[]);
        input.anchor = Anchor::Start;
        let specs = [propagate, spec("follow", &[], &[]), spec("reads world", &[], &["propagate"]), input];
        let (names, batches) = run(&specs).expect("no cycle");
        assert_eq!(names, vec!["input", "follow", "propagate", "reads world"]);
        assert_eq!(batches, vec![0, 1, 2, 3], "each waits for the one before");
    }

    #[test]
    fn unknown_names_are_reported() {
        let error = run(&[spec("a", &[], &["typo"])]).unwrap_err();
        assert_eq!(error, OrderError::Unknown { system: "a".into(), missing: "typo".into() });
    }
}

//! One bad user pass never stops the frame: a pass of the user's ([`Owner::User`]) whose
//! declarations do not compile, whose bindings do not fit, or whose `prepare`, `execute` or
//! `record_draw` fails or panics is dropped with the group it was added with, the error
//! logged once with the pass and where it was added, and the rest of the frame (the engine's
//! included) is drawn. Errors of the engine's own passes still stop the frame.

use std::fmt;

use super::RenderGraph;
use crate::compile::{GraphDecl, Owner};
use crate::error::GraphError;
use crate::execute::PassOrigin;

/// A user's pass the graph dropped, with the group it was added with, and why
/// ([`RenderGraph::dropped_passes`]).
#[derive(Clone, Debug)]
pub struct DroppedPass {
    /// The pass the error names (empty when the passes failed to be added at all, e.g. a
    /// pipeline that does not match its shader).
    pub pass: String,
    /// Where it was added (`file:line`): the `add_*` call of the pass, or the group's
    /// ([`RenderGraph::add_group`]'s call, or the name given to
    /// [`RenderGraph::add_group_named`]) when no pass's call is known.
    pub site: String,
    /// The insertion point it was placed at, if any.
    pub point: Option<String>,
    /// The other passes of its group, dropped with it.
    pub group: Vec<String>,
    /// What went wrong.
    pub error: GraphError,
}

impl fmt::Display for DroppedPass {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pass.is_empty() {
            write!(formatter, "user passes of {} were not added", self.site)?;
        } else {
            write!(formatter, "user pass `{}` (added at {}", self.pass, self.site)?;
            if let Some(point) = &self.point {
                write!(formatter, ", at `{point}`")?;
            }
            write!(formatter, ") was dropped")?;
        }
        if !self.group.is_empty() {
            let group = self.group.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
            write!(formatter, " with its group ({group})")?;
        }
        write!(formatter, ": {}; the rest of the frame is drawn", self.error)
    }
}

/// Passes an error blames by name: the pass it names, a cycle's, duplicates, the creators of
/// an invalid resource.
fn blamed_names<'error>(error: &'error GraphError, decl: Option<&'error GraphDecl>) -> Vec<&'error str> {
    let mut names: Vec<&str> = error.pass().into_iter().collect();
    match error {
        GraphError::Cycle(passes) | GraphError::DuplicateResource { passes, .. } => {
            names.extend(passes.iter().map(String::as_str));
        }
        GraphError::DuplicatePass { name, .. } => names.push(name),
        GraphError::InvalidDescription { resource, .. } => {
            if let Some(decl) = decl {
                let creators = decl.resources.iter().filter(|declared| &declared.name == resource);
                names.extend(
                    creators.flat_map(|declared| &declared.creators).map(|&pass| decl.passes[pass].name.as_str()),
                );
            }
        }
        _ => {}
    }
    names
}

impl RenderGraph {
    /// The index of the user's pass `error` blames, when it blames one (the last added of a
    /// name: of two passes named alike, the later one is the mistake).
    pub(super) fn user_culprit(&self, error: &GraphError, decl: Option<&GraphDecl>) -> Option<usize> {
        blamed_names(error, decl).into_iter().find_map(|name| {
            (0..self.passes.len())
                .rev()
                .find(|&index| self.origins[index].owner == Owner::User && self.passes[index].name() == name)
        })
    }

    /// Drops the group of `origin` (its user passes), naming `culprit` (the index of the pass
    /// the error names, if any) in the record, and `group_name` as where the group was added
    /// when the error names no add site of its own; logs the error once.
    pub(super) fn drop_group(
        &mut self,
        culprit: Option<usize>,
        origin: &PassOrigin,
        group_name: Option<String>,
        error: GraphError,
    ) {
        let pass = match culprit {
            Some(index) => self.passes[index].name().to_owned(),
            None => error.pass().map(str::to_owned).unwrap_or_default(),
        };
        let mut group = Vec::new();
        let mut index = self.passes.len();
        while index > 0 {
            index -= 1;
            let member = &self.origins[index];
            if member.group == origin.group && member.owner == Owner::User {
                let removed = self.remove_at(index);
                if removed.name() != pass {
                    group.insert(0, removed.name().to_owned());
                }
                // Frames in flight may still use its pipelines: kept until the GPU is idle.
                self.retired.push(removed);
            }
        }
        let site = match (&error, group_name) {
            (GraphError::UnknownInsertionPoint { site, .. }, _) => site.clone(),
            (_, Some(name)) => name,
            _ => origin.location(),
        };
        let dropped = DroppedPass { pass, site, point: origin.point.clone(), group, error };
        log::error!("render graph `{}`: {dropped}", self.name);
        self.dropped.push(dropped);
    }

    /// Drops the user passes that failed while the last frame ran, each with its group.
    pub(super) fn drop_failed_passes(&mut self) {
        let failures = std::mem::take(&mut self.executor.user_failures);
        let mut failed: Vec<(u64, String, GraphError)> = Vec::new();
        for (index, error) in failures {
            let Some(origin) = self.origins.get(index).filter(|origin| origin.owner == Owner::User) else { continue };
            if !failed.iter().any(|(group, _, _)| *group == origin.group) {
                failed.push((origin.group, self.passes[index].name().to_owned(), error));
            }
        }
        for (group, name, error) in failed {
            let found = (0..self.passes.len())
                .find(|&index| self.origins[index].group == group && self.passes[index].name() == name);
            if let Some(index) = found {
                let origin = self.origins[index].clone();
                self.drop_group(Some(index), &origin, None, error);
            }
        }
    }
}

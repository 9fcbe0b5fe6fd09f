//! Adding passes to a graph: in declaration order, at named insertion points, as the engine's
//! or a user's, alone or in groups; the resources the engine shares with every pass.

use runtime::profiling::ZoneSite;

use super::{InsertionPoint, RenderGraph};
use crate::compile::Owner;
use crate::error::{nearest_name, GraphError, Result};
use crate::execute::{Pass, PassOrigin, Typed, TypedPass};

impl RenderGraph {
    /// Adds a [`TypedPass`](crate::TypedPass). Declaration order is the order of the program:
    ///
    /// - every write of a resource makes a new *version*; a pass that reads it sees the
    ///   version written last by a pass added *before* it (a reader added before every writer
    ///   sees the first version), never a later modification;
    /// - so a pass runs after the writer of each version it reads, writers of one resource run
    ///   in the order added, and readers of a version run before the next write replaces it;
    /// - passes with no dependency between them run in the order added; history reads
    ///   ([`crate::Registry::history_image`]) see last frame's final version and add no
    ///   dependency.
    ///
    /// Write `x` → read `x` → modify `x` in place runs in exactly that order, and the reader
    /// sees the first write. Dependencies that contradict each other across resources are a
    /// [`GraphError::Cycle`](crate::GraphError::Cycle) naming the passes. Names must be unique
    /// ([`GraphError::DuplicatePass`](crate::GraphError::DuplicatePass), naming where each was
    /// added). The pass belongs to the graph's current owner ([`RenderGraph::set_owner`]).
    #[track_caller]
    pub fn add_typed_pass<P: TypedPass>(&mut self, pass: P) {
        let origin = self.origin(ZoneSite::caller(std::any::type_name::<P>()), None);
        self.insert_pass(self.passes.len(), Box::new(Typed::new(pass)), origin);
    }

    /// Adds an untyped [`Pass`] (for the rare pass that needs the untyped form; see
    /// [`RenderGraph::add_typed_pass`], whose rules of declaration order hold).
    #[track_caller]
    pub fn add_pass<P: Pass>(&mut self, pass: P) {
        let origin = self.origin(ZoneSite::caller(std::any::type_name::<P>()), None);
        self.insert_pass(self.passes.len(), Box::new(pass), origin);
    }

    /// Adds a [`TypedPass`](crate::TypedPass) at insertion point `point` (see
    /// [`RenderGraph::add_pass_at`], which places an untyped pass the same way).
    #[track_caller]
    pub fn add_typed_pass_at<P: TypedPass>(&mut self, point: &str, pass: P) -> Result<()> {
        let site = ZoneSite::caller(std::any::type_name::<P>());
        self.place(point, Box::new(Typed::new(pass)), site)
    }

    /// Adds a named insertion point after the passes added so far: a place where passes can
    /// be put later with [`RenderGraph::add_typed_pass_at`], however many passes are appended after
    /// it meanwhile. An engine builds its frame with points between its passes (the renderer's
    /// are in `renderer::points`) so that a user's pass can run before, between or after them
    /// without rebuilding the frame. A point is not a pass: it costs nothing at run time.
    ///
    /// ```
    /// # fn main() -> render_graph::Result<()> {
    /// # let Some(device) = render_graph::testing::gpu_test_context() else { return Ok(()) };
    /// # struct Named(&'static str);
    /// # impl render_graph::TypedPass for Named {
    /// #     type Handles = ();
    /// #     fn name(&self) -> &str { self.0 }
    /// #     fn register(&mut self, registry: &mut render_graph::Registry) { registry.side_effect(); }
    /// # }
    /// let mut graph = render_graph::RenderGraph::new(device, render_graph::vk::Extent2D { width: 8, height: 8 })?;
    /// graph.add_typed_pass(Named("upload"));
    /// graph.add_insertion_point("after upload")?;
    /// graph.add_typed_pass(Named("draw"));
    /// graph.add_typed_pass_at("after upload", Named("animate"))?;
    /// assert_eq!(graph.execution_order()?, ["upload", "animate", "draw"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn add_insertion_point(&mut self, name: impl Into<String>) -> Result<()> {
        let name = name.into();
        if self.points.iter().any(|point| point.name == name) {
            return Err(GraphError::DuplicateInsertionPoint(name));
        }
        self.points.push(InsertionPoint { name, index: self.passes.len() });
        Ok(())
    }

    /// Adds an untyped [`Pass`] at insertion point `point`: after every pass added before the point
    /// (engine passes and earlier passes placed at this point or earlier points) and before
    /// every pass added after it. What the pass writes is seen by the passes after it in the
    /// same frame, as for [`RenderGraph::add_typed_pass`]'s declaration order.
    ///
    /// A point never moves a pass: a read there of a resource that only a later pass writes
    /// is [`GraphError::ReadBeforeWrite`] when the graph compiles, naming the pass, the
    /// resource and its writer. An unknown point is [`GraphError::UnknownInsertionPoint`],
    /// naming the pass, where it was added, the points there are and the nearest.
    #[track_caller]
    pub fn add_pass_at<P: Pass>(&mut self, point: &str, pass: P) -> Result<()> {
        self.place(point, Box::new(pass), ZoneSite::caller(std::any::type_name::<P>()))
    }

    /// Puts `pass` at `point` (see [`RenderGraph::add_pass_at`]).
    fn place(&mut self, point: &str, pass: Box<dyn Pass>, site: ZoneSite) -> Result<()> {
        let Some(position) = self.points.iter().position(|known| known.name == point) else {
            let known: Vec<String> = self.points.iter().map(|known| known.name.clone()).collect();
            let nearest = nearest_name(point, known.iter().map(String::as_str));
            return Err(GraphError::UnknownInsertionPoint {
                pass: pass.name().to_owned(),
                point: point.to_owned(),
                known,
                nearest,
                site: format!("{}:{}", site.location.file(), site.location.line()),
            });
        };
        let index = self.points[position].index;
        let origin = self.origin(site, Some(point.to_owned()));
        self.insert_pass(index, pass, origin);
        // This point and every later one now lie one pass further; earlier points (at the
        // same index or before) stay before the new pass.
        for later in &mut self.points[position..] {
            later.index += 1;
        }
        Ok(())
    }

    /// The origin of a pass added now at `site`: the current owner and group.
    fn origin(&mut self, site: ZoneSite, point: Option<String>) -> PassOrigin {
        let group = match self.open_group {
            Some(group) => group,
            None => {
                self.next_group += 1;
                self.next_group
            }
        };
        PassOrigin { site, owner: self.owner, group, point }
    }

    fn insert_pass(&mut self, index: usize, pass: Box<dyn Pass>, origin: PassOrigin) {
        self.origins.insert(index, origin);
        self.passes.insert(index, pass);
        self.dirty = true;
    }

    /// Removes the pass named `name` and returns it (`None` when there is none); the graph
    /// recompiles at its next frame, and insertion points keep their places among the others.
    pub fn remove_pass(&mut self, name: &str) -> Option<Box<dyn Pass>> {
        let index = self.passes.iter().position(|pass| pass.name() == name)?;
        Some(self.remove_at(index))
    }

    /// Removes the pass at `index` (see [`RenderGraph::remove_pass`]).
    pub(super) fn remove_at(&mut self, index: usize) -> Box<dyn Pass> {
        self.origins.remove(index);
        for point in &mut self.points {
            if point.index > index {
                point.index -= 1;
            }
        }
        self.dirty = true;
        self.passes.remove(index)
    }

    /// The graph's insertion points, in order.
    pub fn insertion_points(&self) -> impl Iterator<Item = &str> {
        self.points.iter().map(|point| point.name.as_str())
    }

    /// Makes `owner` the owner of the passes added, and of the resources imported, from now
    /// on (the engine's until changed), and returns the previous one. An engine builds its
    /// frame as [`Owner::Engine`], then adds its users' passes as [`Owner::User`]: those
    /// may read every engine resource but not write one unless they claim it
    /// ([`crate::Registry::claim_engine_write`]) or the engine shared it
    /// ([`RenderGraph::share_resource`]), and one that fails to compile, bind or record is
    /// dropped with its group, logged ([`RenderGraph::dropped_passes`]), while the rest of
    /// the frame is drawn.
    pub fn set_owner(&mut self, owner: Owner) -> Owner {
        std::mem::replace(&mut self.owner, owner)
    }

    /// The owner of the passes added now (see [`RenderGraph::set_owner`]).
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The owner of the pass named `name`, if the graph has one.
    pub fn pass_owner(&self, name: &str) -> Option<Owner> {
        let index = self.passes.iter().position(|pass| pass.name() == name)?;
        Some(self.origins[index].owner)
    }

    /// Lets passes of every owner write the engine's resource `name` (the colour image that
    /// post-processes rewrite in place). A user pass still may not clear it: that erases what
    /// the engine drew ([`GraphError::InvalidAccess`]).
    pub fn share_resource(&mut self, name: impl Into<String>) {
        let name = name.into();
        if !self.shared.contains(&name) {
            self.shared.push(name);
            self.dirty = true;
        }
    }

    /// Runs `add`, which adds passes to the graph: they form one group, dropped together
    /// when one of them fails (they usually feed each other). When `add` itself fails (an
    /// unknown insertion point, a pipeline that does not match its shader), the passes it
    /// added are removed and the error is returned (for a user's group, after it is logged
    /// and kept among [`RenderGraph::dropped_passes`]); the graph is as before the call.
    ///
    /// ```
    /// # fn main() -> render_graph::Result<()> {
    /// # let Some(device) = render_graph::testing::gpu_test_context() else { return Ok(()) };
    /// # struct Named(&'static str);
    /// # impl render_graph::TypedPass for Named {
    /// #     type Handles = ();
    /// #     fn name(&self) -> &str { self.0 }
    /// #     fn register(&mut self, registry: &mut render_graph::Registry) { registry.side_effect(); }
    /// # }
    /// use render_graph::{Owner, RenderGraph};
    /// let mut graph = RenderGraph::new(device, render_graph::vk::Extent2D { width: 8, height: 8 })?;
    /// graph.add_typed_pass(Named("engine"));
    /// graph.add_insertion_point("after geometry")?;
    /// graph.set_owner(Owner::User);
    /// let added = graph.add_group(|graph| {
    ///     graph.add_typed_pass_at("after geometry", Named("fog"))?;
    ///     graph.add_typed_pass_at("after geometyr", Named("outline"))
    /// });
    /// assert!(added.is_err(), "a misspelt point");
    /// assert_eq!(graph.execution_order()?, ["engine"], "the group is gone, the engine's frame is not");
    /// assert!(graph.dropped_passes()[0].to_string().contains("did you mean `after geometry`"));
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn add_group(&mut self, add: impl FnOnce(&mut RenderGraph) -> Result<()>) -> Result<()> {
        let caller = std::panic::Location::caller();
        self.add_group_named(format!("{}:{}", caller.file(), caller.line()), add)
    }

    /// [`RenderGraph::add_group`], with `name` saying where the group comes from in a
    /// failure that names no pass's `add_*` call (a pipeline that does not match its shader):
    /// the renderer names each group `RenderSetup::passes[i]`.
    pub fn add_group_named(
        &mut self,
        name: impl Into<String>,
        add: impl FnOnce(&mut RenderGraph) -> Result<()>,
    ) -> Result<()> {
        let outer = self.open_group;
        if outer.is_none() {
            self.next_group += 1;
            self.open_group = Some(self.next_group);
        }
        let group = self.open_group.expect("opened above");
        let added = add(self);
        self.open_group = outer;
        if let Err(error) = added {
            if outer.is_some() {
                return Err(error);
            }
            if self.owner == Owner::Engine {
                // The engine's own group: removed, and the error is the caller's to handle.
                while let Some(index) = self.origins.iter().rposition(|origin| origin.group == group) {
                    let removed = self.remove_at(index);
                    self.retired.push(removed);
                }
                return Err(error);
            }
            let origin = PassOrigin { site: ZoneSite::caller("add_group"), owner: self.owner, group, point: None };
            self.drop_group(None, &origin, Some(name.into()), error.clone());
            return Err(error);
        }
        Ok(())
    }
}

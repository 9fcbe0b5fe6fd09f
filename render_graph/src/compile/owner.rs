//! Who owns passes and resources: the engine's resources are readable by every pass and
//! writable only by the engine's passes, unless the engine shares one with every pass (the
//! colour post-processes rewrite) or a pass of the user's claims write access to it
//! ([`crate::Registry::claim_engine_write`], the audited escape hatch). The check is in
//! `validate.rs` (`check_ownership`).

/// Who added a pass, and so who owns what it creates or imports: the graph stamps each pass
/// and import with its current owner ([`crate::RenderGraph::set_owner`]; the engine's until
/// changed).
///
/// - The **engine**'s resources may be read by every pass and written only by the engine's
///   passes: a user pass that writes one is refused, naming both passes, unless it claims
///   the write ([`crate::Registry::claim_engine_write`]) or the engine shares the resource
///   ([`crate::RenderGraph::share_resource`]).
/// - A **user** pass (or the group added with it, [`crate::RenderGraph::add_group`]) that
///   fails to compile, to bind or to record is dropped with a logged error naming the pass
///   and where it was added, and the rest of the frame is drawn; only the engine's own
///   passes' errors stop a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Owner {
    /// The engine (or whoever builds the frame): errors stop the frame.
    #[default]
    Engine,
    /// A user of the engine's frame: errors drop the pass and its group.
    User,
}

//! Warnings about work that does nothing: a dispatch of zero workgroups, a draw of zero
//! vertices, indices or instances. Usually a size computed from the wrong thing (an extent
//! of zero, a count never set); each is logged once per pass and counted.

/// One kind of warning of one pass, and how often it came ([`crate::RenderGraph::pass_warnings`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassWarning {
    /// The pass.
    pub pass: String,
    /// What it did.
    pub warning: &'static str,
    /// How many times, over every frame so far.
    pub count: u64,
}

/// A dispatch with a zero workgroup count.
pub(crate) const ZERO_DISPATCH: &str = "dispatches zero workgroups (a count computed from an empty extent or list?)";
/// A draw of zero vertices, indices or instances.
pub(crate) const ZERO_DRAW: &str = "draws zero vertices, indices or instances (a count never set?)";

/// The warnings of a graph's passes so far.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    pub(crate) list: Vec<PassWarning>,
}

impl Warnings {
    /// Counts `warning` of `pass`, logging it the first time.
    pub(crate) fn warn(&mut self, pass: &str, warning: &'static str) {
        if let Some(known) = self.list.iter_mut().find(|known| known.pass == pass && known.warning == warning) {
            known.count += 1;
            return;
        }
        log::warn!("render graph: pass `{pass}` {warning}; recorded nothing (logged once per pass)");
        self.list.push(PassWarning { pass: pass.to_owned(), warning, count: 1 });
    }

    /// The total count.
    pub(crate) fn total(&self) -> u64 {
        self.list.iter().map(|warning| warning.count).sum()
    }
}

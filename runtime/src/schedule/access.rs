//! What a system reads and writes, and when two systems conflict.

use std::any::TypeId;

/// Where an accessed type lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) enum Domain {
    /// A component column in the hecs world.
    Component,
    /// A value in [`Resources`](crate::Resources).
    Resource,
    /// A value in the [`FrameContext`](crate::FrameContext).
    Frame,
}

/// One declared access: a type and where it lives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AccessEntry {
    pub(crate) domain: Domain,
    pub(crate) type_id: TypeId,
}

impl AccessEntry {
    pub(crate) fn of<T: 'static>(domain: Domain) -> AccessEntry {
        AccessEntry { domain, type_id: TypeId::of::<T>() }
    }

    fn same_target(&self, other: &AccessEntry) -> bool {
        self.domain == other.domain && self.type_id == other.type_id
    }
}

/// The declared reads and writes of one system.
#[derive(Clone, Debug, Default)]
pub(crate) struct Access {
    pub(crate) reads: Vec<AccessEntry>,
    pub(crate) writes: Vec<AccessEntry>,
    /// Conflicts with every other system (it may touch anything).
    pub(crate) exclusive: bool,
}

impl Access {
    /// Two systems conflict when either is exclusive or one writes what the other touches.
    pub(crate) fn conflicts_with(&self, other: &Access) -> bool {
        if self.exclusive || other.exclusive {
            return true;
        }
        let writes_touch = |writes: &[AccessEntry], reads: &[AccessEntry], others: &[AccessEntry]| {
            writes.iter().any(|write| reads.iter().chain(others).any(|entry| write.same_target(entry)))
        };
        writes_touch(&self.writes, &other.reads, &other.writes) || writes_touch(&other.writes, &self.reads, &[])
    }

    /// Whether reading `type_id` in `domain` was declared (a write implies a read).
    pub(crate) fn allows_read(&self, domain: Domain, type_id: TypeId) -> bool {
        self.exclusive
            || self.reads.iter().chain(&self.writes).any(|entry| entry.domain == domain && entry.type_id == type_id)
    }

    /// Whether writing `type_id` in `domain` was declared.
    pub(crate) fn allows_write(&self, domain: Domain, type_id: TypeId) -> bool {
        self.exclusive || self.writes.iter().any(|entry| entry.domain == domain && entry.type_id == type_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(reads: &[AccessEntry], writes: &[AccessEntry]) -> Access {
        Access { reads: reads.to_vec(), writes: writes.to_vec(), exclusive: false }
    }

    #[test]
    fn readers_share_writers_conflict() {
        let read_u32 = AccessEntry::of::<u32>(Domain::Component);
        let write_u32 = AccessEntry::of::<u32>(Domain::Component);
        let write_u64 = AccessEntry::of::<u64>(Domain::Component);
        assert!(!access(&[read_u32], &[]).conflicts_with(&access(&[read_u32], &[])));
        assert!(access(&[read_u32], &[]).conflicts_with(&access(&[], &[write_u32])));
        assert!(access(&[], &[write_u32]).conflicts_with(&access(&[read_u32], &[])));
        assert!(!access(&[], &[write_u64]).conflicts_with(&access(&[read_u32], &[])));
    }

    #[test]
    fn same_type_in_other_domain_does_not_conflict() {
        let component = AccessEntry::of::<u32>(Domain::Component);
        let resource = AccessEntry::of::<u32>(Domain::Resource);
        assert!(!access(&[], &[component]).conflicts_with(&access(&[], &[resource])));
    }

    #[test]
    fn exclusive_conflicts_with_everything() {
        let exclusive = Access { exclusive: true, ..Access::default() };
        assert!(exclusive.conflicts_with(&Access::default()));
    }
}

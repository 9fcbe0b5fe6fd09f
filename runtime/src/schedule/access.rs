//! What a system reads and writes, and when two systems conflict.

use std::any::TypeId;

use super::query::{self, QueryAccess};

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

/// One declared access: a type and where it lives. A component access may be limited to
/// archetypes that have every type of `with` and none of `without`.
#[derive(Clone, Debug)]
pub(crate) struct AccessEntry {
    pub(crate) domain: Domain,
    pub(crate) type_id: TypeId,
    pub(crate) with: Vec<TypeId>,
    pub(crate) without: Vec<TypeId>,
}

impl AccessEntry {
    pub(crate) fn of<T: 'static>(domain: Domain) -> AccessEntry {
        AccessEntry { domain, type_id: TypeId::of::<T>(), with: Vec::new(), without: Vec::new() }
    }

    /// Whether both accesses may touch the same data: same type, and archetype filters that do
    /// not rule each other out (one requires a component the other excludes).
    fn overlaps(&self, other: &AccessEntry) -> bool {
        let disjoint = |a: &AccessEntry, b: &AccessEntry| a.with.iter().any(|required| b.without.contains(required));
        self.domain == other.domain && self.type_id == other.type_id && !disjoint(self, other) && !disjoint(other, self)
    }
}

/// The declared reads and writes of one system.
#[derive(Clone, Debug, Default)]
pub(crate) struct Access {
    pub(crate) reads: Vec<AccessEntry>,
    pub(crate) writes: Vec<AccessEntry>,
    /// Conflicts with every other system (it may touch anything).
    pub(crate) exclusive: bool,
    /// Reads every component (a system given the whole `&World`): conflicts with every
    /// system that writes a component.
    pub(crate) reads_all_components: bool,
}

impl Access {
    /// Two systems conflict when either is exclusive or one writes what the other touches.
    pub(crate) fn conflicts_with(&self, other: &Access) -> bool {
        if self.exclusive || other.exclusive {
            return true;
        }
        let writes_components = |access: &Access| access.writes.iter().any(|entry| entry.domain == Domain::Component);
        if (self.reads_all_components && writes_components(other))
            || (other.reads_all_components && writes_components(self))
        {
            return true;
        }
        let writes_touch = |writes: &[AccessEntry], reads: &[AccessEntry], others: &[AccessEntry]| {
            writes.iter().any(|write| reads.iter().chain(others).any(|entry| write.overlaps(entry)))
        };
        writes_touch(&self.writes, &other.reads, &other.writes) || writes_touch(&other.writes, &self.reads, &[])
    }

    /// Whether reading `type_id` in `domain` was declared (a write implies a read).
    pub(crate) fn allows_read(&self, domain: Domain, type_id: TypeId) -> bool {
        self.exclusive
            || (self.reads_all_components && domain == Domain::Component)
            || self.reads.iter().chain(&self.writes).any(|entry| entry.domain == domain && entry.type_id == type_id)
    }

    /// Whether writing `type_id` in `domain` was declared.
    pub(crate) fn allows_write(&self, domain: Domain, type_id: TypeId) -> bool {
        self.exclusive || self.writes.iter().any(|entry| entry.domain == domain && entry.type_id == type_id)
    }

    /// Checks that query `Q` touches only declared components, within the declared archetype
    /// filters: each component it borrows needs an entry of the right kind whose `with` the
    /// query requires and whose `without` the query excludes. Returns the first component that
    /// fails, with whether it was a write and whether some entry for it exists (with a filter
    /// the query does not carry).
    pub(crate) fn check_query<Q: QueryAccess>(&self) -> Result<(), Undeclared> {
        if self.exclusive {
            return Ok(());
        }
        let mut failure = None;
        Q::borrows(&mut |type_id, name, mutable| {
            if failure.is_some() || (!mutable && self.reads_all_components) {
                return;
            }
            let mut candidates = if mutable { &self.writes[..] } else { &self.reads[..] }
                .iter()
                .chain(if mutable { &[][..] } else { &self.writes[..] })
                .filter(|entry| entry.domain == Domain::Component && entry.type_id == type_id)
                .peekable();
            let declared = candidates.peek().is_some();
            let covered = candidates.any(|entry| {
                entry.with.iter().all(|&required| query::requires::<Q>(required))
                    && entry.without.iter().all(|&excluded| query::excludes::<Q>(excluded))
            });
            if !covered {
                failure = Some(Undeclared { name, mutable, filtered: declared });
            }
        });
        failure.map_or(Ok(()), Err)
    }
}

impl Access {
    /// Whether the column of `type_id` in `archetype` may be read (or, with `mutable`,
    /// written): some declared entry names the type, and `archetype` has every component of
    /// its `with` and none of its `without`. A few comparisons and, for a filtered entry, a
    /// look-up of the filter's types in the archetype: cheap enough for every column borrow.
    #[inline]
    pub(crate) fn allows_column(&self, type_id: TypeId, mutable: bool, archetype: &hecs::Archetype) -> bool {
        if self.exclusive || (!mutable && self.reads_all_components) {
            return true;
        }
        let entries = if mutable { &self.writes[..] } else { &self.reads[..] };
        let others = if mutable { &[][..] } else { &self.writes[..] };
        entries.iter().chain(others).any(|entry| {
            entry.type_id == type_id
                && entry.domain == Domain::Component
                && entry.with.iter().all(|&required| archetype.has_dynamic(required))
                && !entry.without.iter().any(|&excluded| archetype.has_dynamic(excluded))
        })
    }

    /// Whether some declared entry names component `type_id` (for a write, a declared
    /// write), whatever its archetype filters: the check of per-entity access.
    #[inline]
    pub(crate) fn names_component(&self, type_id: TypeId, mutable: bool) -> bool {
        if mutable {
            self.allows_write(Domain::Component, type_id)
        } else {
            self.allows_read(Domain::Component, type_id)
        }
    }
}

/// A component a query borrows beyond the system's declaration.
#[derive(Debug)]
pub(crate) struct Undeclared {
    /// The component's type name.
    pub(crate) name: &'static str,
    /// Whether the query writes it.
    pub(crate) mutable: bool,
    /// Whether it is declared, but only for archetypes the query is not limited to.
    pub(crate) filtered: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(reads: &[AccessEntry], writes: &[AccessEntry]) -> Access {
        Access { reads: reads.to_vec(), writes: writes.to_vec(), ..Access::default() }
    }

    #[test]
    fn readers_share_writers_conflict() {
        let u32_entry = AccessEntry::of::<u32>(Domain::Component);
        let u64_entry = AccessEntry::of::<u64>(Domain::Component);
        let (read_u32, write_u32) = (std::slice::from_ref(&u32_entry), std::slice::from_ref(&u32_entry));
        assert!(!access(read_u32, &[]).conflicts_with(&access(read_u32, &[])));
        assert!(access(read_u32, &[]).conflicts_with(&access(&[], write_u32)));
        assert!(access(&[], write_u32).conflicts_with(&access(read_u32, &[])));
        assert!(!access(&[], &[u64_entry]).conflicts_with(&access(read_u32, &[])));
    }

    #[test]
    fn same_type_in_other_domain_does_not_conflict() {
        let component = AccessEntry::of::<u32>(Domain::Component);
        let resource = AccessEntry::of::<u32>(Domain::Resource);
        assert!(!access(&[], &[component]).conflicts_with(&access(&[], &[resource])));
    }

    #[test]
    fn writers_with_disjoint_filters_do_not_conflict() {
        struct Scout;
        struct Enemy;
        let scouts = AccessEntry { with: vec![TypeId::of::<Scout>()], ..AccessEntry::of::<u32>(Domain::Component) };
        let not_scouts =
            AccessEntry { without: vec![TypeId::of::<Scout>()], ..AccessEntry::of::<u32>(Domain::Component) };
        let enemies = AccessEntry { with: vec![TypeId::of::<Enemy>()], ..AccessEntry::of::<u32>(Domain::Component) };
        assert!(!access(&[], std::slice::from_ref(&scouts)).conflicts_with(&access(&[], &[not_scouts])));
        assert!(
            access(&[], &[scouts]).conflicts_with(&access(&[], &[enemies])),
            "an entity may be a scout and an enemy: With<Scout> and With<Enemy> overlap"
        );
    }

    #[test]
    fn reading_every_component_conflicts_with_component_writers_only() {
        let everything = Access { reads_all_components: true, ..Access::default() };
        let component = AccessEntry::of::<u32>(Domain::Component);
        let resource = AccessEntry::of::<u32>(Domain::Resource);
        assert!(everything.conflicts_with(&access(&[], std::slice::from_ref(&component))));
        assert!(access(&[], std::slice::from_ref(&component)).conflicts_with(&everything));
        assert!(!everything.conflicts_with(&access(&[component], &[resource])), "readers and resource writers");
        assert!(everything.allows_read(Domain::Component, TypeId::of::<u64>()));
        assert!(!everything.allows_write(Domain::Component, TypeId::of::<u64>()));
    }

    #[test]
    fn exclusive_conflicts_with_everything() {
        let exclusive = Access { exclusive: true, ..Access::default() };
        assert!(exclusive.conflicts_with(&Access::default()));
    }
}

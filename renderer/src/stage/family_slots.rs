//! [`FamilySlots`]: for each mesh family (the levels of detail of one mesh added while frames
//! run), the object slots whose record was written for it, so that a frame where one of its
//! levels arrives, is evicted, replaced or removed rewrites those slots and no others.
//!
//! The lists are intrusive and doubly linked through the slots (`next`, `prev`), so moving a
//! slot between families is O(1) and nothing allocates but when the slot count or the family
//! count reaches a new high.

/// No slot, no family.
const NONE: u32 = u32::MAX;

/// The slots of each mesh family (see the module docs). Families are named by their finest
/// level's mesh id; slots of meshes that never change (the library given at install) are in
/// no list.
#[derive(Default)]
pub(crate) struct FamilySlots {
    /// By slot: the family it is listed under ([`NONE`]: none).
    family: Vec<u32>,
    /// By slot: the next and previous slot of its family's list.
    next: Vec<u32>,
    prev: Vec<u32>,
    /// By family (finest level's id): its first slot.
    heads: Vec<u32>,
}

impl FamilySlots {
    /// Lists slot `slot` under `family` (`None`: under none), leaving its former list.
    pub(crate) fn set(&mut self, slot: u32, family: Option<u32>) {
        let family = family.unwrap_or(NONE);
        let index = slot as usize;
        if index >= self.family.len() {
            if family == NONE {
                return;
            }
            let len = (index + 1).next_power_of_two();
            self.family.resize(len, NONE);
            self.next.resize(len, NONE);
            self.prev.resize(len, NONE);
        }
        if self.family[index] == family {
            return;
        }
        self.unlink(slot);
        if family == NONE {
            return;
        }
        if family as usize >= self.heads.len() {
            self.heads.resize((family as usize + 1).next_power_of_two(), NONE);
        }
        let head = self.heads[family as usize];
        self.family[index] = family;
        self.next[index] = head;
        self.prev[index] = NONE;
        if head != NONE {
            self.prev[head as usize] = slot;
        }
        self.heads[family as usize] = slot;
    }

    /// Takes every slot from `first` on out of its list (the slot count shrank).
    pub(crate) fn truncate(&mut self, first: u32) {
        for slot in first..self.family.len() as u32 {
            self.unlink(slot);
        }
    }

    /// Takes slot `slot` out of its list, if any.
    fn unlink(&mut self, slot: u32) {
        let index = slot as usize;
        let Some(&family) = self.family.get(index) else { return };
        if family == NONE {
            return;
        }
        let (next, prev) = (self.next[index], self.prev[index]);
        if prev == NONE {
            self.heads[family as usize] = next;
        } else {
            self.next[prev as usize] = next;
        }
        if next != NONE {
            self.prev[next as usize] = prev;
        }
        self.family[index] = NONE;
    }

    /// The first slot listed under `family` (then [`FamilySlots::next_of`]).
    pub(crate) fn first_of(&self, family: u32) -> Option<u32> {
        self.heads.get(family as usize).copied().filter(|&slot| slot != NONE)
    }

    /// The slot after `slot` in its family's list.
    pub(crate) fn next_of(&self, slot: u32) -> Option<u32> {
        self.next.get(slot as usize).copied().filter(|&next| next != NONE)
    }

    /// The slots listed under `family`, most recently listed first.
    #[cfg(test)]
    fn slots(&self, family: u32) -> Vec<u32> {
        std::iter::successors(self.first_of(family), |&slot| self.next_of(slot)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::FamilySlots;

    #[test]
    fn slots_move_between_families_and_leave_on_truncate() {
        let mut lists = FamilySlots::default();
        for slot in 0..6 {
            lists.set(slot, Some(if slot % 2 == 0 { 10 } else { 20 }));
        }
        lists.set(9, None);
        assert_eq!(lists.slots(10), [4, 2, 0]);
        assert_eq!(lists.slots(20), [5, 3, 1]);
        lists.set(2, Some(20));
        lists.set(3, None);
        lists.set(4, Some(10));
        assert_eq!(lists.slots(10), [4, 0]);
        assert_eq!(lists.slots(20), [2, 5, 1]);
        lists.truncate(2);
        assert_eq!(lists.slots(10), [0]);
        assert_eq!(lists.slots(20), [1]);
        lists.set(1, None);
        lists.set(0, None);
        assert!(lists.first_of(10).is_none() && lists.first_of(20).is_none());
        assert!(lists.first_of(99).is_none());
    }
}

//! Generation-checked handles: [`Handle<T>`] names an asset in an [`Assets<T>`] store by slot
//! and generation, so a handle never dangles. Removing an asset bumps its slot's generation:
//! the old handle is refused from then on, also after the slot is reused for another asset,
//! and the refusal ([`StaleHandle`]) names the kind, slot and generation.
//!
//! Every addition, replacement and removal is also logged as an [`AssetChange`], which a
//! consumer (the renderer's upload of meshes, materials and textures) drains once per frame
//! ([`Assets::drain_changes`]) to learn what to upload again and what to free.

use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Mutex;

/// The id of an asset of type `T` in an [`Assets<T>`]: a slot and the generation the slot had
/// when the asset was added. Cheap to copy; it holds no reference to the asset.
pub struct Handle<T> {
    slot: u32,
    generation: u32,
    kind: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The handle of slot `slot` at generation `generation` (a handle made up this way is
    /// checked like any other: a wrong generation is refused).
    pub const fn from_parts(slot: u32, generation: u32) -> Handle<T> {
        Handle { slot, generation, kind: PhantomData }
    }

    /// The slot the handle names.
    pub const fn slot(self) -> u32 {
        self.slot
    }

    /// The generation of the slot the handle was made for.
    pub const fn generation(self) -> u32 {
        self.generation
    }
}

// Written by hand: deriving would ask `T` for the same traits, which a handle does not need.
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Handle<T> {
        *self
    }
}

impl<T> Copy for Handle<T> {}

impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Handle<T>) -> bool {
        (self.slot, self.generation) == (other.slot, other.generation)
    }
}

impl<T> Eq for Handle<T> {}

impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.slot, self.generation).hash(state);
    }
}

impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Handle<{}>({}v{})", short_type_name::<T>(), self.slot, self.generation)
    }
}

/// The last path segment of `T`'s name (`GltfScene`, not `assets::gltf_import::GltfScene`).
fn short_type_name<T>() -> &'static str {
    let name = std::any::type_name::<T>();
    let plain = name.split('<').next().unwrap_or(name);
    plain.rsplit("::").next().unwrap_or(plain)
}

/// Why a handle was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleReason {
    /// The asset was removed and its slot is empty.
    Removed,
    /// The asset was removed and the slot now holds another asset, of generation `current`.
    Reused {
        /// The generation of the asset in the slot now.
        current: u32,
    },
    /// The store never had that slot (a handle of another store, or made up).
    Unknown,
}

/// A handle that names no asset: its asset was removed (its slot perhaps reused), or it
/// never named one of this store. `Display` names the kind, the slot and the generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleHandle {
    /// The asset type's short name (`GltfScene`, `ProcessedMesh`, …).
    pub kind: &'static str,
    /// The slot the handle names.
    pub slot: u32,
    /// The generation it was made for.
    pub generation: u32,
    /// Why it is refused.
    pub reason: StaleReason,
}

impl fmt::Display for StaleHandle {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { kind, slot, generation, .. } = self;
        match self.reason {
            StaleReason::Removed => write!(formatter, "{kind} {slot}v{generation} was removed"),
            StaleReason::Reused { current } => {
                write!(formatter, "{kind} {slot}v{generation} was removed; its slot holds {kind} {slot}v{current} now")
            }
            StaleReason::Unknown => write!(formatter, "{kind} {slot}v{generation} was never added to this store"),
        }
    }
}

impl std::error::Error for StaleHandle {}

/// What changed in an [`Assets`] store, in the order it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssetChange<T> {
    /// An asset was added.
    Added(Handle<T>),
    /// An asset's contents were replaced; its handle stays valid.
    Replaced(Handle<T>),
    /// An asset was removed; its handle is refused from now on.
    Removed(Handle<T>),
}

struct Entry<T> {
    generation: u32,
    value: Option<T>,
}

/// A store of assets of type `T` named by [`Handle<T>`]s: add, replace and remove at any
/// time; a removed asset's handle is refused (by generation, also once its slot is reused),
/// and [`Assets::get_or_warn`] logs that once per handle.
///
/// ```
/// use assets::{Assets, StaleReason};
/// let mut textures = Assets::new();
/// let brick = textures.add(String::from("brick"));
/// textures.replace(brick, String::from("brick, cleaner"))?;
/// assert_eq!(textures.get(brick)?, "brick, cleaner");
/// textures.remove(brick)?;
/// let stone = textures.add(String::from("stone"));
/// assert_eq!(stone.slot(), brick.slot(), "the slot is reused");
/// let refused = textures.get(brick).unwrap_err();
/// assert_eq!(refused.reason, StaleReason::Reused { current: stone.generation() });
/// assert_eq!(textures.get_or_warn(brick), None, "draws nothing, logged once");
/// # Ok::<(), assets::StaleHandle>(())
/// ```
pub struct Assets<T> {
    entries: Vec<Entry<T>>,
    /// Empty slots, reused lowest last-freed first.
    free: Vec<u32>,
    len: usize,
    changes: Vec<AssetChange<T>>,
    /// Stale handles already logged by [`Assets::get_or_warn`] (locked only on a refusal).
    warned: Mutex<HashSet<(u32, u32)>>,
}

impl<T> Default for Assets<T> {
    fn default() -> Assets<T> {
        Assets { entries: Vec::new(), free: Vec::new(), len: 0, changes: Vec::new(), warned: Mutex::default() }
    }
}

impl<T> Assets<T> {
    /// An empty store.
    pub fn new() -> Assets<T> {
        Assets::default()
    }

    /// Adds `value` and returns its handle (an empty slot is reused, with a new generation).
    pub fn add(&mut self, value: T) -> Handle<T> {
        let handle = match self.free.pop() {
            Some(slot) => {
                let entry = &mut self.entries[slot as usize];
                debug_assert!(entry.value.is_none(), "free slot {slot} holds an asset");
                entry.value = Some(value);
                Handle::from_parts(slot, entry.generation)
            }
            None => {
                let slot = u32::try_from(self.entries.len()).expect("fewer than 2^32 assets in one store");
                self.entries.push(Entry { generation: 0, value: Some(value) });
                Handle::from_parts(slot, 0)
            }
        };
        self.len += 1;
        self.changes.push(AssetChange::Added(handle));
        handle
    }

    /// Replaces the asset `handle` names, returning the old one; the handle stays valid.
    pub fn replace(&mut self, handle: Handle<T>, value: T) -> Result<T, StaleHandle> {
        let slot = self.live_slot(handle)?;
        let old = self.entries[slot].value.replace(value).expect("a live slot holds an asset");
        self.changes.push(AssetChange::Replaced(handle));
        Ok(old)
    }

    /// Removes the asset `handle` names and returns it; the handle (and every copy of it) is
    /// refused from now on.
    pub fn remove(&mut self, handle: Handle<T>) -> Result<T, StaleHandle> {
        let slot = self.live_slot(handle)?;
        let entry = &mut self.entries[slot];
        let value = entry.value.take().expect("a live slot holds an asset");
        // A slot whose generation would wrap is retired rather than reused, so no handle of
        // an earlier generation can ever be accepted again.
        match entry.generation.checked_add(1) {
            Some(next) => {
                entry.generation = next;
                self.free.push(handle.slot);
            }
            None => log::info!("asset slot {} retired after 2^32 generations", handle.slot),
        }
        self.len -= 1;
        self.changes.push(AssetChange::Removed(handle));
        Ok(value)
    }

    /// The asset `handle` names, or why it names none.
    pub fn get(&self, handle: Handle<T>) -> Result<&T, StaleHandle> {
        let slot = self.live_slot(handle)?;
        Ok(self.entries[slot].value.as_ref().expect("a live slot holds an asset"))
    }

    /// The asset `handle` names, mutably (not logged as a change: use
    /// [`Assets::replace`] for a change a consumer must see).
    pub fn get_mut(&mut self, handle: Handle<T>) -> Result<&mut T, StaleHandle> {
        let slot = self.live_slot(handle)?;
        Ok(self.entries[slot].value.as_mut().expect("a live slot holds an asset"))
    }

    /// The asset `handle` names, or `None` with a warning naming the handle, logged the first
    /// time this handle is refused only: what draws through a removed asset draws nothing,
    /// and says so once.
    pub fn get_or_warn(&self, handle: Handle<T>) -> Option<&T> {
        match self.get(handle) {
            Ok(value) => Some(value),
            Err(stale) => {
                let mut warned = self.warned.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if warned.insert((handle.slot, handle.generation)) {
                    log::warn!("{stale}: what uses it is not drawn");
                }
                None
            }
        }
    }

    /// Whether `handle` names a live asset.
    pub fn contains(&self, handle: Handle<T>) -> bool {
        self.live_slot(handle).is_ok()
    }

    /// Number of live assets.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the store holds no asset.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every live asset with its handle, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.entries.iter().enumerate().filter_map(|(slot, entry)| {
            entry.value.as_ref().map(|value| (Handle::from_parts(slot as u32, entry.generation), value))
        })
    }

    /// Takes the changes made since the last call, oldest first (the caller's buffer keeps
    /// its capacity: `out` is cleared first).
    pub fn drain_changes(&mut self, out: &mut Vec<AssetChange<T>>) {
        out.clear();
        out.append(&mut self.changes);
    }

    /// The slot `handle` names when it is live.
    fn live_slot(&self, handle: Handle<T>) -> Result<usize, StaleHandle> {
        let stale = |reason| StaleHandle {
            kind: short_type_name::<T>(),
            slot: handle.slot,
            generation: handle.generation,
            reason,
        };
        let Some(entry) = self.entries.get(handle.slot as usize) else { return Err(stale(StaleReason::Unknown)) };
        match (entry.generation == handle.generation, &entry.value) {
            (true, Some(_)) => Ok(handle.slot as usize),
            (true, None) => Err(stale(StaleReason::Removed)),
            // A handle from a generation the slot never had is not this store's.
            (false, _) if handle.generation > entry.generation => Err(stale(StaleReason::Unknown)),
            (false, Some(_)) => Err(stale(StaleReason::Reused { current: entry.generation })),
            (false, None) => Err(stale(StaleReason::Removed)),
        }
    }
}

impl<T> fmt::Debug for Assets<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Assets")
            .field("kind", &short_type_name::<T>())
            .field("len", &self.len)
            .field("slots", &self.entries.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_of_removed_assets_are_refused_also_after_their_slot_is_reused() {
        let mut store = Assets::new();
        let first = store.add(1_u32);
        let second = store.add(2_u32);
        assert_eq!((first.slot(), second.slot()), (0, 1));
        assert_eq!(store.remove(first), Ok(1));
        assert_eq!(store.get(first).unwrap_err().reason, StaleReason::Removed);
        assert_eq!(store.remove(first).unwrap_err().reason, StaleReason::Removed, "removed twice");
        let third = store.add(3_u32);
        assert_eq!((third.slot(), third.generation()), (0, 1), "slot 0 reused, next generation");
        assert_eq!(store.get(first).unwrap_err().reason, StaleReason::Reused { current: 1 });
        assert!(store.replace(first, 9).is_err(), "a stale handle cannot replace the slot's new asset");
        assert_eq!(store.get(third), Ok(&3));
        assert_eq!(store.get(second), Ok(&2));
        assert_eq!(store.len(), 2);
        let made_up = Handle::<u32>::from_parts(0, 7);
        assert_eq!(store.get(made_up).unwrap_err().reason, StaleReason::Unknown);
        assert_eq!(store.get(Handle::from_parts(5, 0)).unwrap_err().reason, StaleReason::Unknown);
    }

    #[test]
    fn changes_are_logged_in_order_and_replacing_keeps_the_handle() {
        let mut store = Assets::new();
        let mesh = store.add("cube");
        assert_eq!(store.replace(mesh, "sphere"), Ok("cube"));
        assert_eq!(store.get(mesh), Ok(&"sphere"));
        store.remove(mesh).unwrap();
        let mut changes = Vec::new();
        store.drain_changes(&mut changes);
        assert_eq!(changes, [AssetChange::Added(mesh), AssetChange::Replaced(mesh), AssetChange::Removed(mesh)]);
        store.drain_changes(&mut changes);
        assert!(changes.is_empty(), "drained");
    }

    #[test]
    fn a_refusal_names_the_kind_slot_and_generation() {
        struct Texture;
        let mut store = Assets::new();
        let handle = store.add(Texture);
        store.remove(handle).ok();
        store.add(Texture);
        let message = store.get(handle).err().unwrap().to_string();
        assert_eq!(message, "Texture 0v0 was removed; its slot holds Texture 0v1 now");
        assert_eq!(format!("{handle:?}"), "Handle<Texture>(0v0)");
        assert!(store.get_or_warn(handle).is_none());
        assert!(store.get_or_warn(handle).is_none(), "refused again, warned once");
        assert_eq!(store.warned.lock().unwrap().len(), 1);
    }

    #[test]
    fn iteration_lists_live_assets_in_slot_order() {
        let mut store = Assets::new();
        let handles: Vec<_> = (0..4).map(|value| store.add(value)).collect();
        store.remove(handles[1]).unwrap();
        let live: Vec<_> = store.iter().map(|(handle, &value)| (handle, value)).collect();
        assert_eq!(live, [(handles[0], 0), (handles[2], 2), (handles[3], 3)]);
    }
}

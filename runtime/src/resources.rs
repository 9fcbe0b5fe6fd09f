//! Typed resources: one value per type, shared by systems that declare their access.

use std::any::{type_name, Any, TypeId};
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

use parking_lot::{MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A map from type to one value of that type (settings, the visibility result, a renderer).
///
/// Each value sits behind its own lock, so systems of one batch that declared disjoint access
/// borrow different resources at the same time. The scheduler never lets two conflicting
/// systems run together, so the locks are uncontended; they only turn a missing declaration
/// into a clear panic instead of a data race.
#[derive(Default)]
pub struct Resources {
    values: HashMap<TypeId, RwLock<Box<dyn Any + Send + Sync>>>,
}

/// A shared borrow of a resource.
pub struct Res<'a, T: 'static>(MappedRwLockReadGuard<'a, T>);

/// An exclusive borrow of a resource.
pub struct ResMut<'a, T: 'static>(MappedRwLockWriteGuard<'a, T>);

impl<'a, T> Res<'a, T> {
    pub(crate) fn from_guard(guard: MappedRwLockReadGuard<'a, T>) -> Self {
        Res(guard)
    }
}

impl<'a, T> ResMut<'a, T> {
    pub(crate) fn from_guard(guard: MappedRwLockWriteGuard<'a, T>) -> Self {
        ResMut(guard)
    }
}

impl<T> Deref for Res<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Deref for ResMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for ResMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl Resources {
    /// An empty map.
    pub fn new() -> Resources {
        Resources::default()
    }

    /// Inserts or replaces the value of type `T`; returns the previous one.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let previous = self.values.insert(TypeId::of::<T>(), RwLock::new(Box::new(value)));
        previous.and_then(|lock| lock.into_inner().downcast::<T>().ok()).map(|boxed| *boxed)
    }

    /// Removes and returns the value of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let lock = self.values.remove(&TypeId::of::<T>())?;
        lock.into_inner().downcast::<T>().ok().map(|boxed| *boxed)
    }

    /// Whether a value of type `T` is present.
    pub fn contains<T: 'static>(&self) -> bool {
        self.values.contains_key(&TypeId::of::<T>())
    }

    /// Borrows the value of type `T`, or `None` when absent.
    ///
    /// # Panics
    /// If the value is exclusively borrowed right now (an undeclared conflicting access).
    pub fn get<T: 'static>(&self) -> Option<Res<'_, T>> {
        let lock = self.values.get(&TypeId::of::<T>())?;
        let guard = lock.try_read().unwrap_or_else(|| {
            panic!("resource {} is borrowed mutably elsewhere: declare the access on the system", type_name::<T>())
        });
        Some(Res(RwLockReadGuard::map(guard, |boxed| {
            boxed.downcast_ref::<T>().expect("resources are stored under their own TypeId")
        })))
    }

    /// Borrows the value of type `T` exclusively, or `None` when absent.
    ///
    /// # Panics
    /// If the value is borrowed right now (an undeclared conflicting access).
    pub fn get_mut<T: 'static>(&self) -> Option<ResMut<'_, T>> {
        let lock = self.values.get(&TypeId::of::<T>())?;
        let guard = lock.try_write().unwrap_or_else(|| {
            panic!("resource {} is borrowed elsewhere: declare the access on the system", type_name::<T>())
        });
        Some(ResMut(RwLockWriteGuard::map(guard, |boxed| {
            boxed.downcast_mut::<T>().expect("resources are stored under their own TypeId")
        })))
    }

    /// Direct mutable access when the caller holds the map exclusively (between frames).
    pub fn value_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.values.get_mut(&TypeId::of::<T>()).and_then(|lock| lock.get_mut().downcast_mut::<T>())
    }
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Resources").field("count", &self.values.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_replace_remove() {
        let mut resources = Resources::new();
        assert!(resources.insert(5u32).is_none());
        assert_eq!(*resources.get::<u32>().expect("inserted"), 5);
        assert_eq!(resources.insert(6u32), Some(5));
        *resources.get_mut::<u32>().expect("present") += 1;
        assert_eq!(resources.remove::<u32>(), Some(7));
        assert!(resources.get::<u32>().is_none());
    }

    #[test]
    #[should_panic(expected = "borrowed mutably elsewhere")]
    fn conflicting_borrow_is_a_clear_panic() {
        let mut resources = Resources::new();
        resources.insert(1u8);
        let _writer = resources.get_mut::<u8>();
        let _reader = resources.get::<u8>();
    }
}

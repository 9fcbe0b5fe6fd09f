//! The per-frame context: values published for one frame only (a host's view, the resolved
//! camera), gone when the frame ends.

use std::any::{type_name, Any, TypeId};
use std::collections::HashMap;

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::resources::{Res, ResMut};

/// One typed slot that survives frames while its value does not.
trait FrameSlot: Any + Send + Sync {
    fn clear(&mut self);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Send + Sync + 'static> FrameSlot for Option<T> {
    fn clear(&mut self) {
        *self = None;
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Values that belong to a single frame.
///
/// A producer publishes a value for the frame it has one for; the context is cleared when that
/// frame ends, so the next frame sees nothing unless it is published again. "Absent" is an
/// answer, not a missed publish. Values inserted between frames (by a host, with
/// [`FrameContext::insert`]) belong to the next frame.
///
/// Slots are kept across frames and only their values are cleared, so publishing the same type
/// every frame does not allocate.
///
/// ```
/// use runtime::FrameContext;
/// #[derive(Debug, PartialEq)]
/// struct Cursor(f32, f32);
///
/// let mut frame = FrameContext::default();
/// frame.insert(Cursor(1.0, 2.0));
/// assert_eq!(*frame.get::<Cursor>().unwrap(), Cursor(1.0, 2.0));
/// frame.end_frame();
/// assert!(frame.get::<Cursor>().is_none());
/// ```
#[derive(Default)]
pub struct FrameContext {
    slots: HashMap<TypeId, RwLock<Box<dyn FrameSlot>>>,
}

impl FrameContext {
    /// Makes sure a slot for `T` exists, so systems can [`publish`](Self::publish) it.
    pub fn register<T: Send + Sync + 'static>(&mut self) {
        self.slots.entry(TypeId::of::<T>()).or_insert_with(|| RwLock::new(Box::new(None::<T>)));
    }

    /// Sets the value of `T` for the current (or, between frames, the next) frame.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.register::<T>();
        let slot = self.slots.get_mut(&TypeId::of::<T>()).expect("registered just above");
        *slot.get_mut().as_any_mut().downcast_mut::<Option<T>>().expect("slots are stored under their own TypeId") =
            Some(value);
    }

    /// Publishes the value of `T` from a running system.
    ///
    /// # Panics
    /// If no slot for `T` was registered: declare it with
    /// [`System::writes_frame`](crate::System::writes_frame), or call [`register`](Self::register).
    pub fn publish<T: Send + Sync + 'static>(&self, value: T) {
        let mut slot = self.slot_mut::<T>().unwrap_or_else(|| {
            panic!("frame value {} has no slot: declare it with System::writes_frame", type_name::<T>())
        });
        *slot = Some(value);
    }

    /// The value of `T` published for this frame, if any.
    ///
    /// # Panics
    /// If the value is being written right now (an undeclared conflicting access).
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Res<'_, T>> {
        let lock = self.slots.get(&TypeId::of::<T>())?;
        let guard = lock.try_read().unwrap_or_else(|| {
            panic!("frame value {} is being written elsewhere: declare the access", type_name::<T>())
        });
        RwLockReadGuard::try_map(guard, |slot| slot.as_any().downcast_ref::<Option<T>>().and_then(Option::as_ref))
            .ok()
            .map(Res::from_guard)
    }

    /// Exclusive access to the slot of `T` (its value may be absent), if registered.
    pub fn slot_mut<T: Send + Sync + 'static>(&self) -> Option<ResMut<'_, Option<T>>> {
        let lock = self.slots.get(&TypeId::of::<T>())?;
        let guard = lock
            .try_write()
            .unwrap_or_else(|| panic!("frame value {} is borrowed elsewhere: declare the access", type_name::<T>()));
        Some(ResMut::from_guard(RwLockWriteGuard::map(guard, |slot| {
            slot.as_any_mut().downcast_mut::<Option<T>>().expect("slots are stored under their own TypeId")
        })))
    }

    /// Whether a value of `T` is published for this frame.
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// Clears every value; called by the frame loop when a frame ends. Keeps the slots.
    pub fn end_frame(&mut self) {
        for slot in self.slots.values_mut() {
            slot.get_mut().clear();
        }
    }
}

impl std::fmt::Debug for FrameContext {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("FrameContext").field("slots", &self.slots.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_value_lives_one_frame() {
        let mut frame = FrameContext::default();
        frame.register::<u32>();
        assert!(frame.get::<u32>().is_none(), "nothing published yet");
        frame.publish(7u32);
        assert_eq!(*frame.get::<u32>().expect("published"), 7);
        frame.end_frame();
        assert!(frame.get::<u32>().is_none(), "value must be gone the next frame");
    }

    #[test]
    #[should_panic(expected = "has no slot")]
    fn publishing_an_undeclared_type_is_a_clear_panic() {
        FrameContext::default().publish(1u8);
    }
}

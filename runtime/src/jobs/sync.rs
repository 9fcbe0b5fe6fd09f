//! The synchronisation the job system is built from, gathered here so that the model checker
//! can replace it. A normal build uses `std` atomics, parking_lot's mutex and condition
//! variable, crossbeam's deques and the operating system's threads; `RUSTFLAGS="--cfg loom"`
//! swaps in loom's instrumented versions (and a small deque built from them), so the models in
//! `models.rs` explore every interleaving of the real `sleep`, `latch`, `registry`, `join` and
//! `scope` code (README, "Model checking").

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};

pub(crate) use crossbeam_utils::CachePadded;

#[cfg(not(loom))]
pub(crate) use parking_lot::{Condvar, Mutex};

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};

#[cfg(loom)]
pub(crate) use self::model::{Condvar, Injector, Mutex, Steal, Stealer, Worker};

/// Threads, yields and spins: the operating system's, or loom's.
pub(crate) mod thread {
    #[cfg(not(loom))]
    pub(crate) use std::thread::{yield_now, Builder, JoinHandle};

    #[cfg(loom)]
    pub(crate) use loom::thread::{yield_now, Builder, JoinHandle};

    /// A busy-wait hint to the processor (a scheduling point under loom).
    #[inline]
    pub(crate) fn spin_loop() {
        #[cfg(not(loom))]
        std::hint::spin_loop();
        #[cfg(loom)]
        loom::hint::spin_loop();
    }
}

/// A thread-local slot: `std`'s, or loom's (loom runs its threads on one OS thread, so `std`
/// thread-locals would be shared between them).
macro_rules! job_thread_local {
    ($(#[$attr:meta])* static $name:ident: $ty:ty = $init:expr;) => {
        #[cfg(not(loom))]
        std::thread_local! { $(#[$attr])* static $name: $ty = const { $init }; }
        #[cfg(loom)]
        loom::thread_local! { $(#[$attr])* static $name: $ty = $init; }
    };
}
pub(crate) use job_thread_local;

/// Loom-instrumented stand-ins with the subset of the parking_lot and crossbeam-deque APIs the
/// job system uses.
#[cfg(loom)]
mod model {
    use std::collections::VecDeque;
    use std::ops::{Deref, DerefMut};
    use std::sync::Arc;

    use loom::sync::atomic::{AtomicUsize, Ordering};

    /// parking_lot-shaped mutex over loom's.
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    /// The guard of [`Mutex`]; an `Option` so [`Condvar::wait`] can take it by `&mut`.
    pub(crate) struct MutexGuard<'a, T>(Option<loom::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Mutex<T> {
            Mutex(loom::sync::Mutex::new(value))
        }
        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(self.0.lock().expect("model mutexes are never poisoned")))
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0.as_ref().expect("guard present")
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0.as_mut().expect("guard present")
        }
    }

    /// parking_lot-shaped condition variable over loom's.
    pub(crate) struct Condvar(loom::sync::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Condvar {
            Condvar(loom::sync::Condvar::new())
        }
        pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
            let inner = guard.0.take().expect("guard present");
            guard.0 = Some(self.0.wait(inner).expect("model mutexes are never poisoned"));
        }
        pub(crate) fn notify_one(&self) {
            self.0.notify_one();
        }
        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// The outcome of a steal, as in crossbeam.
    pub(crate) enum Steal<T> {
        Empty,
        Success(T),
        #[allow(dead_code)]
        Retry,
    }

    /// A deque whose contents sit behind a mutex but whose length is published with a
    /// `Release` store and read by `is_empty` with an `Acquire` load and no lock, like
    /// crossbeam's indices: a push can therefore be missed by a concurrent `is_empty`
    /// exactly as on real hardware, which is what the sleep protocol must survive.
    struct Shared<T> {
        items: loom::sync::Mutex<VecDeque<T>>,
        len: AtomicUsize,
    }

    impl<T> Shared<T> {
        fn new() -> Shared<T> {
            Shared { items: loom::sync::Mutex::new(VecDeque::new()), len: AtomicUsize::new(0) }
        }
        fn push(&self, value: T) {
            let mut items = self.items.lock().expect("not poisoned");
            items.push_back(value);
            self.len.store(items.len(), Ordering::Release);
        }
        fn pop_back(&self) -> Option<T> {
            let mut items = self.items.lock().expect("not poisoned");
            let value = items.pop_back();
            self.len.store(items.len(), Ordering::Release);
            value
        }
        fn pop_front(&self) -> Option<T> {
            let mut items = self.items.lock().expect("not poisoned");
            let value = items.pop_front();
            self.len.store(items.len(), Ordering::Release);
            value
        }
        fn is_empty(&self) -> bool {
            self.len.load(Ordering::Acquire) == 0
        }
    }

    /// The owner's end of a LIFO deque.
    pub(crate) struct Worker<T>(Arc<Shared<T>>);

    /// A thief's end of a deque.
    pub(crate) struct Stealer<T>(Arc<Shared<T>>);

    impl<T> Clone for Stealer<T> {
        fn clone(&self) -> Stealer<T> {
            Stealer(Arc::clone(&self.0))
        }
    }

    impl<T> Worker<T> {
        pub(crate) fn new_lifo() -> Worker<T> {
            Worker(Arc::new(Shared::new()))
        }
        pub(crate) fn stealer(&self) -> Stealer<T> {
            Stealer(Arc::clone(&self.0))
        }
        pub(crate) fn push(&self, value: T) {
            self.0.push(value);
        }
        pub(crate) fn pop(&self) -> Option<T> {
            self.0.pop_back()
        }
        pub(crate) fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
    }

    impl<T> Stealer<T> {
        pub(crate) fn steal(&self) -> Steal<T> {
            match self.0.pop_front() {
                Some(value) => Steal::Success(value),
                None => Steal::Empty,
            }
        }
        pub(crate) fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
    }

    /// The shared FIFO queue.
    pub(crate) struct Injector<T>(Shared<T>);

    impl<T> Injector<T> {
        pub(crate) fn new() -> Injector<T> {
            Injector(Shared::new())
        }
        pub(crate) fn push(&self, value: T) {
            self.0.push(value);
        }
        pub(crate) fn steal(&self) -> Steal<T> {
            match self.0.pop_front() {
                Some(value) => Steal::Success(value),
                None => Steal::Empty,
            }
        }
        /// Takes one job (crossbeam moves a batch into `_destination` too; one keeps the
        /// model small and changes no protocol step).
        pub(crate) fn steal_batch_and_pop(&self, _destination: &Worker<T>) -> Steal<T> {
            self.steal()
        }
        pub(crate) fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
    }
}

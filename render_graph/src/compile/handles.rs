//! The handles a pass holds, of three kinds, so the compiler tells reads from writes:
//!
//! - a resource as `register` names it ([`ImageHandle`], [`BufferHandle`]): what
//!   `create_image`, `image`, `history_buffer` and friends return; `Copy`, and good for
//!   nothing but declaring an access;
//! - a **read** handle ([`ImageRead`], [`BufferRead`]): what a read access returns (sampled,
//!   storage read, uniform, indirect, index, vertex, depth read, transfer read, history
//!   reads); `Copy`, passed by value;
//! - a **write** handle ([`ImageWrite`], [`BufferWrite`]): what a write access returns
//!   (storage write or read-write, attachments, transfer write); neither `Copy` nor `Clone`,
//!   lent by reference (`&BufferWrite`) to whatever records the write.
//!
//! What resolves a resource, or binds it for a shader to read, takes either accessed kind
//! ([`AccessedImage`], [`AccessedBuffer`]: a read handle, or a reference to a write handle);
//! what records a write takes the write handle alone. A descriptor made from a read handle is
//! refused at a slot the shader may write.

/// An image of the graph as `register` names it (created, referred to or last frame's
/// version); valid for the graph it was registered in. Declaring an access turns it into an
/// [`ImageRead`] or an [`ImageWrite`], which is what the other methods of a pass use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageHandle(pub(crate) u32);

/// A buffer of the graph as `register` names it; declaring an access turns it into a
/// [`BufferRead`] or a [`BufferWrite`] (see [`ImageHandle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferHandle(pub(crate) u32);

/// An image this pass reads (sampled, storage read, depth read, transfer source, last
/// frame's version): `Copy`; binds only to slots the shader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageRead(pub(crate) u32);

/// A buffer this pass reads (storage read, uniform, indirect arguments, index or vertex
/// buffer, transfer source, last frame's version): `Copy`; binds only to slots the shader
/// reads.
///
/// It does not stand where a write is required (an upload writes its buffer):
///
/// ```compile_fail,E0308
/// fn upload(context: &mut render_graph::PrepareContext, source: render_graph::BufferRead) {
///     let _ = context.upload_buffer(&source, 0, &[0; 4]);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferRead(pub(crate) u32);

/// An image this pass writes (storage write or read-write, color or depth attachment,
/// transfer destination): neither `Copy` nor `Clone`, so the pass that declared the write
/// holds it and lends it (`&ImageWrite`) to what records the write. A barrier between this
/// pass's own writes takes it, and a read handle does not do:
///
/// ```compile_fail,E0308
/// fn reduce(context: &mut render_graph::ExecuteContext, pyramid: render_graph::ImageRead) {
///     context.mip_barrier(&pyramid, 0);
/// }
/// ```
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ImageWrite(pub(crate) u32);

/// A buffer this pass writes (storage write or read-write, transfer destination): neither
/// `Copy` nor `Clone` (see [`ImageWrite`]); what records a write borrows it:
///
/// ```
/// fn upload(context: &mut render_graph::PrepareContext, target: &render_graph::BufferWrite) {
///     let _ = context.upload_buffer(target, 0, &[0; 4]);
/// }
/// ```
///
/// It cannot be copied:
///
/// ```compile_fail,E0382
/// fn twice(target: render_graph::BufferWrite) -> (render_graph::BufferWrite, render_graph::BufferWrite) {
///     (target, target)
/// }
/// ```
///
/// nor cloned:
///
/// ```compile_fail,E0599
/// fn again(target: render_graph::BufferWrite) -> (render_graph::BufferWrite, render_graph::BufferWrite) {
///     (target.clone(), target)
/// }
/// ```
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BufferWrite(pub(crate) u32);

mod sealed {
    /// What the accessed-handle traits read of a handle; outside the crate it cannot be
    /// named, so only this crate's handles are accessed handles.
    pub trait Handle {
        /// The resource's index in the graph and whether the handle is a write handle.
        #[doc(hidden)]
        fn raw(self) -> (u32, bool);
    }
}

/// An image handle a pass may resolve or bind: an [`ImageRead`] (or a reference to one) or a
/// reference to an [`ImageWrite`].
pub trait AccessedImage: sealed::Handle + Copy {}

/// A buffer handle a pass may resolve or bind: a [`BufferRead`] (or a reference to one) or a
/// reference to a [`BufferWrite`].
pub trait AccessedBuffer: sealed::Handle + Copy {}

macro_rules! accessed {
    ($trait:ident, $read:ident, $write:ident) => {
        impl sealed::Handle for $read {
            fn raw(self) -> (u32, bool) {
                (self.0, false)
            }
        }
        impl sealed::Handle for &$read {
            fn raw(self) -> (u32, bool) {
                (self.0, false)
            }
        }
        impl sealed::Handle for &$write {
            fn raw(self) -> (u32, bool) {
                (self.0, true)
            }
        }
        impl $trait for $read {}
        impl $trait for &$read {}
        impl $trait for &$write {}
    };
}

accessed!(AccessedImage, ImageRead, ImageWrite);
accessed!(AccessedBuffer, BufferRead, BufferWrite);

/// The resource index and whether it is written, of an accessed handle.
#[inline]
pub(crate) fn raw_handle(handle: impl sealed::Handle) -> (u32, bool) {
    handle.raw()
}

mod sealed_named {
    /// Keeps [`super::Named`] to this crate's handles.
    pub trait NamedHandle {}
}

/// A resource as `register` names it ([`ImageHandle`], [`BufferHandle`]), for declarations
/// that concern the resource rather than one access, such as
/// [`crate::Registry::claim_engine_write`].
pub trait Named: sealed_named::NamedHandle + Copy {
    /// The resource's index in the graph.
    #[doc(hidden)]
    fn index(self) -> u32;
}

impl sealed_named::NamedHandle for ImageHandle {}
impl sealed_named::NamedHandle for BufferHandle {}

impl Named for ImageHandle {
    fn index(self) -> u32 {
        self.0
    }
}

impl Named for BufferHandle {
    fn index(self) -> u32 {
        self.0
    }
}

//! What can keep the truth checks from answering.

use std::fmt;
use std::path::PathBuf;

/// Why a truth check could not answer (it never means culling was wrong: that is in its
/// answer).
#[derive(Debug)]
pub enum TruthError {
    /// The reference renderer's graph or device failed.
    Graph(render_graph::GraphError),
    /// The frame has no camera: nothing to draw.
    NoView,
    /// The frame has more objects than the reference renderer has room for (an id image
    /// names at most 2^24 objects; the scene grows, unless device memory is exhausted).
    Capacity {
        /// Objects of the frame.
        objects: usize,
        /// The renderer's capacity.
        capacity: u32,
    },
    /// An object names a mesh the library lacks.
    MissingMesh {
        /// The object's slot.
        object: usize,
        /// The mesh it names.
        mesh: u32,
    },
    /// A mesh added to the reference renderer is unusable.
    Mesh(meshes::LibraryError),
    /// The standard passes gave no readback of the image.
    NoReadback,
    /// The frame to check was not drawn (the Render stage's error, or no image kept).
    Frame(String),
    /// The GPU culled the shadow casters but their bits were not read back (install with
    /// [`crate::BitsReadback::Wait`]).
    CasterBitsMissing,
    /// A PNG could not be written.
    Png(PathBuf, std::io::Error),
    /// The clear colour's alpha (given) rounds to byte 0, the object-id image's mark of an
    /// object: the sky could not be told from object 0.
    ClearAlpha(f32),
    /// A window view's rectangle (left, top, width, height) does not lie in the frame's
    /// image, or the reference renderer does not draw at its size.
    ViewRect {
        /// The view's rectangle.
        rect: [u32; 4],
        /// The frame image's size.
        image: (u32, u32),
        /// The reference renderer's size.
        reference: (u32, u32),
    },
}

impl fmt::Display for TruthError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TruthError::Graph(error) => write!(formatter, "{error}"),
            TruthError::NoView => write!(formatter, "no camera this frame: nothing to draw"),
            TruthError::Capacity { objects, capacity } => {
                write!(formatter, "{objects} objects exceed the reference renderer's capacity of {capacity}")
            }
            TruthError::MissingMesh { object, mesh } => {
                write!(formatter, "object {object} names mesh {mesh}, which the library lacks")
            }
            TruthError::NoReadback => write!(formatter, "the scene passes gave no readback of the image"),
            TruthError::Frame(error) => write!(formatter, "the frame was not drawn: {error}"),
            TruthError::Mesh(error) => write!(formatter, "the mesh cannot be added: {error}"),
            TruthError::CasterBitsMissing => {
                write!(formatter, "the GPU culled the shadow casters but their bits were not read back")
            }
            TruthError::Png(path, error) => write!(formatter, "writing {}: {error}", path.display()),
            TruthError::ViewRect { rect, image, reference } => write!(
                formatter,
                "the view's rectangle {rect:?} does not lie in the {image:?} image or differs from the reference's size \
                 {reference:?}"
            ),
            TruthError::ClearAlpha(alpha) => {
                write!(
                    formatter,
                    "the clear colour's alpha {alpha} rounds to 0, which the object-id image keeps for objects"
                )
            }
        }
    }
}

impl std::error::Error for TruthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TruthError::Graph(error) => Some(error),
            TruthError::Png(_, error) => Some(error),
            TruthError::Mesh(error) => Some(error),
            _ => None,
        }
    }
}

impl From<render_graph::GraphError> for TruthError {
    fn from(error: render_graph::GraphError) -> TruthError {
        TruthError::Graph(error)
    }
}

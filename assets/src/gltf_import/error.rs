//! What can be wrong with a glTF file, one variant per kind of problem, each naming where.

use std::fmt;

use crate::mesh::MeshError;

/// Why a glTF file could not be loaded. `Display` gives one line naming the problem.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportError {
    /// The file (or an external buffer) could not be read.
    Io {
        /// The path.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The binary container (.glb) is malformed or cut short.
    Glb(String),
    /// The JSON is malformed or breaks a rule of the glTF schema.
    Json(String),
    /// A buffer's data cannot be had.
    Buffer {
        /// The buffer's index.
        buffer: usize,
        /// What is wrong.
        reason: String,
    },
    /// An accessor cannot be read as the attribute or index list it is used as.
    Accessor {
        /// The accessor's index.
        accessor: usize,
        /// What is wrong.
        reason: String,
    },
    /// A primitive's triangles are unusable (no triangle, index past the vertices, NaN).
    Mesh {
        /// The glTF mesh.
        mesh: usize,
        /// The primitive within it.
        primitive: usize,
        /// The defect.
        error: MeshError,
    },
    /// The node graph is not a forest (a cycle, or a node with two parents).
    NodeGraph {
        /// A node on the cycle or with a second parent.
        node: usize,
        /// Which of the two.
        reason: &'static str,
    },
    /// A node's transform is not finite.
    Transform {
        /// The node.
        node: usize,
    },
    /// A camera's projection is unusable.
    Camera {
        /// The camera's index.
        camera: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A buffer view's `EXT_meshopt_compression` (or `KHR_meshopt_compression`) data is
    /// malformed: its parameters break the extension's rules or the stream does not decode.
    Compression {
        /// The buffer view's index.
        view: usize,
        /// What is wrong.
        reason: String,
    },
    /// A skin is unusable (see the skins module for what is an error and what is repaired).
    Skin {
        /// The skin's index.
        skin: usize,
        /// What is wrong.
        reason: String,
    },
    /// An animation is unusable (a sampler's times or outputs).
    Animation {
        /// The animation's index.
        animation: usize,
        /// What is wrong.
        reason: String,
    },
    /// A feature this importer does not read (an extension the file requires that the
    /// importer cannot honour).
    Unsupported(String),
}

impl fmt::Display for ImportError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Io { path, reason } => write!(formatter, "cannot read {path}: {reason}"),
            ImportError::Glb(reason) => write!(formatter, "bad .glb container: {reason}"),
            ImportError::Json(reason) => write!(formatter, "bad glTF JSON: {reason}"),
            ImportError::Buffer { buffer, reason } => write!(formatter, "buffer {buffer}: {reason}"),
            ImportError::Accessor { accessor, reason } => write!(formatter, "accessor {accessor}: {reason}"),
            ImportError::Mesh { mesh, primitive, error } => {
                write!(formatter, "mesh {mesh} primitive {primitive}: {error}")
            }
            ImportError::NodeGraph { node, reason } => write!(formatter, "node {node}: {reason}"),
            ImportError::Transform { node } => write!(formatter, "node {node}: the transform is not finite"),
            ImportError::Camera { camera, reason } => write!(formatter, "camera {camera}: {reason}"),
            ImportError::Compression { view, reason } => write!(formatter, "buffer view {view}: {reason}"),
            ImportError::Skin { skin, reason } => write!(formatter, "skin {skin}: {reason}"),
            ImportError::Animation { animation, reason } => write!(formatter, "animation {animation}: {reason}"),
            ImportError::Unsupported(what) => write!(formatter, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for ImportError {}

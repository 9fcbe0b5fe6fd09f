//! Why a library refused a mesh, texture or material.

use std::fmt;

/// What a [`crate::MeshLibrary`] refused to add, and why. Nothing is added on an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibraryError {
    /// A mesh or one of its levels is unusable (no triangle, an index past the vertices, a
    /// non-finite position or normal, a meshlet outside its level, …).
    InvalidMesh(&'static str),
    /// A texture layer is unusable (not a square power of two, another size than the first
    /// layer's, a short mip chain, too many layers).
    InvalidTexture(&'static str),
    /// A material is unusable (a texture the library does not have, a non-finite cutoff).
    InvalidMaterial(&'static str),
}

impl LibraryError {
    /// What is wrong, without the kind of thing it is wrong with.
    pub fn reason(&self) -> &'static str {
        match self {
            LibraryError::InvalidMesh(reason)
            | LibraryError::InvalidTexture(reason)
            | LibraryError::InvalidMaterial(reason) => reason,
        }
    }
}

impl fmt::Display for LibraryError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            LibraryError::InvalidMesh(_) => "mesh",
            LibraryError::InvalidTexture(_) => "texture",
            LibraryError::InvalidMaterial(_) => "material",
        };
        write!(formatter, "invalid {what}: {}", self.reason())
    }
}

impl std::error::Error for LibraryError {}

/// The result of a library's additions.
pub type Result<T> = std::result::Result<T, LibraryError>;

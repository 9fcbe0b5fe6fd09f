//! The simplification error of each level of detail, for the rule that picks levels by the
//! pixels their error covers.

use crate::lod::Lod;
use crate::render::MeshHandle;

/// Per mesh id, the simplification error meshopt reported when it made that mesh as a level
/// of a chain (mesh units, 0 for a chain's finest level), or none: a resource the renderer
/// inserts from its mesh library when it is installed (`meshes::MeshLibrary::level_error`),
/// and a game may fill itself (meshes it adds while running, tests).
///
/// An entity's [`Lod`] whose every level has an error here is chosen by the error rule (the
/// levels' `max_distance`s and the entity's `bias` are then unused; the global
/// [`RenderSettings::lod_bias`](crate::RenderSettings::lod_bias) still applies, through the
/// threshold); a `Lod` with a level without an error keeps the distance rule. The culling
/// crate's `select_lod_by_error` documents the rule; the CPU's Visibility stage and the GPU's
/// culls read the same errors.
///
/// ```
/// use ecs::{LodErrors, MeshHandle};
/// let mut errors = LodErrors::default();
/// errors.set(MeshHandle(3), Some(0.02));
/// assert_eq!(errors.get(MeshHandle(3)), Some(0.02));
/// assert_eq!(errors.get(MeshHandle(2)), None);
/// assert_eq!(errors.get(MeshHandle(90)), None, "an id past the table has none");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LodErrors {
    /// Indexed by mesh id; NaN for none.
    errors: Vec<f32>,
    /// Meshes with an error.
    count: usize,
    /// Counts the changes (see [`LodErrors::generation`]).
    generation: u32,
}

impl LodErrors {
    /// The errors of meshes `0..count`, `error_of(id)` each (none for `None` or a NaN).
    pub fn from_fn(count: u32, mut error_of: impl FnMut(u32) -> Option<f32>) -> LodErrors {
        let errors: Vec<f32> = (0..count).map(|id| error_of(id).unwrap_or(f32::NAN)).collect();
        let count = errors.iter().filter(|error| !error.is_nan()).count();
        LodErrors { errors, count, generation: 0 }
    }

    /// Records `mesh`'s error (`None`, or a NaN, removes it), growing the table as needed.
    pub fn set(&mut self, mesh: MeshHandle, error: Option<f32>) {
        let index = mesh.0 as usize;
        if index >= self.errors.len() {
            if error.is_none() {
                return;
            }
            self.errors.resize(index + 1, f32::NAN);
        }
        let error = error.unwrap_or(f32::NAN);
        self.count = self.count + usize::from(!error.is_nan()) - usize::from(!self.errors[index].is_nan());
        self.errors[index] = error;
        self.generation = self.generation.wrapping_add(1);
    }

    /// A number that changes with every [`LodErrors::set`]: the Visibility stage picks every
    /// level again when it moves.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// `mesh`'s error, if it has one.
    #[inline]
    pub fn get(&self, mesh: MeshHandle) -> Option<f32> {
        self.errors.get(mesh.0 as usize).copied().filter(|error| !error.is_nan())
    }

    /// Whether every level of `lod` has an error (and it has a level): such a chain is chosen
    /// by the error rule.
    #[inline]
    pub fn covers(&self, lod: &Lod) -> bool {
        !lod.levels.is_empty() && lod.levels.iter().all(|level| self.get(level.mesh).is_some())
    }

    /// Whether no mesh has an error (every chain keeps the distance rule).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LodLevel;

    #[test]
    fn a_chain_is_covered_only_when_every_level_has_an_error() {
        let mut errors = LodErrors::from_fn(4, |id| (id < 2).then_some(id as f32 * 0.01));
        let level = |id| LodLevel { mesh: MeshHandle(id), max_distance: 1.0 };
        let lod = |ids: &[u32]| Lod { levels: ids.iter().map(|&id| level(id)).collect(), bias: 1.0 };
        assert!(errors.covers(&lod(&[0, 1])));
        assert!(!errors.covers(&lod(&[0, 1, 2])), "level 2 has no error");
        assert!(!errors.covers(&lod(&[])), "no levels: nothing to choose");
        errors.set(MeshHandle(2), Some(0.5));
        assert!(errors.covers(&lod(&[0, 1, 2])));
        errors.set(MeshHandle(1), None);
        assert!(!errors.covers(&lod(&[0, 1])), "an error removed");
        errors.set(MeshHandle(40), None);
        assert_eq!(errors.get(MeshHandle(40)), None, "removing past the table grows nothing");
        assert!(!LodErrors::default().covers(&lod(&[0])));
        assert!(LodErrors::default().is_empty());
        assert!(!errors.is_empty());
        for id in 0..4 {
            errors.set(MeshHandle(id), None);
        }
        assert!(errors.is_empty(), "every error removed");
    }
}

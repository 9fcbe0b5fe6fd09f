//! The registry of occluders: which mesh stands for which occluder, and which materials let
//! light through (an object drawn in one hides nothing behind it, whatever its mesh).

use ecs::{MaterialHandle, MeshHandle};

use super::OccluderMesh;

/// The occluder of each mesh, by mesh handle, and the materials that never occlude: a
/// registry resource read by the Visibility stage when occlusion culling is on.
///
/// An object occludes when the mesh it draws this frame (its level of detail) has an
/// occluder and its material is not see-through ([`OccluderMeshes::set_see_through`]): a
/// wall drawn in glass or with alpha-masked holes hides nothing.
///
/// ```
/// use culling::occlusion::{OccluderMesh, OccluderMeshes};
/// use ecs::{Aabb, MaterialHandle, MeshHandle};
/// use glam::Vec3;
///
/// let mut occluders = OccluderMeshes::new();
/// let wall = OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::ONE)).expect("a valid box");
/// occluders.insert(MeshHandle(3), wall);
/// occluders.set_see_through(MaterialHandle(1), true);
/// assert!(occluders.occludes(MeshHandle(3), MaterialHandle(0)));
/// assert!(!occluders.occludes(MeshHandle(3), MaterialHandle(1)), "glass hides nothing");
/// ```
#[derive(Clone, Debug)]
pub struct OccluderMeshes {
    meshes: Vec<Option<OccluderMesh>>,
    /// A bit per material id: set when the material lets light through.
    see_through: Vec<u64>,
    /// Changes with every edit, and differs between registries made apart, so a cache of
    /// which objects are occluders knows when to look again.
    generation: u64,
}

/// The source of [`OccluderMeshes::generation`] values, unique in the process.
static NEXT_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for OccluderMeshes {
    fn default() -> Self {
        OccluderMeshes { meshes: Vec::new(), see_through: Vec::new(), generation: next_generation() }
    }
}

impl OccluderMeshes {
    /// An empty registry.
    pub fn new() -> OccluderMeshes {
        OccluderMeshes::default()
    }

    /// A value that changes whenever the registry does (and differs between registries),
    /// for caches of which objects are occluders.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Registers (or replaces) the occluder of `mesh`. A [`MeshHandle::NONE`] is ignored.
    pub fn insert(&mut self, mesh: MeshHandle, occluder: OccluderMesh) {
        if !mesh.is_some() {
            return;
        }
        let index = mesh.0 as usize;
        if self.meshes.len() <= index {
            self.meshes.resize(index + 1, None);
        }
        self.meshes[index] = Some(occluder);
        self.generation = next_generation();
    }

    /// Removes the occluder of `mesh`, returning it.
    pub fn remove(&mut self, mesh: MeshHandle) -> Option<OccluderMesh> {
        self.generation = next_generation();
        self.meshes.get_mut(mesh.0 as usize).and_then(Option::take)
    }

    /// The occluder of `mesh`, if one is registered.
    pub fn get(&self, mesh: MeshHandle) -> Option<&OccluderMesh> {
        self.meshes.get(mesh.0 as usize).and_then(Option::as_ref)
    }

    /// Marks `material` as letting light through (blended, alpha-masked) or not: objects
    /// drawn in a see-through material never occlude. A [`MaterialHandle::NONE`] is ignored.
    pub fn set_see_through(&mut self, material: MaterialHandle, see_through: bool) {
        if material == MaterialHandle::NONE {
            return;
        }
        let (word, bit) = (material.0 as usize / 64, material.0 % 64);
        if self.see_through.len() <= word {
            self.see_through.resize(word + 1, 0);
        }
        let before = self.see_through[word];
        if see_through {
            self.see_through[word] |= 1 << bit;
        } else {
            self.see_through[word] &= !(1 << bit);
        }
        if self.see_through[word] != before {
            self.generation = next_generation();
        }
    }

    /// Whether `material` lets light through ([`OccluderMeshes::set_see_through`]).
    #[inline]
    pub fn is_see_through(&self, material: MaterialHandle) -> bool {
        let word = material.0 as usize / 64;
        self.see_through.get(word).is_some_and(|bits| bits & (1 << (material.0 % 64)) != 0)
    }

    /// Whether an object drawing `mesh` in `material` occludes: the mesh has an occluder and
    /// the material is not see-through.
    #[inline]
    pub fn occludes(&self, mesh: MeshHandle, material: MaterialHandle) -> bool {
        self.get(mesh).is_some() && !self.is_see_through(material)
    }

    /// Number of registered occluders.
    pub fn len(&self) -> usize {
        self.meshes.iter().filter(|mesh| mesh.is_some()).count()
    }

    /// Whether no occluder is registered.
    pub fn is_empty(&self) -> bool {
        self.meshes.iter().all(Option::is_none)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecs::Aabb;
    use glam::Vec3;

    #[test]
    fn see_through_materials_change_the_generation_only_when_they_change() {
        let mut occluders = OccluderMeshes::new();
        occluders.insert(MeshHandle(0), OccluderMesh::from_box(&Aabb::new(Vec3::ZERO, Vec3::ONE)).expect("a box"));
        let before = occluders.generation();
        occluders.set_see_through(MaterialHandle(130), true);
        assert_ne!(occluders.generation(), before, "a cache of occluder bits must look again");
        let marked = occluders.generation();
        occluders.set_see_through(MaterialHandle(130), true);
        assert_eq!(occluders.generation(), marked, "nothing changed");
        assert!(!occluders.occludes(MeshHandle(0), MaterialHandle(130)));
        assert!(occluders.occludes(MeshHandle(0), MaterialHandle(129)));
        assert!(!occluders.occludes(MeshHandle(1), MaterialHandle(0)), "no occluder for that mesh");
        occluders.set_see_through(MaterialHandle(130), false);
        assert!(occluders.occludes(MeshHandle(0), MaterialHandle(130)));
        occluders.set_see_through(MaterialHandle::NONE, true);
        assert!(!occluders.is_see_through(MaterialHandle::NONE));
    }
}

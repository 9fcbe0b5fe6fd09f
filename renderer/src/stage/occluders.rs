//! Occluders for the CPU occlusion culling, found in the render meshes themselves: every
//! closed mesh of the library may occlude, by its inner box, so the Visibility stage chooses
//! occluders by their size on screen in this view instead of among the few kinds a game
//! thought to register (a game that registered only its houses loses the rocks, carts and
//! crowds that fill a street-level view).

use culling::occlusion::{OccluderMesh, OccluderMeshes};
use ecs::{MaterialHandle, MeshHandle};
use glam::Vec3;
use meshes::MeshLibrary;

/// What [`derive_occluders`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DerivedOccluders {
    /// Meshes that got an occluder of their own.
    pub derived: usize,
    /// Meshes that already had one (the game's own, kept).
    pub registered: usize,
    /// Meshes that cannot occlude: open surfaces (a ground plane, a leaf card), solids whose
    /// bounds' centre lies outside them (a ring, an arch), malformed triangles.
    pub open: usize,
}

/// Meshes per job: an inner box tests every triangle of its mesh some twenty times, so one
/// mesh is work enough.
const MESH_GRAIN: usize = 1;

/// Gives every mesh of `library` without a registered occluder its inner box
/// ([`OccluderMesh::inner_box_of`], conservative by construction: the box lies inside the
/// surface, so what it hides the mesh hides) and marks the library's see-through materials
/// (alpha-masked or blended: [`OccluderMeshes::set_see_through`]), so that an object drawn
/// in one never occludes. Each level of detail gets the box of its own triangles (a coarser
/// level's surface may lie inside the finer one's). Runs on the current job system.
///
/// The renderer calls it when it is installed ([`ecs::RenderSettings::occluders_from_meshes`]);
/// a game that adds meshes later calls it again with its library.
///
/// ```
/// use culling::occlusion::OccluderMeshes;
/// use meshes::MeshLibrary;
///
/// let library = MeshLibrary::with_unit_cube();
/// let mut occluders = OccluderMeshes::new();
/// let found = renderer::derive_occluders(&library, &mut occluders);
/// assert_eq!(found.derived, 1, "the cube is closed");
/// assert!(occluders.get(ecs::MeshHandle(0)).is_some());
/// ```
pub fn derive_occluders(library: &MeshLibrary, occluders: &mut OccluderMeshes) -> DerivedOccluders {
    runtime::profile_zone!("derive occluders");
    for material in 0..library.materials().len() as u32 {
        let see_through = library.material_has_holes(material) || library.material_blends(material);
        occluders.set_see_through(MaterialHandle(material), see_through);
    }
    let mut found = vec![Found::Registered; library.len()];
    let registered = |mesh: usize| occluders.get(MeshHandle(mesh as u32)).is_some();
    runtime::jobs::parallel_for_chunks(&mut found, MESH_GRAIN, |first, chunk| {
        for (offset, slot) in chunk.iter_mut().enumerate() {
            let mesh = first + offset;
            if !registered(mesh) {
                *slot = inner_box_of_mesh(library, mesh as u32).map_or(Found::Open, Found::Derived);
            }
        }
    });
    let mut totals = DerivedOccluders::default();
    for (mesh, found) in found.into_iter().enumerate() {
        match found {
            Found::Registered => totals.registered += 1,
            Found::Open => totals.open += 1,
            Found::Derived(occluder) => {
                occluders.insert(MeshHandle(mesh as u32), occluder);
                totals.derived += 1;
            }
        }
    }
    totals
}

/// One mesh's outcome in [`derive_occluders`].
#[derive(Clone)]
enum Found {
    Registered,
    Open,
    Derived(OccluderMesh),
}

/// The inner-box occluder of library mesh `mesh`, from the vertices its triangles use.
fn inner_box_of_mesh(library: &MeshLibrary, mesh: u32) -> Option<OccluderMesh> {
    let range = library.range(mesh)?;
    let first = range.first_index as usize;
    let indices = library.indices().get(first..first + range.index_count as usize)?;
    let base = i64::from(range.vertex_offset);
    let all_positions = library.positions();
    // Only the vertices this level uses (levels of one mesh share their vertices), renumbered.
    let mut local = std::collections::HashMap::with_capacity(indices.len() / 2);
    let mut positions = Vec::new();
    let mut local_indices = Vec::with_capacity(indices.len());
    for &index in indices {
        let vertex = usize::try_from(base + i64::from(index)).ok()?;
        let [x, y, z, _] = *all_positions.get(vertex)?;
        let next = positions.len() as u32;
        let renumbered = *local.entry(vertex).or_insert_with(|| {
            positions.push(Vec3::new(x, y, z));
            next
        });
        local_indices.push(renumbered);
    }
    OccluderMesh::inner_box_of(&positions, &local_indices).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshes::Material;

    #[test]
    fn closed_meshes_occlude_open_ones_do_not_and_registered_ones_stay() {
        let mut library = MeshLibrary::new();
        let cube = library.add_unit_cube();
        // One quad: an open surface.
        let quad = library
            .add_mesh(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]], &[0, 1, 2, 0, 2, 3]);
        let quad = quad.expect("a valid quad");
        let second_cube = library.add_unit_cube();
        let glass = library.add_material(Material { blend: true, ..Material::default() }).expect("a material");
        let mut occluders = OccluderMeshes::new();
        let own = OccluderMesh::from_box(&ecs::Aabb::new(Vec3::splat(-0.1), Vec3::splat(0.1))).expect("a box");
        occluders.insert(MeshHandle(second_cube), own.clone());
        let found = derive_occluders(&library, &mut occluders);
        assert_eq!(found, DerivedOccluders { derived: 1, registered: 1, open: 1 });
        assert!(occluders.get(MeshHandle(cube)).is_some());
        assert!(occluders.get(MeshHandle(quad)).is_none(), "an open quad hides nothing");
        assert_eq!(occluders.get(MeshHandle(second_cube)), Some(&own), "the game's own occluder is kept");
        assert!(occluders.is_see_through(MaterialHandle(glass)), "a blended material never occludes");
        assert!(!occluders.is_see_through(MaterialHandle::PLAIN));
        // The derived box lies inside the unit cube.
        let occluder = occluders.get(MeshHandle(cube)).expect("derived");
        let range = library.range(cube).expect("the cube");
        let (low, high) = (Vec3::from(range.bounds_min), Vec3::from(range.bounds_max));
        assert!(
            occluder.positions().iter().all(|p| p.cmpge(low).all() && p.cmple(high).all()),
            "{:?}",
            occluder.positions()
        );
    }
}

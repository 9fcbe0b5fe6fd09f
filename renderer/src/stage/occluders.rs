//! Occluders for the CPU occlusion culling, found in the render meshes themselves: every
//! closed mesh of the library may occlude, by its inner box, so the Visibility stage chooses
//! occluders by their size on screen in this view instead of among the few kinds a game
//! thought to register (a game that registered only its houses loses the rocks, carts and
//! crowds that fill a street-level view).
//!
//! Meshes added while frames run get theirs too ([`OccluderChanges`]): one box for all of a
//! mesh's levels, lying inside every level (an object whose chosen level is not on the GPU
//! draws a coarser one, or the box of its bounds, and the occluder must hide nothing the
//! drawn level does not), derived on the thread that adds the mesh (or given derived already,
//! by a loader thread: [`streamed_occluder`]) and handed to the `OccluderMeshes` resource at
//! the start of the next frame; a removed or replaced mesh's
//! levels lose theirs, and a material added or replaced at run time is marked see-through
//! when it has holes.

use std::ops::Range;
use std::sync::{Arc, Mutex};

pub use culling::occlusion::streamed_occluder;
use culling::occlusion::{inner_box_of_level, OccluderMesh, OccluderMeshes};
use ecs::{MaterialHandle, MeshHandle};
use glam::Vec3;
use meshes::MeshLibrary;
use runtime::{ResMut, System};

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

/// The occluder changes of the meshes and materials added, replaced and removed while frames
/// run, waiting for the next frame's [`occluder_changes_system`] (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct OccluderChanges {
    /// Levels and the occluder they get (`None`: they lose theirs).
    meshes: Vec<(Range<u32>, Option<OccluderMesh>)>,
    /// Materials and whether they are see-through.
    see_through: Vec<(u32, bool)>,
}

/// [`OccluderChanges`] shared by the renderer's `RenderMeshes` and the system applying them.
pub(crate) type SharedOccluderChanges = Arc<Mutex<OccluderChanges>>;

impl OccluderChanges {
    /// Notes the occluder of the levels `ids` of a mesh added or replaced with `vertices` and
    /// `levels` (none when one of its levels is open or malformed, see
    /// [`streamed_occluder`]).
    pub(crate) fn note_mesh(
        changes: &SharedOccluderChanges,
        ids: Range<u32>,
        positions: &[[f32; 3]],
        levels: &[&[u32]],
    ) {
        let occluder = streamed_occluder(positions, levels);
        OccluderChanges::note_derived(changes, ids, occluder);
    }

    /// Notes `occluder`, derived by the caller as [`streamed_occluder`] derives it, for the
    /// levels `ids` of a mesh added or replaced (`None`: they occlude nothing).
    pub(crate) fn note_derived(changes: &SharedOccluderChanges, ids: Range<u32>, occluder: Option<OccluderMesh>) {
        lock_changes(changes).meshes.push((ids, occluder));
    }

    /// Notes that levels `ids` (a removed mesh's) occlude no more.
    pub(crate) fn note_removed(changes: &SharedOccluderChanges, ids: Range<u32>) {
        lock_changes(changes).meshes.push((ids, None));
    }

    /// Notes whether material `id` (added or replaced) lets light through.
    pub(crate) fn note_material(changes: &SharedOccluderChanges, id: u32, material: &meshes::Material) {
        lock_changes(changes).see_through.push((id, material.has_holes()));
    }
}

fn lock_changes(changes: &SharedOccluderChanges) -> std::sync::MutexGuard<'_, OccluderChanges> {
    changes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Name of the system [`occluder_changes_system`] makes.
pub(crate) const OCCLUDER_CHANGES_SYSTEM: &str = "render occluder changes";

/// The Input-stage system handing the waiting [`OccluderChanges`] to the `OccluderMeshes`
/// resource, before the Visibility stage reads it.
pub(crate) fn occluder_changes_system(changes: SharedOccluderChanges) -> System {
    type Params = (Option<ResMut<'static, OccluderMeshes>>,);
    System::with_params::<Params>(OCCLUDER_CHANGES_SYSTEM, move |_, (occluders,)| {
        let Some(mut occluders) = occluders else { return };
        let mut changes = lock_changes(&changes);
        if changes.meshes.is_empty() && changes.see_through.is_empty() {
            return;
        }
        for (material, see_through) in changes.see_through.drain(..) {
            occluders.set_see_through(MaterialHandle(material), see_through);
        }
        for (ids, occluder) in changes.meshes.drain(..) {
            for level in ids {
                match &occluder {
                    Some(occluder) => occluders.insert(MeshHandle(level), occluder.clone()),
                    None => {
                        occluders.remove(MeshHandle(level));
                    }
                }
            }
        }
    })
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
    let all_positions = library.positions();
    let position = |vertex: usize| all_positions.get(vertex).map(|&[x, y, z, _]| Vec3::new(x, y, z));
    inner_box_of_level(position, indices, i64::from(range.vertex_offset))
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

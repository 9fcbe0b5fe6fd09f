//! One occluder for all the levels of detail of a mesh: a box lying inside every level's
//! surface, so an object drawing any of its levels (or a coarser stand-in) hides at least
//! what the box hides. Derived where a mesh is made or loaded (an asset loader's thread), so
//! the frame that adds the mesh only hands it over.

use ecs::Aabb;
use glam::Vec3;

use super::OccluderMesh;

/// One box occluder for every level of a mesh (positions shared by the levels, each level's
/// indices): each level's inner box
/// ([`OccluderMesh::inner_box_of`]) lies inside that level's surface, so a box inside all of
/// them lies inside every level's. It is the level box that every other level's contains
/// (open through the same side as far as theirs at least), else, when no level is open, the
/// intersection of the boxes; else none, as for a level that is open or malformed.
pub fn streamed_occluder(positions: &[[f32; 3]], levels: &[&[u32]]) -> Option<OccluderMesh> {
    let mut boxes = Vec::with_capacity(levels.len());
    for indices in levels {
        let occluder = inner_box_of_level(|vertex| positions.get(vertex).map(|&p| Vec3::from(p)), indices, 0)?;
        boxes.push((box_of(&occluder)?, occluder));
    }
    let contains = |outer: &Aabb, inner: &Aabb| outer.min.cmple(inner.min).all() && outer.max.cmpge(inner.max).all();
    // An open level hides nothing from its open side: the chosen box must be open as widely.
    let opens_as_widely = |chosen: &OccluderMesh, other: &OccluderMesh| match (chosen.open_side(), other.open_side()) {
        (_, None) => true,
        (Some(mine), Some(theirs)) => mine.truncate() == theirs.truncate() && mine.w >= theirs.w,
        (None, Some(_)) => false,
    };
    let inside_all = boxes.iter().find(|(chosen, occluder)| {
        boxes.iter().all(|(other, other_occluder)| contains(other, chosen) && opens_as_widely(occluder, other_occluder))
    });
    if let Some((_, occluder)) = inside_all {
        return Some(occluder.clone());
    }
    if boxes.iter().any(|(_, occluder)| occluder.open_side().is_some()) {
        return None;
    }
    let (first, _) = boxes.first()?;
    let common =
        boxes.iter().fold(*first, |common, (other, _)| Aabb::new(common.min.max(other.min), common.max.min(other.max)));
    OccluderMesh::from_box(&common).ok()
}

/// The box of an occluder's positions.
fn box_of(occluder: &OccluderMesh) -> Option<Aabb> {
    let positions = occluder.positions();
    let first = *positions.first()?;
    let (low, high) = positions.iter().fold((first, first), |(low, high), &p| (low.min(p), high.max(p)));
    Some(Aabb::new(low, high))
}

/// The inner-box occluder of the triangles `indices` (offset by `base`) name among the
/// vertices `position` gives (`None` for an open or malformed level).
pub fn inner_box_of_level(
    position: impl Fn(usize) -> Option<Vec3>,
    indices: &[u32],
    base: i64,
) -> Option<OccluderMesh> {
    // Only the vertices this level uses (levels of one mesh share their vertices), renumbered.
    let mut local = std::collections::HashMap::with_capacity(indices.len() / 2);
    let mut positions = Vec::new();
    let mut local_indices = Vec::with_capacity(indices.len());
    for &index in indices {
        let vertex = usize::try_from(base + i64::from(index)).ok()?;
        let at = position(vertex)?;
        let next = positions.len() as u32;
        let renumbered = *local.entry(vertex).or_insert_with(|| {
            positions.push(at);
            next
        });
        local_indices.push(renumbered);
    }
    OccluderMesh::inner_box_of(&positions, &local_indices).ok()
}

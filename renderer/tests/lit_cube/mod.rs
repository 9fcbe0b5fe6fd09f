//! A unit cube with a normal per face, for the tests whose pictures are lit (shadows): the
//! library's unit cube (`MeshLibrary::add_unit_cube`) has no normals and is drawn unlit, so
//! no shadow shows on it. `samples/tests/runtime_switches.rs` includes this file too.

use glam::Vec3;
use renderer::{MeshLibrary, MeshVertices};

/// A unit cube with a normal per face (24 vertices), counter-clockwise from outside.
pub fn lit_cube() -> MeshLibrary {
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut indices = Vec::new();
    for axis in 0..3 {
        for sign in [1.0f32, -1.0] {
            let normal = Vec3::from_array(std::array::from_fn(|i| if i == axis { sign } else { 0.0 }));
            let u = Vec3::from_array(std::array::from_fn(|i| if i == (axis + 1) % 3 { 1.0 } else { 0.0 }));
            let v = normal.cross(u);
            let base = positions.len() as u32;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push((normal * 0.5 + u * (0.5 * a) + v * (0.5 * b)).to_array());
                normals.push(normal.to_array());
            }
            indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    let mut library = MeshLibrary::new();
    let uvs = vec![[0.0, 0.0]; positions.len()];
    let vertices = MeshVertices { positions: &positions, normals: &normals, uvs: &uvs };
    library.add_mesh_levels(vertices, &[(&indices, &[])]).expect("the cube");
    library
}

//! A unit cube whose faces are each mapped once over a texture, and checkerboard textures
//! with their mip chains, for the tests of textures streamed while frames run.

use glam::Vec3;
use renderer::{MeshLibrary, MeshVertices};

/// A checkerboard `side` texels a side of `cells` cells a side in colours `a` and `b`, with its full mip chain
/// (each mip the 2x2 average of the one above).
pub fn checkerboard(side: u32, cells: u32, a: [u8; 4], b: [u8; 4]) -> Vec<Vec<u8>> {
    let side = side as usize;
    let cell = side / cells as usize;
    let mut level: Vec<u8> = (0..side * side)
        .flat_map(|texel| if ((texel % side) / cell + (texel / side) / cell).is_multiple_of(2) { a } else { b })
        .collect();
    let mut mips = vec![level.clone()];
    let mut width = side;
    while width > 1 {
        let half = width / 2;
        let mut next = vec![0u8; half * half * 4];
        for y in 0..half {
            for x in 0..half {
                for channel in 0..4 {
                    let at = |dx: usize, dy: usize| u32::from(level[((2 * y + dy) * width + 2 * x + dx) * 4 + channel]);
                    next[(y * half + x) * 4 + channel] = ((at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1)) / 4) as u8;
                }
            }
        }
        mips.push(next.clone());
        level = next;
        width = half;
    }
    mips
}

/// A unit cube with texture coordinates 0..1 over each face, normals per face.
pub fn textured_cube() -> MeshLibrary {
    let (mut positions, mut normals, mut uvs, mut indices) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for axis in 0..3 {
        for sign in [1.0f32, -1.0] {
            let normal = Vec3::from_array(std::array::from_fn(|i| if i == axis { sign } else { 0.0 }));
            let u = Vec3::from_array(std::array::from_fn(|i| if i == (axis + 1) % 3 { 1.0 } else { 0.0 }));
            let v = normal.cross(u);
            let base = positions.len() as u32;
            for (a, b) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push((normal * 0.5 + u * (0.5 * a) + v * (0.5 * b)).to_array());
                normals.push(normal.to_array());
                uvs.push([(a + 1.0) * 0.5, (b + 1.0) * 0.5]);
            }
            indices.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    let mut library = MeshLibrary::new();
    let vertices = MeshVertices { positions: &positions, normals: &normals, uvs: &uvs };
    library.add_mesh_levels(vertices, &[(&indices, &[])]).expect("the cube");
    library
}

//! Sparse accessors, and accessors without a buffer view.

use super::*;

/// A quad whose positions have no buffer view: zeros, with vertices 1 to 3 given sparsely.
fn sparse_quad(sparse_indices: &[u32]) -> Vec<u8> {
    let (document, builder) = sparse_quad_document(sparse_indices);
    builder.glb(&document)
}

/// The document of [`sparse_quad`] and its builder (holding the binary data).
pub(super) fn sparse_quad_document(sparse_indices: &[u32]) -> (Value, Builder) {
    let mut builder = Builder::default();
    let values = f32_bytes(&[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    let indices_view = builder.view(&u16_bytes(sparse_indices), None);
    let values_view = builder.view(&values, None);
    let positions = builder.accessor(json!({
        "componentType": 5126, "count": 4, "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0],
        "sparse": {
            "count": 3,
            "indices": { "bufferView": indices_view, "componentType": 5123 },
            "values": { "bufferView": values_view }
        }
    }));
    let triangles = builder.view(&u16_bytes(&[0, 1, 2, 0, 2, 3]), None);
    let triangles = builder.attribute(triangles, int(UNSIGNED_SHORT, false), "SCALAR", 6);
    let document = builder.document(
        json!([{ "attributes": { "POSITION": positions }, "indices": triangles }]),
        json!({}),
        json!({}),
    );
    (document, builder)
}

#[test]
fn a_sparse_accessor_without_a_view_carries_its_values_over_zeros() {
    let scene = load(&sparse_quad(&[1, 2, 3])).unwrap();
    let quad = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
    assert_triangles(&scene, &quad, &[0, 1, 2, 0, 2, 3], 0.0);
}

#[test]
fn sparse_indices_out_of_order_or_range_are_named() {
    for bad in [[2, 1, 3], [1, 2, 4], [1, 1, 2]] {
        let error = load(&sparse_quad(&bad)).unwrap_err();
        assert!(matches!(error, ImportError::Accessor { accessor: 0, .. }), "{bad:?}: {error}");
        assert!(error.to_string().contains("sparse index"), "{error}");
    }
}

#[test]
fn sparse_values_replace_dense_ones_and_a_viewless_attribute_reads_as_zeros() {
    let mut builder = Builder::default();
    let mut moved = CUBE;
    moved[6] = [0.75, 0.75, 0.75];
    let view = builder.view(&f32_bytes(CUBE.as_flattened()), None);
    let indices_view = builder.view(&[6, 0, 0, 0], None);
    let values_view = builder.view(&f32_bytes(&moved[6]), None);
    let positions = builder.accessor(json!({
        "bufferView": view, "componentType": 5126, "count": 8, "type": "VEC3",
        "min": [-0.5, -0.5, -0.5], "max": [0.75, 0.75, 0.75],
        "sparse": {
            "count": 1,
            "indices": { "bufferView": indices_view, "componentType": 5121 },
            "values": { "bufferView": values_view }
        }
    }));
    let uvs = builder.accessor(json!({ "componentType": 5126, "count": 8, "type": "VEC2" }));
    let indices = builder.view(&u16_bytes(&CUBE_INDICES), None);
    let indices = builder.attribute(indices, int(UNSIGNED_SHORT, false), "SCALAR", 36);
    let document = builder.document(
        json!([{ "attributes": { "POSITION": positions, "TEXCOORD_0": uvs }, "indices": indices }]),
        json!({}),
        json!({}),
    );
    let scene = load(&builder.glb(&document)).unwrap();
    assert_triangles(&scene, &moved, &CUBE_INDICES, 0.0);
    assert_eq!(scene.meshes[0].uvs, vec![[0.0, 0.0]; 8]);
}

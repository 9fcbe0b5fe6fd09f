//! Load + process time of glTF scenes: a 1M-triangle .glb (four 262k-triangle terrains,
//! processed in parallel on the job system), the same with a 2048x2048 PNG base-colour
//! texture per terrain (decoded with its mips, in parallel), and one 65k-triangle mesh
//! through meshopt alone. With `GLTFPACK` naming a gltfpack binary (meshoptimizer's tool,
//! not a dependency), the textured scene is also packed with `-cc` (quantized, meshopt
//! compressed with filters) and its load timed.
//!
//! Run: `[GLTFPACK=path/to/gltfpack] cargo bench -p assets --bench load`

use assets::{load_gltf_bytes, process_mesh, MeshData, ProcessOptions};
use criterion::{criterion_group, criterion_main, Criterion};

/// A rolling terrain of `columns` x `rows` quads with normals: a smooth surface with no pole
/// fans (a UV sphere's poles give vertices of valence in the hundreds, a case no asset has).
fn terrain(columns: u32, rows: u32) -> MeshData {
    let mut mesh = MeshData::default();
    let height = |x: f32, z: f32| 0.08 * (x * 9.0).sin() * (z * 7.0).cos() + 0.03 * (x * 31.0 + z * 17.0).sin();
    for row in 0..=rows {
        for column in 0..=columns {
            let (x, z) = (column as f32 / columns as f32, row as f32 / rows as f32);
            let epsilon = 1.0e-3;
            let slope_x = (height(x + epsilon, z) - height(x - epsilon, z)) / (2.0 * epsilon);
            let slope_z = (height(x, z + epsilon) - height(x, z - epsilon)) / (2.0 * epsilon);
            let normal = glam::Vec3::new(-slope_x, 1.0, -slope_z).normalize();
            mesh.positions.push([x, height(x, z), z]);
            mesh.normals.push(normal.to_array());
        }
    }
    let stride = columns + 1;
    for row in 0..rows {
        for column in 0..columns {
            let corner = row * stride + column;
            mesh.indices.extend_from_slice(&[
                corner,
                corner + stride,
                corner + 1,
                corner + 1,
                corner + stride,
                corner + stride + 1,
            ]);
        }
    }
    mesh
}

/// A 2048x2048 PNG of coloured noise and stripes (it compresses about as a photo's does not,
/// which is the slow case for the decoder).
fn texture_png(seed: u32) -> Vec<u8> {
    let picture = image::RgbaImage::from_fn(2048, 2048, |x, y| {
        let hash = (x.wrapping_mul(73_856_093) ^ y.wrapping_mul(19_349_663) ^ seed.wrapping_mul(83_492_791)) % 64;
        image::Rgba([(x / 8 % 256) as u8, (y / 8 % 256) as u8, 128 + hash as u8, 255])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut bytes, image::ImageFormat::Png).expect("encodes");
    bytes.into_inner()
}

/// A .glb of `copies` nodes, each with its own copy of `mesh` (so each is processed); with
/// `textured`, each copy has texture coordinates and a material with a PNG of its own.
fn glb_of(mesh: &MeshData, copies: usize, textured: bool) -> Vec<u8> {
    let mut bin = Vec::new();
    let (mut views, mut accessors, mut meshes, mut nodes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut images, mut textures, mut materials) = (Vec::new(), Vec::new(), Vec::new());
    for copy in 0..copies {
        let mut view = |bytes: Vec<u8>, bin: &mut Vec<u8>| {
            let offset = bin.len();
            bin.extend_from_slice(&bytes);
            views.push(format!(r#"{{"buffer":0,"byteOffset":{offset},"byteLength":{}}}"#, bytes.len()));
            views.len() - 1
        };
        let positions = view(mesh.positions.iter().flatten().flat_map(|v| v.to_le_bytes()).collect(), &mut bin);
        let normals = view(mesh.normals.iter().flatten().flat_map(|v| v.to_le_bytes()).collect(), &mut bin);
        let indices = view(mesh.indices.iter().flat_map(|v| v.to_le_bytes()).collect(), &mut bin);
        let uvs = textured.then(|| {
            let uvs: Vec<u8> = mesh.positions.iter().flat_map(|p| [p[0], p[2]]).flat_map(f32::to_le_bytes).collect();
            view(uvs, &mut bin)
        });
        if textured {
            let png = texture_png(copy as u32);
            let image = view(png, &mut bin);
            while bin.len() % 4 != 0 {
                bin.push(0);
            }
            images.push(format!(r#"{{"bufferView":{image},"mimeType":"image/png"}}"#));
            textures.push(format!(r#"{{"source":{copy}}}"#));
            materials.push(format!(r#"{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":{copy}}}}}}}"#));
        }
        let count = mesh.positions.len();
        accessors.push(format!(
            r#"{{"bufferView":{positions},"componentType":5126,"count":{count},"type":"VEC3","min":[0,-1,0],"max":[1,1,1]}}"#
        ));
        accessors.push(format!(r#"{{"bufferView":{normals},"componentType":5126,"count":{count},"type":"VEC3"}}"#));
        accessors.push(format!(
            r#"{{"bufferView":{indices},"componentType":5125,"count":{},"type":"SCALAR"}}"#,
            mesh.indices.len()
        ));
        let first = accessors.len() - 3;
        let (uv_attribute, material) = match uvs {
            Some(uvs) => {
                accessors.push(format!(r#"{{"bufferView":{uvs},"componentType":5126,"count":{count},"type":"VEC2"}}"#));
                (format!(r#","TEXCOORD_0":{}"#, first + 3), format!(r#","material":{copy}"#))
            }
            None => (String::new(), String::new()),
        };
        meshes.push(format!(
            r#"{{"primitives":[{{"attributes":{{"POSITION":{first},"NORMAL":{}{uv_attribute}}},"indices":{}{material}}}]}}"#,
            first + 1,
            first + 2
        ));
        nodes.push(format!(r#"{{"mesh":{copy},"translation":[{},0,0]}}"#, copy as f32 * 3.0));
    }
    let roots: Vec<String> = (0..copies).map(|node| node.to_string()).collect();
    let mut json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[{}]}}],"nodes":[{}],"meshes":[{}],"buffers":[{{"byteLength":{}}}],"bufferViews":[{}],"accessors":[{}],"images":[{}],"textures":[{}],"materials":[{}]}}"#,
        roots.join(","),
        nodes.join(","),
        meshes.join(","),
        bin.len(),
        views.join(","),
        accessors.join(","),
        images.join(","),
        textures.join(","),
        materials.join(",")
    )
    .into_bytes();
    while json.len() % 4 != 0 {
        json.push(b' ');
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2_u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

fn load_and_process(criterion: &mut Criterion) {
    let options = ProcessOptions::default();
    // 512 x 256 quads: 262,144 triangles per terrain, four of them: 1,048,576.
    let glb = glb_of(&terrain(512, 256), 4, false);
    let scene = load_gltf_bytes(&glb, None, &options).expect("the bench scene loads");
    assert_eq!(scene.triangle_count(), 1 << 20);
    eprintln!("1M-triangle scene: {} threads; mesh 0: {}", runtime::jobs::current_threads(), scene.meshes[0].summary());
    let mut group = criterion.benchmark_group("gltf");
    group.sample_size(10);
    group.bench_function("load_and_process_1m_triangles", |bench| {
        bench.iter(|| load_gltf_bytes(&glb, None, &options).expect("loads"))
    });
    let textured = glb_of(&terrain(512, 256), 4, true);
    let scene = load_gltf_bytes(&textured, None, &options).expect("the textured scene loads");
    assert_eq!(scene.images.len(), 4);
    eprintln!(
        "textured 1M-triangle scene: {:.1} MiB file, {} images, {:.1} MiB of texels with mips",
        textured.len() as f64 / (1 << 20) as f64,
        scene.images.len(),
        scene.image_bytes() as f64 / (1 << 20) as f64
    );
    group.bench_function("load_and_process_1m_triangles_textured", |bench| {
        bench.iter(|| load_gltf_bytes(&textured, None, &options).expect("loads"))
    });
    match gltfpack_cc(&textured) {
        Ok(packed) => {
            let scene = load_gltf_bytes(&packed, None, &options).expect("gltfpack's output loads");
            assert_eq!(scene.triangle_count(), 1 << 20, "gltfpack keeps every triangle");
            eprintln!("its gltfpack -cc version: {:.1} MiB file", packed.len() as f64 / (1 << 20) as f64);
            group.bench_function("load_and_process_1m_triangles_textured_gltfpack_cc", |bench| {
                bench.iter(|| load_gltf_bytes(&packed, None, &options).expect("loads"))
            });
        }
        Err(reason) => eprintln!("no gltfpack -cc row: {reason}"),
    }
    let medium = terrain(256, 128);
    group.bench_function("process_mesh_65k_triangles", |bench| {
        bench.iter(|| process_mesh(&medium, &options).expect("processes"))
    });
    group.finish();
}

/// `glb` through `$GLTFPACK -cc` (keeping the textures as they are), or why not.
fn gltfpack_cc(glb: &[u8]) -> Result<Vec<u8>, String> {
    let tool = std::env::var_os("GLTFPACK").ok_or("GLTFPACK is not set")?;
    let folder = std::env::temp_dir().join(format!("gltfpack-bench-{}", std::process::id()));
    std::fs::create_dir_all(&folder).map_err(|error| error.to_string())?;
    let (input, output) = (folder.join("in.glb"), folder.join("out.glb"));
    std::fs::write(&input, glb).map_err(|error| error.to_string())?;
    let status = std::process::Command::new(tool)
        .args(["-cc", "-kn", "-i"])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .status()
        .map_err(|error| format!("gltfpack does not run: {error}"))?;
    let packed = std::fs::read(&output).map_err(|error| format!("gltfpack ({status}) wrote nothing: {error}"));
    let _ = std::fs::remove_dir_all(&folder);
    packed
}

criterion_group!(benches, load_and_process);
criterion_main!(benches);

//! The preloaded viewer's files: each loaded (meshes processed by meshopt) and reported, a
//! bad one named.

use std::path::PathBuf;

use assets::{load_gltf, AlphaMode, GltfScene, ProcessOptions};

/// A file that loaded, with its path (for the lines naming it).
pub(super) struct Loaded {
    pub(super) path: PathBuf,
    pub(super) scene: GltfScene,
}

/// Loads every file of `scenes`, printing what each held; a file that cannot be loaded gets
/// one line naming it and the problem on standard error, and sets `any_bad`.
pub(super) fn load_files(scenes: &[PathBuf], any_bad: &mut bool) -> Vec<Loaded> {
    let mut loaded = Vec::with_capacity(scenes.len());
    for path in scenes {
        match load_gltf(path, &ProcessOptions::default()) {
            Ok(scene) => {
                if scenes.len() > 1 {
                    println!("file: {}", path.display());
                }
                report_load(&scene);
                loaded.push(Loaded { path: path.clone(), scene });
            }
            Err(error) => {
                eprintln!("viewer: {}: {error}", path.display());
                *any_bad = true;
            }
        }
    }
    loaded
}

/// Prints what a file held and how long each load step took.
fn report_load(scene: &GltfScene) {
    let timings = scene.timings;
    println!(
        "load: {} meshes, {} triangles in {:.1} ms (read {:.1}, parse {:.1}, buffers {:.1}, decode {:.1}, meshopt {:.1}){}",
        scene.meshes.len(),
        scene.triangle_count(),
        timings.total().as_secs_f64() * 1e3,
        timings.read.as_secs_f64() * 1e3,
        timings.parse.as_secs_f64() * 1e3,
        timings.buffers.as_secs_f64() * 1e3,
        timings.decode.as_secs_f64() * 1e3,
        timings.process.as_secs_f64() * 1e3,
        match scene.skipped_primitives {
            0 => String::new(),
            skipped => format!("; {skipped} non-triangle primitives skipped"),
        }
    );
    for (index, mesh) in scene.meshes.iter().enumerate() {
        println!("mesh {index}: {}", mesh.summary());
    }
    let count = |mode: fn(&AlphaMode) -> bool| {
        scene.material_list[..scene.material_list.len() - 1].iter().filter(|material| mode(&material.alpha)).count()
    };
    println!(
        "materials: {} opaque, {} masked, {} blended; {} textures decoded, {:.1} MiB with mips",
        count(|mode| *mode == AlphaMode::Opaque),
        count(|mode| matches!(mode, AlphaMode::Mask { .. })),
        count(|mode| *mode == AlphaMode::Blend),
        scene.images.len(),
        scene.image_bytes() as f64 / (1 << 20) as f64
    );
}

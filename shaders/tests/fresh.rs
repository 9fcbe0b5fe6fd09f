//! Recompiles every GLSL source with `glslc` and checks that the committed SPIR-V is fresh.
//!
//! Without glslc the test prints why and passes, unless `ENGINE_REQUIRE_VULKAN=1` (CI), where
//! a missing compiler is a failure.

use std::path::Path;
use std::process::Command;

#[test]
fn committed_spirv_matches_glsl_sources() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
    if Command::new("glslc").arg("--version").output().is_err() {
        assert!(!required, "glslc not found, but ENGINE_REQUIRE_VULKAN=1 requires it");
        println!("skipping: glslc not found, cannot check the committed SPIR-V");
        return;
    }
    let out_dir = std::env::temp_dir().join(format!("shaders-fresh-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("temporary folder is writable");
    let mut stale = Vec::new();
    for shader in shaders::ALL {
        let output = out_dir.join(format!("{}.spv", shader.name));
        let status = Command::new("glslc")
            .arg(format!("-fshader-stage={}", shader.stage.glslc_name()))
            .args(["--target-env=vulkan1.2", "-O", "-I"])
            .arg(crate_dir.join("glsl/engine"))
            .arg("-o")
            .arg(&output)
            .arg(crate_dir.join(shader.source_path))
            .status()
            .expect("glslc runs");
        assert!(status.success(), "glslc failed on {}", shader.source_path);
        let fresh = std::fs::read(&output).expect("glslc wrote its output");
        if fresh != shader.bytes() {
            stale.push(shader.name);
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(stale.is_empty(), "committed SPIR-V is stale for {stale:?}: run shaders/compile.sh and commit spirv/");
}

#[test]
fn every_source_file_is_listed() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut listed: Vec<&str> = shaders::ALL.iter().map(|shader| shader.source_path).collect();
    listed.sort_unstable();
    let mut found = Vec::new();
    for group in [shaders::Group::Engine, shaders::Group::Samples, shaders::Group::Probes] {
        let folder = crate_dir.join("glsl").join(group.folder());
        for entry in std::fs::read_dir(&folder).expect("the group's folder exists") {
            let name = entry.expect("readable entry").file_name().to_string_lossy().into_owned();
            if name.ends_with(".glsl") {
                found.push(format!("glsl/{}/{name}", group.folder()));
            }
        }
    }
    found.sort_unstable();
    assert_eq!(listed, found, "every glsl/<group>/*.glsl needs an entry in shaders::ALL");
    let loose: Vec<String> = std::fs::read_dir(crate_dir.join("glsl"))
        .expect("glsl folder exists")
        .map(|entry| entry.expect("readable entry").file_name().to_string_lossy().into_owned())
        .filter(|name| !["engine", "samples", "probes"].contains(&name.as_str()))
        .collect();
    assert!(loose.is_empty(), "shaders live in a group's folder, not loose in glsl/: {loose:?}");
    for shader in shaders::ALL {
        let group = shader.group.expect("the crate's shaders have a group");
        assert!(shader.source_path.starts_with(&format!("glsl/{}/", group.folder())), "{}", shader.source_path);
    }
}

/// A user's shader that includes every public header from [`shaders::ENGINE_INCLUDE_DIR`]
/// (nothing else on the include path) and uses what they declare compiles.
#[test]
fn a_user_shader_compiles_against_the_public_headers() {
    let required = std::env::var("ENGINE_REQUIRE_VULKAN").is_ok_and(|value| value == "1");
    if Command::new("glslc").arg("--version").output().is_err() {
        assert!(!required, "glslc not found, but ENGINE_REQUIRE_VULKAN=1 requires it");
        println!("skipping: glslc not found");
        return;
    }
    let source = r#"#version 460
#extension GL_GOOGLE_include_directive : require
#include "config.h"
#include "object_record.h"
#include "view.h"
#include "visibility_bits.h"
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Transforms { ObjectTransform transforms[]; };
layout(std430, set = 0, binding = 1) readonly buffer Records { ObjectRecord records[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bits { uint bits[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { vec4 result[]; };
ENGINE_VIEW_BLOCK(0, 4);
void main() {
    uint slot = gl_GlobalInvocationID.x;
    if (slot >= engine_view.object_count || !VISIBILITY_BIT(bits, slot)) return;
    vec3 center, half_extent;
    object_world_box(transforms[slot], records[slot], center, half_extent);
    vec3 far_corner = view_world_position(engine_view, vec2(0.5), 0.0);
    result[slot] = vec4(center + half_extent + far_corner, view_linear_depth(engine_view, 0.5));
}
"#;
    let out_dir = std::env::temp_dir().join(format!("shaders-headers-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("temporary folder is writable");
    let (input, output) = (out_dir.join("user.comp.glsl"), out_dir.join("user.spv"));
    std::fs::write(&input, source).expect("writable");
    let compiled = Command::new("glslc")
        .args(["-fshader-stage=comp", "--target-env=vulkan1.2", "-I", shaders::ENGINE_INCLUDE_DIR, "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .expect("glslc runs");
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(compiled.status.success(), "{}", String::from_utf8_lossy(&compiled.stderr));
}

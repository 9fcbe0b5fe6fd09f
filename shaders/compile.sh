#!/bin/sh
# Recompiles every GLSL shader under glsl/<group>/ into spirv/<group>/. Run after editing a
# shader and commit both; `cargo test -p shaders` checks that the committed SPIR-V is fresh.
# `glsl/engine` is on the include path: every shader may include the engine's headers.
set -eu
cd "$(dirname "$0")"
for source in glsl/*/*.glsl; do
    group=$(basename "$(dirname "$source")")
    name=$(basename "$source" .glsl)
    stage=${name##*.}
    mkdir -p "spirv/$group"
    glslc -fshader-stage="$stage" --target-env=vulkan1.2 -O -I glsl/engine -o "spirv/$group/$name.spv" "$source"
done
# The renderer's test shaders include the engine's headers too: keep them fresh with them
# (`renderer/tests/pass_promises.rs` checks).
for source in ../renderer/tests/shaders/*.comp.glsl; do
    glslc -fshader-stage=comp --target-env=vulkan1.2 -O -I glsl/engine -o "${source%.glsl}.spv" "$source"
done

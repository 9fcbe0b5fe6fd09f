#!/bin/sh
# Recompiles every GLSL shader under glsl/ into spirv/. Run after editing a shader and commit
# both; `cargo test -p shaders` checks that the committed SPIR-V is fresh.
set -eu
cd "$(dirname "$0")"
for source in glsl/*.glsl; do
    name=$(basename "$source" .glsl)
    stage=${name##*.}
    glslc -fshader-stage="$stage" --target-env=vulkan1.2 -O -o "spirv/$name.spv" "$source"
done

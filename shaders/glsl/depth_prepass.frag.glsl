#version 450
// The depth prepass writes depth only; it shares the geometry vertex shader, whose flat
// colour output is declared here so the interface matches, and ignores it.
layout(location = 0) flat in uint in_color;

void main() {
}

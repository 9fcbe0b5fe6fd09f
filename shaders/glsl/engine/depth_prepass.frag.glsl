#version 450
// Depth prepass: depth only, no colour attachment; the fixed-function depth test and write
// do the work (early fragment tests apply, as nothing here discards or writes depth).
void main() {
}

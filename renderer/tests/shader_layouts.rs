//! The structs the engine shares with shaders are declared twice, in Rust and in the GLSL
//! headers of `shaders::ENGINE_INCLUDE_DIR`; this test reads each GLSL declaration, lays it
//! out by the block's rules (std140 for the `view` uniform, std430 for the object buffers)
//! and checks every member's offset and the size against the Rust twin's, by name.

use std::mem::{offset_of, size_of};

use renderer::{CullConstants, CullView, FrameView, GpuMaterial, LodEntry, ObjectRecord, ObjectTransform};

/// Alignment and size in bytes of a GLSL type; `std140` rounds array elements up to 16.
fn glsl_type(name: &str) -> (usize, usize) {
    match name {
        "float" | "int" | "uint" | "bool" => (4, 4),
        "vec2" | "ivec2" | "uvec2" => (8, 8),
        "vec3" | "ivec3" | "uvec3" => (16, 12),
        "vec4" | "ivec4" | "uvec4" => (16, 16),
        "mat4" => (16, 64),
        // `lod_select.h`'s four-word struct (std430: aligned as its members).
        "LodView" => (4, 16),
        other => panic!("the layout test does not know GLSL type {other}"),
    }
}

/// The text between the braces of `struct NAME` (or of a block, `uniform NAME`) in `header`,
/// its comments removed.
fn declaration_body(header: &str, name: &str) -> String {
    let start = ["struct", "uniform"]
        .iter()
        .find_map(|keyword| header.find(&format!("{keyword} {name} ")))
        .unwrap_or_else(|| panic!("struct {name} in the header"));
    let body = &header[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The members of `struct NAME { ... };` (or of a block, `uniform NAME { ... }`) in `header`
/// with their offsets, and the struct's size.
fn layout(header: &str, name: &str, std140: bool) -> (Vec<(String, usize)>, usize) {
    let body = declaration_body(header, name);
    let (mut offset, mut largest, mut members) = (0usize, 4usize, Vec::new());
    for declaration in body.split(';').map(str::trim).filter(|line| !line.is_empty()) {
        let mut words = declaration.split_whitespace();
        let (kind, member) = (words.next().unwrap(), words.next().unwrap());
        let (mut align, mut size) = glsl_type(kind);
        let (member, count) = match member.split_once('[') {
            Some((member, count)) => (member, count.trim_end_matches(']').parse::<usize>().unwrap()),
            None => (member, 0),
        };
        if count > 0 {
            let stride = if std140 { size.next_multiple_of(16) } else { size.next_multiple_of(align) };
            align = if std140 { align.max(16) } else { align };
            size = stride * count;
        }
        offset = offset.next_multiple_of(align);
        members.push((member.to_owned(), offset));
        offset += size;
        largest = largest.max(align);
    }
    let alignment = if std140 { largest.max(16) } else { largest };
    (members, offset.next_multiple_of(alignment))
}

fn check(header: &str, name: &str, std140: bool, rust: &[(&str, usize)], rust_size: usize) {
    let (members, size) = layout(header, name, std140);
    let glsl: Vec<(&str, usize)> = members.iter().map(|(member, offset)| (member.as_str(), *offset)).collect();
    assert_eq!(glsl, rust, "{name}: members and offsets, GLSL against Rust");
    assert_eq!(size, rust_size, "{name}: size, GLSL against Rust");
}

#[test]
fn the_view_block_is_laid_out_as_frame_view() {
    let rust = [
        ("view", offset_of!(FrameView, view)),
        ("projection", offset_of!(FrameView, projection)),
        ("view_projection", offset_of!(FrameView, view_projection)),
        ("inverse_view_projection", offset_of!(FrameView, inverse_view_projection)),
        ("eye", offset_of!(FrameView, eye)),
        ("viewport", offset_of!(FrameView, viewport)),
        ("near_plane", offset_of!(FrameView, near_plane)),
        ("far_plane", offset_of!(FrameView, far_plane)),
        ("frame_index", offset_of!(FrameView, frame_index)),
        ("object_count", offset_of!(FrameView, object_count)),
        ("previous_view", offset_of!(FrameView, previous_view)),
        ("previous_view_projection", offset_of!(FrameView, previous_view_projection)),
        ("frustum_planes", offset_of!(FrameView, frustum_planes)),
    ];
    check(shaders::ENGINE_VIEW_H, "FrameView", true, &rust, size_of::<FrameView>());
}

#[test]
fn the_object_buffers_are_laid_out_as_their_records() {
    let transform = [("rows", offset_of!(ObjectTransform, rows))];
    check(shaders::ENGINE_OBJECT_RECORD_H, "ObjectTransform", false, &transform, size_of::<ObjectTransform>());
    let record = [
        ("local_center", offset_of!(ObjectRecord, local_center)),
        ("index_count", offset_of!(ObjectRecord, index_count)),
        ("local_half", offset_of!(ObjectRecord, local_half)),
        ("first_index", offset_of!(ObjectRecord, first_index)),
        ("vertex_offset", offset_of!(ObjectRecord, vertex_offset)),
        ("color", offset_of!(ObjectRecord, color)),
        ("material", offset_of!(ObjectRecord, material)),
        ("mesh", offset_of!(ObjectRecord, mesh)),
        ("skin_first", offset_of!(ObjectRecord, skin_first)),
        ("skin_count", offset_of!(ObjectRecord, skin_count)),
        ("reserved", offset_of!(ObjectRecord, reserved)),
    ];
    check(shaders::ENGINE_OBJECT_RECORD_H, "ObjectRecord", false, &record, size_of::<ObjectRecord>());
}

#[test]
fn the_material_table_is_laid_out_as_gpu_material() {
    let material = [
        ("texture", offset_of!(GpuMaterial, texture)),
        ("flags", offset_of!(GpuMaterial, flags)),
        ("cutoff", offset_of!(GpuMaterial, cutoff)),
        ("min_lod", offset_of!(GpuMaterial, min_lod)),
    ];
    check(shaders::ENGINE_MATERIAL_H, "Material", false, &material, size_of::<GpuMaterial>());
}

#[test]
fn the_lod_entry_is_laid_out_as_its_twin() {
    let entry = [
        ("index_count", offset_of!(LodEntry, index_count)),
        ("first_index", offset_of!(LodEntry, first_index)),
        ("vertex_offset", offset_of!(LodEntry, vertex_offset)),
        ("error", offset_of!(LodEntry, error)),
        ("batch", offset_of!(LodEntry, batch)),
        ("mesh", offset_of!(LodEntry, mesh)),
        ("rule", offset_of!(LodEntry, rule)),
        ("bias", offset_of!(LodEntry, bias)),
    ];
    check(shaders::ENGINE_LOD_TABLE_H, "LodEntry", false, &entry, size_of::<LodEntry>());
}

#[test]
fn the_cull_view_and_constants_are_laid_out_as_their_twins() {
    let view = [
        ("view_projection", offset_of!(CullView, view_projection)),
        ("planes", offset_of!(CullView, planes)),
        ("eye", offset_of!(CullView, eye)),
        ("pyramid", offset_of!(CullView, pyramid)),
        ("plane_count", offset_of!(CullView, plane_count)),
        ("flags", offset_of!(CullView, flags)),
        ("pyramid_mips", offset_of!(CullView, pyramid_mips)),
        ("pad0", offset_of!(CullView, padding)),
        ("depth_margin", offset_of!(CullView, depth_margin)),
        ("footprint_margin", offset_of!(CullView, footprint_margin)),
        ("bounds_margin", offset_of!(CullView, bounds_margin)),
        ("cone_margin", offset_of!(CullView, cone_margin)),
        ("lod", offset_of!(CullView, lod)),
        ("lod_eye", offset_of!(CullView, lod_eye)),
    ];
    check(shaders::ENGINE_CULL_INPUTS_H, "CullView", false, &view, size_of::<CullView>());
    let constants = [
        ("item_count", offset_of!(CullConstants, item_count)),
        ("view_count", offset_of!(CullConstants, view_count)),
        ("words_per_view", offset_of!(CullConstants, words_per_view)),
        ("region", offset_of!(CullConstants, region)),
        ("draw_from", offset_of!(CullConstants, draw_from)),
        ("meshlet_pairs", offset_of!(CullConstants, meshlet_pairs)),
        ("object_count", offset_of!(CullConstants, object_count)),
        ("batched", offset_of!(CullConstants, batched)),
        ("first_view", offset_of!(CullConstants, first_view)),
    ];
    check(shaders::ENGINE_CULL_INPUTS_H, "CullConstants", false, &constants, size_of::<CullConstants>());
}

#[test]
fn the_lod_view_is_laid_out_as_lod_error_view() {
    use culling::LodErrorView;
    let view = [
        ("pixels_per_unit", offset_of!(LodErrorView, pixels_per_unit)),
        ("coarsen_sq", offset_of!(LodErrorView, coarsen_sq)),
        ("keep_sq", offset_of!(LodErrorView, keep_sq)),
        ("orthographic", offset_of!(LodErrorView, orthographic)),
    ];
    check(shaders::ENGINE_LOD_SELECT_H, "LodView", false, &view, size_of::<LodErrorView>());
}

#[test]
fn the_layout_reader_catches_a_reordered_member() {
    let header = "struct Wrong {\n    float near_plane;\n    vec4 eye;\n};";
    let (members, size) = layout(header, "Wrong", true);
    assert_eq!(members, [(String::from("near_plane"), 0), (String::from("eye"), 16)]);
    assert_eq!(size, 32);
}

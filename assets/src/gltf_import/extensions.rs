//! What a file's extensions ask of the importer, and the valid files gltf-json's strict
//! types would refuse.
//!
//! The importer honours `KHR_mesh_quantization`, `EXT_meshopt_compression` (and its
//! successor `KHR_meshopt_compression`) and `KHR_texture_transform` (on the base colour
//! texture's coordinates); a file may require those. Any other required
//! extension is [`ImportError::Unsupported`]; any other used one is ignored with one warning.
//! gltf-json refuses every required extension it does not implement itself and a few
//! constructs the specification allows, so the raw JSON is smoothed first (see
//! [`smooth_json`]) and the required list checked here instead.

use gltf::json::Value;

use super::error::ImportError;

/// The extensions whose data the importer reads, so a file may require them.
/// `KHR_texture_transform` is applied to `TEXCOORD_0` as the base colour texture samples it.
pub(crate) const HONOURED: [&str; 4] =
    ["KHR_mesh_quantization", "EXT_meshopt_compression", "KHR_meshopt_compression", "KHR_texture_transform"];

/// What the file declares that changes how accessors are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// `KHR_mesh_quantization` is used: attributes may have integer component types.
    pub(crate) quantization: bool,
}

/// Refuses a required extension the importer cannot honour, warns once about used ones it
/// ignores, and says what the file declares.
pub(crate) fn check_extensions(required: &[String], used: &[String]) -> Result<Declared, ImportError> {
    if let Some(extension) = required.iter().find(|extension| !HONOURED.contains(&extension.as_str())) {
        return Err(ImportError::Unsupported(format!("the file requires extension {extension}")));
    }
    let ignored: Vec<&str> =
        used.iter().map(String::as_str).filter(|extension| !HONOURED.contains(extension)).collect();
    if !ignored.is_empty() {
        log::warn!("glTF extensions ignored (the scene loads without them): {}", ignored.join(", "));
    }
    let declares = |name: &str| required.iter().chain(used).any(|extension| extension == name);
    Ok(Declared { quantization: declares("KHR_mesh_quantization") })
}

/// Removes from the raw JSON what the specification allows, the importer does not read,
/// and gltf-json cannot represent: animation channels without a target node (an extension
/// names their target) and application-specific attributes (`_NAME`, which gltf-json
/// reads as invalid semantics).
pub(crate) fn smooth_json(root: &mut Value) {
    for animation in array_mut(root, "animations") {
        if let Some(Value::Array(channels)) = animation.get_mut("channels") {
            channels.retain(|channel| channel.get("target").is_none_or(|target| target.get("node").is_some()));
        }
    }
    for mesh in array_mut(root, "meshes") {
        for primitive in array_mut(mesh, "primitives") {
            if let Some(Value::Object(attributes)) = primitive.get_mut("attributes") {
                attributes.retain(|semantic, _| !semantic.starts_with('_'));
            }
        }
    }
}

/// gltf-json's validation of `root`, less the one rule it has that the specification does
/// not: an accessor without a buffer view reads as zeros, with or without sparse values.
pub(crate) fn validate(root: &gltf::json::Root) -> Result<(), ImportError> {
    use gltf::json::validation::{Error, Validate};
    let mut errors = String::new();
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        let path = path();
        let viewless_accessor = path.as_str().starts_with("accessors[")
            && path.as_str().ends_with("].bufferView")
            && matches!(error, Error::Missing);
        if !viewless_accessor {
            errors.push_str(&format!(" {path}: {error};"));
        }
    });
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ImportError::Json(format!("invalid glTF:{errors}")))
    }
}

/// The items of `value[key]` when it is an array, else none (a wrong type is left for the
/// typed parse to report).
fn array_mut<'a>(value: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    value.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn honoured_extensions_may_be_required_and_others_not() {
        let declared = check_extensions(
            &names(&["KHR_mesh_quantization", "EXT_meshopt_compression"]),
            &names(&["KHR_mesh_quantization", "EXT_meshopt_compression", "KHR_materials_unlit"]),
        )
        .unwrap();
        assert!(declared.quantization);
        let error = check_extensions(&names(&["KHR_draco_mesh_compression"]), &[]).unwrap_err();
        assert_eq!(
            error,
            ImportError::Unsupported(String::from("the file requires extension KHR_draco_mesh_compression"))
        );
        assert!(!check_extensions(&[], &names(&["EXT_meshopt_compression"])).unwrap().quantization);
    }

    #[test]
    fn channels_without_nodes_and_custom_attributes_are_smoothed_away() {
        let mut root: Value = gltf::json::deserialize::from_str(
            r#"{ "animations": [{ "channels": [
                    { "sampler": 0, "target": { "path": "pointer" } },
                    { "sampler": 0, "target": { "node": 0, "path": "scale" } } ] }],
                 "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "_ID": 1 } }] }] }"#,
        )
        .unwrap();
        smooth_json(&mut root);
        assert_eq!(root["animations"][0]["channels"].as_array().unwrap().len(), 1);
        assert_eq!(root["animations"][0]["channels"][0]["target"]["node"], 0);
        assert!(root["meshes"][0]["primitives"][0]["attributes"].get("_ID").is_none());
        assert!(root["meshes"][0]["primitives"][0]["attributes"].get("POSITION").is_some());
    }
}

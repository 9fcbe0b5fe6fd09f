//! glTF skins and animations written here: a bar of two joints (hip, knee) listed child
//! first, bent 90° at the knee by a clip; the importer's skeleton, influences, clip and posed
//! box against values computed by hand, and the bad skins it refuses or repairs.

mod common;

use animation::{pose_rig, AnimationPlayer, PoseScratch, SkinMatrix};
use assets::{load_gltf_bytes, GltfScene, ImportError, ProcessOptions};
use glam::{Mat4, Vec3};
use serde_json::{json, Value};
use test_assets::skinned_bar::{knee_inverse_bind, SkinnedBar, JOINTS, WEIGHTS};

/// The bar's buffer, with `joints`, `weights` and the knee's inverse bind changeable.
fn buffer(joints: &[[u8; 4]; 6], weights: &[[f32; 4]; 6], knee_inverse_bind: Mat4) -> Vec<u8> {
    SkinnedBar { joints: *joints, weights: *weights, knee_inverse_bind, ..SkinnedBar::plain() }.buffer()
}

/// The bar's document with `data` as its buffer.
fn document(data: &[u8]) -> Value {
    SkinnedBar::plain().document(data)
}

fn load(document: &Value) -> Result<GltfScene, ImportError> {
    load_gltf_bytes(&serde_json::to_vec(document).unwrap(), None, &ProcessOptions::default())
}

/// Each processed vertex skinned on the CPU under the clip at `time`, with its bind position.
fn skinned_at(scene: &GltfScene, time: f32) -> (Vec<(Vec3, Vec3)>, ecs::Aabb) {
    let skeleton = &scene.skins[0].skeleton;
    let mut player = AnimationPlayer::new(scene.animations[0].clip.clone(), skeleton).expect("the clip fits its skin");
    player.time = time;
    let mut palette = vec![SkinMatrix::IDENTITY; skeleton.joint_count()];
    let boxes = scene.joint_boxes[0].as_ref().expect("a skinned mesh has joint boxes");
    let (bounds, _) = pose_rig(skeleton, boxes, Some(&player), &mut palette, &mut PoseScratch::default());
    let mesh = &scene.meshes[0];
    let skin = mesh.skin.as_ref().expect("the mesh keeps its influences");
    let vertices = mesh
        .positions
        .iter()
        .zip(skin.joints.iter().zip(&skin.weights))
        .map(|(&position, (joints, weights))| {
            let position = Vec3::from(position);
            let skinned =
                (0..4).map(|slot| palette[usize::from(joints[slot])].transform_point3(position) * weights[slot]).sum();
            (position, skinned)
        })
        .collect();
    (vertices, bounds)
}

#[test]
fn a_two_joint_skin_and_its_clip_give_the_hand_computed_pose() {
    let scene = load(&document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()))).expect("a valid skinned file");
    let skeleton = &scene.skins[0].skeleton;
    assert_eq!(skeleton.name(), "legs");
    assert_eq!(skeleton.joint_names(), ["hip", "knee"], "joints reordered parents first");
    assert_eq!((skeleton.parent(0), skeleton.parent(1)), (None, Some(0)));
    assert_eq!(scene.skins[0].joint_nodes, [2, 3]);
    assert_eq!(scene.mesh_skins, [Some(0)]);
    assert_eq!(scene.animations.len(), 1);
    assert_eq!((scene.animations[0].clip.name(), scene.animations[0].skin), ("bend", 0));
    assert_eq!(scene.animations[0].clip.duration(), 1.0);

    // At t = 0 the pose is the bind pose: every vertex stays.
    let (rest, _) = skinned_at(&scene, 0.0);
    for (bind, skinned) in &rest {
        assert!(bind.distance(*skinned) < 1e-6, "{bind} moved to {skinned} in the bind pose");
    }
    // At t = 1 the knee is bent 90° about Z: (x, y) above the knee goes to (-(y - 1), 1 + x).
    let (bent, bounds) = skinned_at(&scene, 1.0);
    for (bind, skinned) in &bent {
        let expected = match bind.y {
            0.0 => *bind,
            1.0 => (*bind + Vec3::new(0.0, 1.0 + bind.x, 0.0)) * 0.5,
            _ => Vec3::new(-(bind.y - 1.0), 1.0 + bind.x, 0.0),
        };
        assert!(skinned.distance(expected) < 1e-5, "{bind} skinned to {skinned}, {expected} expected");
        assert!(
            skinned.cmpge(bounds.min - 1e-5).all() && skinned.cmple(bounds.max + 1e-5).all(),
            "{skinned} outside {bounds:?}"
        );
    }
    assert!(bounds.min.x <= -1.0 && bounds.max.y >= 1.1, "the bent leg's box {bounds:?} holds the shin");

    // The library keeps the influences beside the vertices.
    let mut library = meshes::MeshLibrary::new();
    let placed = assets::add_to_library(&mut library, &scene.meshes[0]).expect("a processed mesh fits the library");
    let first = library.range(placed.levels.start).unwrap().vertex_offset as usize;
    let skin = scene.meshes[0].skin.as_ref().unwrap();
    assert_eq!(&library.vertex_joints()[first..], skin.joints.as_slice());
    assert_eq!(&library.vertex_weights()[first..], skin.weights.as_slice());
}

/// The file with a node that is not a joint between hip and knee: it holds half the knee's
/// height (the knee the other half), and with `lift` a channel moves it from 0.5 to 1.5 up.
fn with_node_between_joints(lift: bool) -> Value {
    let mut data = buffer(&JOINTS, &WEIGHTS, knee_inverse_bind());
    let lifts = [Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, 1.5, 0.0)];
    data.extend(lifts.iter().flat_map(|lift| lift.to_array()).flat_map(|value| value.to_le_bytes()));
    let mut document = document(&data);
    document["nodes"][2]["children"] = json!([4]);
    document["nodes"][3]["translation"] = json!([0.0, 0.5, 0.0]);
    document["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "name": "thigh", "translation": [0.0, 0.5, 0.0], "children": [3] }));
    document["bufferViews"].as_array_mut().unwrap().push(json!({ "buffer": 0, "byteOffset": 384, "byteLength": 24 }));
    document["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "bufferView": 7, "componentType": 5126, "count": 2, "type": "VEC3" }));
    if lift {
        let animation = &mut document["animations"][0];
        animation["samplers"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "input": 5, "output": 7, "interpolation": "LINEAR" }));
        animation["channels"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "sampler": 1, "target": { "node": 4, "path": "translation" } }));
    }
    document
}

#[test]
fn a_node_between_joints_becomes_a_joint_no_vertex_names() {
    for lift in [false, true] {
        let scene = load(&with_node_between_joints(lift)).expect("a valid skinned file");
        let skeleton = &scene.skins[0].skeleton;
        assert_eq!(skeleton.joint_names(), ["hip", "thigh", "knee"], "the node between sits between");
        assert_eq!((skeleton.parent(1), skeleton.parent(2)), (Some(0), Some(1)));
        assert_eq!(scene.skins[0].joint_nodes, [2, 4, 3]);
        // Bind pose: the thigh's half and the knee's half put the knee where its inverse bind
        // expects it, so nothing moves (reading the knee alone would put it half a unit low).
        let (rest, _) = skinned_at(&scene, 0.0);
        for (bind, skinned) in &rest {
            assert!(bind.distance(*skinned) < 1e-6, "{bind} moved to {skinned} in the bind pose (lift {lift})");
        }
        // Bent at the knee, and with `lift` the thigh one unit longer.
        let up = if lift { 1.0 } else { 0.0 };
        let (bent, bounds) = skinned_at(&scene, 1.0);
        for (bind, skinned) in &bent {
            let expected = match bind.y {
                0.0 => *bind,
                1.0 => (*bind + Vec3::new(0.0, 1.0 + up + bind.x, 0.0)) * 0.5,
                _ => Vec3::new(-(bind.y - 1.0), 1.0 + up + bind.x, 0.0),
            };
            assert!(
                skinned.distance(expected) < 1e-5,
                "{bind} skinned to {skinned}, {expected} expected (lift {lift})"
            );
            assert!(skinned.cmpge(bounds.min - 1e-5).all() && skinned.cmple(bounds.max + 1e-5).all());
        }
    }
}

#[test]
fn a_skinned_model_added_through_a_sink_keeps_its_influences() {
    // The sink path (a renderer's meshes while frames run take the same call) must hand the
    // joints and weights on, or the GPU draws the character rigid.
    let scene = load(&document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()))).expect("a valid skinned file");
    let mut library = meshes::MeshLibrary::with_unit_cube();
    let model = scene.add_model_to(&mut library).expect("the sink takes the model");
    let skin = scene.meshes[0].skin.as_ref().unwrap();
    let mesh = model.meshes()[0].levels.start;
    let first = library.range(mesh).unwrap().vertex_offset as usize;
    let count = skin.joints.len();
    assert_eq!(&library.vertex_joints()[first..first + count], skin.joints.as_slice());
    assert_eq!(&library.vertex_weights()[first..first + count], skin.weights.as_slice());
    assert!(library.meshlets(mesh).is_empty(), "a skinned mesh has no bind-pose meshlets");
}

#[test]
fn more_than_four_influences_fold_into_the_four_largest() {
    let mut file = document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()));
    file["meshes"][0]["primitives"][0]["attributes"]["JOINTS_1"] = json!(2);
    file["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_1"] = json!(3);
    let folded = load(&file).expect("eight influences load");
    let plain = load(&document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()))).unwrap();
    let (folded, _) = skinned_at(&folded, 1.0);
    let (plain, _) = skinned_at(&plain, 1.0);
    for ((_, folded), (_, plain)) in folded.iter().zip(&plain) {
        assert!(folded.distance(*plain) < 1e-5, "the same influences twice skin alike: {folded} against {plain}");
    }
}

#[test]
fn missing_inverse_binds_are_identities() {
    let mut file = document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()));
    file["skins"][0].as_object_mut().unwrap().remove("inverseBindMatrices");
    let scene = load(&file).expect("inverse binds are optional");
    assert_eq!(scene.skins[0].skeleton.inverse_binds(), [Mat4::IDENTITY; 2]);
}

#[test]
fn weights_summing_to_zero_put_full_weight_on_the_first_joint() {
    let mut weights = WEIGHTS;
    weights[5] = [0.0; 4];
    let scene = load(&document(&buffer(&JOINTS, &weights, knee_inverse_bind()))).expect("repaired, not refused");
    let skin = scene.meshes[0].skin.as_ref().unwrap();
    assert!(
        skin.weights.iter().all(|weights| (weights.iter().sum::<f32>() - 1.0).abs() < 1e-6),
        "every vertex renormalized"
    );
}

#[test]
fn bad_skins_are_named_errors() {
    let skin_error = |result: Result<GltfScene, ImportError>, what: &str| match result {
        Err(ImportError::Skin { skin: 0, reason }) => reason,
        other => panic!("{what}: expected ImportError::Skin, got {:?}", other.map(|_| "a scene")),
    };
    let mut joints = JOINTS;
    joints[4] = [7, 0, 0, 0];
    let reason = skin_error(load(&document(&buffer(&joints, &WEIGHTS, knee_inverse_bind()))), "joint out of range");
    assert!(reason.contains("names joint 7"), "{reason}");

    let mut file = document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()));
    file["accessors"][4]["count"] = json!(1);
    let reason = skin_error(load(&file), "short inverse binds");
    assert!(reason.contains("1 inverse bind matrices for 2 joints"), "{reason}");

    let nan = Mat4::from_translation(Vec3::new(f32::NAN, 0.0, 0.0));
    skin_error(load(&document(&buffer(&JOINTS, &WEIGHTS, nan))), "non-finite inverse bind");
}

#[test]
fn morph_weight_channels_are_skipped() {
    let mut file = document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()));
    file["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "sampler": 0, "target": { "node": 1, "path": "weights" } }));
    let scene = load(&file).expect("a morph channel is skipped, not refused");
    assert_eq!(scene.animations[0].clip.joint_tracks().len(), 1, "only the knee's rotation");
}

#[test]
fn every_field_of_a_skinned_file_removed_or_wrong_loads_or_fails_without_panic() {
    let base = document(&buffer(&JOINTS, &WEIGHTS, knee_inverse_bind()));
    let mut outcomes = [0, 0];
    let variants = common::for_each_variant(&base, |variant| {
        outcomes[usize::from(load(variant).is_ok())] += 1;
    });
    assert!(variants > 500, "the corpus walks the whole document ({variants} variants)");
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{} refused, {} loaded", outcomes[0], outcomes[1]);
}

#[test]
fn short_joints_and_normalized_short_weights_skin_alike() {
    // The same file with JOINTS_0 as unsigned shorts and WEIGHTS_0 as normalized unsigned shorts.
    let plain = buffer(&JOINTS, &WEIGHTS, knee_inverse_bind());
    let mut data = plain[..96].to_vec();
    data.extend(JOINTS.iter().flatten().flat_map(|&joint| u16::from(joint).to_le_bytes())); // 96, 48
    let unorm = |weight: f32| ((weight * 65535.0).round() as u16).to_le_bytes();
    data.extend(WEIGHTS.iter().flatten().flat_map(|&weight| unorm(weight))); // 144, 48
    data.extend_from_slice(&plain[216..]); // 192: binds, times, rotations
    let mut file = document(&data);
    let views = [(96, 48), (144, 48), (192, 128), (320, 8), (328, 32)];
    for (view, (offset, length)) in (2..).zip(views) {
        file["bufferViews"][view]["byteOffset"] = json!(offset);
        file["bufferViews"][view]["byteLength"] = json!(length);
    }
    file["accessors"][2]["componentType"] = json!(5123);
    file["accessors"][3]["componentType"] = json!(5123);
    file["accessors"][3]["normalized"] = json!(true);
    let shorts = load(&file).expect("u16 joints and normalized u16 weights load");
    let floats = load(&document(&plain)).unwrap();
    let (shorts, _) = skinned_at(&shorts, 1.0);
    let (floats, _) = skinned_at(&floats, 1.0);
    for ((_, short), (_, float)) in shorts.iter().zip(&floats) {
        assert!(short.distance(*float) < 1e-4, "{short} against {float}");
    }
}

//! gltfpack's outputs of one skinned limb (`tests/data/gltfpack_skinned`): its default
//! (KHR_mesh_quantization), `-c` and `-cc` (EXT_meshopt_compression, the latter with the
//! octahedral and quaternion filters) files load with the source file's skeleton, inverse
//! binds (times gltfpack's dequantization), clip and influences, and every vertex skinned on
//! the CPU at several clip times lands where the source file's does, within the quantization's
//! error.

use std::path::Path;

use animation::{pose_rig, AnimationPlayer, PoseScratch, SkinMatrix};
use assets::{load_gltf, GltfScene, ProcessOptions};
use glam::Vec3;

/// The packed files, each with what it is.
const PACKED: [(&str, &str); 3] = [
    ("default.glb", "quantized"),
    ("c.glb", "quantized, meshopt-compressed"),
    ("cc.glb", "quantized, meshopt-compressed with filters"),
];

/// The clip times compared: the bind pose, keys of the source clip (0.5, 1) and times
/// between them (0.8 lies between gltfpack's 30 Hz keys).
const TIMES: [f32; 5] = [0.0, 0.25, 0.5, 0.8, 1.0];

/// How far a packed vertex may land from the source's, in units (the limb is 3 long):
/// - positions: 14 bits over the 3-unit extent, a step of 3 / 16383 = 1.8e-4, so at most
///   1.6e-4 off (half a step on each axis);
/// - weights: 8 bits, at most 1/255 = 3.9e-3 moved between a vertex's two joints, whose
///   posed positions of the vertex lie at most 0.8 apart (a ring 0.5 from the elbow turned
///   90°): 3.1e-3;
/// - rotations: 16-bit normalized shorts, or with `-cc` the quaternion filter's 12 bits a
///   component (a step of 1/2047 over 1/sqrt(2)): about 5e-4 rad a joint, over at most 2
///   units of lever from the elbow (and 1 from the wrist): 1.5e-3; the 30 Hz resampling
///   adds less.
///
/// Together under 5e-3; a vertex given the wrong joint, or the wrong weights, moves by tenths.
const TOLERANCE: f32 = 5e-3;

fn load(name: &str) -> GltfScene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gltfpack_skinned").join(name);
    load_gltf(&path, &ProcessOptions::default()).unwrap_or_else(|error| panic!("{name} does not load: {error}"))
}

/// Each processed vertex of the scene's one mesh, skinned on the CPU under its clip at `time`
/// (rig space), and the posed box `pose_rig` gives.
fn skinned_at(scene: &GltfScene, time: f32) -> (Vec<Vec3>, ecs::Aabb) {
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
            (0..4).map(|slot| palette[usize::from(joints[slot])].transform_point3(position) * weights[slot]).sum()
        })
        .collect();
    (vertices, bounds)
}

/// Per source vertex, the packed vertex at the same bind-pose place (gltfpack and the
/// processing reorder vertices; the limb's vertices lie at least 0.2 apart, so the nearest is
/// the one).
fn matching(source: &[Vec3], packed: &[Vec3], name: &str) -> Vec<usize> {
    assert_eq!(source.len(), packed.len(), "{name} keeps every vertex");
    let mut taken = vec![false; packed.len()];
    source
        .iter()
        .map(|&wanted| {
            let nearest = (0..packed.len())
                .min_by(|&a, &b| packed[a].distance(wanted).total_cmp(&packed[b].distance(wanted)))
                .expect("the mesh has vertices");
            let off = packed[nearest].distance(wanted);
            assert!(off < TOLERANCE, "{name}: no vertex at {wanted} in the bind pose (nearest {off} away)");
            assert!(!std::mem::replace(&mut taken[nearest], true), "{name}: two vertices at {wanted}");
            nearest
        })
        .collect()
}

/// How many vertices have at least two joints with weight.
fn blended(scene: &GltfScene) -> usize {
    let skin = scene.meshes[0].skin.as_ref().expect("the mesh keeps its influences");
    skin.weights.iter().filter(|weights| weights.iter().filter(|&&weight| weight > 0.0).count() >= 2).count()
}

#[test]
fn the_source_limb_skins_as_its_script_says() {
    let source = load("skinned.glb");
    let skeleton = &source.skins[0].skeleton;
    assert_eq!(skeleton.joint_names(), ["shoulder", "elbow", "wrist"], "joints reordered parents first");
    assert_eq!((skeleton.parent(0), skeleton.parent(1), skeleton.parent(2)), (None, Some(0), Some(1)));
    assert_eq!(source.meshes[0].positions.len(), 52);
    assert_eq!(blended(&source), 24, "three rings at the elbow and three at the wrist blend two joints");
    // At 1 s the elbow (0.3, 1, 0) is bent 90° about z, so the wrist goes to (-0.7, 1, 0);
    // the wrist's -60° about its x (world y once bent) swings the hand's unit up (0, 0.5,
    // -0.866) before the bend, (-0.5, 0, -0.866) after: the tip's centre at (-1.2, 1, -0.866).
    // (Processing reorders the vertices: the tip's ring is found by its bind-pose height.)
    let (rest, _) = skinned_at(&source, 0.0);
    let (bent, _) = skinned_at(&source, 1.0);
    let tip: Vec<Vec3> = rest.iter().zip(&bent).filter(|(rest, _)| rest.y == 3.0).map(|(_, &bent)| bent).collect();
    assert_eq!(tip.len(), 4, "the tip's ring");
    let centre = tip.iter().sum::<Vec3>() / 4.0;
    assert!(centre.distance(Vec3::new(-1.2, 1.0, -0.75_f32.sqrt())) < 1e-5, "the bent tip's centre at {centre}");
}

#[test]
fn packed_skinned_files_keep_skeleton_binds_clip_and_influences() {
    let source = load("skinned.glb");
    let source_binds = source.skins[0].skeleton.inverse_binds();
    for (name, what) in PACKED {
        let packed = load(name);
        let skeleton = &packed.skins[0].skeleton;
        assert_eq!(skeleton.joint_names(), source.skins[0].skeleton.joint_names(), "{name} ({what})");
        assert_eq!((0..3).map(|joint| skeleton.parent(joint)).collect::<Vec<_>>(), [None, Some(0), Some(1)], "{name}");
        assert_eq!(packed.mesh_skins, [Some(0)], "{name}");
        // gltfpack folds the positions' dequantization (one scale and offset, what it would
        // put on a rigid mesh's node) into every inverse bind: packed = source * dequantize.
        let dequantize = source_binds[0].inverse() * skeleton.inverse_binds()[0];
        let (scale, rotation, _) = dequantize.to_scale_rotation_translation();
        assert!(scale.x > 0.0 && scale.x < 1e-3 && (scale - Vec3::splat(scale.x)).length() < 1e-9, "{name}: {scale}");
        assert!(rotation.angle_between(glam::Quat::IDENTITY) < 1e-5, "{name}: {rotation}");
        for (joint, (&bind, &original)) in skeleton.inverse_binds().iter().zip(source_binds).enumerate() {
            assert!(bind.abs_diff_eq(original * dequantize, 1e-5), "{name}: joint {joint}'s inverse bind {bind}");
        }
        assert_eq!(packed.animations.len(), 1, "{name}");
        let (clip, source_clip) = (&packed.animations[0].clip, &source.animations[0].clip);
        assert_eq!((clip.name(), packed.animations[0].skin), ("wave", 0), "{name}");
        assert!((clip.duration() - source_clip.duration()).abs() < 1e-6, "{name}: {}", clip.duration());
        assert_eq!(clip.joint_tracks().len(), source_clip.joint_tracks().len(), "{name}: elbow and wrist rotations");
        assert_eq!(packed.meshes.len(), 1, "{name}");
        assert_eq!(packed.meshes[0].levels[0].triangle_count(), source.meshes[0].levels[0].triangle_count(), "{name}");
        assert_eq!(blended(&packed), blended(&source), "{name}: the same vertices blend two joints");
    }
}

/// The largest distance, over [`TIMES`], between a vertex of `packed` skinned on the CPU and
/// the same vertex of `source`.
fn worst_offset(source: &GltfScene, packed: &GltfScene, name: &str) -> f32 {
    let (source_rest, _) = skinned_at(source, 0.0);
    let (packed_rest, _) = skinned_at(packed, 0.0);
    let order = matching(&source_rest, &packed_rest, name);
    let mut worst: f32 = 0.0;
    for time in TIMES {
        let (expected, _) = skinned_at(source, time);
        let (posed, _) = skinned_at(packed, time);
        for (wanted, &at) in expected.iter().zip(&order) {
            worst = worst.max(posed[at].distance(*wanted));
        }
    }
    worst
}

#[test]
fn packed_skinned_files_pose_like_the_source_at_every_time() {
    let source = load("skinned.glb");
    for (name, what) in PACKED {
        let packed = load(name);
        let worst = worst_offset(&source, &packed, name);
        eprintln!("{name} ({what}): worst vertex {worst:.2e} from the source's over {TIMES:?} s");
        assert!(worst < TOLERANCE, "{name} ({what}): a vertex {worst} from the source's");
        // The posed box (from the joint boxes of the quantized vertices) holds every vertex.
        for time in TIMES {
            let (posed, bounds) = skinned_at(&packed, time);
            for vertex in posed {
                let inside = vertex.cmpge(bounds.min - 1e-4).all() && vertex.cmple(bounds.max + 1e-4).all();
                assert!(inside, "{name} at {time} s: {vertex} outside its box {bounds:?}");
            }
        }
    }
}

#[test]
fn the_comparison_sees_two_joint_slots_swapped() {
    // The `-cc` file's influences with slots 0 and 1 swapped on every vertex (as a reader
    // taking the wrong bytes would): the bind pose is the same (every joint's skin matrix is
    // the dequantization there), but the pose moves the blended and the elbow's vertices.
    let source = load("skinned.glb");
    let mut packed = load("cc.glb");
    let skin = packed.meshes[0].skin.as_mut().expect("the mesh keeps its influences");
    for joints in &mut skin.joints {
        joints.swap(0, 1);
    }
    let worst = worst_offset(&source, &packed, "cc.glb, joints swapped");
    assert!(worst > 100.0 * TOLERANCE, "swapped joints move a vertex only {worst}");
}

/// Each vertex of the spawned model's one drawable, skinned under its clip at `time` and
/// placed by the drawable's world transform: where the renderer draws it (the GPU skins in
/// the same way, then applies the object's world matrix).
fn drawn_at(scene: &GltfScene, place: ecs::Transform, time: f32) -> Vec<Vec3> {
    let mut world = hecs::World::new();
    let mut library = meshes::MeshLibrary::new();
    let model = scene.add_model(&mut library, &mut culling::occlusion::OccluderMeshes::new()).expect("the model fits");
    let spawned = assets::spawn_model(&mut world, &model, place);
    let [drawable] = spawned.drawables[..] else { panic!("one drawable, not {}", spawned.drawables.len()) };
    let placed = world.get::<&ecs::WorldTransform>(drawable).expect("a drawable is placed").0;
    // Its levels of detail hand over at the model's scale, not at the dequantizing node's.
    assert_eq!(world.get::<&ecs::Lod>(drawable).expect("a drawable has levels").bias, 1.0);
    skinned_at(scene, time).0.iter().map(|&vertex| placed.transform_point3(vertex)).collect()
}

#[test]
fn packed_skinned_files_spawn_where_the_source_does() {
    // gltfpack puts its dequantization (a scale of 1.8e-4 and an offset) on the skinned
    // mesh's node, as it does for a rigid mesh, and folds it into the inverse binds too: the
    // node's transform must not place the drawn vertices a second time (the specification
    // ignores a skinned mesh's node transform; the palette already maps into model space).
    let source = load("skinned.glb");
    let place = ecs::Transform::from_translation(Vec3::new(5.0, 0.0, -2.0));
    let (source_rest, _) = skinned_at(&source, 0.0);
    for (name, _) in PACKED {
        let packed = load(name);
        let (packed_rest, _) = skinned_at(&packed, 0.0);
        let order = matching(&source_rest, &packed_rest, name);
        let (expected, drawn) = (drawn_at(&source, place, 0.5), drawn_at(&packed, place, 0.5));
        for (wanted, &at) in expected.iter().zip(&order) {
            assert!(drawn[at].distance(*wanted) < TOLERANCE, "{name}: drawn at {}, the source at {wanted}", drawn[at]);
        }
    }
}

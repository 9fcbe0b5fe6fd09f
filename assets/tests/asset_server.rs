//! The asset server: glTF files loaded on loader threads while game threads ask for more, each
//! handle's state readable at any time, failures named through the handle, removed handles
//! refused.

mod common;

use std::sync::Arc;
use std::time::Duration;

use assets::{AssetServer, ImportError, LoadError, LoadState, ServerOptions, StaleReason};
use meshes::MeshLibrary;
use runtime::JobSystem;

const PATIENCE: Duration = Duration::from_secs(120);

fn server(loader_threads: usize) -> AssetServer {
    let jobs = Some(Arc::new(JobSystem::new(2)));
    AssetServer::new(ServerOptions { loader_threads, jobs, ..ServerOptions::default() })
}

#[test]
fn four_game_threads_load_at_once_and_every_file_becomes_ready() {
    let folder = common::scratch("server-threads");
    let paths: Vec<_> = (0..8)
        .map(|index| {
            let path = folder.join(format!("scene {index}.glb"));
            std::fs::write(&path, common::glb()).unwrap();
            path
        })
        .collect();
    let server = Arc::new(server(4));
    let handles: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = paths
            .chunks(2)
            .map(|pair| {
                let server = Arc::clone(&server);
                scope.spawn(move || pair.iter().map(|path| server.load(path)).collect::<Vec<_>>())
            })
            .collect();
        threads.into_iter().flat_map(|thread| thread.join().unwrap()).collect()
    });
    assert_eq!(handles.len(), 8);
    let mut library = MeshLibrary::new();
    let mut occluders = culling::occlusion::OccluderMeshes::default();
    for (handle, path) in handles.iter().zip(&paths) {
        assert_eq!(server.wait(*handle, PATIENCE), Ok(LoadState::Ready), "{}", path.display());
        let scene = server.get(*handle).unwrap().expect("ready");
        assert_eq!(scene.meshes.len(), 2);
        assert_eq!(scene.triangle_count(), 14);
        // The loader derived each mesh's occluder: the closed cube has one, the open quad none.
        let derived: Vec<bool> = scene.occluders.iter().map(Option::is_some).collect();
        assert_eq!((derived.len(), derived.iter().filter(|&&some| some).count()), (2, 1), "{derived:?}");
        let model = scene.add_model(&mut library, &mut occluders).expect("a loaded scene adds to a library");
        let mut world = hecs::World::new();
        let spawned = assets::spawn_model(&mut world, &model, ecs::Transform::IDENTITY);
        assert_eq!(spawned.drawables.len(), 2, "{}: the cube and the quad", path.display());
    }
    let sorted = {
        let mut paths: Vec<_> = handles.iter().map(|&handle| server.path(handle).unwrap()).collect();
        paths.sort();
        paths
    };
    let mut expected = paths.clone();
    expected.sort();
    assert_eq!(sorted, expected, "every handle names its own file");
    assert_eq!(server.loading(), 0);
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn a_missing_or_malformed_file_fails_with_a_named_error_and_later_loads_go_on() {
    let folder = common::scratch("server-failures");
    let good = folder.join("good.glb");
    std::fs::write(&good, common::glb()).unwrap();
    let truncated = folder.join("truncated.glb");
    let bytes = common::glb();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let not_json = folder.join("not json.gltf");
    std::fs::write(&not_json, b"{ this is not glTF").unwrap();
    let missing = folder.join("missing.glb");

    let server = server(2);
    let failing = [server.load(&missing), server.load(&truncated), server.load(&not_json)];
    let after = server.load(&good);
    for (handle, path) in failing.iter().zip([&missing, &truncated, &not_json]) {
        let LoadState::Failed(error) = server.wait(*handle, PATIENCE).unwrap() else {
            panic!("{} should fail", path.display())
        };
        assert_eq!(error.path(), path.as_path(), "the error names the file");
        assert!(error.to_string().contains(&*path.display().to_string()), "{error}");
        assert!(server.get(*handle).unwrap().is_none(), "a failed load has no scene");
        match &error {
            LoadError::Import { error: ImportError::Io { .. }, .. } => assert_eq!(path, &missing),
            LoadError::Import { error: ImportError::Glb(_), .. } => assert_eq!(path, &truncated),
            LoadError::Import { error: ImportError::Json(_), .. } => assert_eq!(path, &not_json),
            other => panic!("{}: unexpected {other:?}", path.display()),
        }
    }
    assert_eq!(server.wait(after, PATIENCE), Ok(LoadState::Ready), "the loads after a failure go on");
    assert_eq!(server.get(after).unwrap().expect("ready").meshes.len(), 2);
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn a_removed_handle_is_refused_and_its_late_result_dropped() {
    let folder = common::scratch("server-remove");
    let path = folder.join("scene.glb");
    std::fs::write(&path, common::glb()).unwrap();
    let server = server(1);
    let first = server.load(&path);
    server.remove(first).expect("a live handle");
    let refused = server.state(first).unwrap_err();
    assert_eq!(refused.reason, StaleReason::Removed);
    assert_eq!(refused.kind, "GltfScene");
    assert!(server.remove(first).is_err(), "removed twice");
    // The next load reuses the slot; the old handle stays refused, and the dropped result
    // of the first load never shows through the new handle.
    let second = server.load(&path);
    assert_eq!(second.slot(), first.slot());
    assert_eq!(server.wait(second, PATIENCE), Ok(LoadState::Ready));
    assert_eq!(server.state(first).unwrap_err().reason, StaleReason::Reused { current: second.generation() });
    let kept = server.get(second).unwrap().expect("ready");
    server.remove(second).unwrap();
    assert_eq!(kept.meshes.len(), 2, "a scene handed out stays with its holder");
    assert_eq!(server.loading(), 0);
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn dropping_the_server_finishes_the_loads_running_and_skips_the_queued_ones() {
    let folder = common::scratch("server-drop");
    let path = folder.join("scene.glb");
    std::fs::write(&path, common::glb()).unwrap();
    let server = server(1);
    let handles: Vec<_> = (0..50).map(|_| server.load(&path)).collect();
    assert!(server.loading() <= handles.len());
    drop(server);
    std::fs::remove_dir_all(&folder).unwrap();
}

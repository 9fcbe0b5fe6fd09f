//! Occlusion on tracked frames: word and group occlusion hide only what the exact reference
//! hides, and a draw switched to or from an occluder is seen on that frame.

use super::*;

/// The unit box centred on the origin, and an occluder set in which `mesh` is that box: the
/// walls of the occlusion tests are this mesh scaled.
fn unit_box_occluder(mesh: ecs::MeshHandle) -> (ecs::Aabb, crate::occlusion::OccluderMeshes) {
    use crate::occlusion::{OccluderMesh, OccluderMeshes};
    let unit = ecs::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5));
    let mut occluders = OccluderMeshes::new();
    occluders.insert(mesh, OccluderMesh::from_box(&unit).expect("a box occludes"));
    (unit, occluders)
}

#[test]
fn word_and_group_occlusion_hides_only_what_the_exact_reference_hides() {
    use crate::occlusion::reference::ReferenceRaster;
    use crate::occlusion::{fit_buffer, OccluderInstance};
    let wall_mesh = ecs::MeshHandle(7);
    let (unit, occluders) = unit_box_occluder(wall_mesh);
    let motion = Arc::new(Mutex::new(Motion::default()));
    let eye = |frame: usize| Vec3::new(frame as f32 * 0.8 - 4.0, 2.0, 5.0);
    let (mut app, _) = driven_app(scene::look_at(eye(0), eye(0) + Vec3::NEG_Z), motion.clone());
    app.insert_resource(occluders.clone());
    // Walls with gaps at z = -20, spawned first; then clusters of 64 small boxes (one slot
    // word each) behind the walls, some peeking over or through a gap, and a few in front.
    let walls: Vec<Mat4> = (0..8)
        .map(|index| {
            let center = Vec3::new(index as f32 * 12.0 - 42.0, 4.0, -20.0);
            Mat4::from_scale_rotation_translation(Vec3::new(10.0, 8.0, 1.0), Quat::IDENTITY, center)
        })
        .collect();
    for model in &walls {
        app.world_mut().spawn((
            WorldTransform(*model),
            Mesh::new(wall_mesh, ecs::MaterialHandle(1), unit),
            Visible(true),
        ));
    }
    let mut next = uniform(0x2545_f491_4f6c_dd1d_u64);
    for cluster in 0..40 {
        let center =
            Vec3::new(next() * 90.0 - 45.0, next() * 6.0, if cluster % 8 == 0 { -10.0 } else { -25.0 - next() * 40.0 });
        for _ in 0..64 {
            let position = center + Vec3::new(next() * 6.0 - 3.0, next() * 3.0, next() * 6.0 - 3.0);
            let model = Mat4::from_scale_rotation_translation(Vec3::splat(0.2 + next()), Quat::IDENTITY, position);
            app.world_mut().spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true)));
        }
    }
    let instances: Vec<OccluderInstance> =
        walls.iter().map(|&world| OccluderInstance { mesh: wall_mesh, world }).collect();
    let mut occluded_total = 0;
    for frame in 0..10 {
        motion.lock().camera = Some(scene::look_at(eye(frame), eye(frame) + Vec3::new(0.05 * frame as f32, 0.0, -1.0)));
        app.run_frame();
        let visibility = app.resource::<Visibility>();
        let view = *visibility.view().expect("a view");
        let settings = *app.resource::<RenderSettings>();
        let viewport = view.viewport;
        let [width, height] = fit_buffer(
            settings.occlusion_buffer,
            [viewport.width, viewport.height],
            settings.occlusion_buffer_follows_viewport,
        );
        let reference = ReferenceRaster::new(view.projection * view.view, width, height, 2, &occluders, &instances);
        for slot in 0..visibility.len() {
            if visibility.is_occluded(slot) {
                occluded_total += 1;
                let bounds = visibility.objects().bounds[slot];
                assert!(
                    reference.hides(&bounds),
                    "frame {frame}: slot {slot} is hidden but the exact reference sees it"
                );
            }
        }
    }
    assert!(occluded_total > 1000, "the walls hide a good share of the clusters ({occluded_total})");
}

/// A tracked frame finds occluders again where a draw changed: a wall whose `Mesh` a system
/// swaps between an occluder mesh and a plain one hides the boxes behind it on exactly the
/// frames a fresh cull says it does.
#[test]
fn a_draw_switched_to_or_from_an_occluder_on_a_tracked_frame_is_seen_that_frame() {
    let wall_mesh = ecs::MeshHandle(7);
    let (unit, occluders) = unit_box_occluder(wall_mesh);
    // Sixteen panels side by side, neighbouring slots: swapping them all refreshes their word
    // densely.
    let panels: Vec<Mat4> = (0..16)
        .map(|index| {
            let center = Vec3::new(index as f32 * 2.5 - 18.75, 5.0, -20.0);
            Mat4::from_scale_rotation_translation(Vec3::new(2.5, 20.0, 1.0), Quat::IDENTITY, center)
        })
        .collect();
    let boxes: Vec<Mat4> = (0..200)
        .map(|index| {
            let position =
                Vec3::new((index % 20) as f32 * 1.5 - 15.0, (index / 20) as f32 * 0.8, -30.0 - (index % 7) as f32);
            Mat4::from_scale_rotation_translation(Vec3::splat(0.5), Quat::IDENTITY, position)
        })
        .collect();
    let camera = scene::look_at(Vec3::new(0.0, 2.0, 5.0), Vec3::new(0.0, 2.0, -1.0));
    let mesh_of = move |occludes: bool| {
        if occludes {
            Mesh::new(wall_mesh, ecs::MaterialHandle(1), unit)
        } else {
            scene::unit_cube_mesh()
        }
    };
    // What a fresh app decides for the wall drawn with an occluder or not: per box, occluded.
    let fresh = |occludes: bool| -> Vec<bool> {
        let mut app = App::with_threads(1);
        crate::visibility::install(&mut app);
        app.insert_resource(occluders.clone());
        scene::spawn_camera(app.world_mut(), Camera::default(), camera);
        for &panel in &panels {
            app.world_mut().spawn((WorldTransform(panel), mesh_of(occludes), Visible(true)));
        }
        let entities: Vec<Entity> = boxes
            .iter()
            .map(|&model| app.world_mut().spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true))))
            .collect();
        app.run_frame();
        occluded_by_index(&app, &entities)
    };
    let (with_wall, without_wall) = (fresh(true), fresh(false));
    assert!(with_wall.iter().filter(|&&hidden| hidden).count() > 100, "the wall hides most boxes");
    assert!(without_wall.iter().all(|&hidden| !hidden), "nothing hides them without it");

    // The wall starts plain, so its word's occluder bit must be found again when it turns
    // into an occluder (a stale bit that stays set would only be filtered by the selection).
    // Swapped through the entity (a single-object refresh) and through a query (its
    // archetype is refreshed whole).
    for by_query in [false, true] {
        let occludes = Arc::new(Mutex::new(false));
        let mut app = App::with_threads(2);
        crate::visibility::install(&mut app);
        app.insert_resource(occluders.clone());
        scene::spawn_camera(app.world_mut(), Camera::default(), camera);
        let wall: Vec<Entity> = panels
            .iter()
            .map(|&panel| app.world_mut().spawn((WorldTransform(panel), mesh_of(false), Visible(true), Drifter)))
            .collect();
        let entities: Vec<Entity> = boxes
            .iter()
            .map(|&model| app.world_mut().spawn((WorldTransform(model), scene::unit_cube_mesh(), Visible(true))))
            .collect();
        let wanted = occludes.clone();
        app.add_system(
            Stage::Input,
            System::new("swap the wall's mesh", move |ctx| {
                let occludes = *wanted.lock();
                let swap = |mesh: &mut Mesh| {
                    if (mesh.mesh == wall_mesh) != occludes {
                        *mesh = mesh_of(occludes);
                    }
                };
                if by_query {
                    ctx.query::<With<&mut Mesh, &Drifter>>().iter().for_each(swap);
                } else {
                    for &panel in &wall {
                        swap(&mut ctx.get_mut::<Mesh>(panel).expect("a panel"));
                    }
                }
            })
            .writes::<Mesh>()
            .reads::<Drifter>(),
        );
        let mut tracked = 0;
        for frame in 0..12 {
            let now = frame % 4 >= 2;
            *occludes.lock() = now;
            app.run_frame();
            tracked += usize::from(app.resource::<Visibility>().stats().tracked);
            let ours = occluded_by_index(&app, &entities);
            let expected = if now { &with_wall } else { &without_wall };
            assert_eq!(&ours, expected, "swapped by query {by_query}, frame {frame}");
        }
        assert!(tracked >= 10, "the swaps are seen by tracked frames ({tracked} of 12)");
    }
}

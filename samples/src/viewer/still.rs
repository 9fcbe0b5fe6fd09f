//! The preloaded viewer: every file loaded first, spawned, framed, one frame run and drawn
//! into the PNG (checked against the image drawn with culling off), or shown in the window.

use std::process::ExitCode;

use assets::{AlphaMode, BaseColor, GltfMaterial, Model};
use culling::occlusion::OccluderMeshes;
use culling::Visibility;
use ecs::Viewport;
use renderer::{pack_rgba8, MeshLibrary};
use runtime::App;

use super::animate::animate_frames;
use super::load::Loaded;
use super::options::{Options, ANIMATE_DELTA};
use super::spawn::{add_sun, frame_scene, spawn_files};
use super::{window_options, SKY};
use crate::mesh_render::MeshRenderer;

/// Spawns the loaded files, frames them and shows them: in the window, as the animated
/// frames of `--animate`, or as one checked PNG. A file left out sets `any_bad`.
pub(super) fn view(options: &Options, loaded: &[Loaded], any_bad: &mut bool) -> ExitCode {
    let mut app = App::new();
    culling::install(&mut app);
    if options.animate.is_some() {
        animation::install(&mut app);
        if !options.window {
            app.set_fixed_delta(Some(ANIMATE_DELTA));
        }
    }
    app.insert_resource(Viewport { width: options.width, height: options.height });
    let mut library = MeshLibrary::new();
    let mut occluders = OccluderMeshes::new();
    let spawned = spawn_files(
        &mut app,
        loaded,
        options.placement,
        options.animate.as_ref(),
        &mut library,
        &mut occluders,
        any_bad,
    );
    let names = || loaded.iter().map(|file| file.path.display().to_string()).collect::<Vec<_>>().join(", ");
    if spawned.drawables.is_empty() {
        println!("viewer: {} has nothing to draw", names());
        return ExitCode::SUCCESS;
    }
    app.insert_resource(occluders);
    if options.shadows {
        add_sun(&mut app, spawned.bounds, &spawned.drawables);
    }
    frame_scene(&mut app, &spawned, loaded.len() == 1, options.width as f32 / options.height as f32);
    if options.window {
        let window = window_options(options);
        let outcome = crate::window::run::run(app, &library, window);
        return crate::window::run::WindowSummary::report(outcome, "viewer", options.screenshot.as_deref());
    }
    app.run_frame();

    let visibility = app.resource::<Visibility>();
    report_levels(&visibility, &library, &spawned.models);
    let colors = object_colors(&app, &visibility);
    let capacity = visibility.objects().len() as u32;
    let atlas = if options.shadows { app.resource::<ecs::ShadowSettings>().atlas_resolution } else { 0 };
    let device = render_graph::GpuDevice::new(&render_graph::DeviceConfig {
        app_name: "viewer".into(),
        ..render_graph::DeviceConfig::default()
    });
    let made = device.map_err(crate::mesh_render::RenderError::from).and_then(|device| {
        let size = (options.width, options.height);
        MeshRenderer::with_shadows(std::sync::Arc::new(device), size, capacity, library, SKY, atlas)
    });
    let mut renderer = match made {
        Ok(renderer) => renderer,
        Err(reason) => {
            println!("render: no usable Vulkan device ({reason}); no image drawn");
            return ExitCode::SUCCESS;
        }
    };
    if options.animate.is_some() {
        drop(visibility);
        return animate_frames(options, &mut app, &mut renderer, &colors);
    }
    if options.shadows {
        renderer.set_shadows(Some(&app.resource::<culling::ShadowViews>()), &visibility);
    }
    draw_still(options, &app, &mut renderer, &visibility, &colors, &spawned.models)
}

/// Prints how many objects the frame saw and drew, the triangles drawn per level of detail and
/// the meshlets of the drawn levels.
fn report_levels(visibility: &Visibility, library: &MeshLibrary, models: &[(Model, Vec<GltfMaterial>)]) {
    // Which level of which mesh each library id is.
    let mut level_of = vec![0_usize; library.len()];
    let mut levels_drawn = Vec::new();
    for mesh in models.iter().flat_map(|(model, _)| model.meshes()) {
        for (level, id) in mesh.levels.clone().enumerate() {
            level_of[id as usize] = level;
        }
    }
    let mut meshlets = 0;
    for &object in visibility.visible() {
        let mesh = visibility.objects().draws[object as usize].mesh.0;
        let level = level_of[mesh as usize];
        if levels_drawn.len() <= level {
            levels_drawn.resize(level + 1, 0_u64);
        }
        levels_drawn[level] += u64::from(library.triangle_count(mesh));
        meshlets += library.meshlets(mesh).len();
    }
    println!(
        "visibility: {} objects, {} visible; triangles drawn per LOD level {:?}; {} meshlets in the drawn levels",
        visibility.objects().len(),
        visibility.visible().len(),
        levels_drawn,
        meshlets
    );
}

/// Every object's colour: its material's base colour, white without one.
fn object_colors(app: &App, visibility: &Visibility) -> Vec<u32> {
    visibility
        .objects()
        .entities
        .iter()
        .map(|&entity| {
            let [red, green, blue, alpha] =
                app.world().get::<&BaseColor>(entity).map_or([255; 4], |color| color.to_rgba8());
            pack_rgba8(red, green, blue, alpha)
        })
        .collect()
}

/// Draws the frame into the PNG, checked against the image drawn with culling off, and for
/// `--classify` the material classes and the meshlet verdicts.
fn draw_still(
    options: &Options,
    app: &App,
    renderer: &mut MeshRenderer,
    visibility: &Visibility,
    colors: &[u32],
    models: &[(Model, Vec<GltfMaterial>)],
) -> ExitCode {
    let outcome = renderer.render_and_check(visibility, |object| colors[object]).and_then(|(pixels, frame)| {
        renderer.write_png(&options.out, &pixels)?;
        Ok(frame)
    });
    match outcome {
        Ok(frame) => {
            println!(
                "render: {}x{} on {}: drew {} of {} objects, {} triangles, wrote {}; culling on vs off: {}",
                options.width,
                options.height,
                renderer.device_name(),
                frame.drawn,
                frame.drawn_without_culling,
                frame.triangles,
                options.out.display(),
                if frame.differing_pixels == 0 {
                    String::from("identical images")
                } else {
                    format!("{} pixels differ", frame.differing_pixels)
                }
            );
            if options.classify {
                let outs = [options.out.clone()];
                if let Err(error) = write_material_classes(renderer, visibility, app.world(), models, &options.out) {
                    eprintln!("viewer: materials: {error}");
                    return ExitCode::FAILURE;
                }
                match crate::cluster_render::report_frame(
                    renderer,
                    visibility,
                    |object| colors[object],
                    &outs,
                    (true, true),
                    None,
                ) {
                    Ok(line) => println!("{line}"),
                    Err(error) => {
                        eprintln!("viewer: cluster culling: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            let problems = renderer.validation_problems();
            if !problems.is_empty() {
                eprintln!("viewer: validation reported problems: {problems:?}");
                return ExitCode::FAILURE;
            }
            if frame.differing_pixels == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("viewer: render: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `IMAGE-materials.png`: every object drawn with culling off in its material's alpha
/// mode's colour (opaque grey, masked green, blended blue; lighter where textured). `models`
/// gives each file's model and materials: a material handle belongs to the model whose
/// range of library materials holds it.
fn write_material_classes(
    renderer: &mut MeshRenderer,
    visibility: &Visibility,
    world: &hecs::World,
    models: &[(Model, Vec<GltfMaterial>)],
    out: &std::path::Path,
) -> Result<(), crate::city::RenderError> {
    let material_of = |handle: u32| {
        models.iter().find_map(|(model, materials)| {
            handle.checked_sub(model.material_base()).and_then(|index| materials.get(index as usize))
        })
    };
    let classes: Vec<u32> = visibility
        .objects()
        .entities
        .iter()
        .map(|&entity| {
            let material = world.get::<&ecs::Mesh>(entity).ok().and_then(|mesh| material_of(mesh.material.0)).cloned();
            let material = material.unwrap_or_default();
            let lift = if material.base_color_texture.is_some() { 60 } else { 0 };
            match material.alpha {
                AlphaMode::Opaque => pack_rgba8(140 + lift, 140 + lift, 140 + lift, 255),
                AlphaMode::Mask { .. } => pack_rgba8(40, 170 + lift, 40, 255),
                AlphaMode::Blend => pack_rgba8(40, 80, 170 + lift, 255),
            }
        })
        .collect();
    let image = renderer.draw_all(visibility, |object| classes[object])?;
    let stem = out.file_stem().map_or(String::from("viewer"), |stem| stem.to_string_lossy().into_owned());
    let path = out.with_file_name(format!("{stem}-materials.png"));
    renderer.write_png(&path, &image)?;
    println!("materials: wrote {}", path.display());
    Ok(())
}

//! Cluster (meshlet) culling of a frame's meshes on the GPU ([`ClusterRenderer`]): the same
//! objects as [`MeshRenderer`] draws, culled object by object and then meshlet by meshlet
//! (`renderer::add_cluster_culled_scene_passes`), checked against the unculled image;
//! plus the meshlet truth (which meshlet owns each pixel of an unculled render) and the
//! classification view (every meshlet coloured by its verdict, drawn with culling off).
//!
//! Both the truth and the classification draw a *meshlet scene*: every meshlet of every
//! object in view is an object of its own, with the same vertices and world matrix, so its
//! pixels are exactly the pixels that meshlet covers in the real scene.

use std::sync::Arc;

use culling::cluster::{ClusterSettings, ClusterStats, ClusterVerdict};
use culling::{Aabb, Frustum, Visibility};
use glam::{Mat4, Vec3};
use render_graph::device::GpuDevice;
use render_graph::{vk, RenderGraph};
use renderer::{add_cluster_culled_scene_passes, cluster_pass_ms, ClusterCulledScene, ClusterReadbacks};
use renderer::{lock_scene, pack_rgba8, FrameView, GpuScene, MeshLibrary, ObjectDesc, ScenePassOptions, SharedScene};

use crate::mesh_render::{MeshRenderer, RenderError};
use renderer::truth::ReferenceRenderer;

/// What one cluster-culled frame drew.
#[derive(Clone, Debug, Default)]
pub struct ClusterFrame {
    /// The GPU's counters of the last frame.
    pub stats: ClusterStats,
    /// GPU milliseconds of the early and late cluster passes.
    pub gpu_ms: [Option<f64>; 2],
    /// Pixels that differ from the unculled image (0 is the only right answer).
    pub differing_pixels: usize,
    /// Each pair's verdict (pairs in [`ClusterRenderer::pairs`] order).
    pub verdicts: Vec<ClusterVerdict>,
    /// Objects whose records name a chain the GPU chooses the level of (with `chains`).
    pub chained: usize,
}

/// The graph and scene of cluster-culled frames, rebuilt when an object's mesh (its level of
/// detail) changes, so the table always matches the frame.
struct Culled {
    graph: RenderGraph,
    scene: SharedScene,
    culled: ClusterCulledScene,
    /// The scene's generation the graph follows (a chain table that grew).
    generation: u64,
}

/// A cluster-culling renderer beside a [`MeshRenderer`] (same device, meshes and size).
pub struct ClusterRenderer {
    device: Arc<GpuDevice>,
    meshes: MeshLibrary,
    extent: vk::Extent2D,
    clear_color: [f32; 4],
    capacity: u32,
    culled: Option<Culled>,
}

impl ClusterRenderer {
    /// A renderer sharing `renderer`'s device, meshes, size and clear colour.
    pub fn new(renderer: &MeshRenderer, capacity: u32) -> ClusterRenderer {
        let (device, meshes, extent, clear_color) = renderer.parts();
        ClusterRenderer {
            device: Arc::clone(device),
            meshes: meshes.clone(),
            extent,
            clear_color,
            capacity,
            culled: None,
        }
    }

    /// Draws the frame `frames` times with object + cluster culling (two more first when
    /// the graph is new, so the early phase has a history), then checks the image against
    /// `reference` (the unculled image of the same frame, same colours, drawn by `drawn_as`,
    /// whose stand-ins and skinned poses it draws too). With `chains` (the world and the
    /// levels' errors of a frame that chose levels by the error rule) every object whose
    /// [`ecs::Lod`] the errors cover names its chain and the GPU chooses its level, as the
    /// frame's cull does (the scene keeps the slots' states from frame to frame).
    pub fn render(
        &mut self,
        drawn_as: &ReferenceRenderer,
        visibility: &Visibility,
        (color_of, chains): (impl Fn(usize) -> u32, Chains<'_>),
        frames: u32,
        reference: &[u8],
    ) -> Result<(Vec<u8>, ClusterFrame), RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        let view_projection = (view.projection * view.view).to_cols_array_2d();
        let stale = match &self.culled {
            None => true,
            Some(culled) => {
                let scene = lock_scene(&culled.scene);
                let table = &culled.culled.table;
                let objects = visibility.objects();
                objects.len() as u32 != table.object_count()
                    || (0..objects.len()).any(|object| {
                        let draw = objects.draws[object];
                        let mesh = if draw.mesh.is_some() { draw.mesh.0 } else { 0 };
                        // A chained object has the pairs of every level: a level switch keeps
                        // the table (and the slots' states).
                        let chained = scene.record(object as u32).is_some_and(|record| record.reserved[1] > 0);
                        let built = table.built_meshes(object as u32).is_some_and(|meshes| meshes.contains(&mesh));
                        if chained {
                            return !built;
                        }
                        table.built_mesh(object as u32) != Some(mesh)
                            || scene.record(object as u32).is_none_or(|record| record.mesh != mesh)
                    })
            }
        };
        let mut frames = frames.max(1);
        if stale {
            frames += 2;
            self.culled = None;
            let scene = GpuScene::new(&self.device, self.meshes.clone(), self.capacity)?.into_shared();
            drawn_as.upload_as_drawn(&scene, visibility, &color_of)?;
            name_chains(&scene, visibility, chains);
            lock_scene(&scene).draw_all_objects();
            let mut graph = RenderGraph::new(Arc::clone(&self.device), self.extent)?;
            graph.set_name("cluster render");
            let options = ScenePassOptions { clear_color: self.clear_color, ..ScenePassOptions::default() };
            let readbacks = ClusterReadbacks { color: true, verdicts: true, early_depth: false };
            let culled =
                add_cluster_culled_scene_passes(&mut graph, &scene, &options, ClusterSettings::default(), readbacks)?;
            self.culled = Some(Culled { graph, scene, culled, generation: 0 });
        }
        let culled = self.culled.as_mut().expect("made above");
        drawn_as.upload_as_drawn(&culled.scene, visibility, &color_of)?;
        let chained = name_chains(&culled.scene, visibility, chains);
        lock_scene(&culled.scene).follow_growth(&mut culled.graph, &mut culled.generation);
        culled.graph.set_param(FrameView::from_view_projection(Mat4::from_cols_array_2d(&view_projection)));
        for _ in 0..frames {
            culled.graph.execute_frame()?;
        }
        culled.graph.wait_idle()?;
        let image = culled.culled.color.as_ref().ok_or("asked for the colour")?.read()?.to_vec();
        let mut verdicts = Vec::new();
        culled.culled.read_verdicts(&mut verdicts)?;
        let frame = ClusterFrame {
            stats: culled.culled.read_stats()?,
            gpu_ms: cluster_pass_ms(culled.graph.stats()),
            differing_pixels: image.chunks_exact(4).zip(reference.chunks_exact(4)).filter(|(a, b)| a != b).count(),
            verdicts,
            chained,
        };
        Ok((image, frame))
    }

    /// The pairs of the last [`ClusterRenderer::render`]: `(object, meshlet)`, `None` for an
    /// object drawn whole.
    pub fn pairs(&self) -> Vec<(u32, Option<u32>)> {
        let Some(culled) = &self.culled else { return Vec::new() };
        let table = &culled.culled.table;
        (0..table.pair_count())
            .filter_map(|pair| table.pairs().get(pair as usize).map(|&[object, field]| (object, field)))
            .map(|(object, field)| {
                let meshlet = field & !renderer::PAIR_FIRST;
                // A level of a chain drawn whole is `PAIR_WHOLE - level`.
                (object, (meshlet <= renderer::PAIR_WHOLE - renderer::MAX_GPU_LOD_LEVELS).then_some(meshlet))
            })
            .collect()
    }

    /// Whether pair `pair` was drawn-visible in the last frame.
    pub fn pair_visible(&self, pair: u32) -> Result<bool, RenderError> {
        let culled = self.culled.as_ref().ok_or("no frame was rendered")?;
        Ok(culled.culled.read_bit(pair)?)
    }

    /// The meshlet truth of the last frame: draws every meshlet of every object whose box may
    /// be in view, each in the colour of its pair index, with culling off; returns the pairs
    /// owning at least one pixel, sorted.
    pub fn pairs_with_pixels(&self) -> Result<Vec<u32>, RenderError> {
        let image = self.draw_meshlets(|pair, _| id_color(pair))?;
        let mut owners: Vec<u32> = image
            .chunks_exact(4)
            .filter_map(|texel| {
                let code = u32::from(texel[0]) | (u32::from(texel[1]) << 8) | (u32::from(texel[2]) << 16);
                (texel[3] == 254).then(|| code.checked_sub(1)).flatten()
            })
            .collect();
        owners.sort_unstable();
        owners.dedup();
        Ok(owners)
    }

    /// The classification view of the last frame: every meshlet in view drawn with culling
    /// off in the colour of its verdict (visible green, frustum red, back-facing purple,
    /// occluded blue, conservative amber).
    pub fn classification_image(&self, verdicts: &[ClusterVerdict]) -> Result<Vec<u8>, RenderError> {
        self.draw_meshlets(|pair, _| {
            let [r, g, b, a] = verdicts.get(pair as usize).copied().unwrap_or_default().color();
            pack_rgba8(r, g, b, a)
        })
    }

    /// Draws the meshlet scene of the last frame (see the module docs), pair `p` in
    /// `color_of(p, object)`, with culling off.
    fn draw_meshlets(&self, color_of: impl Fn(u32, u32) -> u32) -> Result<Vec<u8>, RenderError> {
        let culled = self.culled.as_ref().ok_or("no frame was rendered")?;
        let view = *culled.graph.param::<FrameView>().ok_or("no frame was rendered")?;
        let view_projection = view.view_projection();
        let scene = lock_scene(&culled.scene);
        let frustum = Frustum::from_view_projection(view_projection);
        let table = &culled.culled.table;
        let (positions, indices) = (self.meshes.positions(), self.meshes.indices());
        let mut library = MeshLibrary::new();
        let mut objects = Vec::new();
        let mut local_positions = Vec::new();
        let mut local_indices = Vec::new();
        for (pair, &[object, field]) in table.pairs().iter().enumerate() {
            let (Some(record), Some(transform)) = (scene.record(object), scene.transform(object)) else { continue };
            let (center, half) = renderer::world_box(transform, record);
            let (center, half) = (Vec3::from(center), Vec3::from(half));
            let aabb = Aabb { min: center - half, max: center + half };
            if record.index_count == 0 || !frustum.may_intersect_aabb(&aabb) {
                continue;
            }
            // The pairs of the record's level, as the cull draws them (a chained object has
            // the pairs of every level: `cluster_cull.h`).
            let built = table.built_meshes(object).is_some_and(|meshes| meshes.contains(&record.mesh));
            let drawn = table.pair_mesh_id(pair as u32) == Some(record.mesh);
            let (first, count) = match table.pair(pair as u32) {
                Some((_, Some(meshlet))) if drawn => (record.first_index + meshlet.first_index, meshlet.index_count),
                Some((_, None)) if drawn => (record.first_index, record.index_count),
                // A stale table draws the object whole, by its first pair only.
                _ if !built && field & renderer::PAIR_FIRST != 0 => (record.first_index, record.index_count),
                _ => continue,
            };
            // The meshlet's own vertices, copied bit for bit, and indices into them.
            local_positions.clear();
            local_indices.clear();
            let mut remap = std::collections::HashMap::new();
            for &index in &indices[first as usize..(first + count) as usize] {
                let vertex = (record.vertex_offset + index as i32) as usize;
                let local = *remap.entry(vertex).or_insert_with(|| {
                    let [x, y, z, _] = positions[vertex];
                    local_positions.push([x, y, z]);
                    local_positions.len() as u32 - 1
                });
                local_indices.push(local);
            }
            let mesh = library.add_mesh(&local_positions, &local_indices)?;
            let world = transform.to_cols();
            objects.push(ObjectDesc { world, color: color_of(pair as u32, object), mesh, material: 0 });
        }
        drop(scene);
        if objects.is_empty() {
            library.add_unit_cube();
        }
        let mut meshlet_scene = GpuScene::new(&self.device, library, objects.len().max(1) as u32)?;
        for object in objects {
            meshlet_scene.push_object(object)?;
        }
        meshlet_scene.draw_all_objects();
        let meshlet_scene = meshlet_scene.into_shared();
        let mut graph = RenderGraph::new(Arc::clone(&self.device), self.extent)?;
        graph.set_param(view);
        graph.set_name("cluster reference render");
        let options = ScenePassOptions { clear_color: self.clear_color, ..ScenePassOptions::default() };
        let readback =
            renderer::add_scene_passes(&mut graph, &meshlet_scene, &options)?.ok_or("asked for a readback")?;
        graph.execute_frame()?;
        graph.wait_idle()?;
        Ok(readback.read()?.to_vec())
    }
}

/// The world and the levels' errors of a frame that chose levels by the error rule, for
/// [`ClusterRenderer::render`] to name each object's chain; `None`: the records' levels.
pub type Chains<'a> = Option<(&'a hecs::World, &'a ecs::LodErrors)>;

/// Names in each record of `scene` (as [`ReferenceRenderer::upload_as_drawn`] wrote it: the
/// CPU's level) the chain of its entity's [`ecs::Lod`], where `chains`' errors cover every
/// level and the record draws one of them, and sets the scene's view of the error rule (the
/// frame's camera), so the cluster frame's culls choose the levels on the GPU. Returns how
/// many records name a chain.
fn name_chains(scene: &SharedScene, visibility: &Visibility, chains: Chains<'_>) -> usize {
    let Some((world, errors)) = chains else { return 0 };
    let mut chained = 0;
    let mut scene = lock_scene(scene);
    scene.set_lod_view(visibility.lod_error_view(), !visibility.stats().tracked);
    for (slot, &entity) in visibility.objects().entities.iter().enumerate() {
        let Ok(lod) = world.get::<&ecs::Lod>(entity) else { continue };
        let (Some(&record), Some(&transform)) = (scene.record(slot as u32), scene.transform(slot as u32)) else {
            continue;
        };
        let meshes: Vec<u32> = lod.levels.iter().map(|level| level.mesh.0).collect();
        let values: Option<Vec<f32>> = lod.levels.iter().map(|level| errors.get(level.mesh)).collect();
        // A stand-in or an emptied slot keeps the record's level.
        let (Some(values), false) = (values, record.is_empty() || !meshes.contains(&record.mesh)) else { continue };
        let Some(reserved) = scene.lod_chain_columns(&meshes, &values, record.material) else { continue };
        let record = renderer::ObjectRecord { reserved, ..record };
        scene.set_parts(slot as u32, transform, record).expect("a slot below the count");
        chained += 1;
    }
    chained
}

/// The id colour of pair `pair`: `pair + 1` in red, green and blue, alpha 254 (the sky's
/// alpha is 255, so no pair reads as sky). Meshlet meshes have no normals, so the geometry
/// pass writes the colour unlit, byte for byte.
fn id_color(pair: u32) -> u32 {
    let code = pair + 1;
    pack_rgba8(code as u8, (code >> 8) as u8, (code >> 16) as u8, 254)
}

/// The demo's hook for one drawn frame: cluster-culls the frame beside `renderer`'s GPU
/// culling, checks the image against the unculled one, and returns a `cluster cull:` report
/// line. With `classify`, writes `NAME-meshlets.png` next to each of `pngs` (the
/// classification view); with `truth`, counts the meshlets owning a pixel that were culled
/// (`false_hidden_meshlets`, which must be 0: an error otherwise).
pub fn report_frame(
    renderer: &mut MeshRenderer,
    visibility: &Visibility,
    color_of: impl Fn(usize) -> u32,
    pngs: &[std::path::PathBuf],
    (classify, truth): (bool, bool),
    chains: Chains<'_>,
) -> Result<String, RenderError> {
    let reference = renderer.draw_all(visibility, &color_of)?;
    let mut clusters = match renderer.take_clusters() {
        Some(clusters) => clusters,
        None => ClusterRenderer::new(renderer, renderer.capacity()),
    };
    let outcome =
        report_with(&mut clusters, renderer, visibility, (&color_of, chains), &reference, pngs, (classify, truth));
    renderer.put_clusters(clusters);
    outcome
}

#[allow(clippy::too_many_arguments)]
fn report_with(
    clusters: &mut ClusterRenderer,
    renderer: &MeshRenderer,
    visibility: &Visibility,
    (color_of, chains): (&impl Fn(usize) -> u32, Chains<'_>),
    reference: &[u8],
    pngs: &[std::path::PathBuf],
    (classify, truth): (bool, bool),
) -> Result<String, RenderError> {
    let (_, frame) = clusters.render(renderer, visibility, (color_of, chains), 1, reference)?;
    let stats = frame.stats;
    let ms = |value: Option<f64>| value.map_or_else(|| String::from("n/a"), |ms| format!("{ms:.3}"));
    let mut line = format!(
        "cluster cull: {} meshlets, {} after objects, {} after frustum, {} after cone, {} after occlusion ({} conservative), {} drawn ({} whole objects); triangles {} vs {} with object culling alone ({:.1}% fewer); GPU ms: early {}, late {}; culled vs unculled: {}",
        stats.meshlets,
        stats.after_objects(),
        stats.after_frustum(),
        stats.after_cone(),
        stats.after_occlusion(),
        stats.conservative,
        stats.drawn(),
        stats.whole_objects,
        stats.triangles,
        stats.object_triangles,
        stats.triangle_saving() * 100.0,
        ms(frame.gpu_ms[0]),
        ms(frame.gpu_ms[1]),
        if frame.differing_pixels == 0 { String::from("identical images") } else { format!("{} pixels differ", frame.differing_pixels) },
    );
    if frame.chained > 0 {
        line += &format!("; levels chosen on the GPU for {} chained objects", frame.chained);
    }
    if truth {
        let owners = clusters.pairs_with_pixels()?;
        let mut false_hidden = 0;
        for &pair in &owners {
            false_hidden += usize::from(!clusters.pair_visible(pair)?);
        }
        line += &format!("; meshlets with pixels {}, false_hidden_meshlets {false_hidden}", owners.len());
        if false_hidden > 0 || frame.differing_pixels > 0 {
            return Err(format!("cluster culling hid what the camera sees: {line}").into());
        }
    }
    if classify && !pngs.is_empty() {
        let image = clusters.classification_image(&frame.verdicts)?;
        for path in pngs {
            let stem = path.file_stem().map_or(String::from("city"), |stem| stem.to_string_lossy().into_owned());
            let path = path.with_file_name(format!("{stem}-meshlets.png"));
            renderer.write_png(&path, &image)?;
            line += &format!(", wrote {}", path.display());
        }
    }
    Ok(line)
}

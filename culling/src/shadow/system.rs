//! The shadow views of the frame and the casters of each: [`ShadowViews`], filled by
//! [`shadow_views_system`] in the Visibility stage right after the camera's cull.

use ecs::{ResolvedView, ShadowBias, ShadowSettings, MAX_CASCADES, MAX_SHADOWED_LIGHTS};
use glam::Vec3;
use runtime::hecs::{Entity, World};
use runtime::{Columns, Frame, Res, ResMut, Stage, System};

use super::lights::{find_sun, gather_local_lights, Candidate, LightColumns};
use super::views::{
    cascade_slice, cascade_view_projection, cube_face_view_projection, spot_view_projection, AtlasAllocator, AtlasTile,
    LightView, LightViewKind, MIN_TILE,
};
use crate::bits::{words_for, VisibilityBits, BITS_PER_WORD};
use crate::frustum::Frustum;
use crate::kernels::Kernel;
use crate::parallel::SharedMut;
use crate::soa::AabbSoa;
use crate::visibility::{Visibility, VISIBILITY_SYSTEM};

/// Name of [`shadow_views_system`].
pub const SHADOW_VIEWS_SYSTEM: &str = "culling::shadow_views";

/// Most local lights (spot and point, shadowed or not) the frame lights with; the nearest
/// to the camera win.
pub const MAX_LOCAL_LIGHTS: usize = 64;

/// Casters per job of the multi-view cull (a multiple of 64, so jobs own whole words).
const CULL_GRAIN: usize = 4096;

/// The sun of the frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SunLight {
    /// Its entity.
    pub entity: Entity,
    /// The direction its light travels (unit, world space).
    pub direction: Vec3,
    /// Colour times illuminance.
    pub radiance: Vec3,
    /// Camera distance each cascade ends at (the first `cascades` entries).
    pub cascade_ends: [f32; MAX_CASCADES],
    /// Number of cascades drawn this frame (0 when it casts no shadow).
    pub cascades: usize,
    /// Index of its first cascade in [`ShadowViews::views`].
    pub first_view: usize,
}

/// What a local light is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalLightKind {
    /// A cone down `direction` (unit), full brightness inside `inner_angle`, none past
    /// `outer_angle` (half angles, radians).
    Spot {
        /// Where it points.
        direction: Vec3,
        /// Half angle of the core.
        inner_angle: f32,
        /// Half angle of the edge.
        outer_angle: f32,
    },
    /// Light in every direction.
    Point,
}

/// A spot or point light that lights this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalLight {
    /// Its entity.
    pub entity: Entity,
    /// Spot or point.
    pub kind: LocalLightKind,
    /// World position.
    pub position: Vec3,
    /// Colour times intensity.
    pub radiance: Vec3,
    /// Where its light ends.
    pub range: f32,
    /// Index of its first view in [`ShadowViews::views`] (one for a spot, six for a point),
    /// `None` when it casts no shadow this frame.
    pub first_view: Option<usize>,
}

/// Casters of one view before and after culling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowViewStats {
    /// Shadow casters tested.
    pub casters: usize,
    /// Casters kept for the view (drawn into its map).
    pub kept: usize,
}

/// The frame's lights and shadow views, and the casters each view draws: a resource,
/// reused across frames (a steady light setup allocates nothing).
///
/// Bit `k` of [`ShadowViews::caster_words`]`(v)` is set when caster
/// [`Visibility::casters`]`()[k]` may draw into view `v`; [`ShadowViews::caster_slots`]
/// names them by slot. The test is the camera's conservative box test against the view's
/// volume (a straddling box is kept, a non-finite one is kept), with the same kernels, so
/// the GPU's multi-view cull gives the same bits per view.
///
/// ```
/// use ecs::{DirectionalLight, Transform};
/// use glam::{Quat, Vec3};
/// let mut app = runtime::App::new();
/// culling::install(&mut app);
/// ecs::scene::spawn_camera(app.world_mut(), ecs::Camera::default(), Transform::IDENTITY);
/// let sun = Transform::from_translation_rotation(Vec3::ZERO, Quat::from_rotation_x(-1.2));
/// app.world_mut().spawn((sun, DirectionalLight::default()));
/// app.run_frame();
/// let shadows = app.resource::<culling::ShadowViews>();
/// assert_eq!(shadows.views().len(), 4); // four cascades
/// assert!(shadows.sun().is_some());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ShadowViews {
    views: Vec<LightView>,
    sun: Option<SunLight>,
    lights: Vec<LocalLight>,
    /// Every view's caster words, view after view (`words_per_view` each).
    words: Vec<u64>,
    words_per_view: usize,
    stats: Vec<ShadowViewStats>,
    casters: Vec<u32>,
    /// The casters as slot bits (what a device cull reads).
    caster_slot_words: Vec<u64>,
    atlas_resolution: u32,
    caster_culling: bool,
    caster_occlusion: bool,
    /// Whether [`ShadowViews::update`] tests the casters itself (else a GPU does).
    device_culling: bool,
    unplaced_lights: usize,
    // Working memory.
    bounds: AabbSoa,
    atlas: AtlasAllocator,
    candidates: Vec<Candidate>,
    ends: Vec<f32>,
}

impl ShadowViews {
    /// This frame's shadow views: the sun's cascades first, then each shadowed local light's.
    pub fn views(&self) -> &[LightView] {
        &self.views
    }

    /// The sun, when the world has a [`DirectionalLight`](ecs::DirectionalLight).
    pub fn sun(&self) -> Option<&SunLight> {
        self.sun.as_ref()
    }

    /// The local lights of the frame, nearest the camera first: every shadowed one, then
    /// the rest, at most [`MAX_LOCAL_LIGHTS`].
    pub fn lights(&self) -> &[LocalLight] {
        &self.lights
    }

    /// Side of the shadow atlas every view's tile lies in.
    pub fn atlas_resolution(&self) -> u32 {
        self.atlas_resolution
    }

    /// Whether the views were culled ([`ShadowSettings::caster_culling`]); off, every caster
    /// is kept in every view.
    pub fn caster_culling(&self) -> bool {
        self.caster_culling
    }

    /// Whether the sun's cascades are also culled by occlusion where the GPU culls
    /// ([`ShadowSettings::caster_occlusion`], with caster culling on); the host's own cull
    /// tests the frustum only.
    pub fn caster_occlusion(&self) -> bool {
        self.caster_culling && self.caster_occlusion
    }

    /// Leaves the caster test to the GPU (`true`) or does it on the host (`false`, the
    /// default). The renderer sets it when it culls the shadow views on the device; the views
    /// are placed on the host either way. With it set, every view's caster words are clear
    /// and [`ShadowViewStats::kept`] is 0: the GPU's counts are the renderer's report.
    pub fn set_device_culling(&mut self, on_device: bool) {
        self.device_culling = on_device;
    }

    /// Whether the GPU tests the casters (see [`ShadowViews::set_device_culling`]).
    pub fn device_culling(&self) -> bool {
        self.device_culling
    }

    /// The casters as slot bits: bit `s % 64` of word `s / 64` set when slot `s` is a
    /// drawable shadow caster (the slots of [`ShadowViews::casters`]), over the frame's slots;
    /// empty in a frame without a shadow view.
    pub fn caster_slot_words(&self) -> &[u64] {
        &self.caster_slot_words
    }

    /// Tests every caster against every view on the host, as [`ShadowViews::update`] does
    /// unless the GPU culls: for checking a device's bits against the host's.
    pub fn cull_on_host(&mut self) {
        let device_culling = std::mem::replace(&mut self.device_culling, false);
        self.cull();
        self.device_culling = device_culling;
    }

    /// Keeps every caster in every view, as with caster culling off: what a reference that
    /// draws every caster (to check a culled frame against) is made from.
    pub fn keep_every_caster(&mut self) {
        self.caster_culling = false;
        self.cull_on_host();
    }

    /// Shadow-casting lights that found no room in the atlas this frame (they light
    /// without shadows).
    pub fn unplaced_lights(&self) -> usize {
        self.unplaced_lights
    }

    /// The casters the views were culled over (slots, ascending): the frame's
    /// [`Visibility::casters`]; empty in a frame without a shadow view.
    pub fn casters(&self) -> &[u32] {
        &self.casters
    }

    /// View `view`'s caster words: bit `k % 64` of word `k / 64` set when caster
    /// `casters()[k]` draws into it.
    ///
    /// # Panics
    /// When `view >= views().len()`.
    pub fn caster_words(&self, view: usize) -> &[u64] {
        assert!(view < self.views.len(), "shadow view {view} of {}", self.views.len());
        &self.words[view * self.words_per_view..(view + 1) * self.words_per_view]
    }

    /// The slots of the casters view `view` draws, ascending.
    pub fn caster_slots(&self, view: usize) -> impl Iterator<Item = u32> + '_ {
        self.caster_words(view).iter().enumerate().flat_map(move |(index, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                (word != 0).then(|| {
                    let bit = word.trailing_zeros() as usize;
                    word &= word - 1;
                    self.casters[index * BITS_PER_WORD + bit]
                })
            })
        })
    }

    /// Writes view `view`'s casters as slot bits (bit `s` = slot `s`) over `slots` slots
    /// into `out`: the form the GPU's cull writes.
    pub fn slot_bits_into(&self, view: usize, slots: usize, out: &mut VisibilityBits) {
        out.reset(slots);
        for slot in self.caster_slots(view) {
            if (slot as usize) < slots {
                out.set(slot as usize, true);
            }
        }
    }

    /// Casters of view `view` before and after culling.
    pub fn stats(&self, view: usize) -> ShadowViewStats {
        self.stats[view]
    }

    /// Casters kept, summed over the views.
    pub fn kept_total(&self) -> usize {
        self.stats[..self.views.len()].iter().map(|stats| stats.kept).sum()
    }

    /// Fills the views for `camera` from the lights of `world` and the casters of
    /// `visibility`, then culls the casters against every view (on the current job pool).
    /// Without a camera, or with shadows off, there is no view (lights still listed).
    pub fn update(
        &mut self,
        world: &World,
        camera: Option<&ResolvedView>,
        visibility: &Visibility,
        settings: &ShadowSettings,
    ) {
        self.update_in(&Columns::whole(world), camera, visibility, settings);
    }

    /// [`update`](Self::update) over the system's columns.
    fn update_in(
        &mut self,
        world: &LightColumns<'_>,
        camera: Option<&ResolvedView>,
        visibility: &Visibility,
        settings: &ShadowSettings,
    ) {
        runtime::profile_zone!("shadow views");
        self.views.clear();
        self.lights.clear();
        self.sun = None;
        self.unplaced_lights = 0;
        self.caster_culling = settings.caster_culling;
        self.caster_occlusion = settings.caster_occlusion;
        // The casters are gathered only for a frame with a shadow view: a world without a
        // shadow-casting light pays nothing here, however many casters it has.
        self.casters.clear();
        self.caster_slot_words.clear();
        self.bounds.clear();
        let mut gathered = false;
        self.atlas_resolution = settings.atlas_resolution.clamp(256, 16_384);
        self.atlas.reset(self.atlas_resolution);
        let shadows = settings.enabled && camera.is_some();

        if let Some(sun) = find_sun(world) {
            let (entity, light, pose) = sun;
            let direction = (pose.transform_vector3(Vec3::NEG_Z)).normalize_or_zero();
            let direction = if direction == Vec3::ZERO { Vec3::NEG_Y } else { direction };
            let mut state = SunLight {
                entity,
                direction,
                radiance: Vec3::from_array(light.color) * light.illuminance,
                cascade_ends: [0.0; MAX_CASCADES],
                cascades: 0,
                first_view: self.views.len(),
            };
            if let (true, true, Some(camera)) = (shadows, light.casts_shadows, camera) {
                // The cascades' depth reaches back to the casters nearest the sun.
                self.gather_casters(visibility);
                gathered = true;
                self.add_cascades(camera, settings, &light.bias, &mut state);
            }
            self.sun = Some(state);
        }
        gather_local_lights(&mut self.candidates, world, camera);
        self.place_local_lights(settings, shadows);
        if !self.views.is_empty() && !gathered {
            self.gather_casters(visibility);
        }
        self.cull();
    }

    /// The frame's casters, as slots, slot bits and world boxes.
    fn gather_casters(&mut self, visibility: &Visibility) {
        self.casters.extend_from_slice(visibility.casters());
        visibility.caster_slot_words_into(&mut self.caster_slot_words);
        visibility.caster_bounds_into(&mut self.bounds);
    }

    fn add_cascades(
        &mut self,
        camera: &ResolvedView,
        settings: &ShadowSettings,
        bias: &ShadowBias,
        sun: &mut SunLight,
    ) {
        settings.cascade_ends_into(camera.near, camera.far, &mut self.ends);
        let reach = caster_reach(&self.bounds, sun.direction);
        let resolution = settings.cascade_resolution.clamp(64, self.atlas_resolution / 2);
        let mut start = camera.near;
        for (index, &end) in self.ends.iter().enumerate() {
            let Some(slice) = cascade_slice(camera, start, end) else { break };
            let Some(tile) = self.atlas.allocate(resolution) else { break };
            let (matrix, texel_world) = cascade_view_projection(&slice, sun.direction, tile.size, reach);
            self.views.push(LightView {
                light: sun.entity,
                kind: LightViewKind::Cascade(index as u8),
                view_projection: matrix,
                frustum: Frustum::from_view_projection_without_near(matrix),
                tile,
                bias: *bias,
                texel_world,
                perspective: false,
            });
            sun.cascade_ends[index] = end;
            sun.cascades = index + 1;
            start = end;
        }
    }

    fn place_local_lights(&mut self, settings: &ShadowSettings, shadows: bool) {
        let limit = if shadows { (settings.max_shadowed_lights as usize).min(MAX_SHADOWED_LIGHTS) } else { 0 };
        let mut shadowed = 0;
        for index in 0..self.candidates.len() {
            let Candidate { mut light, resolution, bias, .. } = self.candidates[index];
            if resolution == 0 || shadowed == limit {
                continue;
            }
            let faces = match light.kind {
                LocalLightKind::Spot { .. } => 1,
                LocalLightKind::Point => 6,
            };
            // All the light's tiles or none (a cube with a missing face would light through
            // it), halving the size until they fit.
            let mut tiles = [AtlasTile::default(); 6];
            let mut size = resolution.min(self.atlas_resolution / 2);
            let placed = loop {
                let mut got = 0;
                while got < faces {
                    match self.atlas.allocate_exact(size) {
                        Some(tile) => {
                            tiles[got] = tile;
                            got += 1;
                        }
                        None => break,
                    }
                }
                if got == faces {
                    break true;
                }
                for tile in &tiles[..got] {
                    self.atlas.release(*tile);
                }
                if size <= MIN_TILE {
                    break false;
                }
                size /= 2;
            };
            if !placed {
                self.unplaced_lights += 1;
                continue;
            }
            light.first_view = Some(self.views.len());
            for (face, tile) in tiles[..faces].iter().enumerate() {
                let (view_projection, texel_world, kind) = match light.kind {
                    LocalLightKind::Spot { direction, outer_angle, .. } => {
                        let (matrix, texel) =
                            spot_view_projection(light.position, direction, outer_angle, light.range, tile.size);
                        (matrix, texel, LightViewKind::Spot)
                    }
                    LocalLightKind::Point => {
                        let (matrix, texel) = cube_face_view_projection(light.position, light.range, face, tile.size);
                        (matrix, texel, LightViewKind::CubeFace(face as u8))
                    }
                };
                self.views.push(LightView {
                    light: light.entity,
                    kind,
                    view_projection,
                    frustum: Frustum::from_view_projection(view_projection),
                    tile: *tile,
                    bias,
                    texel_world,
                    perspective: true,
                });
            }
            self.candidates[index].light = light;
            shadowed += 1;
        }
        // Shadowed lights first, then the rest, each part nearest first.
        let candidates = &self.candidates;
        self.lights.extend(candidates.iter().filter(|c| c.light.first_view.is_some()).map(|c| c.light));
        self.lights.extend(candidates.iter().filter(|c| c.light.first_view.is_none()).map(|c| c.light));
    }

    /// Culls every caster against every view: jobs take ranges of whole words of casters
    /// and test each range against all views while its boxes are in cache.
    fn cull(&mut self) {
        let views = self.views.len();
        let casters = self.casters.len();
        self.words_per_view = words_for(casters);
        self.words.clear();
        self.words.resize(views * self.words_per_view, 0);
        self.stats.clear();
        self.stats.resize(views, ShadowViewStats { casters, kept: 0 });
        if views == 0 || casters == 0 || self.device_culling {
            return;
        }
        if !self.caster_culling {
            for view in 0..views {
                let words = &mut self.words[view * self.words_per_view..(view + 1) * self.words_per_view];
                words.fill(u64::MAX);
                if !casters.is_multiple_of(BITS_PER_WORD) {
                    words[words.len() - 1] = (1u64 << (casters % BITS_PER_WORD)) - 1;
                }
                self.stats[view].kept = casters;
            }
            return;
        }
        runtime::profile_zone!("shadow caster cull");
        let kernel = Kernel::detect();
        let boxes = self.bounds.slices();
        let words_per_view = self.words_per_view;
        // The caster words of every view, written by the jobs.
        let target = SharedMut(self.words.as_mut_ptr());
        let frusta = &self.views;
        runtime::jobs::parallel_for_ranges(0..words_per_view, CULL_GRAIN / BITS_PER_WORD, |range| {
            let objects = range.start * BITS_PER_WORD..(range.end * BITS_PER_WORD).min(casters);
            let sub = boxes.sub(objects);
            for (view, light_view) in frusta.iter().enumerate() {
                // SAFETY: each job owns words `range` of every view (disjoint ranges of one
                // parallel loop), and `words` holds `views * words_per_view` words.
                let out = unsafe {
                    std::slice::from_raw_parts_mut(target.at(view * words_per_view + range.start), range.len())
                };
                kernel.cull_aabbs(&light_view.frustum, sub, out);
            }
        });
        for (view, stats) in self.stats.iter_mut().enumerate() {
            let words = &self.words[view * words_per_view..(view + 1) * words_per_view];
            stats.kept = words.iter().map(|word| word.count_ones() as usize).sum();
        }
    }
}

/// The smallest `dot(p, direction)` over every point of every caster box (the caster
/// nearest a light shining along `direction`); infinity without casters. Non-finite boxes
/// are skipped (they are kept by every cull anyway).
fn caster_reach(bounds: &AabbSoa, direction: Vec3) -> f32 {
    let slices = bounds.slices();
    let [cx, cy, cz] = slices.center;
    let [hx, hy, hz] = slices.half;
    let abs = direction.abs();
    let mut reach = f32::INFINITY;
    for i in 0..slices.len() {
        let value = cx[i] * direction.x + cy[i] * direction.y + cz[i] * direction.z
            - (hx[i] * abs.x + hy[i] * abs.y + hz[i] * abs.z);
        if value.is_finite() {
            reach = reach.min(value);
        }
    }
    reach
}

/// Fills [`ShadowViews`] each frame from the lights, the [`ShadowSettings`], the frame's
/// view and the [`Visibility`] resource's casters; runs in [`Stage::Visibility`] after
/// [`VISIBILITY_SYSTEM`].
pub fn shadow_views_system() -> System {
    type Params = (
        LightColumns<'static>,
        Res<'static, ShadowSettings>,
        Option<Frame<'static, ResolvedView>>,
        Res<'static, Visibility>,
        ResMut<'static, ShadowViews>,
    );
    System::with_params::<Params>(SHADOW_VIEWS_SYSTEM, |_, (world, settings, camera, visibility, mut shadows)| {
        shadows.update_in(&world, camera.as_deref(), &visibility, &settings);
    })
    .after(VISIBILITY_SYSTEM)
}

/// Adds [`ShadowViews`] and [`shadow_views_system`] to `app` (once).
pub(crate) fn install(app: &mut runtime::App) {
    if app.resources().contains::<ShadowViews>() {
        return;
    }
    app.insert_resource(ShadowViews::default());
    app.add_system(Stage::Visibility, shadow_views_system());
}

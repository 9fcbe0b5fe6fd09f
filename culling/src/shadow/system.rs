//! The shadow views of the frame and the casters of each: [`ShadowViews`], filled by
//! [`shadow_views_system`] in the Visibility stage right after the camera's cull.
//!
//! The casters are kept by slot from frame to frame (`casters.rs`) and each view's bits with
//! them (`view_bits.rs`): a frame reads the casters the Visibility stage's answer names as
//! changed, a view that did not move redoes only the words holding them, and a view that
//! moved tests the casters its volume may hold, by groups and words of them first.

use ecs::{ResolvedView, ResolvedViews, ShadowBias, ShadowSettings, MAX_CASCADES};
use glam::Vec3;
use runtime::hecs::World;
use runtime::{Columns, Frame, Res, ResMut, Stage, System};

use super::budget::CastingLights;
use super::casters::{CasterStore, Refresh};
use super::frame_lights::{Candidate, LocalLight, LocalLightKind, ShadowBudget, ShadowViewStats, ShadowWork, SunLight};
use super::lights::{find_sun, gather_local_lights, LightColumns};
use super::view_bits::{Fill, ViewBits};
use super::views::{
    cascade_slice, cascade_view_projection, cube_face_view_projection, spot_view_projection, AtlasAllocator, AtlasTile,
    LightView, LightViewKind,
};
use crate::bits::{VisibilityBits, BITS_PER_WORD};
use crate::frustum::Frustum;
use crate::visibility::{Visibility, VISIBILITY_SYSTEM};

/// Name of [`shadow_views_system`].
pub const SHADOW_VIEWS_SYSTEM: &str = "culling::shadow_views";

/// The frame's lights and shadow views, and the casters each view draws: a resource,
/// reused across frames (a steady light setup allocates nothing).
///
/// Bit `s % 64` of word `s / 64` of [`ShadowViews::slot_words`]`(v)` is set when the caster
/// in slot `s` (one of [`Visibility::casters`]) may draw into view `v`;
/// [`ShadowViews::caster_slots`] lists them. The test is the camera's conservative box test
/// against the view's volume (a straddling box is kept, a non-finite one is kept), with the
/// same kernels, so the GPU's multi-view cull gives the same bits per view.
///
/// It costs what changed: the casters are kept by slot from one Visibility answer to the
/// next, so a frame reads only those the answer names as moved, new or gone, and a view
/// whose volume is bit for bit last frame's keeps its bits but for theirs. A view that moved
/// is culled again, a group of casters at a time where its volume misses or holds the
/// group's box. The bits are those a cull of every caster against every view would give.
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
    /// The casters by slot, kept from frame to frame.
    casters: CasterStore,
    /// Whether this frame's casters were gathered (a frame with a shadow view).
    gathered: bool,
    /// Every view's caster bits by slot, kept from frame to frame.
    bits: ViewBits,
    /// How the last gather found the casters.
    refresh: Refresh,
    stats: Vec<ShadowViewStats>,
    atlas_resolution: u32,
    caster_culling: bool,
    caster_occlusion: bool,
    /// Whether [`ShadowViews::update`] tests the casters itself (else a GPU does).
    device_culling: bool,
    unplaced_lights: usize,
    budget: ShadowBudget,
    /// The lights that cast last frame, for the budget's hysteresis.
    casting: CastingLights,
    // Working memory.
    atlas: AtlasAllocator,
    candidates: Vec<Candidate>,
    /// The frame's other window views (frustum, eye): their lights are the frame's too.
    other_views: Vec<(Frustum, Vec3)>,
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

    /// The local lights of the frame (the nearest [`MAX_LOCAL_LIGHTS`](super::MAX_LOCAL_LIGHTS) to the camera):
    /// every shadowed one, then the rest, each part in the shadow budget's ranking, best
    /// first.
    pub fn lights(&self) -> &[LocalLight] {
        &self.lights
    }

    /// The spot and point lights that cast a shadow this frame, best ranked first: their
    /// entities and views ([`LocalLight::views`]). The first lights of
    /// [`ShadowViews::lights`].
    ///
    /// ```
    /// use ecs::{PointLight, ShadowSettings, Transform};
    /// use glam::Vec3;
    /// let mut app = runtime::App::new();
    /// culling::install(&mut app);
    /// let eye = Transform::from_translation(Vec3::new(0.0, 2.0, 10.0));
    /// ecs::scene::spawn_camera(app.world_mut(), ecs::Camera::default(), eye);
    /// let near = app.world_mut().spawn((Transform::from_translation(Vec3::ZERO), PointLight::default()));
    /// let far = Transform::from_translation(Vec3::new(0.0, 0.0, -60.0));
    /// app.world_mut().spawn((far, PointLight::default()));
    /// // Room for one point light's six views: the one lighting more of the image casts.
    /// app.resource_mut::<ShadowSettings>().max_light_views = 6;
    /// app.run_frame();
    /// let shadows = app.resource::<culling::ShadowViews>();
    /// let cast: Vec<_> = shadows.shadowed_lights().iter().map(|light| (light.entity, light.views())).collect();
    /// assert_eq!(cast, [(near, 0..6)]);
    /// assert_eq!(shadows.budget().candidates, 2);
    /// ```
    pub fn shadowed_lights(&self) -> &[LocalLight] {
        &self.lights[..self.budget.shadowed]
    }

    /// How the shadow budget shared this frame's views (see [`ShadowBudget`]).
    pub fn budget(&self) -> ShadowBudget {
        self.budget
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
        if self.gathered {
            self.casters.words()
        } else {
            &[]
        }
    }

    /// Tests every caster against every view on the host, as [`ShadowViews::update`] does
    /// unless the GPU culls: for checking a device's bits against the host's.
    pub fn cull_on_host(&mut self) {
        let device_culling = std::mem::replace(&mut self.device_culling, false);
        self.bits.recull(&self.views, &self.casters);
        self.fill_stats();
        self.device_culling = device_culling;
    }

    /// Keeps every caster in every view, as with caster culling off: what a reference that
    /// draws every caster (to check a culled frame against) is made from.
    pub fn keep_every_caster(&mut self) {
        self.caster_culling = false;
        self.bits.update(&self.views, &self.casters, self.refresh, Fill::Every);
        self.fill_stats();
    }

    /// Shadow-casting lights that found no room in the atlas this frame (they light
    /// without shadows).
    pub fn unplaced_lights(&self) -> usize {
        self.unplaced_lights
    }

    /// The casters the views were culled over (slots, ascending): the frame's
    /// [`Visibility::casters`]; empty in a frame without a shadow view.
    pub fn casters(&self) -> &[u32] {
        if self.gathered {
            self.casters.list()
        } else {
            &[]
        }
    }

    /// View `view`'s casters as slot bits: bit `s % 64` of word `s / 64` set when the caster
    /// in slot `s` draws into it (a word per 64 of the frame's slots).
    ///
    /// # Panics
    /// When `view >= views().len()`.
    pub fn slot_words(&self, view: usize) -> &[u64] {
        assert!(view < self.views.len(), "shadow view {view} of {}", self.views.len());
        self.bits.words(view)
    }

    /// The slots of the casters view `view` draws, ascending.
    pub fn caster_slots(&self, view: usize) -> impl Iterator<Item = u32> + '_ {
        self.slot_words(view).iter().enumerate().flat_map(|(index, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                (word != 0).then(|| {
                    let bit = word.trailing_zeros();
                    word &= word - 1;
                    (index * BITS_PER_WORD) as u32 + bit
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

    /// What the last update did (see [`ShadowWork`]).
    pub fn work(&self) -> ShadowWork {
        let bits = self.bits.work();
        ShadowWork {
            rebuilt: self.gathered && self.refresh == Refresh::Rebuilt,
            changed_words: if self.gathered { self.casters.dirty().len() } else { 0 },
            kept_views: bits.kept_views,
            culled_views: bits.culled_views,
            kernel_words: bits.kernel_words,
        }
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

    /// Sets the frame's other window views (split-screen: every view drawn into the window
    /// besides the camera's): a spot or point light that one of them sees is the frame's too,
    /// listed and shadowed once for every view ([`ShadowViews::update`] keeps them until set
    /// again). The sun's cascades still follow the camera alone.
    pub fn set_other_views<'a>(&mut self, views: impl IntoIterator<Item = &'a ResolvedView>) {
        self.other_views.clear();
        self.other_views
            .extend(views.into_iter().map(|view| (Frustum::from_view_projection(view.view_projection), view.position)));
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
        self.budget = ShadowBudget::default();
        self.caster_culling = settings.caster_culling;
        self.caster_occlusion = settings.caster_occlusion;
        // The casters are gathered only for a frame with a shadow view: a world without a
        // shadow-casting light pays nothing here, however many casters it has.
        self.gathered = false;
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
                self.refresh = self.casters.refresh(visibility, Some(direction));
                self.gathered = true;
                self.add_cascades(camera, settings, &light.bias, &mut state);
            }
            self.sun = Some(state);
        }
        gather_local_lights(&mut self.candidates, world, camera, &self.other_views);
        self.place_local_lights(settings, shadows);
        if !self.views.is_empty() && !self.gathered {
            self.refresh = self.casters.refresh(visibility, None);
            self.gathered = true;
        }
        self.cull();
    }

    fn add_cascades(
        &mut self,
        camera: &ResolvedView,
        settings: &ShadowSettings,
        bias: &ShadowBias,
        sun: &mut SunLight,
    ) {
        settings.cascade_ends_into(camera.near, camera.far, &mut self.ends);
        let reach = self.casters.reach();
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

    /// Gives shadows to the local lights the budget ranks best, as many as fit the light
    /// cap, the views of the budget and the atlas (see `budget.rs`).
    fn place_local_lights(&mut self, settings: &ShadowSettings, shadows: bool) {
        let (limit, max_views) = if shadows { (settings.shadowed_lights(), settings.light_views()) } else { (0, 0) };
        self.budget.max_views = max_views;
        self.casting.rank(&mut self.candidates);
        for index in 0..self.candidates.len() {
            let Candidate { mut light, resolution, bias, id, .. } = self.candidates[index];
            if resolution == 0 {
                continue;
            }
            self.budget.candidates += 1;
            let faces = light.view_count();
            if self.budget.shadowed == limit || self.budget.views + faces > max_views {
                self.budget.over_budget += 1;
                continue;
            }
            let mut tiles = [AtlasTile::default(); 6];
            if !self.atlas.allocate_all(&mut tiles[..faces], resolution.min(self.atlas_resolution / 2)) {
                self.unplaced_lights += 1;
                continue;
            }
            light.first_view = Some(self.views.len());
            for (face, tile) in tiles[..faces].iter().enumerate() {
                self.views.push(local_view(&light, face, *tile, bias));
            }
            self.candidates[index].light = light;
            self.budget.shadowed += 1;
            self.budget.views += faces;
            self.casting.cast(id);
        }
        self.budget.new_casters = self.casting.end_frame();
        // Shadowed lights first, then the rest, each part in the ranking's order.
        let candidates = &self.candidates;
        self.lights.extend(candidates.iter().filter(|c| c.light.first_view.is_some()).map(|c| c.light));
        self.lights.extend(candidates.iter().filter(|c| c.light.first_view.is_none()).map(|c| c.light));
    }

    /// Fills every view's caster bits: culled on the host, every caster with caster culling
    /// off, none when the GPU culls them.
    fn cull(&mut self) {
        let fill = if !self.gathered || self.device_culling {
            Fill::None
        } else if self.caster_culling {
            Fill::Cull
        } else {
            Fill::Every
        };
        if self.gathered {
            self.bits.update(&self.views, &self.casters, self.refresh, fill);
        } else {
            self.bits.update(&self.views, &CasterStore::default(), Refresh::Rebuilt, Fill::None);
        }
        self.fill_stats();
    }

    /// Each view's casters before and after culling.
    fn fill_stats(&mut self) {
        let casters = self.casters().len();
        self.stats.clear();
        self.stats.extend((0..self.views.len()).map(|view| ShadowViewStats { casters, kept: self.bits.kept(view) }));
    }
}

/// View `face` of a local light's shadow (a spot light has only face 0), in `tile`.
fn local_view(light: &LocalLight, face: usize, tile: AtlasTile, bias: ShadowBias) -> LightView {
    let (view_projection, texel_world, kind) = match light.kind {
        LocalLightKind::Spot { direction, outer_angle, .. } => {
            let (matrix, texel) = spot_view_projection(light.position, direction, outer_angle, light.range, tile.size);
            (matrix, texel, LightViewKind::Spot)
        }
        LocalLightKind::Point => {
            let (matrix, texel) = cube_face_view_projection(light.position, light.range, face, tile.size);
            (matrix, texel, LightViewKind::CubeFace(face as u8))
        }
    };
    LightView {
        light: light.entity,
        kind,
        view_projection,
        frustum: Frustum::from_view_projection(view_projection),
        tile,
        bias,
        texel_world,
        perspective: true,
    }
}

/// Fills [`ShadowViews`] each frame from the lights, the [`ShadowSettings`], the frame's
/// view and the [`Visibility`] resource's casters; runs in [`Stage::Visibility`] after
/// [`VISIBILITY_SYSTEM`].
pub fn shadow_views_system() -> System {
    type Params = (
        LightColumns<'static>,
        Res<'static, ShadowSettings>,
        Option<Frame<'static, ResolvedView>>,
        Option<Res<'static, ResolvedViews>>,
        Res<'static, Visibility>,
        ResMut<'static, ShadowViews>,
    );
    System::with_params::<Params>(
        SHADOW_VIEWS_SYSTEM,
        |_, (world, settings, camera, views, visibility, mut shadows)| {
            let views = views.as_deref();
            let main = views.and_then(ResolvedViews::main);
            let others = views
                .into_iter()
                .flat_map(|views| views.views())
                .filter(|view| Some(view.id) != main && matches!(view.target, ecs::ViewTarget::Window(_)));
            shadows.set_other_views(others.map(|view| &view.view));
            shadows.update_in(&world, camera.as_deref(), &visibility, &settings);
        },
    )
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

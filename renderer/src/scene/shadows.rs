//! The shadow part of a frame on the host: each light view's matrix, atlas tile and caster
//! draws, and the lights the shadowed geometry pass reads (`shadows.h`), taken from
//! [`culling::ShadowViews`] by the Render stage's extract.

use culling::shadow::{LightViewKind, LocalLightKind, ShadowViews, MAX_LOCAL_LIGHTS};
use glam::Vec3;

use super::records::{DrawCommand, ObjectRecord};
use crate::passes::CullView;

/// Most shadow views a frame draws: four sun cascades and the six faces of each of
/// [`ecs::MAX_SHADOWED_LIGHTS`] lights (`MAX_SHADOW_VIEWS` in `config.h`).
pub const MAX_SHADOW_VIEWS: usize = ecs::MAX_CASCADES + 6 * ecs::MAX_SHADOWED_LIGHTS;

/// Bytes of the `shadow_lights` buffer (`ShadowLights` in `shadows.h`): six vec4 of header,
/// four vec4 per local light, six vec4 per view.
pub const SHADOW_LIGHTS_BYTES: usize = (6 + 4 * MAX_LOCAL_LIGHTS + 6 * MAX_SHADOW_VIEWS) * 16;

/// One light view as the shadow pass draws it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowViewDraws {
    /// Which view of its light.
    pub kind: LightViewKind,
    /// World to light clip space (reversed-Z), column-major.
    pub view_projection: [[f32; 4]; 4],
    /// Tile left, top and side in atlas texels.
    pub tile: [u32; 3],
    /// First of its commands in [`ShadowFrame::commands`].
    pub first: u32,
    /// Its caster draws.
    pub count: u32,
    /// Casters tested for it.
    pub casters: u32,
    /// Triangles its draws cover.
    pub triangles: u64,
    /// Of its draws, those of the late phase (occlusion views culled on the GPU: casters
    /// visible now that it did not keep last frame).
    pub late: u32,
    /// GPU milliseconds of its draws (its GPU zones in the atlas passes), where the device
    /// has timestamps and the times are known.
    pub gpu_ms: Option<f64>,
}

/// Who culls the casters of the shadow views.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShadowCulling {
    /// The host: [`ShadowViews`]' caster bits become [`ShadowFrame::commands`].
    #[default]
    Host,
    /// The GPU (`ShadowCullPass`), into lists of `region` commands per view for at most
    /// `views` views: the frame holds each view's planes ([`ShadowFrame::cull_views`]) and
    /// the casters' slot bits ([`ShadowFrame::caster_slot_words`]), no commands; counts and
    /// triangles come back from the GPU.
    Device {
        /// Commands each view's list has room for (the scene's capacity).
        region: u32,
        /// Views the lists have room for.
        views: u32,
        /// Side of the pyramid of the atlas's top-left square the cascades' occlusion reads
        /// (where the cascades' tiles are placed first).
        pyramid: u32,
    },
}

/// The frame's shadow views, caster draws and lights: a parameter of the render graph
/// ([`render_graph::RenderGraph::set_param`]), set by the frame that draws shadows
/// ([`ShadowFrame::with_culling`]) and updated in place by the Render stage each frame
/// ([`render_graph::RenderGraph::param_mut`], [`ShadowFrame::update`]), so the shadow culls
/// and the shadow atlas passes read one source (`context.require_param::<ShadowFrame>()`).
/// Its vectors keep their capacity across frames.
#[derive(Clone, Debug, Default)]
pub struct ShadowFrame {
    views: Vec<ShadowViewDraws>,
    commands: Vec<DrawCommand>,
    lights: Vec<u32>,
    counts: Vec<u32>,
    atlas_resolution: u32,
    culling: ShadowCulling,
    cull_views: Vec<CullView>,
    caster_slot_words: Vec<u64>,
    /// Whether a frame with more views than the device's lists was logged.
    logged_too_many: bool,
}

impl ShadowFrame {
    /// An empty frame whose casters `culling` culls.
    pub fn with_culling(culling: ShadowCulling) -> ShadowFrame {
        ShadowFrame { culling, ..ShadowFrame::default() }
    }

    /// The views of the frame, in [`ShadowViews::views`] order.
    pub fn views(&self) -> &[ShadowViewDraws] {
        &self.views
    }

    /// Every view's caster draws, view after view.
    pub fn commands(&self) -> &[DrawCommand] {
        &self.commands
    }

    /// Each view's command count, in view order (the count buffer of indirect-count draws).
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// The `shadow_lights` buffer's words.
    pub fn light_words(&self) -> &[u32] {
        &self.lights
    }

    /// Side of the atlas the tiles lie in.
    pub fn atlas_resolution(&self) -> u32 {
        self.atlas_resolution
    }

    /// Who culls the casters.
    pub fn culling(&self) -> ShadowCulling {
        self.culling
    }

    /// Sets who culls the casters (the frame that draws the atlas decides, once).
    pub fn set_culling(&mut self, culling: ShadowCulling) {
        self.culling = culling;
    }

    /// Each view's culling volume, in view order (frames culled on the device).
    pub fn cull_views(&self) -> &[CullView] {
        &self.cull_views
    }

    /// The casters as slot bits (frames culled on the device; see
    /// [`ShadowViews::caster_slot_words`]).
    pub fn caster_slot_words(&self) -> &[u64] {
        &self.caster_slot_words
    }

    /// Empties the frame: no view, no light (a frame without shadows lights as without
    /// lights).
    pub fn clear(&mut self) {
        self.views.clear();
        self.commands.clear();
        self.counts.clear();
        self.cull_views.clear();
        self.caster_slot_words.clear();
        self.lights.clear();
        self.lights.resize(SHADOW_LIGHTS_BYTES / 4, 0);
    }

    /// Takes the frame's views, casters and lights from `shadows`, with draw commands from
    /// `records` (by slot; a slot past them or with an empty record draws nothing), and the
    /// camera's position and view axis for the cascades. Culled on the device, the views get
    /// their culling volumes and the casters their slot bits instead of commands (views past
    /// the lists' room are left out: their lights shine unshadowed).
    pub fn update(&mut self, shadows: &ShadowViews, records: &[ObjectRecord], camera: (Vec3, Vec3)) {
        self.clear();
        self.atlas_resolution = shadows.atlas_resolution();
        if let ShadowCulling::Device { views, pyramid, .. } = self.culling {
            let limit = (views as usize).min(MAX_SHADOW_VIEWS);
            if shadows.views().len() > limit && !self.logged_too_many {
                self.logged_too_many = true;
                log::warn!(
                    "{} shadow views, but the GPU's caster lists were made for {limit} (ShadowSettings::max_shadowed_lights \
                     when the renderer was installed): the lights past them shine without shadows",
                    shadows.views().len()
                );
            }
            let pyramid_mips = 32 - pyramid.max(1).leading_zeros();
            for (index, view) in shadows.views().iter().enumerate().take(limit) {
                // Two-phase occlusion for the sun's cascades (the first views, whose places
                // in the list last from frame to frame, so each has its history).
                let occlusion = shadows.caster_occlusion() && matches!(view.kind, LightViewKind::Cascade(_));
                let cull_view = CullView::light(view, shadows.caster_culling(), occlusion, pyramid_mips);
                self.cull_views.push(cull_view);
                self.views.push(ShadowViewDraws {
                    kind: view.kind,
                    view_projection: view.view_projection.to_cols_array_2d(),
                    tile: [view.tile.x, view.tile.y, view.tile.size],
                    first: 0,
                    count: 0,
                    casters: shadows.stats(index).casters as u32,
                    triangles: 0,
                    late: 0,
                    gpu_ms: None,
                });
            }
            self.caster_slot_words.extend_from_slice(shadows.caster_slot_words());
            self.write_lights(shadows, camera);
            return;
        }
        for (index, view) in shadows.views().iter().enumerate().take(MAX_SHADOW_VIEWS) {
            let first = self.commands.len() as u32;
            let mut triangles = 0u64;
            for slot in shadows.caster_slots(index) {
                let Some(record) = records.get(slot as usize) else { continue };
                if record.index_count == 0 {
                    continue;
                }
                triangles += u64::from(record.index_count / 3);
                self.commands.push(DrawCommand::for_object(slot, record));
            }
            self.views.push(ShadowViewDraws {
                kind: view.kind,
                view_projection: view.view_projection.to_cols_array_2d(),
                tile: [view.tile.x, view.tile.y, view.tile.size],
                first,
                count: self.commands.len() as u32 - first,
                casters: shadows.stats(index).casters as u32,
                triangles,
                late: 0,
                gpu_ms: None,
            });
        }
        self.counts.extend(self.views.iter().map(|view| view.count));
        self.write_lights(shadows, camera);
    }

    fn write_lights(&mut self, shadows: &ShadowViews, (eye, forward): (Vec3, Vec3)) {
        let words = &mut self.lights;
        let mut put = |vec4: usize, values: [f32; 4]| {
            for (lane, value) in values.into_iter().enumerate() {
                words[vec4 * 4 + lane] = value.to_bits();
            }
        };
        let sun = shadows.sun();
        let lights = &shadows.lights()[..shadows.lights().len().min(MAX_LOCAL_LIGHTS)];
        let cascades = sun.map_or(0, |sun| sun.cascades).min(self.views.len());
        if let Some(sun) = sun {
            put(1, [sun.direction.x, sun.direction.y, sun.direction.z, 0.0]);
            put(2, [sun.radiance.x, sun.radiance.y, sun.radiance.z, 0.0]);
            put(3, sun.cascade_ends);
        }
        put(4, [eye.x, eye.y, eye.z, 1.0]);
        put(5, [forward.x, forward.y, forward.z, 0.0]);
        for (index, light) in lights.iter().enumerate() {
            let base = 6 + 4 * index;
            let (kind, direction, cos_outer, cos_inner) = match light.kind {
                LocalLightKind::Spot { direction, inner_angle, outer_angle } => {
                    (0.0, direction, outer_angle.cos(), inner_angle.cos())
                }
                LocalLightKind::Point => (1.0, Vec3::ZERO, -1.0, -1.0),
            };
            let first_view =
                light.first_view.filter(|&first| first < self.views.len()).map_or(-1.0, |first| first as f32);
            put(base, [light.position.x, light.position.y, light.position.z, light.range]);
            put(base + 1, [light.radiance.x, light.radiance.y, light.radiance.z, kind]);
            put(base + 2, [direction.x, direction.y, direction.z, cos_outer]);
            put(base + 3, [cos_inner, first_view, 0.0, 0.0]);
        }
        for (index, view) in shadows.views().iter().enumerate().take(self.views.len()) {
            let base = 6 + 4 * MAX_LOCAL_LIGHTS + 6 * index;
            let matrix = view.view_projection.to_cols_array();
            for column in 0..4 {
                put(base + column, matrix[column * 4..column * 4 + 4].try_into().expect("four floats"));
            }
            let tile = view.tile;
            put(base + 4, [tile.x as f32, tile.y as f32, tile.size as f32, view.texel_world]);
            put(base + 5, [view.bias.constant, view.bias.slope, if view.perspective { 1.0 } else { 0.0 }, 0.0]);
        }
        words[0] = u32::from(sun.is_some());
        words[1] = cascades as u32;
        words[2] = lights.len() as u32;
        words[3] = self.atlas_resolution;
    }
}

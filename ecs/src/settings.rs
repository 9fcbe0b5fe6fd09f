//! The engine's one copy of the render settings.

/// Culling and LOD knobs, as one resource.
///
/// Systems read it every frame through the resource map and keep no copy of their own, so a
/// live edit (a settings screen, an editor panel) takes effect the next frame with nothing to
/// push and nothing to drift:
///
/// ```
/// use ecs::RenderSettings;
/// let mut app = runtime::App::new();
/// ecs::install(&mut app);
/// app.resource_mut::<RenderSettings>().cull_max_distance = 500.0;
/// assert_eq!(app.resource::<RenderSettings>().cull_max_distance, 500.0);
/// ```
///
/// The defaults cull nothing that could cover a pixel: the distance and screen-size culls are
/// off, frustum and occlusion culls (both conservative by construction) are on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderSettings {
    /// Smallest projected size, in pixels of viewport height, an object may have and still be
    /// drawn. At most 0 disables the screen-size cull (the default, since an object smaller
    /// than a pixel can still cover one).
    pub cull_min_pixels: f32,
    /// Farthest distance from the camera, in world units, at which an object is drawn. At
    /// most 0 (or not finite) disables the distance cull (the default).
    pub cull_max_distance: f32,
    /// Global level-of-detail bias: above 1 keeps finer levels further out. Default 1.
    pub lod_bias: f32,
    /// Pixels a level's simplification error may cover on screen for the level to draw (the
    /// rule of chains whose levels carry an error, see [`LodErrors`](crate::LodErrors)); the
    /// global [`lod_bias`](Self::lod_bias) divides it. Default 1.
    pub lod_error_pixels: f32,
    /// Hysteresis of the error rule, a fraction of [`lod_error_pixels`](Self::lod_error_pixels)
    /// (clamped to `0..=1`): an object moves to a coarser level only under
    /// `pixels * (1 - band)` and keeps its level up to `pixels * (1 + band)`. Default 0.1.
    pub lod_error_band: f32,
    /// Whether objects outside the view frustum are culled. Default on.
    pub frustum_culling: bool,
    /// Whether objects hidden behind others are culled (Hi-Z occlusion). Default on.
    pub occlusion_culling: bool,
    /// Size of the CPU occlusion depth buffer in pixels, `[width, height]`: larger hides more
    /// small objects and costs more raster time. With
    /// [`occlusion_buffer_follows_viewport`](Self::occlusion_buffer_follows_viewport) on (the
    /// default) only its pixel count matters: the buffer takes the view's aspect. The width
    /// is rounded up to a multiple of 8; a size the culler cannot use falls back to the
    /// default (256 x 128).
    pub occlusion_buffer: [u32; 2],
    /// Whether the CPU occlusion buffer takes the view's aspect ratio, keeping the pixel count
    /// of [`occlusion_buffer`](Self::occlusion_buffer) (a 16:9 view gets 240 x 135 for the
    /// default 256 x 128), so its pixels stay square on screen. Off, the buffer is exactly
    /// `occlusion_buffer`, stretched over the view. Default on.
    pub occlusion_buffer_follows_viewport: bool,
    /// Smallest projected size an object needs to be chosen as an occluder: its bounding
    /// sphere's diameter as a fraction of the viewport height. Larger picks fewer, bigger
    /// occluders (less raster time, less occlusion); NaN picks none. Default 0.02.
    pub occluder_min_screen_size: f32,
    /// Most occluder triangles rasterized per frame, nearest occluders first. Default 16,384.
    pub occluder_triangle_budget: u32,
    /// Whether every closed mesh of the renderer's library may occlude on the CPU backend, by
    /// an inner box found when the renderer is installed (`renderer::derive_occluders`;
    /// meshes whose occluder the game registered keep it; see-through materials never
    /// occlude), so the occluders are chosen by their size on screen in each view, whatever
    /// their kind. Off, only the occluders the game registers in `OccluderMeshes` occlude.
    /// Read when the renderer is installed. Default on.
    pub occluders_from_meshes: bool,
    /// Which entities the Visibility stage gives the `Culled` and `Occluded` tags. Default
    /// [`VisibilityTags::All`]: every drawable mesh entity, so `Without<Culled>` means "not
    /// culled". See [`VisibilityTags::Marked`] for the cheaper opt-in policy and its trap.
    pub visibility_tags: VisibilityTags,
    /// Whether the Render stage hands each frame to a render thread that records and
    /// submits it while the next frame's Input, Transform, View and Visibility stages run
    /// (pipelined frames), instead of submitting it before the frame ends (serial, the
    /// default). See `renderer`'s stage docs for the latency this adds and what a game must
    /// not do. Switching at run time is safe: the frame in flight finishes first.
    pub pipelined_frames: bool,
    /// Whether the renderer batches its draws: the objects of one (mesh, level of detail,
    /// material) are drawn by one instanced indirect command, so the commands follow the
    /// distinct triples instead of the objects (the camera's lists on both backends; shadow
    /// casters and meshlets keep one command each). Off, one command per object. Both draw
    /// the same image; the switch is for comparing them. Switching at run time is safe.
    /// Default on.
    pub batch_draws: bool,
    /// Whether the GPU cull chooses the level of detail of chains of the error rule itself
    /// (the Visibility stage's rule and view, so the same levels; the CPU's pick is still
    /// what `state_of` and the other passes see). Off, the GPU draws the level the
    /// Visibility stage wrote into each record. Both draw the same image; the switch is for
    /// comparing them. Default on.
    pub gpu_lod_selection: bool,
    /// Which of the Visibility stage's per-object answers the CPU keeps for the view (the
    /// engine culls one view a frame, so this is that view's setting). Default
    /// [`CpuAnswers::EveryFrame`]. Switching at run time is safe: the next frame answers
    /// under the new policy.
    pub cpu_answers: CpuAnswers,
    /// Most bytes of meshes added while the game runs that the renderer copies to the GPU in
    /// one frame: a larger mesh arrives over several frames, its objects drawn meanwhile
    /// from a coarser level or a box of their bounds. Read every frame. Default
    /// [`DEFAULT_TRANSFER_BUDGET`] (16 MiB).
    pub transfer_budget: u64,
    /// Most bytes of mesh data and texture mips the renderer keeps on the GPU, the two
    /// together (`None`, the default: no budget, every level of every mesh and every mip
    /// stays). Under a budget the levels of the meshes added while the game runs, and the
    /// mips of every base-colour texture, follow the views: what a view needs now is loaded
    /// (levels nearest first, mips as fine as the object's size on screen asks, the largest
    /// on screen first), and levels and mips no view needed for
    /// [`evict_after_frames`](Self::evict_after_frames) frames make room, least recently
    /// needed first; past that the objects draw coarser levels and sample coarser mips. Each
    /// mesh's coarsest level and each texture's coarsest mip are kept whatever the budget.
    /// Where the device reports its memory budget the renderer may hold less (see
    /// `renderer`'s residency docs). Read every frame.
    pub mesh_memory_budget: Option<u64>,
    /// Frames a level of detail or a texture mip must go unneeded by every view before the
    /// memory budget ([`mesh_memory_budget`](Self::mesh_memory_budget)) may evict it.
    /// Default 60.
    pub evict_after_frames: u32,
}

/// How much of the per-object answer the Visibility stage keeps on the CPU (see
/// [`RenderSettings::cpu_answers`]).
///
/// With GPU culling the GPU decides what is drawn; what the CPU answers is then for the game
/// alone (`culling::Visibility::state_of`, the `visible`/`scene` lists, the `Culled` and
/// `Occluded` tags). A game that asks about a few entities, or none, need not pay for the
/// lists and tags of every object each frame. Whatever the policy, the renderer gets what it
/// draws from (world matrices and boxes, the level of detail, the frustum bits, occlusion),
/// so the image does not change. On the CPU culling backend the renderer draws the `visible`
/// list, so there the stage answers every frame whatever this says
/// (`culling::Visibility::answers` tells what a frame did).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuAnswers {
    /// Every frame: the lists, the tags and `state_of` for every object (the default).
    #[default]
    EveryFrame,
    /// On request: no lists and no tags (asking for a list is a named error, every tag is
    /// removed); `state_of(entity)` computes that one entity's answer when asked, from its
    /// world box and the frame's view.
    OnRequest,
    /// None: no lists, no tags, and `state_of` answers that nothing was answered.
    None,
}

/// The default [`RenderSettings::transfer_budget`]: 16 MiB a frame, about a 500k-triangle
/// mesh with its levels of detail (the same value as `meshes::DEFAULT_TRANSFER_BUDGET`).
pub const DEFAULT_TRANSFER_BUDGET: u64 = 16 << 20;

/// Which entities carry the `Culled` and `Occluded` tags (see [`RenderSettings::visibility_tags`]).
///
/// A tag change is an archetype move in hecs (every component of the entity is copied), so
/// with a camera that turns, thousands of entities change archetype each frame. Every
/// object's answer is kept densely by the Visibility stage whatever the policy
/// (`culling::Visibility::state_of(entity)`, one lookup), so a game that needs the tags of a
/// few entities only can ask for exactly those and make the rest cost nothing structural.
///
/// Switching at run time is safe: the next frame's cull removes the tags of entities the
/// policy no longer covers and tags the newly covered ones truthfully.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VisibilityTags {
    /// Every drawable mesh entity carries truthful tags (the default): an entity without
    /// `Culled` or `Occluded` was kept by the last cull (or is new, or there is no view).
    #[default]
    All,
    /// Only mesh entities that carry the [`VisibilityTagged`](crate::VisibilityTagged) marker
    /// get tags; the others carry none, whatever culling decided.
    ///
    /// **The trap.** Under this policy `Without<Culled>` does *not* mean visible for an
    /// unmarked entity: it means nothing at all. Query with `With<VisibilityTagged>` as well
    /// (`Without<Culled>` + `With<VisibilityTagged>` is truthful), or read the dense answer
    /// through `culling::Visibility::state_of(entity)`, which is truthful for every entity.
    Marked,
}

impl Default for RenderSettings {
    fn default() -> Self {
        RenderSettings {
            cull_min_pixels: 0.0,
            cull_max_distance: 0.0,
            lod_bias: 1.0,
            lod_error_pixels: 1.0,
            lod_error_band: 0.1,
            frustum_culling: true,
            occlusion_culling: true,
            occlusion_buffer: [256, 128],
            occlusion_buffer_follows_viewport: true,
            occluder_min_screen_size: 0.02,
            occluder_triangle_budget: 16 * 1024,
            occluders_from_meshes: true,
            visibility_tags: VisibilityTags::All,
            pipelined_frames: false,
            batch_draws: true,
            gpu_lod_selection: true,
            cpu_answers: CpuAnswers::EveryFrame,
            transfer_budget: DEFAULT_TRANSFER_BUDGET,
            mesh_memory_budget: None,
            evict_after_frames: 60,
        }
    }
}

impl RenderSettings {
    /// Whether the distance cull is on (a positive finite maximum distance).
    pub fn distance_cull_enabled(&self) -> bool {
        self.cull_max_distance.is_finite() && self.cull_max_distance > 0.0
    }

    /// Whether the screen-size cull is on (a positive finite minimum size).
    pub fn screen_size_cull_enabled(&self) -> bool {
        self.cull_min_pixels.is_finite() && self.cull_min_pixels > 0.0
    }

    /// The LOD bias to use: the configured one, or 1 when it is not a positive finite number.
    pub fn effective_lod_bias(&self) -> f32 {
        if self.lod_bias.is_finite() && self.lod_bias > 0.0 {
            self.lod_bias
        } else {
            1.0
        }
    }
}

impl RenderSettings {
    /// The threshold of the error rule in pixels: [`lod_error_pixels`](Self::lod_error_pixels)
    /// over the effective bias, or 1 pixel over it when the setting is not a positive finite
    /// number.
    pub fn effective_lod_error_pixels(&self) -> f32 {
        let pixels =
            if self.lod_error_pixels.is_finite() && self.lod_error_pixels > 0.0 { self.lod_error_pixels } else { 1.0 };
        pixels / self.effective_lod_bias()
    }

    /// The hysteresis band of the error rule: [`lod_error_band`](Self::lod_error_band) in
    /// `0..=1`, 0 for NaN.
    pub fn effective_lod_error_band(&self) -> f32 {
        if self.lod_error_band.is_nan() {
            0.0
        } else {
            self.lod_error_band.clamp(0.0, 1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_disable_the_lossy_culls() {
        let settings = RenderSettings::default();
        assert!(!settings.distance_cull_enabled());
        assert!(!settings.screen_size_cull_enabled());
        assert!(settings.frustum_culling && settings.occlusion_culling);
    }

    #[test]
    fn bad_values_disable_rather_than_cull_everything() {
        let settings = RenderSettings {
            cull_min_pixels: f32::NAN,
            cull_max_distance: f32::NAN,
            lod_bias: -3.0,
            ..RenderSettings::default()
        };
        assert!(!settings.distance_cull_enabled());
        assert!(!settings.screen_size_cull_enabled());
        assert_eq!(settings.effective_lod_bias(), 1.0);
    }
}

//! The answer under [`CpuAnswers::OnRequest`] and [`CpuAnswers::None`]: the index lists are
//! refused by name instead of being left stale, and one object's verdict is computed when it
//! is asked for, from its world box and the frame's view.

use std::fmt;

use ecs::CpuAnswers;

use super::answer::Visibility;
use super::asked::keeps;

/// Why the Visibility stage has no index list for the frame (see [`Visibility::try_visible`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListsRefused {
    /// The view answers on request ([`CpuAnswers::OnRequest`]): ask
    /// [`Visibility::state_of`] about the entities you need.
    OnRequest,
    /// The view answers nothing on the CPU ([`CpuAnswers::None`]).
    NotAnswered,
}

impl fmt::Display for ListsRefused {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            ListsRefused::OnRequest => "the view answers on request: the lists are not built (ask state_of)",
            ListsRefused::NotAnswered => "the view answers nothing on the CPU: the lists are not built",
        })
    }
}

impl std::error::Error for ListsRefused {}

impl Visibility {
    /// The policy this answer was made under (the view's
    /// [`RenderSettings::cpu_answers`](ecs::RenderSettings::cpu_answers) in the frame).
    ///
    /// Under [`CpuAnswers::OnRequest`] the stage builds no lists and gives no tags (it
    /// removes those an earlier frame gave), runs no occlusion, and on a tracked frame culls
    /// no object but those that changed, unless a level of detail could change (the
    /// camera's position, its projection or the level rule changed, and objects have
    /// levels): a still or turning camera over a still world costs what changed.
    /// [`Visibility::state_of`] then computes one entity's answer when asked, in O(1):
    ///
    /// - its frustum, distance and screen-size verdict from its world box in
    ///   [`Visibility::objects`] (kept up to date for every object that changed) and this
    ///   frame's view: the verdict the full cull gives, this frame's;
    /// - its occlusion from the GPU's bits fed back ([`GpuFeedback`](crate::GpuFeedback)),
    ///   by the rule of the answer every frame: occluded when its GPU bit is clear in the
    ///   bits' frame and its box, as it is now, lay in that frame's view (the stage keeps the
    ///   last eight views), unless it appeared since. **Latency:** the bits' frame, one frame
    ///   late when the GPU keeps up, at most the frames in flight plus one; an object that
    ///   moved since may read `Occluded` where the answer every frame, which tests the box it
    ///   had then, reads `Visible`, or the other way. No CPU occlusion runs: without fed-back
    ///   bits nothing is occluded (false-visible, never false-hidden);
    /// - its level of detail from [`ObjectColumns::draws`](super::ObjectColumns::draws): picked
    ///   whenever the object changed or the camera moved far enough to change a level (each
    ///   level's hold bounds the move it survives); a camera that only turns keeps the
    ///   levels of its last position (see `LevelsKey` in `tracked/mod.rs`). On the GPU
    ///   backend with `gpu_lod_selection` the cull picks the levels of error-rule chains
    ///   itself, each frame.
    ///
    /// [`Visibility::bits`] are then not this frame's verdict: they name the drawable
    /// objects the GPU drew in the fed-back frame (all the drawable ones without fed-back
    /// bits) and those that appeared this frame, what the renderer's mesh and texture
    /// residency want. The `visible`, `scene` and `casters` lists are empty and
    /// [`Visibility::try_visible`] and its kin say why.
    #[inline]
    pub fn answers(&self) -> CpuAnswers {
        self.answers
    }

    /// Why the lists were not built this frame; `None` when they were.
    #[inline]
    pub fn lists_refused(&self) -> Option<ListsRefused> {
        match self.answers {
            CpuAnswers::EveryFrame => None,
            CpuAnswers::OnRequest => Some(ListsRefused::OnRequest),
            CpuAnswers::None => Some(ListsRefused::NotAnswered),
        }
    }

    /// [`Visibility::visible`], or why the frame has no such list.
    ///
    /// ```
    /// use culling::{ListsRefused, Visibility};
    /// use ecs::{scene, Camera, CpuAnswers, RenderSettings, Transform};
    /// use glam::Vec3;
    /// let mut app = runtime::App::new();
    /// culling::install(&mut app);
    /// app.resource_mut::<RenderSettings>().cpu_answers = CpuAnswers::OnRequest;
    /// scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 10.0)));
    /// let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    /// app.run_frame();
    /// let visibility = app.resource::<Visibility>();
    /// assert_eq!(visibility.try_visible(), Err(ListsRefused::OnRequest));
    /// assert_eq!(visibility.state_of(cube), Some(culling::ObjectState::Visible));
    /// ```
    pub fn try_visible(&self) -> Result<&[u32], ListsRefused> {
        self.lists_refused().map_or(Ok(self.visible()), Err)
    }

    /// [`Visibility::scene`], or why the frame has no such list.
    pub fn try_scene(&self) -> Result<&[u32], ListsRefused> {
        self.lists_refused().map_or(Ok(self.scene()), Err)
    }

    /// [`Visibility::casters`], or why the frame has no such list.
    pub fn try_casters(&self) -> Result<&[u32], ListsRefused> {
        self.lists_refused().map_or(Ok(self.casters()), Err)
    }

    /// Whether drawable object `slot`, kept by the frustum, distance and screen-size culls, is
    /// occluded: read from the occlusion words, or found now from the fed-back bits under
    /// [`CpuAnswers::OnRequest`] (see `asked.rs`).
    pub(super) fn is_hidden(&self, slot: usize) -> bool {
        match self.answers {
            CpuAnswers::OnRequest => {
                self.asked.occluded(slot, &self.objects.bounds[slot], self.objects.is_finite(slot))
            }
            _ => self.occluded.get(slot / 64).is_some_and(|occluded| occluded >> (slot % 64) & 1 == 1),
        }
    }

    /// Whether drawable object `slot` passed the frustum, distance and screen-size culls
    /// (occluded or not): read from the bits, or computed now under
    /// [`CpuAnswers::OnRequest`].
    pub(super) fn is_kept(&self, slot: usize) -> bool {
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        match (self.answers, self.context.as_ref()) {
            (CpuAnswers::OnRequest, Some((context, frustum_culling))) => {
                !self.objects.is_finite(slot) || keeps(context, *frustum_culling, &self.objects.bounds[slot])
            }
            _ => {
                self.bits.words()[word] & bit != 0
                    || self.occluded.get(word).is_some_and(|occluded| occluded & bit != 0)
            }
        }
    }
}

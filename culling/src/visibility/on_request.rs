//! The answer under [`CpuAnswers::OnRequest`] and [`CpuAnswers::None`]: the index lists are
//! refused by name instead of being left stale, and one object's verdict is computed when it
//! is asked for, from its world box and the frame's view.

use std::fmt;

use ecs::CpuAnswers;

use super::answer::Visibility;
use crate::size::is_near_enough;
use crate::view::ViewCullContext;

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
    /// removes those an earlier frame gave), and [`Visibility::state_of`] computes one
    /// entity's frustum, distance and screen-size verdict when asked, from the world box in
    /// [`Visibility::objects`] and this frame's view: the same verdict the full cull gives.
    /// Its level of detail is [`ObjectColumns::draws`](super::ObjectColumns::draws), which the
    /// stage keeps writing because the renderer draws from it. Occlusion comes from the
    /// frame's occlusion words as under every policy: the CPU occlusion of this frame on the
    /// CPU backend; on the GPU backend the GPU's bits read back from an earlier frame (one
    /// frame late when the GPU keeps up, at most the frames in flight plus one; see the
    /// table of [`Visibility::state_of`]).
    ///
    /// The `visible`, `scene` and `casters` lists are then empty and
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

/// The cull of one world box, in the order and with the tests of the stage's pass (frustum
/// when on, then distance, then screen size); a non-finite view keeps everything.
fn keeps(context: &ViewCullContext, frustum_culling: bool, world: &ecs::Aabb) -> bool {
    if !context.is_finite() {
        return true;
    }
    if frustum_culling {
        return context.classify(world).is_kept();
    }
    let center = world.center();
    is_near_enough(context.distance_sq(center), context.max_distance_sq())
        && context.screen_size().keeps(world.half_extent().length_squared(), context.depth(center))
}

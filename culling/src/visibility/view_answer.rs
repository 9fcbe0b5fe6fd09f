//! One view's answer: [`Visibility::for_view`] gives the main view's (the answer
//! [`Visibility::state_of`] reads) or another view's, through one type.

use ecs::{CpuAnswers, MeshHandle, ResolvedView, ViewId};
use runtime::hecs::Entity;

use super::answer::{ObjectState, Visibility};
use super::views::OtherView;

/// The answer of one view of the frame (see [`Visibility::for_view`]).
#[derive(Clone, Copy, Debug)]
pub struct ViewVisibility<'a> {
    visibility: &'a Visibility,
    /// `None` for the main view; else the other view and its index among them.
    other: Option<(usize, &'a OtherView)>,
}

impl<'a> ViewVisibility<'a> {
    /// Whether this is the main view (whose answer the tags and [`Visibility::state_of`] give).
    #[inline]
    pub fn is_main(&self) -> bool {
        self.other.is_none()
    }

    /// The whole answer this view's is part of.
    pub(super) fn answer(&self) -> &'a Visibility {
        self.visibility
    }

    /// The view this answer was culled for.
    pub fn view(&self) -> &'a ResolvedView {
        match self.other {
            Some((_, other)) => &other.view,
            None => self.visibility.view.as_ref().expect("a main answer exists only with a view"),
        }
    }

    /// Slots of the objects that may be visible in this view, ascending.
    pub fn visible(&self) -> &'a [u32] {
        match self.other {
            Some((_, other)) => &other.visible,
            None => self.visibility.visible(),
        }
    }

    /// The mesh visible object `visible()[index]` draws in this view (its level of detail
    /// for this view's eye).
    ///
    /// # Panics
    /// When `index >= visible().len()`.
    pub fn draw(&self, index: usize) -> MeshHandle {
        match self.other {
            Some((_, other)) => other.draws[index],
            None => self.visibility.objects.draws[self.visibility.visible[index] as usize].mesh,
        }
    }

    /// The view of the error rule of levels of detail this view's picks used and the eye they
    /// measured from (the exact bits), when the frame's meshes publish errors: the main
    /// view's is [`Visibility::lod_error_view`]; another view's has its own projection, image
    /// height and eye with the main view's threshold and band. What a GPU cull choosing this
    /// view's levels by the same rule (`lod_select.h`) needs.
    pub fn lod_error_view(&self) -> Option<(crate::LodErrorView, glam::Vec3)> {
        let (main, eye) = self.visibility.lod_view?;
        let Some((_, other)) = self.other else { return Some((main, eye)) };
        let projection = &other.view.projection;
        let view = crate::LodErrorView {
            // `LodErrorView::new`'s expression, so the bits are the ones the view picked with.
            pixels_per_unit: other.view.viewport.height as f32 * 0.5 * projection.y_axis.y,
            orthographic: u32::from(crate::is_orthographic(projection)),
            ..main
        };
        Some((view, other.context.camera_position()))
    }

    /// The eye and field-of-view scale ([`crate::lod_scale`]) this view's picks of chains of
    /// the distance rule used (the exact bits; with the global bias,
    /// [`ecs::RenderSettings::effective_lod_bias`], everything `Lod::select` took): what a GPU
    /// cull choosing this view's levels by the same rule (`lod_distance.h`) needs. `None` for
    /// the main view, whose levels its records hold.
    pub fn lod_distance_view(&self) -> Option<(glam::Vec3, f32)> {
        let (_, other) = self.other?;
        Some((other.context.camera_position(), crate::lod::lod_scale(&other.view.projection)))
    }

    /// Whether object `slot` may be visible in this view.
    pub fn is_visible(&self, slot: usize) -> bool {
        match self.other {
            Some((index, _)) => self.visibility.others.is_visible(index, slot),
            None => self.visibility.bits.words().get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1),
        }
    }

    /// What the last cull decided about `entity` in this view, with the timing of
    /// [`Visibility::state_of`] (systems after the Visibility stage see this frame's answer).
    /// For the main view it is `state_of`'s answer; another view answers `Visible`, `Culled`
    /// (frustum, distance, screen size) or `NotDrawable`, never `Occluded` (see
    /// [`Visibility::for_view`]). `None` when there is no answer for it.
    pub fn state_of(&self, entity: Entity) -> Option<ObjectState> {
        let Some((index, _)) = self.other else { return self.visibility.state_of(entity) };
        let slot = self.visibility.index.slot_of(entity)? as usize;
        if slot >= self.visibility.len() {
            return None;
        }
        let drawable = self.visibility.drawable[slot / 64] >> (slot % 64) & 1 == 1;
        Some(if self.visibility.others.answers == CpuAnswers::None {
            ObjectState::NotAnswered
        } else if !drawable {
            ObjectState::NotDrawable
        } else if self.visibility.others.is_visible(index, slot) {
            ObjectState::Visible
        } else {
            ObjectState::Culled
        })
    }
}

impl Visibility {
    /// The answer of view `id` of the frame's [`ResolvedViews`](ecs::ResolvedViews): the main
    /// view's (what [`Visibility::state_of`] and the tags say) or another view's. `None` for
    /// an id the frame has no answer for: no such view, a view whose viewport has no area, or
    /// a frame without a main view (the other views are culled with the main view's world
    /// boxes, so they are answered only beside it).
    ///
    /// Another view is culled by frustum, distance and screen size, each with its own eye and
    /// viewport, and picks its own levels of detail; it has no occlusion (a raster per view
    /// would cost as much as the main view's) and no tags. Its bits and lists are made every
    /// frame something changed, whatever [`RenderSettings::cpu_answers`](ecs::RenderSettings)
    /// says (a renderer draws them); under [`CpuAnswers::None`] its `state_of` is
    /// [`ObjectState::NotAnswered`], as the main view's.
    ///
    /// ```
    /// use culling::{ObjectState, Visibility};
    /// use ecs::{scene, Camera, ResolvedViews, Transform};
    /// use glam::{Quat, Vec3};
    /// let mut app = runtime::App::new();
    /// culling::install(&mut app);
    /// scene::spawn_camera(app.world_mut(), Camera::default(), Transform::from_translation(Vec3::new(0.0, 0.0, 10.0)));
    /// let behind = Transform { translation: Vec3::new(0.0, 0.0, -10.0), rotation: Quat::from_rotation_y(std::f32::consts::PI), ..Transform::IDENTITY };
    /// scene::spawn_camera(app.world_mut(), Camera { order: 1, ..Camera::default() }, behind);
    /// let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::from_translation(Vec3::new(0.0, 0.0, 20.0)));
    /// app.run_frame();
    /// let views = app.resource::<ResolvedViews>();
    /// let visibility = app.resource::<Visibility>();
    /// let main = visibility.for_view(views.main().unwrap()).unwrap();
    /// let second = visibility.for_view(views.views()[1].id).unwrap();
    /// assert_eq!(main.state_of(cube), Some(ObjectState::Culled), "behind the main camera");
    /// assert_eq!(second.state_of(cube), Some(ObjectState::Visible), "in front of the other one");
    /// ```
    pub fn for_view(&self, id: ecs::ViewId) -> Option<ViewVisibility<'_>> {
        self.view.as_ref()?;
        if self.others.main == Some(id) {
            return Some(ViewVisibility { visibility: self, other: None });
        }
        let other = self.others.find(id)?;
        Some(ViewVisibility { visibility: self, other: Some(other) })
    }

    /// The ids of the views answered this frame besides the main one, in render order.
    pub fn other_views(&self) -> impl Iterator<Item = ViewId> + '_ {
        self.others.current().iter().map(|view| view.id)
    }
}

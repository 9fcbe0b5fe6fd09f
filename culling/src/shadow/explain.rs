//! "Does this object cast a shadow there?": [`ShadowViews::explain`] answers it for one
//! entity and every shadow view of the frame, on demand, from what the shadow system left:
//! the casters gathered by slot and each view's caster bits by slot (no cost per frame).

use runtime::hecs::Entity;

use super::system::ShadowViews;
use super::views::LightViewKind;
use crate::bits::BITS_PER_WORD;
use crate::visibility::{Explanation, ObjectState, Reason, Visibility};

/// Whether an object draws into one shadow view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Casting {
    /// Kept in the view's casters: it draws into the view's map.
    Casts,
    /// A drawable caster the view's cull did not keep (its box lies outside the view's
    /// volume).
    Culled,
    /// The GPU tests the casters ([`ShadowViews::device_culling`]): the host keeps no bits.
    /// `in_volume` says whether the view's volume may hold the object's box (the GPU keeps
    /// it or not by that test, and for the sun's cascades by occlusion too).
    OnDevice {
        /// The view's volume may hold the box.
        in_volume: bool,
    },
    /// It carries no [`ecs::ShadowCaster`].
    NotCaster,
    /// It cannot be drawn at all (see its [`Reason::NotDrawable`]), or the stage has no
    /// answer for it.
    NotDrawable,
}

/// One shadow view's answer for an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShadowCasting {
    /// Index of the view in [`ShadowViews::views`].
    pub view: usize,
    /// The view's light.
    pub light: Entity,
    /// Which view of its light.
    pub kind: LightViewKind,
    /// Whether the object draws there.
    pub casting: Casting,
}

impl ShadowViews {
    /// For every shadow view of the frame, in [`ShadowViews::views`]' order, whether the
    /// object `explanation` is about (from [`Visibility::explain`] of the same frame) draws
    /// into it: read from the view's caster bits by slot, for this object only. Empty in a
    /// frame without a shadow view.
    ///
    /// ```
    /// use culling::shadow::Casting;
    /// use ecs::{scene, DirectionalLight, RenderSettings, ShadowCaster, Transform};
    /// use glam::{Quat, Vec3};
    /// let mut app = runtime::App::new();
    /// culling::install(&mut app);
    /// scene::spawn_camera(app.world_mut(), ecs::Camera::default(), scene::look_at(Vec3::new(0.0, 2.0, 10.0), Vec3::ZERO));
    /// app.world_mut().spawn((Transform::from_translation_rotation(Vec3::ZERO, Quat::from_rotation_x(-1.2)), DirectionalLight::default()));
    /// let cube = scene::spawn_mesh(app.world_mut(), scene::unit_cube_mesh(), Transform::IDENTITY);
    /// app.world_mut().insert_one(cube, ShadowCaster).unwrap();
    /// app.run_frame();
    /// let (visibility, shadows) = (app.resource::<culling::Visibility>(), app.resource::<culling::ShadowViews>());
    /// let explanation = visibility.explain(app.world(), &app.resource::<RenderSettings>(), cube);
    /// let casting = shadows.explain(&visibility, &explanation);
    /// assert_eq!(casting.len(), shadows.views().len());
    /// assert!(casting.iter().any(|answer| answer.casting == Casting::Casts), "a cascade holds it");
    /// ```
    pub fn explain(&self, visibility: &Visibility, explanation: &Explanation) -> Vec<ShadowCasting> {
        let casting = |view: usize| self.casting_in(visibility, explanation, view);
        self.views()
            .iter()
            .enumerate()
            .map(|(index, view)| ShadowCasting {
                view: index,
                light: view.light,
                kind: view.kind,
                casting: casting(index),
            })
            .collect()
    }

    fn casting_in(&self, visibility: &Visibility, explanation: &Explanation, view: usize) -> Casting {
        let drawable = !matches!(explanation.reason, Reason::NotDrawable(_) | Reason::NoAnswer)
            && !matches!(explanation.state, Some(ObjectState::NotDrawable) | None);
        let Some(slot) = explanation.slot.filter(|_| drawable).map(|slot| slot as usize) else {
            return Casting::NotDrawable;
        };
        if !explanation.caster {
            return Casting::NotCaster;
        }
        if self.device_culling() {
            let in_volume = visibility
                .objects()
                .bounds
                .get(slot)
                .is_some_and(|world_box| self.views()[view].frustum.may_intersect_aabb(world_box));
            return Casting::OnDevice { in_volume };
        }
        let word = self.slot_words(view).get(slot / BITS_PER_WORD).copied().unwrap_or(0);
        if word >> (slot % BITS_PER_WORD) & 1 != 0 {
            Casting::Casts
        } else {
            Casting::Culled
        }
    }
}

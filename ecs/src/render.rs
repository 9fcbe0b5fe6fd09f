//! What an entity is drawn with: mesh and material handles, its local bounds, its skinned
//! pose, and the flags and tags the Visibility stage reads and writes.

use glam::Vec3;

use crate::bounds::Aabb;

/// A mesh, by index into the renderer's mesh table. Small and `Copy`; never a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeshHandle(pub u32);

impl MeshHandle {
    /// No mesh: an entity carrying it is not drawable.
    pub const NONE: MeshHandle = MeshHandle(u32::MAX);

    /// Whether the handle names a mesh.
    #[inline]
    pub const fn is_some(self) -> bool {
        self.0 != u32::MAX
    }
}

/// A material, by index into the renderer's material table. Small and `Copy`; never a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaterialHandle(pub u32);

impl MaterialHandle {
    /// No material: an entity carrying it is not drawable (nothing to shade it with).
    pub const NONE: MaterialHandle = MaterialHandle(u32::MAX);

    /// The plain material: the object's colour ([`BaseColor`]) alone, opaque and one-sided,
    /// whatever the library holds. It lies past every material table (a library never holds
    /// `u32::MAX - 1` materials), where the renderer draws no texture, so a plain-colour
    /// mesh never depends on what was loaded before it (a glTF file's material 0 is often
    /// textured).
    pub const PLAIN: MaterialHandle = MaterialHandle(u32::MAX - 1);

    /// Whether the handle names a material.
    #[inline]
    pub const fn is_some(self) -> bool {
        self.0 != u32::MAX
    }
}

/// The flat colour an entity is drawn with (RGBA, each in `0..=1`; a glTF material's
/// `baseColorFactor`). An entity without one is drawn white. The Render stage reads it when
/// the entity gets its object slot and whenever a system lends it mutably (the change log),
/// never in a frame where it did not change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaseColor(pub [f32; 4]);

impl BaseColor {
    /// Opaque white, the colour of an entity without a `BaseColor`.
    pub const WHITE: BaseColor = BaseColor([1.0; 4]);

    /// The colour of RGBA8 bytes.
    pub fn from_rgba8(rgba: [u8; 4]) -> BaseColor {
        BaseColor(rgba.map(|channel| f32::from(channel) / 255.0))
    }

    /// The colour as RGBA8 bytes (rounded).
    pub fn to_rgba8(self) -> [u8; 4] {
        self.0.map(|channel| (channel.clamp(0.0, 1.0) * 255.0).round() as u8)
    }

    /// The colour packed into one little-endian word, red in the lowest byte (as GLSL's
    /// `unpackUnorm4x8` reads it). A non-finite channel packs as 0.
    ///
    /// ```
    /// assert_eq!(ecs::BaseColor::from_rgba8([1, 2, 3, 4]).packed(), 0x0403_0201);
    /// ```
    pub fn packed(self) -> u32 {
        let finite = self.0.map(|channel| if channel.is_finite() { channel } else { 0.0 });
        u32::from_le_bytes(BaseColor(finite).to_rgba8())
    }
}

/// A drawable: geometry, what shades it, and its box in its own space.
///
/// Read by the Visibility stage, which moves `bounds` (or the posed box of a
/// [`SkinnedPose`]) to world space with the entity's [`WorldTransform`](crate::WorldTransform).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mesh {
    /// The geometry to draw (the finest level when the entity also has a [`Lod`](crate::Lod)).
    pub mesh: MeshHandle,
    /// What shades it.
    pub material: MaterialHandle,
    /// Box of the mesh in its own space (its bind pose, for a skinned mesh).
    pub bounds: Aabb,
    /// For a skinned mesh: the furthest any vertex sits from a bone that moves it, in mesh
    /// units. Zero for a rigid mesh.
    pub skin_radius: f32,
}

impl Mesh {
    /// A rigid mesh (skin radius zero).
    pub const fn new(mesh: MeshHandle, material: MaterialHandle, bounds: Aabb) -> Mesh {
        Mesh { mesh, material, bounds, skin_radius: 0.0 }
    }

    /// Whether the mesh can be drawn at all: it names a mesh and a material and its box has
    /// a size. One decision, made here, so no two readers disagree about it. A box with
    /// non-finite coordinates counts as drawable (the culls keep and report it).
    #[inline]
    pub fn is_drawable(&self) -> bool {
        self.mesh.is_some() && self.material.is_some() && self.bounds.is_valid()
    }

    /// The local box to cull with: the posed box when the frame has a pose for this mesh,
    /// the stored bounds otherwise.
    #[inline]
    pub fn local_bounds(&self, pose: Option<&SkinnedPose>) -> Aabb {
        match pose {
            Some(pose) => pose.bounds(self.skin_radius),
            None => self.bounds,
        }
    }
}

/// Whether the entity is shown. Absent means visible; `Visible(false)` hides it from every
/// list (camera and shadows alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visible(pub bool);

impl Default for Visible {
    fn default() -> Self {
        Visible(true)
    }
}

/// Tag: the mesh casts shadows, so it is listed among the casters of the scene list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShadowCaster;

/// Tag: outside the view this frame (frustum, distance or screen-size cull).
///
/// Inserted and removed by the Visibility stage in one batch of direct world calls, and only
/// on a change, so a still camera makes no structural change.
///
/// **When it is true.** Systems after the Visibility stage see this frame's answer; systems
/// before it (Input, Transform, a gameplay stage) see last frame's, one frame late. A newly
/// spawned entity carries no tag, so it counts as visible until its first cull. A frame
/// without a view (no camera, an inactive one, a non-finite pose) removes every tag: nothing
/// is known to be hidden. A 0x0 viewport (minimised window) leaves the tags as they were.
///
/// **Which view.** The main view's ([`ResolvedView`](crate::ResolvedView)): with several
/// views a frame ([`ResolvedViews`](crate::ResolvedViews)) the tags never describe the
/// others; `culling::Visibility::for_view` answers for each.
///
/// **Which entities.** Under the default [`VisibilityTags::All`](crate::VisibilityTags) every
/// drawable mesh entity; under [`VisibilityTags::Marked`](crate::VisibilityTags) only those
/// carrying [`VisibilityTagged`], and then an unmarked entity's missing tag says nothing.
///
/// **On every culling backend.** The frustum test always runs on the CPU (with GPU culling
/// too: it is cheap and gives the GPU's bits), so this tag is this frame's frustum answer
/// whichever processor culls what is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Culled;

/// Tag: hidden behind other geometry according to the occlusion cull.
///
/// Changed only on transitions, with the same timing as [`Culled`] (one frame late for
/// systems before the Visibility stage, absent on new entities and in frames without a view),
/// and given to the same entities, for the main view alone (see [`Culled`]).
///
/// **On each culling backend.** With CPU culling it is this frame's CPU occlusion answer
/// (when occlusion runs there). With GPU culling it comes from the GPU's visibility bits of
/// an earlier frame, only when they are read back (`renderer::BitsReadback`): one frame
/// late when the GPU keeps up, never more than the frames in flight plus one; an object in
/// view that the GPU did not test in that frame (it was outside that frame's frustum, or it
/// appeared since: a new entity in its slot, or newly drawable) is never tagged. Without the
/// readback the GPU backend tags nothing `Occluded`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occluded;

/// Marker: this mesh entity gets the [`Culled`] and [`Occluded`] tags under
/// [`VisibilityTags::Marked`](crate::VisibilityTags) (under the default policy every drawable
/// mesh entity gets them, marked or not). Adding or removing it at run time takes effect at
/// the next cull.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VisibilityTagged;

/// The pose of a skinned mesh this frame, as the animation publishes it.
///
/// Two writers, one reading. A hand-made pose knows where the bones are, not where the skin
/// is: it gives the box of the posed bone origins in rig space and the largest scale any bone
/// carries, and the culls pad it by the mesh's [`Mesh::skin_radius`] to bound the skin (see
/// [`SkinnedPose::bounds`]). The engine's animation system (the `animation` crate) knows the
/// skin: it writes the box that already holds every skinned vertex
/// ([`SkinnedPose::from_skin_box`]), and its meshes carry a skin radius of 0, so the pad adds
/// nothing. Written before the Visibility stage by whatever animates the rig.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinnedPose {
    /// Smallest coordinate of any posed bone origin, in rig space.
    pub origin_min: Vec3,
    /// Largest coordinate of any posed bone origin, in rig space.
    pub origin_max: Vec3,
    /// Largest scale factor any bone carries in this pose.
    pub max_bone_scale: f32,
}

impl SkinnedPose {
    /// A pose whose box already bounds the skin (a scale of 1, so a mesh with a skin radius
    /// of 0 is culled by exactly `skin`).
    ///
    /// ```
    /// use ecs::{Aabb, SkinnedPose};
    /// use glam::Vec3;
    /// let skin = Aabb::new(Vec3::splat(-1.0), Vec3::ONE);
    /// assert_eq!(SkinnedPose::from_skin_box(skin).bounds(0.0), skin);
    /// ```
    pub const fn from_skin_box(skin: Aabb) -> SkinnedPose {
        SkinnedPose { origin_min: skin.min, origin_max: skin.max, max_bone_scale: 1.0 }
    }

    /// The box of the skin: the bone-origin box padded by `skin_radius` times the largest
    /// bone scale, the scale floored at 1 so the pad only ever grows.
    ///
    /// Exact while the bind transform between mesh and rig is rigid, conservative otherwise.
    /// A NaN scale or radius gives a NaN box, which the culls keep and report.
    ///
    /// ```
    /// use ecs::SkinnedPose;
    /// use glam::Vec3;
    /// let pose = SkinnedPose { origin_min: Vec3::ZERO, origin_max: Vec3::ONE, max_bone_scale: 2.0 };
    /// let skin = pose.bounds(0.5);
    /// assert_eq!(skin.min, Vec3::splat(-1.0));
    /// assert_eq!(skin.max, Vec3::splat(2.0));
    /// ```
    pub fn bounds(&self, skin_radius: f32) -> Aabb {
        // `max` would hide a NaN scale; keep it visible as NaN instead.
        let scale = if self.max_bone_scale.is_nan() { f32::NAN } else { self.max_bone_scale.max(1.0) };
        let pad = Vec3::splat(skin_radius.abs() * scale);
        Aabb::new(self.origin_min - pad, self.origin_max + pad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_box() -> Aabb {
        Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5))
    }

    #[test]
    fn drawable_needs_mesh_material_and_size() {
        let mesh = Mesh::new(MeshHandle(1), MaterialHandle(2), unit_box());
        assert!(mesh.is_drawable());
        assert!(!Mesh { mesh: MeshHandle::NONE, ..mesh }.is_drawable(), "no mesh");
        assert!(!Mesh { material: MaterialHandle::NONE, ..mesh }.is_drawable(), "no material");
        let point = Aabb::new(Vec3::ONE, Vec3::ONE);
        assert!(!Mesh { bounds: point, ..mesh }.is_drawable(), "zero extent");
    }

    #[test]
    fn small_bone_scale_never_shrinks_the_pad() {
        let pose = SkinnedPose { origin_min: Vec3::ZERO, origin_max: Vec3::ONE, max_bone_scale: 0.25 };
        let skin = pose.bounds(1.0);
        assert_eq!(skin.min, Vec3::splat(-1.0), "scale must be floored at 1");
        assert_eq!(skin.max, Vec3::splat(2.0));
    }

    #[test]
    fn pose_replaces_bind_bounds() {
        let mut mesh = Mesh::new(MeshHandle(0), MaterialHandle(0), unit_box());
        mesh.skin_radius = 0.1;
        assert_eq!(mesh.local_bounds(None), unit_box());
        let pose = SkinnedPose {
            origin_min: Vec3::new(0.0, 0.0, 0.0),
            origin_max: Vec3::new(0.0, 3.0, 0.0),
            max_bone_scale: 1.0,
        };
        let posed = mesh.local_bounds(Some(&pose));
        assert!(posed.max.y > 3.0 && posed.min.x < 0.0, "posed box {posed:?} must hold the raised arm");
    }

    #[test]
    fn nan_bone_scale_stays_visible_as_nan() {
        let pose = SkinnedPose { origin_min: Vec3::ZERO, origin_max: Vec3::ONE, max_bone_scale: f32::NAN };
        assert!(!pose.bounds(1.0).is_finite(), "a NaN scale must not be hidden by the floor");
    }
}

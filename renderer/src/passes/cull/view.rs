//! What every two-phase cull tests against and is dispatched with: [`CullView`] (one view,
//! the form a view's matrix takes on its way to the cull shaders) and [`CullConstants`].
//! GLSL twins: `CullView` and `CullConstants` in `shaders/glsl/engine/cull_inputs.h`.

use std::mem::{offset_of, size_of};

use culling::cluster::{view_eye, ClusterMargins, ClusterSettings};
use culling::shadow::LightView;
use culling::{Frustum, LodErrorView, MAX_PLANES};
use glam::Mat4;
use render_graph::vk;

use crate::scene::FrameView;

/// `flags` bit of [`CullView`]: test the frustum's planes (`CULL_FRUSTUM` in `config.h`).
pub const CULL_FRUSTUM: u32 = 1;
/// `flags` bit: test the depth pyramid in the late phase (`CULL_OCCLUSION`).
pub const CULL_OCCLUSION: u32 = 2;
/// `flags` bit: test meshopt's normal cone of meshlets against the eye (`CULL_CONE`; set
/// only for perspective views).
pub const CULL_CONE: u32 = 4;
/// `flags` bit: cull the view in two phases (`CULL_TWO_PHASE`): the early phase draws what
/// the view kept last frame, the late phase decides every item against the pyramid of that
/// depth. Without it the early phase decides the view alone.
pub const CULL_TWO_PHASE: u32 = 8;
/// `flags` bit: the view chooses each object's level of detail from its chain (`CULL_LOD`;
/// the camera's view when the Visibility stage published its [`LodErrorView`]).
pub const CULL_LOD: u32 = 16;
/// `flags` bit: the CPU re-picked every object's level this frame (its full pass), so the late
/// cull keeps every object's chosen level as its state, not only those the frustum keeps
/// (`CULL_LOD_EVERY_OBJECT`).
pub const CULL_LOD_EVERY_OBJECT: u32 = 32;
/// `flags` bit: the view chooses the level of every object whose chain follows the distance
/// rule ([`LOD_RULE_DISTANCE`](crate::LOD_RULE_DISTANCE)) from its own eye, field-of-view
/// scale and global bias ([`CullView::with_distance_lod`]; `CULL_LOD_DISTANCE`).
pub const CULL_LOD_DISTANCE: u32 = 64;

/// Relative raise of a box's nearest depth before the occlusion comparison, for the `f32`
/// rounding of the projection (the CPU occlusion test's margin).
pub const DEPTH_MARGIN: f32 = 4.0e-6;
/// Footprint widening in texels, for the same rounding.
pub const FOOTPRINT_MARGIN: f32 = 1.0e-2;

/// One view as the cull shaders test it: the camera ([`CullView::camera`], made from the
/// frame's [`FrameView`] parameter), a light view ([`CullView::light`], from the frame's
/// [`ShadowFrame`](crate::ShadowFrame) parameter), the camera for meshlets
/// ([`CullView::cluster`]).
///
/// GLSL twin: `CullView` in `shaders/glsl/engine/cull_inputs.h` (std430, 256 bytes; checked by
/// `renderer/tests/shader_layouts.rs`). The planes are the Visibility stage's own
/// ([`Frustum::from_view_projection`], or a light view's), so the GPU's frustum bits equal the
/// CPU kernels' on the same boxes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CullView {
    /// World to the view's clip space, column-major (glam conventions, reversed-Z).
    pub view_projection: [[f32; 4]; 4],
    /// Inward unit planes `(n, d)`; the first `plane_count` are used.
    pub planes: [[f32; 4]; MAX_PLANES],
    /// The eye of a perspective view (`w` 1), zero otherwise.
    pub eye: [f32; 4],
    /// The view's rectangle of the depth pyramid in texels of mip 0: left, top, width,
    /// height.
    pub pyramid: [f32; 4],
    /// Planes in use (5 for an infinite far plane, 6 otherwise).
    pub plane_count: u32,
    /// [`CULL_FRUSTUM`] | [`CULL_OCCLUSION`] | [`CULL_CONE`] | [`CULL_TWO_PHASE`].
    pub flags: u32,
    /// Mips of the pyramid the rectangle spans.
    pub pyramid_mips: u32,
    /// std430 padding.
    pub padding: u32,
    /// [`DEPTH_MARGIN`] (or [`ClusterMargins::depth`]).
    pub depth_margin: f32,
    /// [`FOOTPRINT_MARGIN`] (or [`ClusterMargins::footprint`]).
    pub footprint_margin: f32,
    /// [`ClusterMargins::bounds`] (meshlets only).
    pub bounds_margin: f32,
    /// [`ClusterMargins::cone`] (meshlets only).
    pub cone_margin: f32,
    /// The view's side of the level-of-detail rule (with [`CULL_LOD`]).
    pub lod: LodErrorView,
    /// The eye the rule measures from, the CPU's bits (`w` 0).
    pub lod_eye: [f32; 4],
}

const _: () = {
    assert!(size_of::<CullView>() == 256, "CullView must match its std430 twin in cull_inputs.h");
    assert!(offset_of!(CullView, lod) == 224);
    assert!(offset_of!(CullView, lod_eye) == 240);
    assert!(offset_of!(CullView, planes) == 64);
    assert!(offset_of!(CullView, eye) == 160);
    assert!(offset_of!(CullView, pyramid) == 176);
    assert!(offset_of!(CullView, plane_count) == 192);
    assert!(offset_of!(CullView, flags) == 196);
    assert!(offset_of!(CullView, pyramid_mips) == 200);
    assert!(offset_of!(CullView, depth_margin) == 208);
    assert!(offset_of!(CullView, cone_margin) == 220);
};

impl CullView {
    /// A view of `view_projection` with `frustum`'s planes. `trusted`: the planes can be
    /// tested (a view that cannot be trusted tests nothing and keeps everything, as the
    /// host's cull does); `frustum` and `occlusion`: the tests asked for; the pyramid is the
    /// rectangle `[left, top, width, height]` of a pyramid, `mips` of its mips.
    fn new(
        view_projection: Mat4,
        frustum: &Frustum,
        trusted: bool,
        tests: [bool; 2],
        pyramid: ([f32; 4], u32),
    ) -> Self {
        let [test_frustum, test_occlusion] = tests;
        CullView {
            view_projection: view_projection.to_cols_array_2d(),
            planes: frustum.plane_array(),
            plane_count: frustum.planes().len() as u32,
            flags: (u32::from(trusted && test_frustum) * CULL_FRUSTUM)
                | (u32::from(trusted && test_occlusion) * CULL_OCCLUSION),
            pyramid: pyramid.0,
            pyramid_mips: pyramid.1,
            depth_margin: DEPTH_MARGIN,
            footprint_margin: FOOTPRINT_MARGIN,
            ..CullView::default()
        }
    }

    /// The camera's view for the object cull, in two phases: the frustum of the frame's
    /// view (its `view_projection`, when `frustum` is on) and, with `occlusion`, the whole
    /// pyramid of the depth prepass (`hiz_size` texels, a full mip chain). A frustum that is
    /// not finite tests nothing.
    pub fn camera(view: &FrameView, hiz_size: vk::Extent2D, frustum: bool, occlusion: bool) -> CullView {
        let view_projection = view.view_projection();
        let planes = Frustum::from_view_projection(view_projection);
        let rectangle = [0.0, 0.0, hiz_size.width as f32, hiz_size.height as f32];
        let pyramid = (rectangle, render_graph::full_mip_chain(hiz_size));
        let mut view = CullView::new(view_projection, &planes, planes.is_finite(), [frustum, occlusion], pyramid);
        view.flags |= CULL_TWO_PHASE;
        view
    }

    /// A split-screen view for the object cull, in two phases: the frustum of
    /// `view_projection` and, with `occlusion`, its rectangle `rect` (left, top, width,
    /// height) of the pyramid of the window's depth, `image` texels, over the mips whose
    /// texels stay inside it ([`rect_mips`]), so the view reads only its own depth. A frustum
    /// that is not finite tests nothing.
    pub fn window(
        view_projection: Mat4,
        rect: [u32; 4],
        image: vk::Extent2D,
        frustum: bool,
        occlusion: bool,
    ) -> CullView {
        let planes = Frustum::from_view_projection(view_projection);
        let rectangle = rect.map(|side| side as f32);
        let pyramid = (rectangle, rect_mips(rect, image));
        let mut view = CullView::new(view_projection, &planes, planes.is_finite(), [frustum, occlusion], pyramid);
        view.flags |= CULL_TWO_PHASE;
        view
    }

    /// A light view: its planes (every caster kept when `cull` is false or the view is not
    /// finite) and, with `occlusion` (the sun's cascades), its tile of a pyramid of
    /// `pyramid_mips` mips, in two phases; other light views are decided in one.
    pub fn light(view: &LightView, cull: bool, occlusion: bool, pyramid_mips: u32) -> CullView {
        let tile = view.tile;
        // A tile's mips end at its 1x1 level (a power-of-two side, aligned to it).
        let tile_mips = (32 - tile.size.max(1).leading_zeros()).min(pyramid_mips);
        let rectangle = [tile.x as f32, tile.y as f32, tile.size as f32, tile.size as f32];
        let trusted = cull && view.frustum.is_finite() && view.view_projection.is_finite();
        let tests = [true, occlusion];
        let mut cull_view = CullView::new(view.view_projection, &view.frustum, trusted, tests, (rectangle, tile_mips));
        if cull_view.flags & CULL_OCCLUSION != 0 {
            cull_view.flags |= CULL_TWO_PHASE;
        }
        cull_view
    }

    /// This view choosing each object's level of detail by the rule `lod` from `eye` (the
    /// Visibility stage's view and eye, their exact bits, so the GPU picks the CPU's levels);
    /// `None` leaves every record's own level drawn. `every_object`: keep every object's level
    /// as its state ([`CULL_LOD_EVERY_OBJECT`]), else only those the frustum keeps.
    pub fn with_lod(mut self, lod: Option<(LodErrorView, glam::Vec3)>, every_object: bool) -> CullView {
        if let Some((lod, eye)) = lod {
            self.lod = lod;
            self.lod_eye = eye.extend(self.lod_eye[3]).to_array();
            self.flags |= CULL_LOD | (u32::from(every_object) * CULL_LOD_EVERY_OBJECT);
        }
        self
    }

    /// This view choosing the level of every chain of the distance rule as the CPU's
    /// `ecs::Lod::select` does for it: from `eye` (kept in `lod_eye`'s xyz, the error rule's
    /// eye too), with the field-of-view `scale` ([`culling::lod_scale`], in `lod_eye`'s w) and
    /// the global `bias` (its bits in `padding`); `None` leaves every such record's level
    /// drawn.
    pub fn with_distance_lod(mut self, lod: Option<DistanceLod>) -> CullView {
        if let Some(DistanceLod { eye, scale, bias }) = lod {
            self.lod_eye = eye.extend(scale).to_array();
            self.padding = bias.to_bits();
            self.flags |= CULL_LOD_DISTANCE;
        }
        self
    }

    /// The camera's view for the meshlet cull: as [`CullView::camera`] with `settings`' tests,
    /// the eye of a perspective view for the cone test (an orthographic one has none) and
    /// the meshlet margins of [`ClusterMargins::GPU`].
    pub fn cluster(frame_view: &FrameView, hiz_size: vk::Extent2D, settings: ClusterSettings) -> CullView {
        let view_projection = frame_view.view_projection();
        let mut view = CullView::camera(frame_view, hiz_size, settings.frustum, settings.occlusion);
        let eye = view_eye(&view_projection);
        view.eye = eye.map_or([0.0; 4], |eye| [eye.x, eye.y, eye.z, 1.0]);
        let trusted = Frustum::from_view_projection(view_projection).is_finite();
        if settings.cone && eye.is_some() && trusted {
            view.flags |= CULL_CONE;
        }
        let margins = ClusterMargins::GPU;
        view.depth_margin = margins.depth;
        view.footprint_margin = margins.footprint;
        view.bounds_margin = margins.bounds;
        view.cone_margin = margins.cone;
        view
    }
}

/// Mips of the pyramid of an `image`-sized depth whose texels inside `rect` (left, top, width,
/// height) cover pixels of `rect` alone: each edge of the rectangle inside the image must fall
/// between texels at every such mip (a multiple of the mip's texel side, left of the image's
/// last texel, which covers the remainder of an odd size). At least 1 (mip 0), at most the
/// rectangle's own full chain; a rectangle as large as the image gets the image's chain.
pub fn rect_mips([x, y, width, height]: [u32; 4], image: vk::Extent2D) -> u32 {
    let own = render_graph::full_mip_chain(vk::Extent2D { width: width.max(1), height: height.max(1) });
    let between_texels = |edges: [u32; 2], size: u32, mip: u32| {
        edges
            .into_iter()
            .filter(|&edge| edge != 0 && edge < size)
            .all(|edge| mip < 32 && edge.trailing_zeros() >= mip && (edge >> mip) < (size >> mip))
    };
    let mut mips = 1;
    while mips < own
        && between_texels([x, x.saturating_add(width)], image.width, mips)
        && between_texels([y, y.saturating_add(height)], image.height, mips)
    {
        mips += 1;
    }
    mips
}

/// A view's side of the distance rule of levels of detail, with the exact bits the CPU picked
/// its levels with ([`culling::ViewVisibility::lod_distance_view`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceLod {
    /// The eye the distances are measured from.
    pub eye: glam::Vec3,
    /// The projection's field-of-view scale ([`culling::lod_scale`]).
    pub scale: f32,
    /// The global bias ([`ecs::RenderSettings::effective_lod_bias`]).
    pub bias: f32,
}

/// The push constants of every cull dispatch (`CullConstants` in `cull_inputs.h`, 36 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CullConstants {
    /// Items to test: object slots, or (object, meshlet) pairs.
    pub item_count: u32,
    /// Views staged for the dispatch.
    pub view_count: u32,
    /// u32 words of each view's bits and history.
    pub words_per_view: u32,
    /// Commands each view's list has room for (shadow views).
    pub region: u32,
    /// The object cull draws only objects from this slot on (cluster culling draws the ones
    /// below it meshlet by meshlet).
    pub draw_from: u32,
    /// Pairs that are meshlets (the survivor pass counts them once).
    pub meshlet_pairs: u32,
    /// Objects the cluster tables cover.
    pub object_count: u32,
    /// 1 when the camera's object cull batches its lists (one instanced command per (mesh,
    /// level, material), `gpu_cull.h`), else 0.
    pub batched: u32,
    /// The view of the dispatch's first row of workgroups (`gl_WorkGroupID.y` 0): the camera's
    /// object cull dispatches each window view on its own, to time it (0 otherwise).
    pub first_view: u32,
}

const _: () = assert!(size_of::<CullConstants>() == 36, "CullConstants must match cull_inputs.h");

impl CullConstants {
    /// The constants as push-constant words, in field order.
    pub fn words(&self) -> [u32; 9] {
        [
            self.item_count,
            self.view_count,
            self.words_per_view,
            self.region,
            self.draw_from,
            self.meshlet_pairs,
            self.object_count,
            self.batched,
            self.first_view,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn camera_matrix() -> FrameView {
        let view = Mat4::look_at_rh(Vec3::new(0.0, 2.0, 8.0), Vec3::ZERO, Vec3::Y);
        FrameView::from_view_projection(Mat4::perspective_infinite_reverse_rh(1.0, 16.0 / 9.0, 0.1) * view)
    }

    #[test]
    fn the_camera_is_culled_in_two_phases_against_the_whole_pyramid() {
        let extent = vk::Extent2D { width: 640, height: 360 };
        let view = CullView::camera(&camera_matrix(), extent, true, true);
        assert_eq!(view.flags, CULL_FRUSTUM | CULL_OCCLUSION | CULL_TWO_PHASE);
        assert_eq!(view.pyramid, [0.0, 0.0, 640.0, 360.0]);
        assert_eq!(view.pyramid_mips, render_graph::full_mip_chain(extent));
        assert_eq!(view.plane_count, 5, "an infinite far plane gives five planes");
        let off = CullView::camera(&camera_matrix(), extent, true, false);
        assert_eq!(off.flags, CULL_FRUSTUM | CULL_TWO_PHASE, "occlusion off keeps the two phases");
    }

    #[test]
    fn a_split_screen_view_reads_only_mips_whose_texels_stay_inside_it() {
        let window = vk::Extent2D { width: 1280, height: 720 };
        // 640 = 5 * 128: texels up to 128 wide end at the halves' edge, 256 wide ones cross it.
        assert_eq!(rect_mips([0, 0, 640, 720], window), 8);
        assert_eq!(rect_mips([640, 0, 640, 720], window), 8);
        assert_eq!(rect_mips([0, 0, 1280, 720], window), render_graph::full_mip_chain(window));
        // An edge at an odd pixel: mip 0 alone.
        assert_eq!(rect_mips([0, 0, 639, 720], vk::Extent2D { width: 1279, height: 720 }), 1);
        // The image's last texel covers its remainder: at mip 6 (64 wide) texel 9 covers
        // 576..700, across 640.
        let narrow = vk::Extent2D { width: 700, height: 720 };
        assert_eq!(rect_mips([0, 0, 640, 720], narrow), 6);
        let view = CullView::window(camera_matrix().view_projection(), [640, 0, 640, 720], window, true, true);
        assert_eq!(view.pyramid, [640.0, 0.0, 640.0, 720.0]);
        assert_eq!(view.pyramid_mips, 8);
        assert_eq!(view.flags, CULL_FRUSTUM | CULL_OCCLUSION | CULL_TWO_PHASE);
    }

    #[test]
    fn a_view_that_cannot_be_trusted_tests_nothing() {
        let extent = vk::Extent2D { width: 64, height: 64 };
        let nan = FrameView::from_view_projection(Mat4::from_cols_array(&[f32::NAN; 16]));
        let view = CullView::camera(&nan, extent, true, true);
        assert_eq!(view.flags, CULL_TWO_PHASE, "no frustum, no occlusion: every object kept");
        let cluster = CullView::cluster(&nan, extent, ClusterSettings::default());
        assert_eq!(cluster.flags & (CULL_FRUSTUM | CULL_OCCLUSION | CULL_CONE), 0);
    }

    #[test]
    fn a_perspective_cluster_view_has_its_eye_and_cone_test() {
        let extent = vk::Extent2D { width: 64, height: 64 };
        let view = CullView::cluster(&camera_matrix(), extent, ClusterSettings::default());
        assert!(view.flags & CULL_CONE != 0);
        let eye = Vec3::new(view.eye[0], view.eye[1], view.eye[2]);
        assert!((eye - Vec3::new(0.0, 2.0, 8.0)).length() < 1e-3, "{eye}");
        assert_eq!(view.eye[3], 1.0);
        let orthographic = FrameView::from_view_projection(Mat4::orthographic_rh(-4.0, 4.0, -4.0, 4.0, 50.0, 0.1));
        let flat = CullView::cluster(&orthographic, extent, ClusterSettings::default());
        assert_eq!(flat.flags & CULL_CONE, 0, "an orthographic view has no eye");
    }
}

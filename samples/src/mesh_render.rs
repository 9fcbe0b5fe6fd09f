//! Drawing a frame's [`Visibility`] with real meshes through the engine's reference renderer
//! ([`renderer::truth::ReferenceRenderer`]): object `i` is drawn with the mesh its level of
//! detail chose at its world matrix, in a colour the caller gives.
//!
//! Each frame is drawn twice, with the visible list and with every drawable object, and the
//! two images are compared pixel for pixel: culling must never hide what the camera sees.
//! The samples add a cluster-culling renderer beside it ([`crate::cluster_render`]).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use culling::Visibility;

use crate::cluster_render::ClusterRenderer;
use render_graph::device::GpuDevice;
use renderer::truth::{differing_pixels, ReferenceRenderer};
use renderer::MeshLibrary;

/// What went wrong while drawing, as text for a report.
pub type RenderError = Box<dyn std::error::Error>;

/// What one checked frame drew.
#[derive(Clone, Debug, Default)]
pub struct MeshFrame {
    /// Objects drawn with culling on.
    pub drawn: usize,
    /// Objects drawn with culling off.
    pub drawn_without_culling: usize,
    /// Triangles drawn with culling on.
    pub triangles: u64,
    /// Pixels that differ between the two images (0 is the only right answer).
    pub differing_pixels: usize,
    /// GPU milliseconds of each pass of the culled frame, by the pass's name in
    /// `GraphStats` (`None` where the device has no timestamps).
    pub gpu_ms: Vec<(String, Option<f64>)>,
    /// Bytes the culled frame uploaded (object records and the draw list).
    pub uploaded_bytes: u64,
}

/// The engine's reference renderer with the samples' cluster renderer beside it: every
/// method of [`ReferenceRenderer`] is this one's (through `Deref`).
pub struct MeshRenderer {
    reference: ReferenceRenderer,
    /// The cluster-culling renderer beside this one, made on first use
    /// ([`crate::cluster_render::report_frame`]).
    clusters: Option<ClusterRenderer>,
}

impl Deref for MeshRenderer {
    type Target = ReferenceRenderer;

    fn deref(&self) -> &ReferenceRenderer {
        &self.reference
    }
}

impl DerefMut for MeshRenderer {
    fn deref_mut(&mut self) -> &mut ReferenceRenderer {
        &mut self.reference
    }
}

impl From<ReferenceRenderer> for MeshRenderer {
    fn from(reference: ReferenceRenderer) -> MeshRenderer {
        MeshRenderer { reference, clusters: None }
    }
}

impl MeshRenderer {
    /// See [`ReferenceRenderer::with_shadows`].
    pub fn with_shadows(
        device: Arc<GpuDevice>,
        size: (u32, u32),
        capacity: u32,
        meshes: MeshLibrary,
        clear_color: [f32; 4],
        shadow_atlas: u32,
    ) -> Result<MeshRenderer, RenderError> {
        let reference = ReferenceRenderer::with_shadows(device, size, capacity, meshes, clear_color, shadow_atlas)?;
        Ok(MeshRenderer::from(reference))
    }

    /// Takes the cluster renderer kept beside this one (put it back after use).
    pub(crate) fn take_clusters(&mut self) -> Option<ClusterRenderer> {
        self.clusters.take()
    }

    /// Keeps `clusters` for the next frame.
    pub(crate) fn put_clusters(&mut self, clusters: ClusterRenderer) {
        self.clusters = Some(clusters);
    }

    /// Draws the frame's visible objects, object `i` in `color_of(i)` (RGBA8 packed), and
    /// for the check every drawable object; returns the culled image (RGBA8, rows top first).
    pub fn render_and_check(
        &mut self,
        visibility: &Visibility,
        color_of: impl Fn(usize) -> u32,
    ) -> Result<(Vec<u8>, MeshFrame), RenderError> {
        let view = visibility.view().ok_or("no camera this frame: nothing to draw")?;
        let triangles = self.reference.upload(visibility, color_of)?;
        let view_projection = (view.projection * view.view).to_cols_array_2d();
        self.reference.collect_drawable(visibility);
        let culled = self.reference.draw_list(view_projection, visibility.visible())?;
        let gpu_ms =
            self.reference.graph().stats().passes.iter().map(|pass| (pass.name.clone(), pass.gpu_ms)).collect();
        let upload = self.reference.last_upload();
        let all = self.reference.drawable().to_vec();
        let reference = self.reference.draw_list(view_projection, &all)?;
        let frame = MeshFrame {
            drawn: visibility.visible().len(),
            drawn_without_culling: all.len(),
            triangles: visibility.visible().iter().map(|&object| triangles[object as usize]).sum(),
            differing_pixels: differing_pixels(&culled, &reference),
            gpu_ms,
            uploaded_bytes: upload.bytes + upload.draw_bytes,
        };
        Ok((culled, frame))
    }
}

//! What the shadow views of a frame drew, as the frame's [`RenderReport`](super::RenderReport)
//! carries it.

/// What the shadow views of a frame drew (see [`RenderReport::shadows`](super::RenderReport::shadows)).
///
/// Culled on the host, it is the frame's own, taken when the frame is prepared. Culled on
/// the GPU ([`ShadowReport::on_device`]), the counts are the GPU's and come back like
/// [`RenderReport::gpu`](super::RenderReport::gpu), for frame [`RenderReport::bits_frame`](super::RenderReport::bits_frame).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShadowReport {
    /// Each view in [`culling::ShadowViews::views`] order.
    pub views: Vec<crate::ShadowViewDraws>,
    /// Whether the GPU culled the casters (`ShadowCullPass`).
    pub on_device: bool,
    /// Culled on the GPU with the bits read back: each view's caster bits by slot, u64 words
    /// (bit `s % 64` of word `s / 64` = slot `s`), [`ShadowReport::words_per_view`] words a
    /// view; see [`ShadowReport::view_bits`].
    pub bits: Vec<u64>,
    /// u64 words of each view's bits in [`ShadowReport::bits`].
    pub words_per_view: usize,
    /// GPU milliseconds of the shadow cull (both phases), of the shadow atlas passes (both)
    /// and of the atlas's pyramid, on the GPU backend, of the newest frame whose times are
    /// known (`None` without timestamps, or for passes the frame does not have).
    pub gpu_ms: [Option<f64>; 3],
}

impl ShadowReport {
    /// Takes the views of `frame` (no allocation once the view count was reached).
    pub fn update(&mut self, frame: &crate::ShadowFrame) {
        self.views.clear();
        self.views.extend_from_slice(frame.views());
        self.on_device = false;
        self.bits.clear();
        self.words_per_view = 0;
    }

    /// Casters tested, summed over the views (each view tests every caster).
    pub fn casters_tested(&self) -> u64 {
        self.views.iter().map(|view| u64::from(view.casters)).sum()
    }

    /// Caster draws, summed over the views.
    pub fn draws(&self) -> u64 {
        self.views.iter().map(|view| u64::from(view.count)).sum()
    }

    /// Triangles of the caster draws, summed over the views.
    pub fn triangles(&self) -> u64 {
        self.views.iter().map(|view| view.triangles).sum()
    }

    /// View `view`'s caster bits by slot (see [`ShadowReport::bits`]); empty when they were
    /// not read back.
    pub fn view_bits(&self, view: usize) -> &[u64] {
        let start = view * self.words_per_view;
        self.bits.get(start..start + self.words_per_view).unwrap_or(&[])
    }
}

//! Which processor culls: [`CullingBackend`] (what the game asks for) and [`CullingChoice`]
//! (what it got, and why).
//!
//! With the GPU backend the Visibility stage still picks LOD, writes the per-object columns
//! (the boxes the GPU culls) and the lists of drawable objects, and keeps its frustum test
//! (cheap, and the same bits as the GPU's for the same boxes), so `visible`, `state_of` and
//! the `Culled` tags are this frame's on every backend. Under `ecs::CpuAnswers::OnRequest`
//! it keeps only the columns of what changed, and answers `state_of` when asked. Occlusion is left to the GPU culling
//! passes (the `renderer` crate), whose answer is in `visibility_bits`, and reaches the host's
//! answer only through [`GpuFeedback`].

/// The culling backend a game asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CullingBackend {
    /// Cull in the Visibility stage on the CPU.
    Cpu,
    /// Cull on the GPU; an error where no device is usable.
    Gpu,
    /// The GPU where a device is usable, else the CPU (with the reason).
    #[default]
    Auto,
}

/// Set to `1` to act as if no Vulkan device were usable for culling: `Auto` falls back to
/// the CPU and `Gpu` fails (tests of the fallback use it).
pub const FORCE_CPU_CULLING_ENV: &str = "ENGINE_CPU_CULLING";

/// Whether [`FORCE_CPU_CULLING_ENV`] is set to `1`.
pub fn cpu_culling_forced() -> bool {
    std::env::var(FORCE_CPU_CULLING_ENV).is_ok_and(|value| value == "1")
}

/// What culling runs on, decided once when rendering is installed; a resource the
/// Visibility stage reads (without it, the stage culls on the CPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CullingChoice {
    /// What was asked for.
    pub requested: CullingBackend,
    /// Whether the GPU culls (frustum and occlusion leave the Visibility stage).
    pub on_device: bool,
    /// Why the CPU culls although the GPU was acceptable (no device, forced by the
    /// environment); `None` when the request was met as asked.
    pub reason: Option<String>,
}

/// The GPU's visibility bits of an earlier frame, fed back to the Visibility stage: a
/// resource written at the start of each frame (Input stage, `renderer::READBACK_SYSTEM`)
/// when the host asked for the bits (see `renderer::BitsReadback`).
///
/// With it, the GPU backend keeps the (cheap, bit-identical) frustum test on the CPU, so
/// `Culled` tags and the lists are this frame's, and takes occlusion from these bits:
/// an object in the frustum whose GPU bit is clear is occluded, so it leaves `visible` and
/// carries `Occluded` (see [`GpuFeedback::in_view`]). **Latency:** the bits are those of frame [`GpuFeedback::frame`]: with
/// the lagged readback, the previous frame whenever its fence had signalled when this frame
/// started (no stall; asked, not waited for), else the newest finished frame, never more than
/// `FRAMES_IN_FLIGHT + 1` frames back; with the waiting readback, always the previous frame.
/// Slots past the bits' length count as visible. A slot whose object appeared after the bits'
/// frame (a new entity in a freed slot, or an object that became drawable) has no answer of
/// its own in them: the Visibility stage ignores its bit in the frame it appears, and the
/// Render stage clears its [`GpuFeedback::in_view`] bit from then on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuFeedback {
    /// The game frame (its `FrameTime::frame_index`) the bits were computed in; `None` until
    /// a frame has been read back.
    pub frame: Option<u64>,
    /// Bit `i` of word `i / 64` set when the GPU found slot `i` visible.
    pub visible: Vec<u64>,
    /// Bit `i` set when slot `i` passed the CPU's culls other than occlusion in the same
    /// frame (the frustum answer the GPU shares bit for bit): only these objects can have
    /// been hidden by occlusion, so a clear GPU bit counts as occluded only where this bit
    /// is set. An object outside that frame's frustum that enters the view is thus not
    /// taken for occluded. Words past its length count as all set.
    pub in_view: Vec<u64>,
}

/// What the GPU's bits read back say of one slot ([`GpuFeedback::verdict`]): the GPU path's
/// answer to "why is this object not drawn?", with its latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuVerdict {
    /// The game frame the bits were computed in.
    pub frame: u64,
    /// Frames from that frame to the one asking: the readback's latency.
    pub frames_late: u64,
    /// The GPU found the slot visible (its bit is set, or the slot is past the bits).
    pub visible: bool,
    /// The slot passed the CPU's culls other than occlusion in that frame: only then does a
    /// clear GPU bit mean occluded.
    pub in_view: bool,
}

impl GpuVerdict {
    /// Whether the GPU's occlusion test hid the slot in [`GpuVerdict::frame`].
    pub fn occluded(&self) -> bool {
        self.in_view && !self.visible
    }
}

impl GpuFeedback {
    /// What the bits say of `slot`, asked in game frame `now`; `None` until a frame has been
    /// read back. The slot's object may have appeared since the bits' frame (see the type's
    /// docs): the bits then speak of the slot's earlier object, which the Visibility stage
    /// ignores for it.
    ///
    /// ```
    /// let feedback = culling::GpuFeedback { frame: Some(9), visible: vec![0b01], in_view: vec![0b11] };
    /// assert!(!feedback.verdict(0, 10).unwrap().occluded());
    /// let hidden = feedback.verdict(1, 10).unwrap();
    /// assert!(hidden.occluded() && hidden.frames_late == 1);
    /// assert!(!feedback.verdict(500, 10).unwrap().occluded(), "past the bits: visible");
    /// assert_eq!(culling::GpuFeedback::default().verdict(0, 10), None);
    /// ```
    pub fn verdict(&self, slot: u32, now: u64) -> Option<GpuVerdict> {
        let frame = self.frame?;
        let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        let set = |words: &[u64]| words.get(word).is_none_or(|&bits| bits & bit != 0);
        Some(GpuVerdict {
            frame,
            frames_late: now.saturating_sub(frame),
            visible: set(&self.visible),
            in_view: set(&self.in_view),
        })
    }
}

/// The GPU backend was required and cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoGpuCulling {
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for NoGpuCulling {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "GPU culling was required but cannot run: {}", self.reason)
    }
}

impl std::error::Error for NoGpuCulling {}

impl CullingBackend {
    /// Decides the backend given whether a device is usable (`Err` with the reason when
    /// not). [`FORCE_CPU_CULLING_ENV`] counts as no device.
    ///
    /// ```
    /// use culling::{CullingBackend, CullingChoice};
    /// let choice = CullingBackend::Auto.resolve(Err(String::from("no Vulkan loader"))).unwrap();
    /// assert!(!choice.on_device);
    /// assert_eq!(choice.reason.as_deref(), Some("no Vulkan loader"));
    /// assert!(CullingBackend::Gpu.resolve(Err(String::from("no device"))).is_err());
    /// ```
    pub fn resolve(self, device: Result<(), String>) -> Result<CullingChoice, NoGpuCulling> {
        let device =
            if cpu_culling_forced() { Err(format!("{FORCE_CPU_CULLING_ENV}=1 forces CPU culling")) } else { device };
        match (self, device) {
            (CullingBackend::Cpu, _) => Ok(CullingChoice { requested: self, on_device: false, reason: None }),
            (_, Ok(())) => Ok(CullingChoice { requested: self, on_device: true, reason: None }),
            (CullingBackend::Gpu, Err(reason)) => Err(NoGpuCulling { reason }),
            (CullingBackend::Auto, Err(reason)) => {
                Ok(CullingChoice { requested: self, on_device: false, reason: Some(reason) })
            }
        }
    }
}

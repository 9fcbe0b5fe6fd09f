//! [`TwoPhaseCull`]: the pass every two-phase cull is, specialised by a [`CullKind`] (the
//! camera's objects, the shadow casters, the meshlets), as its shaders specialise
//! `two_phase_cull.h`.
//!
//! The skeleton owns what the three share: the pipeline of each phase, the common inputs
//! (bindings 0-3: the frame's [`CullView`]s staged each frame, `object_transforms`,
//! `object_records`, last frame's bits; binding 4 in the late phase: the depth pyramid), the
//! [`CullConstants`] pushed with the dispatch, and the order of the work (register, stage the
//! views, bind, dispatch). The kind adds its own resources (bound after the common inputs, in
//! the order its shader declares them from `CULL_KIND_BINDING`), chooses its views and
//! constants each frame from the frame's parameters (the camera's
//! [`FrameView`](crate::FrameView), the [`ShadowFrame`](crate::ShadowFrame)'s light views),
//! and records its dispatch.

use std::sync::Arc;

use render_graph::{
    Binding, BindingKind, BufferRead, BufferWrite, ComputePipeline, ExecuteContext, GpuDevice, ImageRead,
    PrepareContext, Registry, ShaderStage, TypedPass,
};

use super::view::{CullConstants, CullView};
use crate::names::{OBJECT_RECORDS, OBJECT_TRANSFORMS};
use crate::scene::{as_bytes, lock_scene, GpuScene, SharedScene};

/// Which half of two-phase culling a pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CullPhase {
    /// Last frame's visible items in this frame's views, drawn first (this frame's
    /// occluders); views of one phase are decided here.
    Early,
    /// Every item of the two-phase views against the pyramid of the early depth; writes
    /// their bits (next frame's history).
    Late,
}

/// The bindings every cull shader starts with (`cull_inputs.h`): the views, the objects'
/// transforms and records, last frame's bits.
const COMMON_BINDINGS: [BindingKind; 4] = [BindingKind::StorageBuffer; 4];

/// Most bindings a cull shader has.
const MAX_BINDINGS: usize = 16;

/// What a cull specialises in [`TwoPhaseCull`]: its names, shaders and resources, the views
/// and constants of each frame, and its dispatch.
pub trait CullKind: Send + 'static {
    /// Handles of the kind's own resources, bound after the common inputs.
    type Handles: Send + 'static;

    /// The bits whose last frame's version is the history every phase reads (binding 3).
    const HISTORY: &'static str;
    /// The pyramid the late phase tests against (binding 4).
    const PYRAMID: &'static str;

    /// The pass's name in `phase`.
    fn name(&self, phase: CullPhase) -> &str;

    /// The name of the history's bits: [`CullKind::HISTORY`], unless the kind's instances
    /// each have their own (an image-target view's cull).
    fn history_name(&self) -> &str {
        Self::HISTORY
    }

    /// The name of the pyramid: [`CullKind::PYRAMID`], unless the kind's instances each
    /// have their own (an image-target view's cull).
    fn pyramid_name(&self) -> &str {
        Self::PYRAMID
    }

    /// The shader of `phase` and the kinds of its own bindings, in order.
    fn shader(&self, phase: CullPhase) -> (&'static [u32], &'static [BindingKind]);

    /// Declares the kind's own resources and accesses in `phase`.
    fn register(&mut self, phase: CullPhase, registry: &mut Registry<'_>) -> Self::Handles;

    /// This frame's views (pushed into `views`, at least one, made from the frame's
    /// parameters) and constants; `None` when there is nothing to cull, and the pass records
    /// nothing (a missing parameter fails the frame).
    fn prepare(
        &mut self,
        phase: CullPhase,
        context: &mut PrepareContext<'_>,
        views: &mut Vec<CullView>,
    ) -> Option<CullConstants>;

    /// The kind's bindings, in the order of its shader (`bind` is called once per handle).
    fn bind(&self, handles: &Self::Handles, bind: &mut dyn FnMut(Binding));

    /// Records the dispatch over `constants.item_count` items (direct or indirect), after the
    /// skeleton bound the pipeline and pushed the constants.
    fn dispatch(&self, handles: &Self::Handles, constants: &CullConstants, context: &mut ExecuteContext<'_>);

    /// Steps past the first that [`CullKind::register`] declared (`Registry::next_step`),
    /// e.g. one per further view dispatched on its own; the skeleton begins those the
    /// dispatch did not (a frame with fewer views, or nothing to cull), as the graph requires.
    fn steps(&self) -> u32 {
        0
    }
}

/// The common inputs of a cull pass (bindings 0-4, the views staged each frame).
pub struct CullInputs {
    transforms: BufferRead,
    records: BufferRead,
    history: BufferRead,
    /// The late phase's pyramid (the early phase has none).
    pyramid: Option<ImageRead>,
}

/// One phase of a two-phase cull of kind `K` (see the module docs). Add it with
/// [`RenderGraph::add_typed_pass`](render_graph::RenderGraph::add_typed_pass).
pub struct TwoPhaseCull<K: CullKind> {
    phase: CullPhase,
    pipeline: ComputePipeline,
    kind: K,
    /// This frame's views, reused across frames.
    views: Vec<CullView>,
    /// This frame's staged views and constants; `None` when nothing is culled.
    staged: Option<(Binding, CullConstants)>,
}

impl<K: CullKind> TwoPhaseCull<K> {
    /// The pass of `phase` of `kind`, with the pipeline of its shader.
    pub fn with_kind(device: &Arc<GpuDevice>, kind: K, phase: CullPhase) -> render_graph::Result<Self> {
        let (words, own) = kind.shader(phase);
        let mut bindings = COMMON_BINDINGS.to_vec();
        if phase == CullPhase::Late {
            bindings.push(BindingKind::SampledImage);
        }
        bindings.extend_from_slice(own);
        let constant_bytes = std::mem::size_of::<CullConstants>() as u32;
        let pipeline = ComputePipeline::new(device, kind.name(phase), words, &bindings, constant_bytes)?;
        Ok(TwoPhaseCull { phase, pipeline, kind, views: Vec::new(), staged: None })
    }

    /// The phase the pass runs.
    pub fn phase(&self) -> CullPhase {
        self.phase
    }

    /// The kind the pass specialises.
    pub fn kind(&self) -> &K {
        &self.kind
    }

    /// The kind, to set it up before the pass is added.
    pub(crate) fn kind_mut(&mut self) -> &mut K {
        &mut self.kind
    }
}

impl<K: CullKind> TypedPass for TwoPhaseCull<K> {
    type Handles = (CullInputs, K::Handles);

    fn name(&self) -> &str {
        self.kind.name(self.phase)
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        const COMPUTE: ShaderStage = ShaderStage::Compute;
        let transforms = registry.buffer(OBJECT_TRANSFORMS);
        let records = registry.buffer(OBJECT_RECORDS);
        let history = registry.history_buffer(self.kind.history_name());
        let pyramid = (self.phase == CullPhase::Late).then(|| {
            let pyramid = registry.image(self.kind.pyramid_name());
            registry.sample(pyramid, COMPUTE)
        });
        let inputs = CullInputs {
            transforms: registry.read_storage_buffer(transforms, COMPUTE),
            records: registry.read_storage_buffer(records, COMPUTE),
            history: registry.read_storage_buffer(history, COMPUTE),
            pyramid,
        };
        (inputs, self.kind.register(self.phase, registry))
    }

    fn prepare(&mut self, _handles: &Self::Handles, context: &mut PrepareContext<'_>) {
        self.staged = None;
        self.views.clear();
        let Some(mut constants) = self.kind.prepare(self.phase, context, &mut self.views) else { return };
        if self.views.is_empty() {
            return;
        }
        constants.view_count = self.views.len() as u32;
        match context.stage_data(as_bytes(&self.views)) {
            Ok(views) => self.staged = Some((views, constants)),
            Err(error) => context.fail(error),
        }
    }

    fn execute(&mut self, (inputs, handles): &Self::Handles, context: &mut ExecuteContext<'_>) {
        self.record(inputs, handles, context);
        while context.step() < self.kind.steps() {
            context.next_step();
        }
    }
}

impl<K: CullKind> TwoPhaseCull<K> {
    /// Binds the pipeline and the inputs, pushes the constants and lets the kind dispatch
    /// (nothing when nothing is staged).
    fn record(&self, inputs: &CullInputs, handles: &K::Handles, context: &mut ExecuteContext<'_>) {
        let Some((views, constants)) = self.staged else { return };
        let mut bindings = [views; MAX_BINDINGS];
        let mut count = 1;
        let mut push = |binding: Binding| {
            if let Some(slot) = bindings.get_mut(count) {
                *slot = binding;
            }
            count += 1;
        };
        push(Binding::buffer(inputs.transforms));
        push(Binding::buffer(inputs.records));
        push(Binding::buffer(inputs.history));
        if let Some(pyramid) = inputs.pyramid {
            push(Binding::image(pyramid));
        }
        self.kind.bind(handles, &mut push);
        assert!(
            count <= MAX_BINDINGS,
            "a cull shader has at most {MAX_BINDINGS} bindings, {} has {count}",
            self.kind.name(self.phase)
        );
        context.bind_compute(&self.pipeline, &bindings[..count]);
        context.push_constants(&constants.words());
        self.kind.dispatch(handles, &constants, context);
    }
}

/// Creates the buffers a cull writes each frame and zeroes them before its early phase: the
/// reset of each cull kind ([`CullResetPass::objects`], [`CullResetPass::shadows`],
/// [`CullResetPass::clusters`]).
pub struct CullResetPass {
    name: &'static str,
    /// Each buffer's name, size in bytes, and whether it is zeroed each frame (a draw list
    /// that is only appended to is not: its count says how much of it is used).
    buffers: Vec<(&'static str, u64, bool)>,
    /// The scene that sizes the buffers at each compile, with the reset of a scene (see
    /// [`CullResetPass::following`]); `None`: the sizes are fixed.
    follows: Option<(SharedScene, ResetOfScene)>,
}

/// The reset of the buffers for a scene as it is (its capacity, its cluster tables).
type ResetOfScene = Box<dyn Fn(&GpuScene) -> CullResetPass + Send>;

impl CullResetPass {
    /// Name of the object cull's reset.
    pub const OBJECTS: &'static str = "gpu cull reset";
    /// Name of the shadow cull's reset.
    pub const SHADOWS: &'static str = "shadow cull reset";
    /// Name of the cluster cull's reset.
    pub const CLUSTERS: &'static str = "cluster cull reset";

    /// A reset of the buffers `(name, bytes, zeroed each frame)`, named `name`.
    pub(crate) fn new(name: &'static str, buffers: Vec<(&'static str, u64, bool)>) -> CullResetPass {
        CullResetPass { name, buffers, follows: None }
    }

    /// The same reset with its buffers sized again at every compile from `scene` as it is
    /// then, as `reset(scene)` sizes them: the scene grows (its capacity, its cluster
    /// tables), and the graph compiles again when it does.
    pub fn following(
        mut self,
        scene: SharedScene,
        reset: impl Fn(&GpuScene) -> CullResetPass + Send + 'static,
    ) -> Self {
        self.follows = Some((scene, Box::new(reset)));
        self
    }
}

impl TypedPass for CullResetPass {
    type Handles = Vec<BufferWrite>;

    fn name(&self) -> &str {
        self.name
    }

    fn register(&mut self, registry: &mut Registry<'_>) -> Vec<BufferWrite> {
        if let Some((scene, reset)) = &self.follows {
            self.buffers = reset(&lock_scene(scene)).buffers;
        }
        let declare = |&(name, size, _): &(&'static str, u64, bool)| {
            let buffer = registry.create_buffer(name, render_graph::BufferDesc { size });
            registry.write_buffer(buffer, render_graph::Access::TransferWrite)
        };
        self.buffers.iter().map(declare).collect()
    }

    fn execute(&mut self, handles: &Vec<BufferWrite>, context: &mut ExecuteContext<'_>) {
        for (handle, &(_, _, zeroed)) in handles.iter().zip(&self.buffers) {
            if zeroed {
                context.fill_buffer(handle, 0, render_graph::vk::WHOLE_SIZE, 0);
            }
        }
    }
}

//! The error type of the render graph crate.

use std::fmt;

use ash::vk;

use crate::access::MipRange;

/// Everything that can go wrong while creating the device, allocating memory, compiling or
/// running the graph.
#[derive(Clone, Debug)]
pub enum GraphError {
    /// The Vulkan loader library could not be found or loaded.
    LoaderMissing(String),
    /// A Vulkan call failed; `call` names it.
    Vulkan {
        /// The failing call, e.g. `vkCreateInstance`.
        call: &'static str,
        /// The result it returned.
        result: vk::Result,
    },
    /// No physical device meets the requirements; the string says what each candidate lacked.
    NoSuitableDevice(String),
    /// gpu-allocator could not satisfy an allocation.
    Allocation(String),
    /// Passes depend on each other in a circle; the names are the passes in the cycle.
    Cycle(Vec<String>),
    /// A pass refers to a resource that no pass creates and nobody imported.
    MissingResource {
        /// The pass that refers to it.
        pass: String,
        /// The resource name.
        resource: String,
        /// The created or imported resource whose name is nearest, if one is near (a typo).
        nearest: Option<String>,
    },
    /// A pass was placed at an insertion point the graph does not have
    /// ([`crate::RenderGraph::add_typed_pass_at`]).
    UnknownInsertionPoint {
        /// The pass.
        pass: String,
        /// The point asked for.
        point: String,
        /// The points the graph has, in order.
        known: Vec<String>,
        /// The known point whose name is nearest, if one is near.
        nearest: Option<String>,
        /// Where the pass was added (`file:line`).
        site: String,
    },
    /// Two insertion points have the same name.
    DuplicateInsertionPoint(String),
    /// A pass pushed constants that do not fit its pipeline's push-constant block (or are not
    /// a whole number of 4-byte words).
    PushConstantSize {
        /// The pass.
        pass: String,
        /// Bytes pushed.
        bytes: usize,
        /// Bytes the pipeline's block holds.
        capacity: u32,
    },
    /// A shader does not fit its pipeline's layout: a descriptor it uses is missing from the
    /// pipeline's bindings or of another kind, or its push constants are larger than the
    /// pipeline's block (checked at pipeline creation by reading the SPIR-V).
    ShaderMismatch {
        /// The pipeline's name.
        pipeline: String,
        /// The shader stage (`compute`, `vertex`, `fragment`).
        stage: &'static str,
        /// The binding, when the mismatch is one.
        binding: Option<u32>,
        /// What is wrong: both kinds, or the sizes.
        reason: String,
    },
    /// A pass's `prepare`, `execute` or `record_draw` panicked (a resource it never declared,
    /// an `expect` of its own): the frame is not submitted, the program goes on.
    PassPanicked {
        /// The pass.
        pass: String,
        /// The panic's message.
        message: String,
    },
    /// A pass reads a created resource that no pass writes.
    ReadWithoutWriter {
        /// The reading pass.
        pass: String,
        /// The resource name.
        resource: String,
    },
    /// Two passes create a resource of the same name, or a pass creates one that is also
    /// imported.
    DuplicateResource {
        /// The resource name.
        resource: String,
        /// The passes that create it, in declaration order.
        passes: Vec<String>,
        /// Whether the name is also imported into the graph.
        imported: bool,
    },
    /// Two passes have the same name (names label errors, statistics and captures).
    DuplicatePass {
        /// The name.
        name: String,
        /// Where each pass of that name was added (`file:line`), in declaration order.
        sites: Vec<String>,
    },
    /// A user's pass writes a resource of the engine's without claiming the write
    /// ([`crate::Registry::claim_engine_write`]); see [`crate::Owner`].
    EngineResourceWrite {
        /// The user's pass.
        pass: String,
        /// The engine's resource.
        resource: String,
        /// The engine's pass that writes it (its creator, or the first engine pass writing an
        /// imported resource).
        engine_pass: Option<String>,
    },
    /// A pass placed at an insertion point reads a resource that no pass before it writes
    /// this frame, while a later pass does: an insertion point never moves a pass.
    ReadBeforeWrite {
        /// The reading pass.
        pass: String,
        /// The insertion point it was placed at.
        point: String,
        /// The resource.
        resource: String,
        /// The first pass that writes it, later in the frame.
        writer: String,
    },
    /// A pass creates an image sized relative to the output extent, and that extent has a
    /// zero width or height (e.g. a minimized window).
    ZeroOutputExtent {
        /// The pass that creates the image.
        pass: String,
        /// The image.
        resource: String,
    },
    /// A pass binds or uses a resource whose access it did not declare in `register`.
    UndeclaredAccess {
        /// The pass.
        pass: String,
        /// The resource name.
        resource: String,
    },
    /// A descriptor given at bind time does not fit the pipeline's binding kind or the pass's
    /// declared access.
    BindingMismatch {
        /// The pass.
        pass: String,
        /// The binding index (position in the slice given to the bind call).
        slot: usize,
        /// What is wrong.
        reason: String,
    },
    /// A pass records a command where it cannot run (e.g. a draw outside `record_draw`, an
    /// indexed draw before `bind_index_buffer`).
    InvalidCommand {
        /// The pass.
        pass: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A readback buffer was read while the frame that writes it may still run on the GPU;
    /// call [`crate::RenderGraph::wait_idle`] first.
    ReadbackPending {
        /// The readback buffer.
        buffer: String,
        /// The frame that writes it.
        frame: u64,
    },
    /// A pass declares an access that does not fit the resource (e.g. a vertex-buffer access
    /// to an image) or declares two accesses to one resource.
    InvalidAccess {
        /// The pass.
        pass: String,
        /// The resource name.
        resource: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A pass declares mips an image does not have (see
    /// [`crate::Registry::read_image_mips`]).
    MipRangeOutOfBounds {
        /// The pass.
        pass: String,
        /// The image.
        resource: String,
        /// First mip declared.
        base: u32,
        /// Mips declared ([`ash::vk::REMAINING_MIP_LEVELS`]: every mip from `base`).
        count: u32,
        /// Mips the image has.
        mip_levels: u32,
    },
    /// A pass requires a frame parameter the host did not set
    /// ([`crate::RenderGraph::set_param`], [`crate::PrepareContext::require_param`]).
    MissingParam {
        /// The pass.
        pass: String,
        /// The parameter's type.
        param: &'static str,
    },
    /// A resource description is unusable (zero size, unknown format for the use, …).
    InvalidDescription {
        /// The resource name.
        resource: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The staging ring could not grow to hold an upload this frame (host-visible memory is
    /// exhausted); the frame is not submitted and its uploads stay pending.
    StagingFull {
        /// Bytes requested.
        requested: u64,
        /// What the frame's region held before it tried to grow.
        capacity: u64,
        /// Why the larger region could not be allocated.
        reason: String,
    },
}

impl GraphError {
    /// The pass the error names, when it names one.
    pub fn pass(&self) -> Option<&str> {
        match self {
            GraphError::MissingResource { pass, .. }
            | GraphError::UnknownInsertionPoint { pass, .. }
            | GraphError::PushConstantSize { pass, .. }
            | GraphError::PassPanicked { pass, .. }
            | GraphError::ReadWithoutWriter { pass, .. }
            | GraphError::ZeroOutputExtent { pass, .. }
            | GraphError::UndeclaredAccess { pass, .. }
            | GraphError::BindingMismatch { pass, .. }
            | GraphError::InvalidCommand { pass, .. }
            | GraphError::InvalidAccess { pass, .. }
            | GraphError::MipRangeOutOfBounds { pass, .. }
            | GraphError::MissingParam { pass, .. }
            | GraphError::EngineResourceWrite { pass, .. }
            | GraphError::ReadBeforeWrite { pass, .. } => Some(pass),
            _ => None,
        }
    }

    /// Wraps a failed Vulkan call.
    pub fn vulkan(call: &'static str) -> impl FnOnce(vk::Result) -> GraphError {
        move |result| GraphError::Vulkan { call, result }
    }
}

impl fmt::Display for GraphError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::LoaderMissing(reason) => {
                write!(formatter, "the Vulkan loader could not be loaded: {reason}")
            }
            GraphError::Vulkan { call, result } => write!(formatter, "{call} failed: {result}"),
            GraphError::NoSuitableDevice(reason) => {
                write!(formatter, "no suitable Vulkan device: {reason}")
            }
            GraphError::Allocation(reason) => write!(formatter, "GPU allocation failed: {reason}"),
            GraphError::Cycle(passes) => {
                write!(formatter, "the passes form a cycle: {}", passes.join(" -> "))
            }
            GraphError::MissingResource { .. }
            | GraphError::UnknownInsertionPoint { .. }
            | GraphError::DuplicatePass { .. }
            | GraphError::EngineResourceWrite { .. }
            | GraphError::ReadBeforeWrite { .. } => self.fmt_placement(formatter),
            GraphError::PushConstantSize { pass, bytes, capacity } => write!(
                formatter,
                "pass `{pass}` pushes {bytes} bytes of constants; its pipeline's block takes {capacity} \
                 (in whole 4-byte words)"
            ),
            GraphError::ShaderMismatch { pipeline, stage, binding, reason } => match binding {
                Some(binding) => {
                    write!(formatter, "pipeline `{pipeline}`, {stage} shader, binding {binding}: {reason}")
                }
                None => write!(formatter, "pipeline `{pipeline}`, {stage} shader: {reason}"),
            },
            GraphError::PassPanicked { pass, message } => {
                write!(formatter, "pass `{pass}` panicked: {message}; the frame was not submitted")
            }
            GraphError::DuplicateInsertionPoint(point) => {
                write!(formatter, "two insertion points are named `{point}`; point names must be unique")
            }
            GraphError::ReadWithoutWriter { pass, resource } => {
                write!(formatter, "pass `{pass}` reads resource `{resource}`, which no pass writes")
            }
            GraphError::DuplicateResource { resource, passes, imported } => {
                let creators = passes.iter().map(|pass| format!("`{pass}`")).collect::<Vec<_>>().join(", ");
                if *imported {
                    write!(formatter, "resource `{resource}` is imported and also created by pass {creators}")
                } else {
                    write!(formatter, "resource `{resource}` is created by more than one pass: {creators}")
                }
            }
            GraphError::ZeroOutputExtent { pass, resource } => write!(
                formatter,
                "pass `{pass}` creates `{resource}` relative to the output extent, which is zero; \
                 give the graph a non-zero extent"
            ),
            GraphError::UndeclaredAccess { pass, resource } => {
                write!(formatter, "pass `{pass}` uses resource `{resource}` without declaring an access in register")
            }
            GraphError::BindingMismatch { pass, slot, reason } => {
                write!(formatter, "pass `{pass}`, binding {slot}: {reason}")
            }
            GraphError::InvalidCommand { pass, reason } => write!(formatter, "pass `{pass}`: {reason}"),
            GraphError::ReadbackPending { buffer, frame } => write!(
                formatter,
                "readback buffer `{buffer}` is read before frame {frame}, which writes it, has finished; \
                 call RenderGraph::wait_idle first"
            ),
            GraphError::InvalidAccess { pass, resource, reason } => {
                write!(formatter, "pass `{pass}` cannot access `{resource}`: {reason}")
            }
            GraphError::MipRangeOutOfBounds { pass, resource, base, count, mip_levels } => {
                let levels = MipRange::new(*base, *count);
                write!(formatter, "pass `{pass}` declares {levels} of `{resource}`, which has {mip_levels} mips")
            }
            GraphError::MissingParam { pass, param } => write!(
                formatter,
                "pass `{pass}` needs the frame parameter `{param}`, which was not set; \
                 call RenderGraph::set_param before the frame"
            ),
            GraphError::InvalidDescription { resource, reason } => {
                write!(formatter, "resource `{resource}` is invalid: {reason}")
            }
            GraphError::StagingFull { requested, capacity, reason } => write!(
                formatter,
                "staging ring full: {requested} bytes requested beyond the {capacity} bytes this frame held, \
                 and it could not grow: {reason}"
            ),
        }
    }
}

impl GraphError {
    /// The messages of errors about where passes are and what they may touch: names,
    /// insertion points, duplicates, ownership.
    fn fmt_placement(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::MissingResource { pass, resource, nearest } => {
                write!(
                    formatter,
                    "pass `{pass}` uses resource `{resource}`, which no pass creates and nobody imported"
                )?;
                if let Some(nearest) = nearest {
                    write!(formatter, " (did you mean `{nearest}`?)")?;
                }
                write!(
                    formatter,
                    "; refer to a resource only some frames have with Registry::optional_image or optional_buffer"
                )
            }
            GraphError::UnknownInsertionPoint { pass, point, known, nearest, site } => {
                write!(
                    formatter,
                    "pass `{pass}` (added at {site}) is placed at insertion point `{point}`, which the graph does not have"
                )?;
                if let Some(nearest) = nearest {
                    write!(formatter, " (did you mean `{nearest}`?)")?;
                }
                if known.is_empty() {
                    write!(formatter, "; it has none (the engine's frame adds them)")
                } else {
                    let known = known.iter().map(|point| format!("`{point}`")).collect::<Vec<_>>().join(", ");
                    write!(formatter, "; it has {known}")
                }
            }
            GraphError::DuplicatePass { name, sites } => {
                write!(formatter, "two passes are named `{name}`; pass names must be unique")?;
                if !sites.is_empty() {
                    write!(formatter, " (added at {})", sites.join(" and at "))?;
                }
                Ok(())
            }
            GraphError::EngineResourceWrite { pass, resource, engine_pass } => {
                write!(formatter, "pass `{pass}` writes `{resource}`, which belongs to the engine")?;
                if let Some(engine_pass) = engine_pass {
                    write!(formatter, " (its pass `{engine_pass}` writes it)")?;
                }
                write!(
                    formatter,
                    "; the engine's resources are read-only to other passes: declare a read, or ask for the \
                     write with Registry::claim_engine_write"
                )
            }
            GraphError::ReadBeforeWrite { pass, point, resource, writer } => write!(
                formatter,
                "pass `{pass}` at insertion point `{point}` reads `{resource}`, which pass `{writer}` writes only \
                 later in the frame; an insertion point never moves a pass: place it at a later point, or read \
                 last frame's version (Registry::history_image / history_buffer)"
            ),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for GraphError {}

impl From<gpu_allocator::AllocationError> for GraphError {
    fn from(error: gpu_allocator::AllocationError) -> Self {
        GraphError::Allocation(error.to_string())
    }
}

/// The name of `candidates` nearest to `wanted`, when it is near enough to be what was meant:
/// equal but for case, or within a third of the name's length in edits (transpositions count
/// once), at least one edit allowed; failing that, the shortest name that begins with
/// `wanted` (`hiz` for `hiz_depth`) or with its first word, of three letters or more.
pub(crate) fn nearest_name<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let lowered = wanted.to_lowercase();
    let allowed = (wanted.chars().count() / 3).max(1);
    let candidates: Vec<&str> = candidates.into_iter().filter(|candidate| *candidate != wanted).collect();
    let by_edits = candidates
        .iter()
        .map(|&candidate| {
            let distance = if candidate.to_lowercase() == lowered {
                0
            } else {
                strsim::damerau_levenshtein(&lowered, &candidate.to_lowercase())
            };
            (distance, candidate)
        })
        .filter(|&(distance, _)| distance <= allowed)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate.to_owned());
    by_edits.or_else(|| {
        let first_word = lowered.split(|letter: char| !letter.is_alphanumeric()).next().unwrap_or_default();
        let prefixes: Vec<&str> =
            [lowered.as_str(), first_word].into_iter().filter(|prefix| prefix.chars().count() >= 3).collect();
        candidates
            .iter()
            .filter(|candidate| {
                let candidate = candidate.to_lowercase();
                prefixes.iter().any(|prefix| candidate.starts_with(prefix))
            })
            .min_by_key(|candidate| (candidate.len(), **candidate))
            .map(|candidate| (*candidate).to_owned())
    })
}

/// The result type of this crate.
pub type Result<T, E = GraphError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_name_is_a_likely_typo_or_none() {
        let names = ["depth_prepass", "color", "object_records", "Color"];
        assert_eq!(nearest_name("depth_prepas", names).as_deref(), Some("depth_prepass"));
        assert_eq!(nearest_name("COLOR", names).as_deref(), Some("color"));
        assert_eq!(nearest_name("object_record", names).as_deref(), Some("object_records"));
        assert_eq!(nearest_name("shadow_map", names), None);
        assert_eq!(nearest_name("x", ["y"]).as_deref(), Some("y"));
        assert_eq!(nearest_name("anything", std::iter::empty()), None);
        let frame = ["hiz_depth", "hiz_depth_final", "depth_prepass", "object_transforms"];
        assert_eq!(nearest_name("hiz", frame).as_deref(), Some("hiz_depth"), "a prefix names the shortest");
        assert_eq!(nearest_name("transforms", frame), None, "a word must begin the name");
        assert_eq!(nearest_name("object_xforms", frame).as_deref(), Some("object_transforms"), "its first word");
        assert_eq!(nearest_name("hiz_depth", ["depth_prepass", "color"]), None, "not by a later word");
        assert_eq!(nearest_name("hi", frame), None, "too short to guess from");
    }

    #[test]
    fn errors_that_name_a_pass_say_which() {
        let error = GraphError::PassPanicked { pass: "fog".into(), message: "boom".into() };
        assert_eq!(error.pass(), Some("fog"));
        assert_eq!(GraphError::DuplicatePass { name: "fog".into(), sites: Vec::new() }.pass(), None);
    }

    #[test]
    fn cycle_message_names_every_pass() {
        let message = GraphError::Cycle(vec!["a".into(), "b".into(), "a".into()]).to_string();
        assert_eq!(message, "the passes form a cycle: a -> b -> a");
    }

    #[test]
    fn duplicate_resource_names_the_passes() {
        let error = GraphError::DuplicateResource {
            resource: "color".into(),
            passes: vec!["first".into(), "second".into()],
            imported: false,
        };
        assert_eq!(error.to_string(), "resource `color` is created by more than one pass: `first`, `second`");
    }

    #[test]
    fn a_mip_range_error_names_pass_image_and_levels() {
        let error = GraphError::MipRangeOutOfBounds {
            pass: "reduce".into(),
            resource: "pyramid".into(),
            base: 3,
            count: 2,
            mip_levels: 4,
        };
        assert_eq!(error.to_string(), "pass `reduce` declares mips 3..5 of `pyramid`, which has 4 mips");
    }

    #[test]
    fn vulkan_error_names_the_call() {
        let error = GraphError::vulkan("vkCreateFence")(vk::Result::ERROR_DEVICE_LOST);
        assert!(error.to_string().starts_with("vkCreateFence failed"), "{error}");
    }
}

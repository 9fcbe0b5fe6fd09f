//! A pipeline's layout checked against its shaders: every descriptor a shader uses must be
//! in set 0 at a binding the pipeline declares, of the same kind, one descriptor each; its
//! push-constant block must fit the pipeline's. Without the check a mismatch is undefined
//! behaviour (a garbage image, a crash inside the driver or the validation layer itself); with
//! it, pipeline creation returns [`GraphError::ShaderMismatch`] naming the pipeline, the
//! binding and both kinds.

use spirq::ty::{AccessType, DescriptorType};
use spirq::var::Variable;
use spirq::ReflectConfig;

use super::binding::BindingKind;
use super::stores::written_bindings;
use crate::error::{GraphError, Result};

/// What a pipeline's shaders do with one binding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BindingUse {
    /// Read, written, or both (see [`ShaderAccess`]).
    pub(crate) access: ShaderAccess,
    /// The bytes a buffer bound there must hold: the block's size, or for a block ending in a
    /// runtime array the offset of that array (0 for images and unused bindings).
    pub(crate) min_bytes: u64,
}

/// What a shader does with a storage binding: its qualifiers (`readonly`, `writeonly`) and,
/// for a binding with neither, its instructions (stores, atomics, image writes; see
/// `stores.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ShaderAccess {
    /// Not used by the shader (of this stage).
    #[default]
    Unused,
    /// `readonly`, or never written (no qualifier, no store), in every stage that uses it.
    ReadOnly,
    /// `writeonly` in every stage that uses it.
    WriteOnly,
    /// Read and written: without a qualifier and stored to (or atomically updated), or not a
    /// storage binding, or qualified differently by two stages.
    Either,
}

impl ShaderAccess {
    /// The access of a binding used by two stages: a qualifier holds only when both agree.
    pub(crate) fn and(self, other: ShaderAccess) -> ShaderAccess {
        match (self, other) {
            (ShaderAccess::Unused, access) | (access, ShaderAccess::Unused) => access,
            (first, second) if first == second => first,
            _ => ShaderAccess::Either,
        }
    }
}

/// Checks `spirv` (the `stage` shader of pipeline `pipeline`) against set-0 `bindings` and
/// `push_constant_bytes`; merges into `uses` (one per binding) what the shader does with each
/// storage binding it uses and the bytes each buffer binding's block needs.
pub(crate) fn check_shader(
    pipeline: &str,
    stage: &'static str,
    spirv: &[u32],
    bindings: &[BindingKind],
    push_constant_bytes: u32,
    uses: &mut [BindingUse],
) -> Result<()> {
    let mismatch = |binding: Option<u32>, reason: String| GraphError::ShaderMismatch {
        pipeline: pipeline.to_owned(),
        stage,
        binding,
        reason,
    };
    // Only what the entry point uses counts (Vulkan's rule): a declared, unused binding may
    // be missing from the layout.
    let entry_points = ReflectConfig::new()
        .spv(spirv)
        .ref_all_rscs(false)
        .reflect()
        .map_err(|error| mismatch(None, format!("the SPIR-V cannot be read: {error}")))?;
    let Some(entry_point) = entry_points.iter().find(|entry_point| entry_point.name == "main") else {
        return Err(mismatch(None, String::from("the module has no entry point `main`")));
    };
    let written = written_bindings(spirv);
    for variable in &entry_point.vars {
        match variable {
            Variable::Descriptor { desc_bind, desc_ty, nbind, name, ty } => {
                let (set, binding) = (desc_bind.set(), desc_bind.bind());
                let named = name.as_deref().map(|name| format!(" (`{name}`)")).unwrap_or_default();
                let declared = describe(desc_ty);
                if set != 0 {
                    return Err(mismatch(
                        Some(binding),
                        format!("the shader uses {declared}{named} in set {set}; pipelines have set 0 only"),
                    ));
                }
                let Some(&expected) = bindings.get(binding as usize) else {
                    return Err(mismatch(
                        Some(binding),
                        format!(
                            "the shader uses {declared}{named}, but the pipeline declares {} binding(s)",
                            bindings.len()
                        ),
                    ));
                };
                if !fits(expected, desc_ty) {
                    return Err(mismatch(
                        Some(binding),
                        format!("the shader declares {declared}{named}, the pipeline {expected:?}"),
                    ));
                }
                if *nbind != 1 {
                    return Err(mismatch(
                        Some(binding),
                        format!("the shader declares an array of {nbind} descriptors{named}; pipelines bind one"),
                    ));
                }
                let stores = written.binary_search(&binding).is_ok();
                let qualified = match desc_ty {
                    DescriptorType::StorageBuffer(access) | DescriptorType::StorageImage(access) => match access {
                        AccessType::ReadOnly => ShaderAccess::ReadOnly,
                        AccessType::WriteOnly => ShaderAccess::WriteOnly,
                        AccessType::ReadWrite if stores => ShaderAccess::Either,
                        AccessType::ReadWrite => ShaderAccess::ReadOnly,
                    },
                    _ => ShaderAccess::Either,
                };
                if let Some(merged) = uses.get_mut(binding as usize) {
                    merged.access = merged.access.and(qualified);
                    // A block's fixed part: all of it, or what comes before a runtime array.
                    merged.min_bytes = merged.min_bytes.max(ty.nbyte().unwrap_or(0) as u64);
                }
            }
            Variable::PushConstant { ty, .. } => {
                let size = ty.nbyte().unwrap_or(0);
                if size > push_constant_bytes as usize {
                    return Err(mismatch(
                        None,
                        format!(
                            "the shader's push constants take {size} bytes, the pipeline declares {push_constant_bytes}"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether a binding of kind `kind` serves a descriptor the shader declares as `declared`.
fn fits(kind: BindingKind, declared: &DescriptorType) -> bool {
    matches!(
        (kind, declared),
        (BindingKind::StorageBuffer, DescriptorType::StorageBuffer(_))
            | (BindingKind::UniformBuffer, DescriptorType::UniformBuffer())
            | (BindingKind::StorageImage, DescriptorType::StorageImage(_))
            | (BindingKind::SampledImage | BindingKind::TextureImage, DescriptorType::CombinedImageSampler())
    )
}

/// The shader's descriptor in the words of [`BindingKind`].
fn describe(declared: &DescriptorType) -> String {
    match declared {
        DescriptorType::StorageBuffer(_) => String::from("a storage buffer (StorageBuffer)"),
        DescriptorType::UniformBuffer() => String::from("a uniform buffer (UniformBuffer)"),
        DescriptorType::StorageImage(_) => String::from("a storage image (StorageImage)"),
        DescriptorType::CombinedImageSampler() => String::from("a combined image sampler (SampledImage)"),
        other => format!("{other:?}, which pipelines do not bind"),
    }
}

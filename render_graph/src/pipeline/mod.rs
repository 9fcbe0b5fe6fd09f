//! Pipelines and their descriptors: compute and graphics pipelines with one descriptor set
//! of plain bindings and optional push constants, built from SPIR-V words and checked
//! against the shaders' own descriptors.

// What a binding holds (`binding.rs`), the shader check (`reflect.rs`, with the scan of
// the stores a shader makes, `stores.rs`), the layouts both
// kinds share (`layout.rs`), the pipelines (`compute.rs`, `graphics.rs`; `hot_reload.rs`
// rebuilds one while the game runs) and the per-frame
// descriptor sets bound with them (`descriptors.rs`).
mod binding;
mod compute;
mod descriptors;
mod graphics;
mod hot_reload;
mod layout;
mod reflect;
mod stores;

pub use binding::BindingKind;
pub use compute::ComputePipeline;
pub(crate) use descriptors::DescriptorArena;
pub use graphics::{ColorBlend, GraphicsPipeline, GraphicsPipelineDesc};
pub use hot_reload::{hot_reload_asked, HotPipeline, HotSource, HOT_RELOAD_ENV, HOT_RETIRE_FRAMES};
pub(crate) use layout::PipelineCore;
pub use layout::MAX_BINDINGS;
pub(crate) use reflect::ShaderAccess;

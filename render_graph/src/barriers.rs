//! Barrier planning: walks the passes in execution order, tracks each resource's last write,
//! the reads since and its layout, and places the fewest synchronization2 barriers that make
//! every access safe. All barriers of one pass form one batch.
//!
//! A resource's first access in a frame gets an *entry* barrier whose source the executor
//! fills in: the previous frame's last access (same memory reused), the previous occupant of
//! aliased memory, or an imported resource's state.

use ash::vk;

use crate::registry::GraphDecl;

/// The accesses a later barrier must wait for, and the layout they left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncState {
    /// Stages whose accesses must finish.
    pub stages: vk::PipelineStageFlags2,
    /// Writes that must be made available.
    pub access: vk::AccessFlags2,
    /// Image layout (UNDEFINED for buffers).
    pub layout: vk::ImageLayout,
}

impl SyncState {
    /// Nothing to wait for, contents undefined.
    pub const NONE: SyncState = SyncState {
        stages: vk::PipelineStageFlags2::NONE,
        access: vk::AccessFlags2::NONE,
        layout: vk::ImageLayout::UNDEFINED,
    };
}

/// Where a barrier's source scope comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierSource {
    /// An earlier access in the same frame.
    Known(SyncState),
    /// The resource's first access this frame; resolved by the executor.
    Entry,
}

/// One barrier on one resource before a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedBarrier {
    /// The resource index.
    pub resource: u32,
    /// Source scope (and old layout).
    pub source: BarrierSource,
    /// Stages of the access that waits.
    pub dst_stages: vk::PipelineStageFlags2,
    /// Access flags of the access that waits.
    pub dst_access: vk::AccessFlags2,
    /// Layout the access needs (UNDEFINED for buffers).
    pub new_layout: vk::ImageLayout,
}

/// Barriers per pass position plus per-resource first and last states.
#[derive(Clone, Debug, Default)]
pub struct BarrierPlan {
    /// Barriers recorded before the pass at each position of the execution order.
    pub per_pass: Vec<Vec<PlannedBarrier>>,
    /// What a user of the memory after this frame's last access must wait for.
    pub final_state: Vec<Option<SyncState>>,
}

impl BarrierPlan {
    /// Number of barriers in the plan, entry barriers included.
    pub fn count(&self) -> usize {
        self.per_pass.iter().map(Vec::len).sum()
    }
}

#[derive(Clone, Copy, Default)]
struct Track {
    started: bool,
    write_stages: vk::PipelineStageFlags2,
    write_access: vk::AccessFlags2,
    read_stages: vk::PipelineStageFlags2,
    visible_stages: vk::PipelineStageFlags2,
    visible_access: vk::AccessFlags2,
    layout: vk::ImageLayout,
}

impl Track {
    /// Whether the last write was already made visible to these stages and accesses.
    fn is_visible_to(&self, stages: vk::PipelineStageFlags2, flags: vk::AccessFlags2) -> bool {
        self.visible_stages.contains(stages) && self.visible_access.contains(flags)
    }

    fn state(&self) -> SyncState {
        SyncState { stages: self.write_stages | self.read_stages, access: self.write_access, layout: self.layout }
    }
}

/// Plans the barriers for passes `order` (declared indices in execution order).
pub fn plan_barriers(decl: &GraphDecl, order: &[usize]) -> BarrierPlan {
    let mut tracks = vec![Track::default(); decl.resources.len()];
    let mut per_pass = Vec::with_capacity(order.len());
    for &pass_index in order {
        let mut batch = Vec::new();
        for declared in &decl.passes[pass_index].accesses {
            let access = declared.access;
            let is_image = decl.resources[declared.resource as usize].kind == crate::registry::ResourceKind::Image;
            let layout = if is_image { access.image_layout() } else { vk::ImageLayout::UNDEFINED };
            let (stages, flags) = (access.stages(), access.access_flags());
            let track = &mut tracks[declared.resource as usize];
            let barrier = |source| PlannedBarrier {
                resource: declared.resource,
                source,
                dst_stages: stages,
                dst_access: flags,
                new_layout: layout,
            };
            if !track.started {
                batch.push(barrier(BarrierSource::Entry));
                *track = Track { started: true, layout, ..Track::default() };
            } else if track.layout != layout || access.is_write() {
                // A layout change or a write waits for every access since the last write.
                let waits = !track.state().stages.is_empty() || track.layout != layout;
                if waits {
                    batch.push(barrier(BarrierSource::Known(track.state())));
                }
                let keep_write = !access.is_write();
                *track = Track {
                    started: true,
                    layout,
                    write_stages: if keep_write { track.write_stages | stages } else { vk::PipelineStageFlags2::NONE },
                    write_access: if keep_write { track.write_access } else { vk::AccessFlags2::NONE },
                    ..Track::default()
                };
                if keep_write {
                    // A layout transition is itself a write, done before `stages` and visible
                    // to this access; later readers chain through `stages`.
                    track.visible_stages = stages;
                    track.visible_access = flags;
                }
            } else if !track.write_stages.is_empty() && !track.is_visible_to(stages, flags) {
                // Read after write: make the write visible to this reader once.
                let source = SyncState { stages: track.write_stages, access: track.write_access, layout };
                batch.push(barrier(BarrierSource::Known(source)));
                track.visible_stages |= stages;
                track.visible_access |= flags;
            }
            if access.is_write() {
                track.write_stages = stages;
                track.write_access = access.write_flags();
                track.read_stages = vk::PipelineStageFlags2::NONE;
                track.visible_stages = vk::PipelineStageFlags2::NONE;
                track.visible_access = vk::AccessFlags2::NONE;
            } else {
                track.read_stages |= stages;
            }
        }
        per_pass.push(batch);
    }
    let final_state = tracks.iter().map(|track| track.started.then(|| track.state())).collect();
    BarrierPlan { per_pass, final_state }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Access, ShaderStage};
    use crate::registry::{BufferDesc, ImageDesc, ImageSize};

    fn plan(decl: &GraphDecl) -> BarrierPlan {
        let order: Vec<usize> = (0..decl.pass_count()).collect();
        plan_barriers(decl, &order)
    }

    #[test]
    fn two_readers_of_one_write_share_one_barrier() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("write", |registry| {
            let data = registry.create_buffer("data", BufferDesc { size: 4 });
            registry.write_storage_buffer(data, ShaderStage::Compute);
        });
        for name in ["read 1", "read 2"] {
            decl.declare_pass(name, |registry| {
                let data = registry.buffer("data");
                registry.read_storage_buffer(data, ShaderStage::Compute);
            });
        }
        let plan = plan(&decl);
        assert_eq!(plan.per_pass[0].len(), 1, "entry barrier");
        assert_eq!(plan.per_pass[1].len(), 1, "read after write");
        assert!(plan.per_pass[2].is_empty(), "the write is already visible to compute reads");
        let BarrierSource::Known(source) = plan.per_pass[1][0].source else { panic!("expected a known source") };
        assert_eq!(source.access, vk::AccessFlags2::SHADER_STORAGE_WRITE);
    }

    #[test]
    fn write_after_reads_waits_for_every_reader_without_access_flags() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("write", |registry| {
            let data = registry.create_buffer("data", BufferDesc { size: 4 });
            registry.write_storage_buffer(data, ShaderStage::Compute);
        });
        decl.declare_pass("read", |registry| {
            let data = registry.buffer("data");
            registry.access_buffer(data, Access::IndirectArgument);
        });
        decl.declare_pass("rewrite", |registry| {
            let data = registry.buffer("data");
            registry.access_buffer(data, Access::TransferWrite);
        });
        let plan = plan(&decl);
        let BarrierSource::Known(source) = plan.per_pass[2][0].source else { panic!("expected a known source") };
        assert!(source.stages.contains(vk::PipelineStageFlags2::DRAW_INDIRECT));
        assert_eq!(plan.final_state[0].map(|state| state.access), Some(vk::AccessFlags2::TRANSFER_WRITE));
    }

    #[test]
    fn layout_changes_are_transitions() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("draw", |registry| {
            let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
            registry.color_attachment(color, crate::registry::AttachmentLoad::DontCare);
        });
        decl.declare_pass("sample", |registry| {
            let color = registry.image("color");
            registry.sample(color, ShaderStage::Fragment);
        });
        decl.declare_pass("sample again", |registry| {
            let color = registry.image("color");
            registry.sample(color, ShaderStage::Fragment);
        });
        let plan = plan(&decl);
        let transition = plan.per_pass[1][0];
        let BarrierSource::Known(source) = transition.source else { panic!("expected a known source") };
        assert_eq!(source.layout, vk::ImageLayout::ATTACHMENT_OPTIMAL);
        assert_eq!(transition.new_layout, vk::ImageLayout::READ_ONLY_OPTIMAL);
        assert!(plan.per_pass[2].is_empty(), "same layout, write already visible");
    }
}

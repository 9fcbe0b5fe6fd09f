//! Barrier planning: walks the passes in execution order, tracks each resource's last write,
//! the reads since and its layout, and places the fewest synchronization2 barriers that make
//! every access safe. All barriers of one pass form one batch.
//!
//! A resource's first access in a frame gets an *entry* barrier whose source the executor
//! fills in: the previous frame's last access (same memory reused), the previous occupant of
//! aliased memory, or an imported resource's state.

use ash::vk;

use super::decl::GraphDecl;
use super::desc::ResourceKind;
use crate::access::{Access, MipRange};

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

/// One barrier on one resource (on some of its mips, for images) before a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedBarrier {
    /// The resource index.
    pub resource: u32,
    /// The step of the pass it is recorded before (0: before `execute`; `k`: when the pass
    /// begins step `k`, see [`crate::Registry::next_step`]). A pass's barriers are sorted by
    /// step; a resource's (or mip's) first access this frame is always in step 0, since
    /// nothing before it needs to run first.
    pub step: u32,
    /// The mips it covers ([`MipRange::ALL`] for buffers and whole images); the executor
    /// clamps a range that runs to the end to the image's mip count.
    pub mips: MipRange,
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
    /// Barriers of the pass at each position of the execution order (all of its steps).
    pub per_pass: Vec<Vec<PlannedBarrier>>,
    /// Barriers recorded after the last pass: they bring every mip of an image whose
    /// contents outlive the frame (imported, or kept as history) to one layout, so the next
    /// frame (or the importer) sees the whole image in [`BarrierPlan::final_state`].
    pub final_barriers: Vec<PlannedBarrier>,
    /// What a user of the memory after this frame's last access must wait for (for an image
    /// tracked per mip range: every range's accesses, and the layout of the range used last).
    pub final_state: Vec<Option<SyncState>>,
}

impl BarrierPlan {
    /// Number of barriers in the plan, entry and final barriers included.
    pub fn count(&self) -> usize {
        self.per_pass.iter().map(Vec::len).sum::<usize>() + self.final_barriers.len()
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
    /// Position of the last pass that used it (for the final layout).
    last_use: usize,
}

impl Track {
    /// Whether the last write was already made visible to these stages and accesses.
    fn is_visible_to(&self, stages: vk::PipelineStageFlags2, flags: vk::AccessFlags2) -> bool {
        self.visible_stages.contains(stages) && self.visible_access.contains(flags)
    }

    fn state(&self) -> SyncState {
        SyncState { stages: self.write_stages | self.read_stages, access: self.write_access, layout: self.layout }
    }

    /// Records `access` (in `layout`) and returns the barrier source it needs first, if any.
    fn step(&mut self, access: Access, layout: vk::ImageLayout) -> Option<BarrierSource> {
        let (stages, flags) = (access.stages(), access.access_flags());
        let mut needed = None;
        if !self.started {
            needed = Some(BarrierSource::Entry);
            *self = Track { started: true, layout, ..Track::default() };
        } else if self.layout != layout || access.is_write() {
            // A layout change or a write waits for every access since the last write.
            if !self.state().stages.is_empty() || self.layout != layout {
                needed = Some(BarrierSource::Known(self.state()));
            }
            let keep_write = !access.is_write();
            *self = Track {
                started: true,
                layout,
                write_stages: if keep_write { self.write_stages | stages } else { vk::PipelineStageFlags2::NONE },
                write_access: if keep_write { self.write_access } else { vk::AccessFlags2::NONE },
                ..Track::default()
            };
            if keep_write {
                // A layout transition is itself a write, done before `stages` and visible
                // to this access; later readers chain through `stages`.
                self.visible_stages = stages;
                self.visible_access = flags;
            }
        } else if !self.write_stages.is_empty() && !self.is_visible_to(stages, flags) {
            // Read after write: make the write visible to this reader once.
            needed =
                Some(BarrierSource::Known(SyncState { stages: self.write_stages, access: self.write_access, layout }));
            self.visible_stages |= stages;
            self.visible_access |= flags;
        }
        if access.is_write() {
            self.write_stages = stages;
            self.write_access = access.write_flags();
            self.read_stages = vk::PipelineStageFlags2::NONE;
            self.visible_stages = vk::PipelineStageFlags2::NONE;
            self.visible_access = vk::AccessFlags2::NONE;
        } else {
            self.read_stages |= stages;
        }
        needed
    }
}

/// Every resource cut into the disjoint mip segments its declarations delimit: an image
/// only ever declared whole has one segment `[0, MAX)`, a pyramid written mip by mip one per
/// mip (plus the rest of the chain), and a buffer one.
struct Segments {
    /// Per resource, its first segment; `first[resource + 1]` ends them.
    first: Vec<usize>,
    /// Per segment, the levels `[start, end)` it covers (`end == u32::MAX`: to the end).
    levels: Vec<(u32, u32)>,
}

impl Segments {
    fn new(decl: &GraphDecl, order: &[usize]) -> Segments {
        // (resource, cut) pairs in one flat list: every resource is cut at 0 and at the end,
        // and each declaration at its first mip and one past its last.
        let resources = decl.resources.len() as u32;
        let mut cuts: Vec<(u32, u32)> =
            (0..resources).flat_map(|resource| [(resource, 0), (resource, u32::MAX)]).collect();
        for &pass_index in order {
            for access in &decl.passes[pass_index].accesses {
                cuts.extend([(access.resource, access.mips.base), (access.resource, access.mips.end())]);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut first = Vec::with_capacity(resources as usize + 1);
        let mut levels = Vec::with_capacity(cuts.len());
        for of_resource in cuts.chunk_by(|left, right| left.0 == right.0) {
            first.push(levels.len());
            levels.extend(of_resource.windows(2).map(|pair| (pair[0].1, pair[1].1)));
        }
        first.push(levels.len());
        Segments { first, levels }
    }

    /// The segments of `resource` inside `mips` (the cuts make each one wholly in or out).
    fn of(&self, resource: u32, mips: MipRange) -> std::ops::Range<usize> {
        let all = self.first[resource as usize]..self.first[resource as usize + 1];
        let start = all.start + self.levels[all.clone()].partition_point(|&(_, end)| end <= mips.base);
        let end = all.start + self.levels[all.clone()].partition_point(|&(start, _)| start < mips.end());
        start..end.max(start)
    }
}

/// Appends a barrier on segment `levels` of `resource`, merged into the last one of `batch`
/// when it continues it (same resource, source and destination, adjacent mips).
fn push_merged(batch: &mut Vec<PlannedBarrier>, barrier: PlannedBarrier, levels: (u32, u32)) {
    if let Some(last) = batch.last_mut() {
        let same = PlannedBarrier { mips: last.mips, ..barrier } == *last;
        if same && last.mips.end() == levels.0 {
            last.mips = MipRange::from_segment(last.mips.base, levels.1);
            return;
        }
    }
    batch.push(PlannedBarrier { mips: MipRange::from_segment(levels.0, levels.1), ..barrier });
}

/// Plans the barriers for passes `order` (declared indices in execution order), tracking
/// every image per mip segment. `keep_layout[resource]`: the image's contents outlive the
/// frame, so its mips end the frame in one layout.
pub fn plan_barriers(decl: &GraphDecl, order: &[usize], keep_layout: &[bool]) -> BarrierPlan {
    let segments = Segments::new(decl, order);
    let mut tracks = vec![Track::default(); segments.levels.len()];
    let mut per_pass = Vec::with_capacity(order.len());
    for (position, &pass_index) in order.iter().enumerate() {
        let mut batch = Vec::new();
        let pass = &decl.passes[pass_index];
        let steps =
            (0..=pass.last_step).flat_map(|step| pass.accesses.iter().filter(move |access| access.step == step));
        for declared in steps {
            let access = declared.access;
            let is_image = decl.resources[declared.resource as usize].kind == ResourceKind::Image;
            let layout = if is_image { access.image_layout() } else { vk::ImageLayout::UNDEFINED };
            for segment in segments.of(declared.resource, declared.mips) {
                let track = &mut tracks[segment];
                track.last_use = position;
                if let Some(source) = track.step(access, layout) {
                    // A first touch waits for nothing of this pass: it joins step 0's batch.
                    let step = if source == BarrierSource::Entry { 0 } else { declared.step };
                    let barrier = PlannedBarrier {
                        resource: declared.resource,
                        step,
                        mips: MipRange::ALL,
                        source,
                        dst_stages: access.stages(),
                        dst_access: access.access_flags(),
                        new_layout: layout,
                    };
                    push_merged(&mut batch, barrier, segments.levels[segment]);
                }
            }
        }
        if pass.last_step > 0 {
            // Back into step order (stable) after the hoisting, merging new neighbours.
            batch.sort_by_key(|barrier| barrier.step);
            let mut merged = Vec::with_capacity(batch.len());
            for barrier in batch {
                push_merged(&mut merged, barrier, (barrier.mips.base, barrier.mips.end()));
            }
            batch = merged;
        }
        per_pass.push(batch);
    }
    let mut final_barriers = Vec::new();
    let final_state = (0..decl.resources.len())
        .map(|resource| {
            let range = segments.first[resource]..segments.first[resource + 1];
            let used = tracks[range.clone()].iter().filter(|track| track.started);
            let last = used.clone().max_by_key(|track| track.last_use)?;
            let mut state = SyncState { layout: last.layout, ..SyncState::NONE };
            for track in used {
                state.stages |= track.state().stages;
                state.access |= track.state().access;
            }
            if keep_layout.get(resource) == Some(&true) && decl.resources[resource].kind == ResourceKind::Image {
                for segment in range {
                    let track = &tracks[segment];
                    if track.started && track.layout == state.layout {
                        continue;
                    }
                    // A mip left in another layout (or untouched, in its entry state) joins
                    // the last layout; the next user waits for these transitions.
                    let barrier = PlannedBarrier {
                        resource: resource as u32,
                        step: 0,
                        mips: MipRange::ALL,
                        source: if track.started { BarrierSource::Known(track.state()) } else { BarrierSource::Entry },
                        dst_stages: vk::PipelineStageFlags2::ALL_COMMANDS,
                        dst_access: vk::AccessFlags2::NONE,
                        new_layout: state.layout,
                    };
                    push_merged(&mut final_barriers, barrier, segments.levels[segment]);
                    state.stages |= vk::PipelineStageFlags2::ALL_COMMANDS;
                }
            }
            Some(state)
        })
        .collect();
    BarrierPlan { per_pass, final_barriers, final_state }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::ShaderStage;
    use crate::compile::{AttachmentLoad, BufferDesc, ImageDesc, ImageSize};

    fn plan(decl: &GraphDecl) -> BarrierPlan {
        let order: Vec<usize> = (0..decl.pass_count()).collect();
        plan_barriers(decl, &order, &[])
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
            registry.read_buffer(data, Access::IndirectArgument);
        });
        decl.declare_pass("rewrite", |registry| {
            let data = registry.buffer("data");
            registry.write_buffer(data, Access::TransferWrite);
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
            registry.color_attachment(color, AttachmentLoad::DontCare);
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

    /// Declares the mip-chain graph of the tests: `seed` copies into mip 0, `reduce k` reads
    /// mip `k - 1` and writes mip `k` (k = 1..=4), `sample` samples mips 0..=4 of 6.
    fn mip_chain() -> GraphDecl {
        let mut decl = GraphDecl::default();
        decl.declare_pass("seed", |registry| {
            let pyramid = registry
                .create_image("pyramid", ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::OUTPUT).with_mips(6));
            registry.write_image_mips(pyramid, MipRange::level(0), Access::TransferWrite);
        });
        for mip in 1..=4 {
            decl.declare_pass(&format!("reduce {mip}"), |registry| {
                let pyramid = registry.image("pyramid");
                registry.read_storage_image_mip(pyramid, mip - 1, ShaderStage::Compute);
                registry.write_storage_image_mip(pyramid, mip, ShaderStage::Compute);
            });
        }
        decl.declare_pass("sample", |registry| {
            let pyramid = registry.image("pyramid");
            registry.read_sampled_image_mips(pyramid, 0..5, ShaderStage::Compute);
        });
        decl
    }

    #[test]
    fn a_pass_writing_mip_3_waits_for_and_transitions_only_mips_2_and_3() {
        let plan = plan(&mip_chain());
        let reduce_3 = &plan.per_pass[3];
        assert!(reduce_3.iter().all(|barrier| !barrier.mips.overlaps(MipRange::from(0..2))), "{reduce_3:?}");
        assert!(reduce_3.iter().all(|barrier| !barrier.mips.overlaps(MipRange::from_base(4))), "{reduce_3:?}");
        let read = reduce_3.iter().find(|barrier| barrier.mips == MipRange::level(2)).expect("mip 2 is read");
        let BarrierSource::Known(source) = read.source else { panic!("mip 2 was written by `reduce 2`") };
        assert_eq!(source.access, vk::AccessFlags2::SHADER_STORAGE_WRITE);
        assert_eq!(read.dst_access, vk::AccessFlags2::SHADER_STORAGE_READ);
        let write = reduce_3.iter().find(|barrier| barrier.mips == MipRange::level(3)).expect("mip 3 is written");
        assert_eq!(write.source, BarrierSource::Entry, "nothing touched mip 3 before");
        assert_eq!(reduce_3.len(), 2);
    }

    #[test]
    fn a_read_of_many_mips_starts_from_each_mips_own_state() {
        let plan = plan(&mip_chain());
        let sample = &plan.per_pass[5];
        // Mip 0 was copied, then read as storage; mips 1..=4 were written by compute (and all
        // but mip 4 read): two source states, so two barriers; mip 5 is not touched.
        assert_eq!(sample.len(), 2, "{sample:?}");
        let mip_0 = sample.iter().find(|barrier| barrier.mips == MipRange::level(0)).expect("mip 0");
        let rest = sample.iter().find(|barrier| barrier.mips == MipRange::from(1..5)).expect("mips 1..=4 merged");
        assert_ne!(mip_0.source, rest.source);
        let BarrierSource::Known(source) = mip_0.source else { panic!("known source") };
        assert!(source.stages.contains(vk::PipelineStageFlags2::COMPUTE_SHADER), "the storage read of mip 0");
        for barrier in [mip_0, rest] {
            assert_eq!(barrier.new_layout, vk::ImageLayout::READ_ONLY_OPTIMAL);
        }
        assert_eq!(plan.final_state[0].map(|state| state.layout), Some(vk::ImageLayout::READ_ONLY_OPTIMAL));
        assert!(plan.final_barriers.is_empty(), "a transient image keeps mixed layouts at the end");
    }

    #[test]
    fn the_mips_of_a_kept_image_end_the_frame_in_one_layout() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("copy", |registry| {
            let pyramid = registry.image("pyramid");
            registry.write_image_mips(pyramid, MipRange::level(0), Access::TransferWrite);
        });
        decl.declare_pass("reduce", |registry| {
            let pyramid = registry.image("pyramid");
            registry.write_storage_image_mip(pyramid, 1, ShaderStage::Compute);
        });
        let plan = plan_barriers(&decl, &[0, 1], &[true]);
        assert_eq!(plan.final_state[0].map(|state| state.layout), Some(vk::ImageLayout::GENERAL), "last used");
        let [mip_0, rest] = plan.final_barriers[..] else { panic!("two final barriers: {:?}", plan.final_barriers) };
        assert_eq!(mip_0.mips, MipRange::level(0));
        assert!(
            matches!(mip_0.source, BarrierSource::Known(state) if state.layout == vk::ImageLayout::TRANSFER_DST_OPTIMAL)
        );
        assert_eq!(rest.mips, MipRange::from_base(2));
        assert_eq!(rest.source, BarrierSource::Entry, "untouched mips leave their entry state");
        assert!([mip_0, rest].iter().all(|barrier| barrier.new_layout == vk::ImageLayout::GENERAL));
        let ordinary = plan_barriers(&decl, &[0, 1], &[false]);
        assert!(ordinary.final_barriers.is_empty());
    }

    #[test]
    fn whole_image_accesses_after_per_mip_ones_are_one_barrier_when_the_states_agree() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("write", |registry| {
            let image = registry.create_image("image", ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::OUTPUT));
            registry.write_storage_image(image, ShaderStage::Compute);
        });
        for mip in 0..3 {
            decl.declare_pass(&format!("rewrite {mip}"), |registry| {
                let image = registry.image("image");
                registry.write_storage_image_mip(image, mip, ShaderStage::Compute);
            });
        }
        decl.declare_pass("read", |registry| {
            let image = registry.image("image");
            registry.read_storage_image(image, ShaderStage::Compute);
        });
        let plan = plan(&decl);
        assert_eq!(plan.per_pass[2].len(), 1, "rewrite 1 waits for the first write of mip 1 only");
        assert_eq!(plan.per_pass[2][0].mips, MipRange::level(1));
        // Mips 0..3 were rewritten, the rest written once, all by compute storage writes: the
        // per-mip barriers share a source and merge into one on the whole image.
        let read = &plan.per_pass[4];
        assert_eq!(read.len(), 1, "{read:?}");
        assert_eq!(read[0].mips, MipRange::ALL);
    }

    #[test]
    fn one_pass_in_steps_gets_the_barriers_between_its_steps_per_step() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("reduce", |registry| {
            let pyramid = registry
                .create_image("pyramid", ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::OUTPUT).with_mips(3));
            registry.write_storage_image_mip(pyramid, 0, ShaderStage::Compute);
            for mip in 1..3 {
                registry.next_step();
                registry.read_storage_image_mip(pyramid, mip - 1, ShaderStage::Compute);
                registry.write_storage_image_mip(pyramid, mip, ShaderStage::Compute);
            }
        });
        let plan = plan(&decl);
        let steps: Vec<(u32, MipRange, bool)> = plan.per_pass[0]
            .iter()
            .map(|barrier| (barrier.step, barrier.mips, barrier.source == BarrierSource::Entry))
            .collect();
        // First touches of every mip join step 0 (one barrier); each later step waits for the
        // step that wrote the mip it reads.
        let expected =
            [(0, MipRange::from(0..3), true), (1, MipRange::level(0), false), (2, MipRange::level(1), false)];
        assert_eq!(steps, expected);
    }
}

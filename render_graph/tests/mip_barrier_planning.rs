//! Property test of per-mip barrier planning against a brute-force reference: random passes
//! of random steps declare random disjoint mip ranges of one 6-mip image with random
//! accesses; for every mip, the barriers the compiler plans on that mip (after merging
//! neighbours into ranges) must be exactly those, step for step, that it plans for a graph
//! where that mip alone is a whole image with the same accesses.

use proptest::prelude::*;
use render_graph::{
    compile, vk, Access, BarrierSource, GraphDecl, ImageDesc, ImageHandle, ImageSize, MipRange, Registry, ResourceKind,
    ShaderStage,
};

const MIPS: u32 = 6;
const COMPUTE: ShaderStage = ShaderStage::Compute;
const ACCESSES: [Access; 7] = [
    Access::Sampled(COMPUTE),
    Access::Sampled(ShaderStage::Fragment),
    Access::StorageRead(COMPUTE),
    Access::StorageWrite(COMPUTE),
    Access::StorageReadWrite(COMPUTE),
    Access::TransferRead,
    Access::TransferWrite,
];

/// One step of a pass: disjoint ranges, each with an access (indices into `ACCESSES`).
type RandomStep = Vec<(MipRange, usize)>;

/// One pass: its steps.
type RandomPass = Vec<RandomStep>;

/// Cuts `0..MIPS` at the chosen points and keeps some of the pieces; the last piece may run
/// to the end of the chain (`MipRange::from_base`).
fn random_step() -> impl Strategy<Value = RandomStep> {
    (
        proptest::collection::btree_set(1..MIPS, 0..4),
        proptest::collection::vec((any::<bool>(), 0..ACCESSES.len()), MIPS as usize),
        any::<bool>(),
    )
        .prop_map(|(cuts, picks, open_end)| {
            let mut bounds: Vec<u32> = std::iter::once(0).chain(cuts).chain(std::iter::once(MIPS)).collect();
            bounds.dedup();
            let pieces = bounds.len() - 1;
            bounds
                .windows(2)
                .enumerate()
                .filter(|(index, _)| picks[*index].0)
                .map(|(index, pair)| {
                    let range = if index == pieces - 1 && open_end {
                        if pair[0] == 0 {
                            MipRange::ALL
                        } else {
                            MipRange::from_base(pair[0])
                        }
                    } else {
                        MipRange::from(pair[0]..pair[1])
                    };
                    (range, picks[index].1)
                })
                .collect()
        })
}

fn random_pass() -> impl Strategy<Value = RandomPass> {
    proptest::collection::vec(random_step(), 1..4)
}

fn no_imports(_: &str, _: ResourceKind) -> bool {
    false
}

/// Declares `access` on `mips` of `image`, through the read or the write method it needs.
fn declare(registry: &mut Registry, image: ImageHandle, mips: MipRange, access: Access) {
    if access.is_write() {
        registry.write_image_mips(image, mips, access);
    } else {
        registry.read_image_mips(image, mips, access);
    }
}

/// The graph: `create` writes the whole image by transfer, then the random passes.
fn declare_graph(passes: &[RandomPass], only_mip: Option<u32>) -> GraphDecl {
    let mut decl = GraphDecl::default();
    let mips = if only_mip.is_some() { 1 } else { MIPS };
    decl.declare_pass("create", |registry| {
        let desc = ImageDesc::new(vk::Format::R32_SFLOAT, ImageSize::Absolute { width: 64, height: 64 });
        let image = registry.create_image("image", desc.with_mips(mips));
        registry.write_image(image, Access::TransferWrite);
        registry.side_effect();
    });
    for (index, pass) in passes.iter().enumerate() {
        decl.declare_pass(&format!("pass {index}"), |registry| {
            let image = registry.image("image");
            for (step, declarations) in pass.iter().enumerate() {
                if step > 0 {
                    registry.next_step();
                }
                for &(range, access) in declarations {
                    match only_mip {
                        None => declare(registry, image, range, ACCESSES[access]),
                        Some(mip) if range.contains(MipRange::level(mip)) => {
                            declare(registry, image, MipRange::ALL, ACCESSES[access])
                        }
                        Some(_) => {}
                    }
                }
            }
            registry.side_effect();
        });
    }
    decl
}

/// What a barrier does and in which step, without its range.
type Effect = (u32, BarrierSource, vk::PipelineStageFlags2, vk::AccessFlags2, vk::ImageLayout);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn per_mip_barriers_equal_the_barriers_of_each_mip_planned_alone(
        passes in proptest::collection::vec(random_pass(), 1..7)
    ) {
        let decl = declare_graph(&passes, None);
        let compiled = compile(&decl, &no_imports).expect("disjoint ranges inside the image compile");
        prop_assert_eq!(compiled.order.len(), passes.len() + 1, "every pass has a side effect");
        for mip in 0..MIPS {
            let alone = declare_graph(&passes, Some(mip));
            let reference = compile(&alone, &no_imports).expect("the one-mip graph compiles");
            prop_assert_eq!(&reference.order, &compiled.order);
            for position in 0..compiled.order.len() {
                let effect = |barrier: &render_graph::PlannedBarrier| -> Effect {
                    (barrier.step, barrier.source, barrier.dst_stages, barrier.dst_access, barrier.new_layout)
                };
                let expected: Vec<Effect> = reference.barriers.per_pass[position].iter().map(effect).collect();
                let planned: Vec<Effect> = compiled.barriers.per_pass[position]
                    .iter()
                    .filter(|barrier| barrier.mips.contains(MipRange::level(mip)))
                    .map(effect)
                    .collect();
                prop_assert_eq!(planned, expected, "mip {} before pass {}", mip, position);
            }
        }
        // No two barriers of one step cover the same mip, and a pass's barriers are in step
        // order.
        for batch in &compiled.barriers.per_pass {
            for (index, barrier) in batch.iter().enumerate() {
                let same_step = batch[index + 1..].iter().filter(|other| other.step == barrier.step);
                prop_assert!(same_step.clone().all(|other| !other.mips.overlaps(barrier.mips)));
                prop_assert!(batch[index + 1..].iter().all(|other| other.step >= barrier.step));
            }
        }
    }
}

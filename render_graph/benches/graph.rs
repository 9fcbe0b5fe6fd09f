//! Compiling and recording a synthetic graph of 200 passes and 500 resources.
//!
//! - `compile 200 passes, 500 resources`: registration, validation, ordering, culling,
//!   lifetimes, barrier planning and the aliasing plan (from estimated sizes); no device.
//!   Every fourth pass has a side effect, so culling removes about half of them.
//! - `execute_frame 200 passes` (only with a Vulkan device, all passes kept): prepare, barrier batches,
//!   timestamps, labels and one transfer command per written resource, then submit; with two
//!   frames in flight this also waits for the frame two submissions back.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use render_graph::device::{DeviceConfig, GpuDevice};
use render_graph::{
    compile, plan_aliasing, vk, Access, AliasItem, BufferDesc, BufferWrite, ExecuteContext, GraphDecl, ImageDesc,
    ImageSize, ImageWrite, Registry, RenderGraph, ResourceKind, TypedPass,
};

const PASSES: usize = 200;
const RESOURCES: usize = 500;

enum Handle {
    Image(ImageWrite),
    Buffer(BufferWrite),
}

/// Pass `index` creates and clears resources `index, index + 200, …` and reads two
/// resources of earlier passes.
struct SyntheticPass {
    index: usize,
    /// Every pass has a side effect (nothing culled); otherwise every fourth.
    keep_all: bool,
    name: String,
}

fn is_image(resource: usize) -> bool {
    resource.is_multiple_of(3)
}

fn resource_name(resource: usize) -> String {
    format!("resource {resource}")
}

impl TypedPass for SyntheticPass {
    /// What the pass writes.
    type Handles = Vec<Handle>;

    fn name(&self) -> &str {
        &self.name
    }

    fn register(&mut self, registry: &mut Registry) -> Vec<Handle> {
        let mut writes = Vec::new();
        for resource in (self.index..RESOURCES).step_by(PASSES) {
            let name = resource_name(resource);
            let handle = if is_image(resource) {
                let desc = ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::Absolute { width: 16, height: 16 });
                let image = registry.create_image(&name, desc);
                Handle::Image(registry.write_image(image, Access::TransferWrite))
            } else {
                let buffer = registry.create_buffer(&name, BufferDesc { size: 256 });
                Handle::Buffer(registry.write_buffer(buffer, Access::TransferWrite))
            };
            writes.push(handle);
        }
        if self.index > 0 {
            let first = (self.index * 31 + 1) % self.index;
            let second = (first + 1 + self.index / 2) % self.index;
            let sources = if first == second { &[first][..] } else { &[first, second][..] };
            for &source in sources {
                let name = resource_name(source);
                if is_image(source) {
                    let image = registry.image(&name);
                    registry.read_image(image, Access::TransferRead);
                } else {
                    let buffer = registry.buffer(&name);
                    registry.read_buffer(buffer, Access::TransferRead);
                }
            }
        }
        if self.keep_all || self.index.is_multiple_of(4) {
            registry.side_effect();
        }
        writes
    }

    fn execute(&mut self, writes: &Vec<Handle>, context: &mut ExecuteContext) {
        let (device, command_buffer) = (context.device().clone(), context.command_buffer());
        for handle in writes {
            match handle {
                Handle::Buffer(buffer) => {
                    let buffer = context.buffer(buffer).buffer;
                    // SAFETY: recording; the pass declared a transfer write on the buffer.
                    unsafe { device.cmd_fill_buffer(command_buffer, buffer, 0, vk::WHOLE_SIZE, self.index as u32) };
                }
                Handle::Image(image) => {
                    let layout = context.image_layout(image);
                    let resolved = context.image(image);
                    let range = vk::ImageSubresourceRange {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        base_mip_level: 0,
                        level_count: 1,
                        base_array_layer: 0,
                        layer_count: 1,
                    };
                    let color = vk::ClearColorValue { float32: [0.5; 4] };
                    // SAFETY: recording; the pass declared a transfer write, so the image is
                    // in TRANSFER_DST_OPTIMAL.
                    unsafe { device.cmd_clear_color_image(command_buffer, resolved.image, layout, &color, &[range]) };
                }
            }
        }
    }
}

fn passes(keep_all: bool) -> Vec<SyntheticPass> {
    (0..PASSES).map(|index| SyntheticPass { index, keep_all, name: format!("pass {index}") }).collect()
}

fn no_imports(_: &str, _: ResourceKind) -> bool {
    false
}

fn compile_benchmark(criterion: &mut Criterion) {
    let mut passes = passes(false);
    criterion.bench_function("compile 200 passes, 500 resources", |bencher| {
        bencher.iter(|| {
            let mut decl = GraphDecl::default();
            for pass in &mut passes {
                let name = pass.name.clone();
                decl.declare_pass(&name, |registry| {
                    pass.register(registry);
                });
            }
            let compiled = compile(&decl, &no_imports).expect("the synthetic graph is valid");
            let items: Vec<AliasItem> = compiled
                .resources
                .iter()
                .enumerate()
                .filter_map(|(index, resource)| {
                    let lifetime = resource.lifetime?;
                    let image = is_image(index);
                    let size = if image { 16 * 16 * 4 } else { 256 };
                    Some(AliasItem { lifetime, size, alignment: 256, type_bits: 1, is_image: image })
                })
                .collect();
            black_box(plan_aliasing(&items));
            black_box(compiled)
        })
    });
}

fn record_benchmark(criterion: &mut Criterion) {
    let device = match GpuDevice::new(&DeviceConfig {
        app_name: String::from("graph bench"),
        validation: false,
        withheld_features: Vec::new(),
        surface_extensions: Vec::new(),
    }) {
        Ok(device) => Arc::new(device),
        Err(error) => {
            println!("skipping execute_frame benchmark: no Vulkan device ({error})");
            return;
        }
    };
    let mut graph =
        RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 64, height: 64 }).expect("graph creates");
    for pass in passes(true) {
        graph.add_typed_pass(pass);
    }
    graph.execute_frame().expect("first frame runs");
    println!(
        "graph: {} passes run, {} barriers",
        graph.execution_order().expect("compiled").len(),
        graph.barrier_count().expect("compiled")
    );
    criterion.bench_function("execute_frame 200 passes", |bencher| {
        bencher.iter(|| graph.execute_frame().expect("frame runs"))
    });
    graph.wait_idle().expect("frames finish");
    println!("CPU record time of the last frame: {:.3} ms", graph.stats().total_cpu_record_ms);
}

criterion_group!(benches, compile_benchmark, record_benchmark);
criterion_main!(benches);

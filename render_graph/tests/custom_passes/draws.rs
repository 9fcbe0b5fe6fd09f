//! The draw and dispatch helpers (direct, indirect, indexed, counted, and the fallbacks
//! without `drawIndirectCount`), and their misuse.

use super::*;

const GRID_EXTENT: vk::Extent2D = vk::Extent2D { width: 80, height: 64 };
const BANDS: u32 = 8;
const COLUMNS: u32 = 10;

/// Push constants of `band.vert`, as a `#[repr(C)]` struct pushed as bytes.
#[repr(C)]
#[derive(Clone, Copy)]
struct BandParams {
    band_count: u32,
    column_count: u32,
}
const _: () = assert!(std::mem::size_of::<BandParams>() == 8);

impl BandParams {
    fn bytes(&self) -> [u8; 8] {
        let mut bytes = [0; 8];
        bytes[..4].copy_from_slice(&self.band_count.to_le_bytes());
        bytes[4..].copy_from_slice(&self.column_count.to_le_bytes());
        bytes
    }
}

/// Byte offsets in the `draw args` buffer.
const DRAW_INDIRECT_AT: u64 = 0;
const DRAW_INDEXED_INDIRECT_AT: u64 = 32;
const DRAW_COUNT_AT: u64 = 52;
const DRAW_INDEXED_COUNT_AT: u64 = 100;
const COUNT_AT: u64 = 140;
const INDEXED_COUNT_AT: u64 = 144;
const DISPATCH_AT: u64 = 148;
const ARGS_BYTES: u64 = 160;

/// The indirect commands; `(band, column)` cells each one draws are listed in the test.
fn draw_args() -> Vec<u8> {
    let mut bytes = vec![0; ARGS_BYTES as usize];
    let mut put = |offset: u64, words: &[u32]| {
        bytes[offset as usize..offset as usize + words.len() * 4].copy_from_slice(&words_to_bytes(words));
    };
    // vertexCount, instanceCount, firstVertex (6 per column), firstInstance (band).
    put(DRAW_INDIRECT_AT, &[6, 1, 18, 3, 6, 1, 24, 4]);
    // indexCount, instanceCount, firstIndex, vertexOffset, firstInstance.
    put(DRAW_INDEXED_INDIRECT_AT, &[6, 1, 0, 30, 5]);
    // Three commands, the count says two: the third (column 0, band 2) must not show.
    put(DRAW_COUNT_AT, &[6, 1, 36, 6, 6, 1, 42, 7, 6, 1, 0, 2]);
    put(DRAW_INDEXED_COUNT_AT, &[6, 1, 0, 48, 0, 6, 1, 0, 54, 1]);
    put(COUNT_AT, &[2]);
    put(INDEXED_COUNT_AT, &[1]);
    // Workgroups of the probe fill: 4 x 64 = 256 elements.
    put(DISPATCH_AT, &[PROBE_ELEMENTS / PROBE_WORKGROUP, 1, 1]);
    bytes
}

/// Uploads the indirect arguments and the index buffer.
struct UploadArgs;

impl TypedPass for UploadArgs {
    /// The arguments, and the indices.
    type Handles = (BufferWrite, BufferWrite);
    fn name(&self) -> &str {
        "upload args"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let args = registry.create_buffer("draw args", BufferDesc { size: ARGS_BYTES });
        let indices = registry.create_buffer("indices", BufferDesc { size: 24 });
        (registry.write_buffer(args, Access::TransferWrite), registry.write_buffer(indices, Access::TransferWrite))
    }
    fn prepare(&mut self, (args, indices): &Self::Handles, context: &mut PrepareContext) {
        context.upload_buffer(args, 0, &draw_args()).expect("fits");
        context.upload_buffer(indices, 0, &words_to_bytes(&[0, 1, 2, 3, 4, 5])).expect("fits");
    }
}

/// Draws cells with every draw helper.
struct Cells {
    pipeline: GraphicsPipeline,
}

impl TypedPass for Cells {
    /// The indirect arguments, and the indices.
    type Handles = (BufferRead, BufferRead);
    fn name(&self) -> &str {
        "cells"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let args = registry.buffer("draw args");
        let indices = registry.buffer("indices");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor([0.0, 0.0, 0.0, 1.0]));
        (registry.indirect_buffer(args), registry.index_buffer(indices))
    }
    fn record_draw(&mut self, &(args, indices): &Self::Handles, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[]);
        context.push_constant_bytes(&BandParams { band_count: BANDS, column_count: COLUMNS }.bytes());
        context.draw(6, 1);
        context.draw_ranges(6..12, 1..2);
        context.bind_index_buffer(indices, 0, vk::IndexType::UINT32);
        context.draw_indexed(0..6, 12, 2..3);
        context.draw_indirect(args, DRAW_INDIRECT_AT, 2, 16);
        context.draw_indexed_indirect(args, DRAW_INDEXED_INDIRECT_AT, 1, 20);
        context.draw_indirect_count(args, DRAW_COUNT_AT, args, COUNT_AT, 3, 16);
        context.draw_indexed_indirect_count(args, DRAW_INDEXED_COUNT_AT, args, INDEXED_COUNT_AT, 2, 20);
    }
}

/// Fills `indirect filled` with the probe fill, dispatched with GPU-side arguments.
struct IndirectFill {
    pipelines: Arc<ProbePipelines>,
}

impl TypedPass for IndirectFill {
    /// The arguments, and the buffer filled.
    type Handles = (BufferRead, BufferWrite);
    fn name(&self) -> &str {
        "indirect fill"
    }
    fn register(&mut self, registry: &mut Registry) -> Self::Handles {
        let args = registry.buffer("draw args");
        let target = registry.create_buffer("indirect filled", BufferDesc { size: PROBE_BYTES });
        (registry.indirect_buffer(args), registry.write_storage_buffer(target, COMPUTE))
    }
    fn execute(&mut self, (args, target): &Self::Handles, context: &mut ExecuteContext) {
        context.bind_compute(&self.pipelines.fill_buffer, &[Binding::buffer(target)]);
        context.push_constants(&[123, 0]);
        context.dispatch_indirect(*args, DISPATCH_AT);
    }
}

fn band_pipeline(device: &Arc<GpuDevice>) -> GraphicsPipeline {
    GraphicsPipeline::new(
        device,
        "band",
        &GraphicsPipelineDesc {
            vertex: shaders::BAND_VERT.words(),
            fragment: shaders::BAND_FRAG.words(),
            bindings: &[],
            push_constant_bytes: 8,
            color_formats: &[vk::Format::R8G8B8A8_UNORM],
            depth: None,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            cull_mode: vk::CullModeFlags::NONE,
            blend: render_graph::ColorBlend::Replace,
        },
    )
    .expect("band pipeline builds")
}

#[test]
fn every_draw_and_dispatch_helper_draws_exactly_its_cells() {
    let Some(device) = gpu_test_context() else { return };
    draw_cells(&device);
}

#[test]
fn without_multi_draw_and_indirect_count_the_documented_fallbacks_draw() {
    let Some(device) = gpu_test_context_without(&["multiDrawIndirect", "drawIndirectCount"]) else { return };
    let capabilities = device.capabilities();
    assert!(!capabilities.multi_draw_indirect && !capabilities.draw_indirect_count, "withheld");
    draw_cells(&device);
}

/// Draws every cell with every helper on `device` and checks the image (the fallbacks of
/// devices without `drawIndirectCount` draw up to the maximum count).
fn draw_cells(device: &Arc<GpuDevice>) {
    let device = Arc::clone(device);
    let pipelines = Arc::new(ProbePipelines::new(&device));
    let capabilities = device.capabilities().clone();
    assert!(capabilities.draw_indirect_first_instance, "the test's commands use firstInstance");
    let readback = render_graph::readback::image_readback_buffer(&device, "readback", GRID_EXTENT).expect("allocates");
    let mut graph = RenderGraph::new(Arc::clone(&device), GRID_EXTENT).expect("graph creates");
    graph.import_buffer("readback", readback.shared());
    graph.add_typed_pass(UploadArgs);
    graph.add_typed_pass(Cells { pipeline: band_pipeline(&device) });
    graph.add_typed_pass(ReadbackPass::with_names("color", "readback"));
    graph.add_typed_pass(IndirectFill { pipelines: Arc::clone(&pipelines) });
    let filled_report = add_probe(
        &device,
        &mut graph,
        ProbePass::new("read filled", vec![read("indirect filled", ProbeKind::Buffer)], &pipelines),
    )
    .expect("reads");
    graph.execute_frame().expect("frame runs");
    graph.wait_idle().expect("frame finishes");

    assert_eq!(filled_report.read_u32().expect("maps"), filled(123), "dispatch_indirect ran 4 workgroups");
    // (band, column) of every draw: draw, draw_ranges, draw_indexed, draw_indirect (2),
    // draw_indexed_indirect, draw_indirect_count (2 of 3), draw_indexed_indirect_count (1 of 2).
    let mut cells = vec![(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (0, 8)];
    if !capabilities.draw_indirect_count {
        // The documented fallback draws up to the maximum.
        cells.extend([(2, 0), (1, 9)]);
    }
    let pixels = readback.read().expect("maps");
    let cell_width = GRID_EXTENT.width / COLUMNS;
    let cell_height = GRID_EXTENT.height / BANDS;
    for (index, pixel) in pixels.chunks_exact(4).enumerate() {
        let (x, y) = (index as u32 % GRID_EXTENT.width, index as u32 / GRID_EXTENT.width);
        let cell = (y / cell_height, x / cell_width);
        let expected =
            if cells.contains(&cell) { [cell.0 as u8 + 1, cell.1 as u8 + 1, 0, 255] } else { [0, 0, 0, 255] };
        assert_eq!(pixel, expected, "pixel ({x}, {y}) in cell {cell:?}");
    }
    drop(graph);
    assert_no_validation_messages(&device);
}

/// One misuse of the draw helpers at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Misuse {
    /// Binds as index buffer a buffer declared as indirect arguments.
    IndexBufferDeclaredIndirect,
    /// Draws in `execute`, outside the rendering scope.
    DrawOutsideRendering,
    /// Draws indexed without binding an index buffer.
    IndexedWithoutIndexBuffer,
    /// Dispatches inside the rendering scope.
    DispatchInRendering,
}

struct WrongDraws {
    pipeline: GraphicsPipeline,
    misuse: Misuse,
}

impl TypedPass for WrongDraws {
    type Handles = BufferRead;
    fn name(&self) -> &str {
        "wrong draws"
    }
    fn register(&mut self, registry: &mut Registry) -> BufferRead {
        let args = registry.buffer("draw args");
        let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
        registry.color_attachment(color, AttachmentLoad::ClearColor([0.0; 4]));
        registry.side_effect();
        registry.indirect_buffer(args)
    }
    fn execute(&mut self, _args: &BufferRead, context: &mut ExecuteContext) {
        if self.misuse == Misuse::DrawOutsideRendering {
            context.draw(3, 1);
        }
    }
    fn record_draw(&mut self, &args: &BufferRead, context: &mut ExecuteContext) {
        context.bind_graphics(&self.pipeline, &[]);
        context.push_constants(&[BANDS, COLUMNS]);
        if self.misuse == Misuse::DispatchInRendering {
            context.dispatch(1, 1, 1);
        }
        if self.misuse == Misuse::IndexBufferDeclaredIndirect {
            context.bind_index_buffer(args, 0, vk::IndexType::UINT32);
        }
        context.draw_indexed(0..6, 0, 0..1);
    }
}

#[test]
fn draws_with_wrong_declarations_or_outside_rendering_are_errors() {
    let Some(device) = gpu_test_context() else { return };
    let misuses = [
        Misuse::IndexBufferDeclaredIndirect,
        Misuse::DrawOutsideRendering,
        Misuse::IndexedWithoutIndexBuffer,
        Misuse::DispatchInRendering,
    ];
    for misuse in misuses {
        let mut graph = RenderGraph::new(Arc::clone(&device), GRID_EXTENT).expect("graph creates");
        graph.add_typed_pass(UploadArgs);
        graph.add_typed_pass(WrongDraws { pipeline: band_pipeline(&device), misuse });
        let error = graph.execute_frame().expect_err("misuse is reported");
        let expected = match misuse {
            Misuse::IndexBufferDeclaredIndirect => {
                matches!(&error, GraphError::InvalidAccess { pass, resource, reason }
                if pass == "wrong draws" && resource == "draw args" && reason.contains("index_buffer"))
            }
            Misuse::DrawOutsideRendering => matches!(&error, GraphError::InvalidCommand { pass, reason }
                if pass == "wrong draws" && reason.contains("record_draw")),
            Misuse::IndexedWithoutIndexBuffer => matches!(&error, GraphError::InvalidCommand { pass, reason }
                if pass == "wrong draws" && reason.contains("bind_index_buffer")),
            Misuse::DispatchInRendering => matches!(&error, GraphError::InvalidCommand { pass, reason }
                if pass == "wrong draws" && reason.contains("dispatches")),
        };
        assert!(expected, "{misuse:?}: {error}");
        drop(graph);
    }
    assert_no_validation_messages(&device);
}

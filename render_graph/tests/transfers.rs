//! The transfer helpers of `ExecuteContext` (fill, update and copy buffers, clear and copy
//! images), each checked against the pass's declarations: what they write lands where they
//! say, and a helper on a resource not declared for it is an error naming pass and resource,
//! with no `unsafe` in the passes. On a validated device, zero validation messages.

use std::sync::Arc;

use render_graph::readback::ReadbackPass;
use render_graph::testing::{assert_no_validation_messages, gpu_test_context};
use render_graph::{
    vk, Access, BufferDesc, BufferRead, BufferWrite, ExecuteContext, GraphError, ImageDesc, ImageRead, ImageSize,
    ImageWrite, ReadbackBuffer, Registry, RenderGraph, ShaderStage, TypedPass,
};

const BYTES: u64 = 64;

/// Fills `words` with 7, then writes 1, 2, 3, 4 at byte 16.
struct FillAndUpdate;

impl TypedPass for FillAndUpdate {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "fill and update"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let words = registry.create_buffer("words", BufferDesc { size: BYTES });
        registry.write_buffer(words, Access::TransferWrite)
    }
    fn execute(&mut self, words: &BufferWrite, context: &mut ExecuteContext<'_>) {
        context.fill_buffer(words, 0, vk::WHOLE_SIZE, 7);
        let update: Vec<u8> = [1u32, 2, 3, 4].iter().flat_map(|word| word.to_le_bytes()).collect();
        context.update_buffer(words, 16, &update);
    }
}

/// Copies `words` into the imported `words readback`, second half first.
struct CopyOut;

impl TypedPass for CopyOut {
    type Handles = (BufferRead, BufferWrite);
    fn name(&self) -> &str {
        "copy out"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let (words, target) = (registry.buffer("words"), registry.buffer("words readback"));
        (registry.read_buffer(words, Access::TransferRead), registry.write_buffer(target, Access::TransferWrite))
    }
    fn execute(&mut self, (words, target): &Self::Handles, context: &mut ExecuteContext<'_>) {
        let half = BYTES / 2;
        let regions = [
            vk::BufferCopy { src_offset: half, dst_offset: 0, size: half },
            vk::BufferCopy { src_offset: 0, dst_offset: half, size: half },
        ];
        context.copy_buffer(*words, target, &regions);
    }
}

/// Clears `tile` to a colour.
struct Clear;

impl TypedPass for Clear {
    type Handles = ImageWrite;
    fn name(&self) -> &str {
        "clear tile"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> ImageWrite {
        let desc = ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::Absolute { width: 4, height: 4 });
        let tile = registry.create_image("tile", desc);
        registry.write_image(tile, Access::TransferWrite)
    }
    fn execute(&mut self, tile: &ImageWrite, context: &mut ExecuteContext<'_>) {
        context.clear_color_image(tile, [1.0, 0.0, 1.0, 1.0]);
    }
}

/// Copies `tile` into `tile copy`.
struct CopyTile;

impl TypedPass for CopyTile {
    type Handles = (ImageRead, ImageWrite);
    fn name(&self) -> &str {
        "copy tile"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> Self::Handles {
        let tile = registry.image("tile");
        let desc = ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::Absolute { width: 4, height: 4 });
        let copy = registry.create_image("tile copy", desc);
        (registry.read_image(tile, Access::TransferRead), registry.write_image(copy, Access::TransferWrite))
    }
    fn execute(&mut self, (tile, copy): &Self::Handles, context: &mut ExecuteContext<'_>) {
        context.copy_image(*tile, copy);
    }
}

#[test]
fn fills_updates_clears_and_copies_land_where_they_say() {
    let Some(device) = gpu_test_context() else { return };
    let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 8, height: 8 }).expect("graph");
    let readback = ReadbackBuffer::new(&device, "words readback", BYTES).expect("allocates");
    graph.import_buffer("words readback", readback.shared());
    graph.add_typed_pass(FillAndUpdate);
    graph.add_typed_pass(CopyOut);
    graph.add_typed_pass(Clear);
    graph.add_typed_pass(CopyTile);
    let (readback_pass, tile) = ReadbackPass::following("tile copy");
    graph.add_typed_pass(readback_pass);
    graph.execute_frame().expect("the frame runs");
    graph.wait_idle().expect("finishes");
    let words: Vec<u32> = readback
        .read()
        .expect("finished")
        .chunks_exact(4)
        .map(|word| u32::from_le_bytes(word.try_into().expect("4 bytes")))
        .collect();
    let mut written = [7u32; 16];
    written[4..8].copy_from_slice(&[1, 2, 3, 4]);
    let swapped: Vec<u32> = written[8..].iter().chain(&written[..8]).copied().collect();
    assert_eq!(words, swapped, "filled, updated, copied half by half");
    let (extent, texels) = tile.read().expect("copied");
    assert_eq!((extent.width, extent.height), (4, 4));
    assert!(texels.chunks_exact(4).all(|texel| texel == [255, 0, 255, 255]), "cleared, then copied: {texels:?}");
    drop(graph);
    assert_no_validation_messages(&device);
}

/// Fills a buffer it declared as a storage write, or updates past the end of one it declared
/// right.
struct Misused {
    past_the_end: bool,
}

impl TypedPass for Misused {
    type Handles = BufferWrite;
    fn name(&self) -> &str {
        "misused"
    }
    fn register(&mut self, registry: &mut Registry<'_>) -> BufferWrite {
        let data = registry.create_buffer("data", BufferDesc { size: 16 });
        registry.side_effect();
        if self.past_the_end {
            registry.write_buffer(data, Access::TransferWrite)
        } else {
            registry.write_storage_buffer(data, ShaderStage::Compute)
        }
    }
    fn execute(&mut self, data: &BufferWrite, context: &mut ExecuteContext<'_>) {
        if self.past_the_end {
            context.update_buffer(data, 8, &[0; 16]);
        } else {
            context.fill_buffer(data, 0, 16, 0);
        }
    }
}

#[test]
fn a_transfer_on_a_resource_not_declared_for_it_or_past_its_end_names_pass_and_resource() {
    let Some(device) = gpu_test_context() else { return };
    for (past_the_end, wanted) in [(false, "declare it with Access::TransferWrite"), (true, "past the end")] {
        let mut graph = RenderGraph::new(Arc::clone(&device), vk::Extent2D { width: 8, height: 8 }).expect("graph");
        graph.add_typed_pass(Misused { past_the_end });
        let error = graph.execute_frame().expect_err("a misused helper");
        assert!(
            matches!(&error, GraphError::InvalidAccess { pass, resource, reason }
                if pass == "misused" && resource == "data" && reason.contains(wanted)),
            "{error}"
        );
        graph.wait_idle().expect("usable after the failed frame");
    }
    assert_no_validation_messages(&device);
}

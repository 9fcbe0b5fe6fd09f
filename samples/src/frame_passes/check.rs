//! The CPU's side of the frame passes: what each computes, from the same inputs, and
//! [`FramePassCheck`], which adds the passes to the engine's frame with the readbacks the
//! checks need and compares a drawn frame with the CPU.

use std::sync::Arc;

use culling::Visibility;
use ecs::ResolvedView;
use glam::Vec3;
use render_graph::readback::{BufferReadbackPass, ImageReadback, ReadbackPass};
use render_graph::{GpuDevice, ReadbackBuffer, RenderGraph, Result};
use renderer::truth::crop;
use renderer::{points, COLOR, DEPTH_PREPASS, OBJECT_TRANSFORMS, OBJECT_TRANSFORM_BYTES};

use super::{add_frame_passes, bob_offset, BobClock, FramePassChoice, FOG_COLOR, FOG_DENSITY, OUTLINE_THRESHOLD};

/// The host copy of the transforms the frame drew with.
const TRANSFORMS_AFTER: &str = "transforms after the frame";
/// Colour values of [`super::DebugBoxes`]' lines.
const GREEN: [u8; 4] = [0, 255, 0, 255];
const RED: [u8; 4] = [255, 0, 0, 255];
/// How far (pixels) a box line may lie outside its box's projected rectangle: rasterisation
/// rules and the GPU's rounding.
const LINE_SLACK: f32 = 1.5;
/// How far (metres) a bobbed height may differ from the CPU's: the GPU's `sin`.
const HEIGHT_TOLERANCE: f32 = 1e-3;

/// The distance along the view of a reversed-Z depth, as `view_linear_depth` in `view.h`.
pub fn linear_depth(depth: f32, near: f32, far: f32) -> f32 {
    if far.is_infinite() {
        near / depth.max(1e-30)
    } else {
        near * far / (near + depth * (far - near)).max(1e-30)
    }
}

/// What [`super::DepthPost::fog`] then (when `outline`) [`super::DepthPost::outline`] make of
/// `color` (RGBA8) over `depth`, computed on the CPU.
pub fn post_reference(
    color: &[u8],
    depth: &[f32],
    width: usize,
    planes: (f32, f32),
    fog: bool,
    outline: bool,
) -> Vec<u8> {
    let along: Vec<f32> = depth.iter().map(|&depth| linear_depth(depth, planes.0, planes.1)).collect();
    let mut out = color.to_vec();
    for (index, texel) in out.chunks_exact_mut(4).enumerate() {
        if fog {
            let amount = 1.0 - (-FOG_DENSITY * along[index]).exp();
            for (channel, fog_channel) in texel.iter_mut().zip(FOG_COLOR) {
                let seen = f32::from(*channel) / 255.0;
                *channel = ((seen + (fog_channel - seen) * amount).clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        }
        let (x, y, height) = (index % width, index / width, along.len() / width);
        let neighbour = |dx: isize, dy: isize| {
            let (nx, ny) =
                ((x as isize + dx).clamp(0, width as isize - 1), (y as isize + dy).clamp(0, height as isize - 1));
            along[ny as usize * width + nx as usize]
        };
        let here = along[index];
        let edge = [(1, 0), (-1, 0), (0, 1), (0, -1)].iter().any(|&(dx, dy)| {
            let there = neighbour(dx, dy);
            (there - here).abs() > OUTLINE_THRESHOLD * here.min(there)
        });
        if outline && edge {
            texel.copy_from_slice(&[0, 0, 0, 255]);
        }
    }
    out
}

/// Whether texel `a` and `b` differ by at most `tolerance` in every channel.
fn close(a: &[u8], b: &[u8], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(&a, &b)| a.abs_diff(b) <= tolerance)
}

/// One window view of a frame as the passes' check sees it (they run once per view, over its
/// rectangle, with its camera and bits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PostView {
    /// Its rectangle of the image in pixels: left, top, width, height.
    pub rect: [u32; 4],
    /// Its near and far planes.
    pub planes: (f32, f32),
    /// Its camera's view-projection.
    pub view_projection: glam::Mat4,
    /// Its index among the GPU cull's views (whose bits colour its box lines; 0 the main view).
    pub list: u32,
}

impl PostView {
    /// `view` over the whole image of `size`: a frame of one view.
    pub fn whole(view: &ResolvedView, (width, height): (u32, u32)) -> PostView {
        PostView {
            rect: [0, 0, width, height],
            planes: (view.near, view.far),
            view_projection: view.view_projection,
            list: 0,
        }
    }
}

/// Pixels (and objects) of one frame that do not match the CPU's computation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramePassMismatches {
    /// Pixels off the CPU's fog and outline of the colour before them (beyond 2 of 255).
    pub post: usize,
    /// Line pixels outside every box whose visibility bit has the line's colour.
    pub lines: usize,
    /// Objects not at the height the CPU says the bobbing put them.
    pub heights: usize,
}

impl FramePassMismatches {
    /// Whether everything matched.
    pub fn is_clean(&self) -> bool {
        *self == FramePassMismatches::default()
    }
}

/// The frame passes in the engine's frame, with the readbacks their checks read: the colour
/// and depth as the geometry left them (before the post-processes and lines) and the
/// transforms the frame drew with.
pub struct FramePassCheck {
    choice: FramePassChoice,
    clock: BobClock,
    color: Option<ImageReadback>,
    depth: Option<ImageReadback>,
    transforms: Option<ReadbackBuffer>,
}

impl FramePassCheck {
    /// The check of `choice` for a frame of up to `capacity` slots, and what adds the passes
    /// and readbacks to the engine's frame (give it to `RenderSetup::passes`).
    pub fn new(
        device: &Arc<GpuDevice>,
        choice: FramePassChoice,
        capacity: u32,
        clock: BobClock,
    ) -> Result<(FramePassCheck, impl FnOnce(&mut RenderGraph) -> Result<()> + Send + 'static)> {
        let drawn_over = choice.fog || choice.outline || choice.boxes;
        let (color_pass, color) = ReadbackPass::following(COLOR);
        let (depth_pass, depth) = ReadbackPass::following(DEPTH_PREPASS);
        let transforms = if choice.bob {
            let bytes = u64::from(capacity.max(1)) * OBJECT_TRANSFORM_BYTES;
            Some(ReadbackBuffer::new(device, TRANSFORMS_AFTER, bytes)?)
        } else {
            None
        };
        let check = FramePassCheck {
            choice,
            clock: clock.clone(),
            color: drawn_over.then(|| color.clone()),
            depth: (choice.fog || choice.outline).then(|| depth.clone()),
            transforms: transforms.clone(),
        };
        let add = move |graph: &mut RenderGraph| {
            if drawn_over {
                graph.add_typed_pass_at(points::AFTER_GEOMETRY, color_pass)?;
            }
            if choice.fog || choice.outline {
                graph.add_typed_pass_at(points::AFTER_GEOMETRY, depth_pass)?;
            }
            if let Some(transforms) = &transforms {
                graph.import_buffer(TRANSFORMS_AFTER, transforms.shared());
                graph.add_typed_pass_at(
                    points::BEFORE_OUTPUT,
                    BufferReadbackPass::new(OBJECT_TRANSFORMS, TRANSFORMS_AFTER),
                )?;
            }
            add_frame_passes(graph, &choice, capacity, &clock)
        };
        Ok((check, add))
    }

    /// The colour as the geometry drew it, before the post-processes and lines (RGBA8), when
    /// any is chosen: what a culling check compares with a reference.
    pub fn color_before(&self) -> Option<Vec<u8>> {
        self.color.as_ref().and_then(|color| color.read().ok()).map(|(_, texels)| texels)
    }

    /// Compares the frame just drawn and waited for with the CPU: `image` is its final colour
    /// (RGBA8, `width` wide), `bits` the GPU's visibility bits of the frame (with `view_bits`,
    /// every window view's, in a split-screen frame: [`renderer::RenderReport::view_bits`]) and
    /// `visibility` the frame's answer (camera, world boxes and host places by slot). The passes
    /// are checked per view of `views` (a split-screen's); none: the whole image is the main
    /// view's.
    pub fn check(
        &self,
        visibility: &Visibility,
        views: &[PostView],
        (bits, view_bits): (&[u64], &[u64]),
        image: &[u8],
        width: u32,
    ) -> std::result::Result<FramePassMismatches, String> {
        let main = visibility.view().ok_or("no camera this frame")?;
        let mut mismatches = FramePassMismatches::default();
        let height = image.len() as u32 / 4 / width.max(1);
        let whole = [PostView::whole(main, (width, height))];
        let views = if views.is_empty() { &whole[..] } else { views };
        if let Some(view) =
            views.iter().find(|view| view.rect[0] + view.rect[2] > width || view.rect[1] + view.rect[3] > height)
        {
            return Err(format!("the view's rectangle {:?} is outside the {width}x{height} image", view.rect));
        }
        if self.choice.boxes {
            for view in views {
                let words = bits.len();
                let start = view.list as usize * words;
                let own = if view_bits.is_empty() { Some(bits) } else { view_bits.get(start..start + words) };
                let own = own.ok_or_else(|| format!("no bits of the GPU's view {}", view.list))?;
                mismatches.lines += self.wrong_lines(visibility, view, own, (image, width));
            }
        }
        if self.choice.fog || self.choice.outline {
            mismatches.post = self.wrong_post(views, image, width)?;
        }
        if let Some(transforms) = &self.transforms {
            let bytes = transforms.read().map_err(|error| error.to_string())?;
            mismatches.heights = wrong_heights(visibility, bytes, self.clock.frame());
        }
        Ok(mismatches)
    }

    /// Whether `texel` is a box line's (the boxes drawn, and its colour one of theirs).
    fn is_line(&self, texel: &[u8]) -> bool {
        self.choice.boxes && (texel == GREEN || texel == RED)
    }

    /// Line pixels of `view`'s rectangle of `image` (RGBA8, `width` wide) outside every box
    /// whose bit of the view's `bits` has the line's colour.
    fn wrong_lines(
        &self,
        visibility: &Visibility,
        view: &PostView,
        bits: &[u64],
        (image, width): (&[u8], u32),
    ) -> usize {
        let [_, _, w, h] = view.rect;
        let (green, red) = line_cover(visibility, bits, view.view_projection, (w, h), self.choice, self.clock.frame());
        crop(image, width, view.rect)
            .chunks_exact(4)
            .enumerate()
            .filter(|&(index, texel)| {
                let allowed = if texel == GREEN { green[index] } else { texel != RED || red[index] };
                self.is_line(texel) && !allowed
            })
            .count()
    }

    /// Pixels off the CPU's fog and outline, view by view, of the colour before them (beyond 2
    /// of 255), the box lines left out.
    fn wrong_post(&self, views: &[PostView], image: &[u8], width: u32) -> std::result::Result<usize, String> {
        let read = |readback: &Option<ImageReadback>| {
            readback.as_ref().ok_or("no readback").and_then(|readback| readback.read().map_err(|_| "not copied"))
        };
        let (_, before) = read(&self.color)?;
        let (_, depth) = read(&self.depth)?;
        if before.len() != image.len() || depth.len() != image.len() {
            return Err(String::from("the colour before the post-processes or the depth has another size"));
        }
        let mut wrong = 0;
        for &PostView { rect, planes, .. } in views {
            let depths: Vec<f32> = crop(&depth, width, rect)
                .chunks_exact(4)
                .map(|texel| f32::from_le_bytes([texel[0], texel[1], texel[2], texel[3]]))
                .collect();
            let (fog, outline) = (self.choice.fog, self.choice.outline);
            let wanted = post_reference(&crop(&before, width, rect), &depths, rect[2] as usize, planes, fog, outline);
            wrong += crop(image, width, rect)
                .chunks_exact(4)
                .zip(wanted.chunks_exact(4))
                .filter(|&(texel, wanted)| !self.is_line(texel) && !close(texel, wanted, 2))
                .count();
        }
        Ok(wrong)
    }
}

/// Per pixel: whether a green (visible) and a red (culled) box line may lie there, from the
/// screen rectangles of every drawable object's world box (moved by the bobbing).
fn line_cover(
    visibility: &Visibility,
    bits: &[u64],
    view_projection: glam::Mat4,
    (width, height): (u32, u32),
    choice: FramePassChoice,
    frame: u64,
) -> (Vec<bool>, Vec<bool>) {
    let pixels = width as usize * height as usize;
    let (mut green, mut red) = (vec![false; pixels], vec![false; pixels]);
    let objects = visibility.objects();
    for slot in 0..objects.len() {
        if !objects.draws[slot].mesh.is_some() {
            continue;
        }
        let lift = if choice.bob { Vec3::Y * bob_offset(slot as u32, frame) } else { Vec3::ZERO };
        let bounds = objects.bounds[slot];
        let Some([x0, y0, x1, y1]) = screen_rect(view_projection, bounds.min + lift, bounds.max + lift, width, height)
        else {
            continue;
        };
        let visible = bits.get(slot / 64).is_some_and(|word| word >> (slot % 64) & 1 == 1);
        let cover = if visible { &mut green } else { &mut red };
        let clamp = |value: f32, end: u32| value.clamp(0.0, end as f32) as usize;
        let (x0, x1) = (clamp((x0 - LINE_SLACK).floor(), width), clamp((x1 + LINE_SLACK).ceil(), width));
        let (y0, y1) = (clamp((y0 - LINE_SLACK).floor(), height), clamp((y1 + LINE_SLACK).ceil(), height));
        for y in y0..y1 {
            cover[y * width as usize + x0..y * width as usize + x1].fill(true);
        }
    }
    (green, red)
}

/// The screen rectangle (pixels, y down) of the box `min..max` through `view_projection`: `None` when it
/// lies wholly off screen, the whole screen when a corner is behind the eye (its clipped lines
/// may cross anywhere).
fn screen_rect(view_projection: glam::Mat4, min: Vec3, max: Vec3, width: u32, height: u32) -> Option<[f32; 4]> {
    let (w, h) = (width as f32, height as f32);
    let mut rect = [f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
    for corner in 0..8 {
        let point = Vec3::new(
            if corner & 1 != 0 { max.x } else { min.x },
            if corner & 2 != 0 { max.y } else { min.y },
            if corner & 4 != 0 { max.z } else { min.z },
        );
        let clip = view_projection * point.extend(1.0);
        if clip.w <= 1e-6 {
            return Some([0.0, 0.0, w, h]);
        }
        let (x, y) = ((clip.x / clip.w * 0.5 + 0.5) * w, (0.5 - clip.y / clip.w * 0.5) * h);
        rect = [rect[0].min(x), rect[1].min(y), rect[2].max(x), rect[3].max(y)];
    }
    let off_screen =
        rect[2] < -LINE_SLACK || rect[3] < -LINE_SLACK || rect[0] > w + LINE_SLACK || rect[1] > h + LINE_SLACK;
    (!off_screen).then_some(rect)
}

/// Drawable objects whose height in `transforms` (the GPU's, after the frame) is not the host's
/// plus [`bob_offset`].
fn wrong_heights(visibility: &Visibility, transforms: &[u8], frame: u64) -> usize {
    let objects = visibility.objects();
    // Row r of slot s starts at float s * 12 + r * 4; its w is the translation's component r.
    let height_of = |slot: usize| {
        let at = (slot * 12 + 7) * 4;
        transforms
            .get(at..at + 4)
            .map_or(f32::NAN, |bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    };
    (0..objects.len())
        .filter(|&slot| objects.draws[slot].mesh.is_some())
        .filter(|&slot| {
            let wanted = objects.models[slot].w_axis.y + bob_offset(slot as u32, frame);
            let error = (height_of(slot) - wanted).abs();
            error.is_nan() || error > HEIGHT_TOLERANCE
        })
        .count()
}

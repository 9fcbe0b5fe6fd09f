//! The registry passes declare through in `register`: resources by name (created, referred
//! to, optional, last frame's version) and how the pass accesses each, checked as they are
//! declared; the declarations it fills are `decl.rs`'s.

use super::decl::{AccessDecl, GraphDecl, Origin, PassDecl, PassMeta, NO_VIEW};
use super::desc::{AttachmentLoad, BufferDesc, ImageDesc, ResourceKind};
use super::handles::{BufferHandle, BufferRead, BufferWrite, ImageHandle, ImageRead, ImageWrite, Named};
use crate::access::{Access, MipRange, ShaderStage};
use ash::vk;

impl GraphDecl {
    /// Declares one pass: runs `register` against a registry for it.
    pub fn declare_pass(&mut self, name: &str, register: impl FnOnce(&mut Registry<'_>)) {
        self.declare_pass_of(name, PassMeta::default(), register);
    }

    /// Declares one pass with what the graph knows of it (owner, point, site).
    pub(crate) fn declare_pass_of(&mut self, name: &str, meta: PassMeta, register: impl FnOnce(&mut Registry<'_>)) {
        let index = self.passes.len();
        let PassMeta { owner, point, site } = meta;
        self.passes.push(PassDecl { name: name.to_owned(), owner, point, site, ..PassDecl::default() });
        let mut registry = Registry { decl: self, pass: index };
        register(&mut registry);
    }
}

/// Handed to [`crate::TypedPass::register`] (and [`crate::Pass::register`]): declares the
/// resources a pass creates or uses and how it accesses each. Naming a resource gives an
/// [`ImageHandle`] or a [`BufferHandle`] (equal across passes for the same name), good only
/// for declaring an access; a read access gives a read handle ([`ImageRead`],
/// [`BufferRead`]), a write access a write handle ([`ImageWrite`], [`BufferWrite`]), which the
/// pass keeps (its `Handles`) to resolve, bind and record with.
pub struct Registry<'graph> {
    decl: &'graph mut GraphDecl,
    pass: usize,
}

impl Registry<'_> {
    fn create(&mut self, name: &str, kind: ResourceKind, origin: Origin) -> u32 {
        let index = self.decl.intern(name, kind, false, self.pass);
        let resource = &mut self.decl.resources[index as usize];
        resource.creations += 1;
        resource.creators.push(self.pass);
        resource.required = true;
        if resource.kind != kind {
            self.decl.passes[self.pass].invalid = Some((index, "the name is used for both an image and a buffer"));
        } else if resource.creations == 1 {
            resource.origin = origin;
        }
        index
    }

    /// Declares an image the graph creates (transient unless some pass reads its history).
    pub fn create_image(&mut self, name: &str, desc: ImageDesc) -> ImageHandle {
        ImageHandle(self.create(name, ResourceKind::Image, Origin::CreatedImage(desc)))
    }

    /// Declares a buffer the graph creates.
    pub fn create_buffer(&mut self, name: &str, desc: BufferDesc) -> BufferHandle {
        BufferHandle(self.create(name, ResourceKind::Buffer, Origin::CreatedBuffer(desc)))
    }

    fn refer(&mut self, name: &str, kind: ResourceKind, history: bool) -> u32 {
        let index = self.refer_maybe(name, kind, history);
        self.decl.resources[index as usize].required = true;
        index
    }

    fn refer_maybe(&mut self, name: &str, kind: ResourceKind, history: bool) -> u32 {
        let index = self.decl.intern(name, kind, history, self.pass);
        if self.decl.resources[index as usize].kind != kind {
            self.decl.passes[self.pass].invalid = Some((index, "the name is used for both an image and a buffer"));
        }
        if history {
            let base = self.decl.intern(name, kind, false, self.pass);
            self.decl.resources[index as usize].origin = Origin::History { of: base };
        }
        index
    }

    /// Refers to an image created by another pass or imported into the graph.
    pub fn image(&mut self, name: &str) -> ImageHandle {
        ImageHandle(self.refer(name, ResourceKind::Image, false))
    }

    /// Refers to a buffer created by another pass or imported into the graph.
    pub fn buffer(&mut self, name: &str) -> BufferHandle {
        BufferHandle(self.refer(name, ResourceKind::Buffer, false))
    }

    /// Refers to an image that may not exist this frame (one that only some frames create,
    /// such as `hiz_depth`, made only by GPU culling): when no pass creates it and nobody
    /// imported it, the accesses declared to it are dropped instead of failing the
    /// compilation, and the pass asks [`crate::ExecuteContext::exists`] (or
    /// [`crate::PrepareContext::exists`]) before it uses it. So one pass serves every kind
    /// of frame. A resource another pass refers to plainly ([`Registry::image`]) is required.
    pub fn optional_image(&mut self, name: &str) -> ImageHandle {
        ImageHandle(self.refer_maybe(name, ResourceKind::Image, false))
    }

    /// Refers to a buffer that may not exist this frame (see [`Registry::optional_image`]).
    pub fn optional_buffer(&mut self, name: &str) -> BufferHandle {
        BufferHandle(self.refer_maybe(name, ResourceKind::Buffer, false))
    }

    /// Asks to write `resource`, which belongs to the engine (see
    /// [`crate::RenderGraph::set_owner`]): a pass of the user's that writes an engine
    /// resource without asking is refused ([`crate::GraphError::EngineResourceWrite`],
    /// naming the pass and the engine pass that writes it). The escape hatch is audited: each
    /// claim is logged once when the graph compiles, naming the pass, where it was added and
    /// the resource. The write itself is declared as usual; a GPU animation that moves
    /// objects before the cull writes `object_transforms` this way:
    ///
    /// ```no_run
    /// # use render_graph::{Registry, ShaderStage, BufferWrite};
    /// # fn register(registry: &mut Registry) -> BufferWrite {
    /// let transforms = registry.buffer("object_transforms");
    /// registry.claim_engine_write(transforms);
    /// registry.read_write_storage_buffer(transforms, ShaderStage::Compute)
    /// # }
    /// ```
    pub fn claim_engine_write(&mut self, resource: impl Named) {
        let resource = resource.index();
        let claims = &mut self.decl.passes[self.pass].claims;
        if !claims.contains(&resource) {
            claims.push(resource);
        }
    }

    /// Refers to last frame's version of a created image (e.g. `depth_prepass` for the
    /// next frame's Hi-Z). The first frame sees it cleared to zero, and so does the first
    /// frame after a recompile that changed the image's description (format, size, mips,
    /// usage); a recompile that leaves it unchanged (e.g. a resize that does not change its
    /// size) keeps last frame's contents. [`crate::ExecuteContext::history_was_reset`] says
    /// which.
    pub fn history_image(&mut self, name: &str) -> ImageHandle {
        ImageHandle(self.refer(name, ResourceKind::Image, true))
    }

    /// Refers to last frame's version of a created buffer (zero in the first frame and after
    /// a recompile that changed its size or usage, as for [`Registry::history_image`]).
    pub fn history_buffer(&mut self, name: &str) -> BufferHandle {
        BufferHandle(self.refer(name, ResourceKind::Buffer, true))
    }

    fn declare(&mut self, resource: u32, access: Access, load: Option<AttachmentLoad>) {
        self.declare_mips(resource, access, load, MipRange::ALL);
    }

    fn declare_mips(&mut self, resource: u32, access: Access, load: Option<AttachmentLoad>, mips: MipRange) {
        let pass = &mut self.decl.passes[self.pass];
        let step = pass.last_step;
        if mips.count == 0 {
            pass.invalid = Some((resource, "the mip range is empty"));
            return;
        }
        if load.is_some() && step > 0 {
            pass.invalid = Some((resource, "attachments belong in the pass's first step"));
            return;
        }
        let overlapping = pass
            .accesses
            .iter()
            .any(|existing| existing.resource == resource && existing.step == step && existing.mips.overlaps(mips));
        if overlapping {
            let reason = if mips.is_all() {
                "the pass declares two accesses to it; declare one (e.g. a read-write)"
            } else {
                "the pass declares two accesses to overlapping mips of it; declare one per mip (e.g. a read-write)"
            };
            pass.invalid = Some((resource, reason));
            return;
        }
        pass.accesses.push(AccessDecl { resource, access, load, mips, view: NO_VIEW, step });
    }

    /// Checks that `access` fits the kind of resource and the kind of handle asked for (a
    /// read handle for a read, a write handle for a write), then declares it on `mips`.
    fn declare_checked(&mut self, resource: u32, access: Access, mips: MipRange, image: bool, write: bool) {
        use crate::access::Applies;
        let applies = access.applies_to();
        let reason = if image && applies == Applies::BuffersOnly {
            Some("a buffer-only access on an image")
        } else if !image && applies == Applies::ImagesOnly {
            Some("an image-only access on a buffer")
        } else if image && access.is_attachment() && !mips.is_all() {
            Some("attachments cover the whole image; declare them with color_attachment or depth_attachment")
        } else if access.is_write() && !write {
            Some("a write access declared through a read method (read_image, read_buffer); declare it with write_image or write_buffer")
        } else if !access.is_write() && write {
            Some("a read access declared through a write method (write_image, write_buffer); declare it with read_image or read_buffer")
        } else {
            None
        };
        if let Some(reason) = reason {
            self.decl.passes[self.pass].invalid = Some((resource, reason));
        }
        self.declare_mips(resource, access, None, mips);
    }

    /// Declares a read of an image by any reading `access` (a write access is
    /// [`crate::GraphError::InvalidAccess`] naming the pass and the image; declare it with
    /// [`Registry::write_image`]). The helpers below name the common ones.
    pub fn read_image(&mut self, image: ImageHandle, access: Access) -> ImageRead {
        self.declare_checked(image.0, access, MipRange::ALL, true, false);
        ImageRead(image.0)
    }

    /// Declares a write of an image by any writing `access` (a read access is
    /// [`crate::GraphError::InvalidAccess`]; declare it with [`Registry::read_image`]).
    pub fn write_image(&mut self, image: ImageHandle, access: Access) -> ImageWrite {
        self.declare_checked(image.0, access, MipRange::ALL, true, true);
        ImageWrite(image.0)
    }

    /// Declares a read of a buffer by any reading `access` (see [`Registry::read_image`]).
    pub fn read_buffer(&mut self, buffer: BufferHandle, access: Access) -> BufferRead {
        self.declare_checked(buffer.0, access, MipRange::ALL, false, false);
        BufferRead(buffer.0)
    }

    /// Declares a write of a buffer by any writing `access` (see [`Registry::write_image`]).
    pub fn write_buffer(&mut self, buffer: BufferHandle, access: Access) -> BufferWrite {
        self.declare_checked(buffer.0, access, MipRange::ALL, false, true);
        BufferWrite(buffer.0)
    }

    /// Declares a read of the mips `mips` of an image (one level: [`MipRange::level`]).
    /// Barriers are placed per mip range: this pass waits only for earlier accesses to these
    /// mips, and leaves the others in their own state and layout. The pass gets a view of the
    /// range ([`crate::ExecuteContext::image_view_mips`], [`crate::Binding::image_mips`]).
    ///
    /// Compiling fails with [`crate::GraphError::MipRangeOutOfBounds`] when the range does
    /// not fit the image's mips, and with [`crate::GraphError::InvalidAccess`] when it is
    /// empty, overlaps another declaration of this pass on the same image, is an attachment
    /// access (attachments cover the whole image) or a write.
    pub fn read_image_mips(&mut self, image: ImageHandle, mips: impl Into<MipRange>, access: Access) -> ImageRead {
        self.declare_checked(image.0, access, mips.into(), true, false);
        ImageRead(image.0)
    }

    /// Declares a write of the mips `mips` of an image (see [`Registry::read_image_mips`]; a
    /// read access is [`crate::GraphError::InvalidAccess`]).
    pub fn write_image_mips(&mut self, image: ImageHandle, mips: impl Into<MipRange>, access: Access) -> ImageWrite {
        self.declare_checked(image.0, access, mips.into(), true, true);
        ImageWrite(image.0)
    }

    /// Mip `mip` of the image is a storage image written (not read) by `stage`.
    pub fn write_storage_image_mip(&mut self, image: ImageHandle, mip: u32, stage: ShaderStage) -> ImageWrite {
        self.write_image_mips(image, MipRange::level(mip), Access::StorageWrite(stage))
    }

    /// Mip `mip` of the image is a storage image read (not written) by `stage`.
    pub fn read_storage_image_mip(&mut self, image: ImageHandle, mip: u32, stage: ShaderStage) -> ImageRead {
        self.read_image_mips(image, MipRange::level(mip), Access::StorageRead(stage))
    }

    /// The mips `mips` of the image are sampled by `stage` (e.g. `0..n` of a pyramid whose
    /// later levels are still being built).
    pub fn read_sampled_image_mips(
        &mut self,
        image: ImageHandle,
        mips: impl Into<MipRange>,
        stage: ShaderStage,
    ) -> ImageRead {
        self.read_image_mips(image, mips, Access::Sampled(stage))
    }

    /// The image is sampled by `stage`.
    pub fn sample(&mut self, image: ImageHandle, stage: ShaderStage) -> ImageRead {
        self.read_image(image, Access::Sampled(stage))
    }

    /// The image is a storage image written (not read) by `stage`.
    pub fn write_storage_image(&mut self, image: ImageHandle, stage: ShaderStage) -> ImageWrite {
        self.write_image(image, Access::StorageWrite(stage))
    }

    /// The image is a storage image read (not written) by `stage`.
    pub fn read_storage_image(&mut self, image: ImageHandle, stage: ShaderStage) -> ImageRead {
        self.read_image(image, Access::StorageRead(stage))
    }

    /// The image is a storage image read and written in place by `stage`: it sees the
    /// version written before this pass in declaration order and makes a new one.
    pub fn read_write_storage_image(&mut self, image: ImageHandle, stage: ShaderStage) -> ImageWrite {
        self.write_image(image, Access::StorageReadWrite(stage))
    }

    /// The buffer is a storage buffer read and written in place by `stage` (see
    /// [`Registry::read_write_storage_image`]).
    pub fn read_write_storage_buffer(&mut self, buffer: BufferHandle, stage: ShaderStage) -> BufferWrite {
        self.write_buffer(buffer, Access::StorageReadWrite(stage))
    }

    /// The buffer is a uniform buffer read by `stage`.
    pub fn read_uniform_buffer(&mut self, buffer: BufferHandle, stage: ShaderStage) -> BufferRead {
        self.read_buffer(buffer, Access::UniformRead(stage))
    }

    /// The buffer holds indirect draw or dispatch arguments (or a draw count) that this pass
    /// consumes with [`crate::ExecuteContext::draw_indirect`] and friends.
    pub fn indirect_buffer(&mut self, buffer: BufferHandle) -> BufferRead {
        self.read_buffer(buffer, Access::IndirectArgument)
    }

    /// The buffer is bound with [`crate::ExecuteContext::bind_index_buffer`].
    pub fn index_buffer(&mut self, buffer: BufferHandle) -> BufferRead {
        self.read_buffer(buffer, Access::IndexBuffer)
    }

    /// The buffer is a vertex buffer.
    pub fn vertex_buffer(&mut self, buffer: BufferHandle) -> BufferRead {
        self.read_buffer(buffer, Access::VertexBuffer)
    }

    /// The buffer is a storage buffer read by `stage`.
    pub fn read_storage_buffer(&mut self, buffer: BufferHandle, stage: ShaderStage) -> BufferRead {
        self.read_buffer(buffer, Access::StorageRead(stage))
    }

    /// The buffer is a storage buffer written (not read) by `stage`.
    pub fn write_storage_buffer(&mut self, buffer: BufferHandle, stage: ShaderStage) -> BufferWrite {
        self.write_buffer(buffer, Access::StorageWrite(stage))
    }

    /// The image is a color attachment of this pass's rendering, which starts with `load`.
    pub fn color_attachment(&mut self, image: ImageHandle, load: AttachmentLoad) -> ImageWrite {
        self.declare(image.0, Access::ColorAttachment, Some(load));
        ImageWrite(image.0)
    }

    /// The image is the depth attachment (tested and written), which starts with `load`.
    pub fn depth_attachment(&mut self, image: ImageHandle, load: AttachmentLoad) -> ImageWrite {
        self.declare(image.0, Access::DepthAttachment, Some(load));
        ImageWrite(image.0)
    }

    /// The image is a read-only depth attachment (tested, not written).
    pub fn depth_read(&mut self, image: ImageHandle) -> ImageRead {
        self.declare(image.0, Access::DepthRead, Some(AttachmentLoad::Load));
        ImageRead(image.0)
    }

    /// The pass must run even when nobody reads what it writes (e.g. it writes to the host).
    pub fn side_effect(&mut self) {
        self.decl.passes[self.pass].side_effect = true;
    }

    /// The pass serves other passes only, and is expected not to run when none reads what it
    /// writes (the engine's `view` upload in a frame whose passes do not read it). Other
    /// passes that do not run for that reason are logged once as a likely mistake (a shader
    /// write declared as a read, say): see [`crate::RenderGraph::culled_passes`].
    pub fn optional(&mut self) {
        self.decl.passes[self.pass].optional = true;
    }

    /// The extent the graph resolves [`ImageSize::OUTPUT`](crate::ImageSize::OUTPUT) to while
    /// compiling (e.g. to know how many mips a full chain will have:
    /// [`crate::full_mip_chain`]); the graph recompiles, and registers again, when it changes.
    pub fn output_extent(&self) -> vk::Extent2D {
        self.decl.output_extent
    }

    /// Starts the next *step* of this pass: declarations made from now on belong to it, and
    /// the barriers they need are recorded when `execute` calls
    /// [`crate::ExecuteContext::next_step`] (a pass declares steps 0..=n and begins each in
    /// order). A pass that reduces a mip chain declares one step per mip (read mip `k - 1`,
    /// write mip `k`) and the graph places its mip-to-mip barriers. Declarations of
    /// different steps may overlap; within a step they may not. Attachments belong in step 0.
    pub fn next_step(&mut self) {
        self.decl.passes[self.pass].last_step += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::ImageSize;

    #[test]
    fn same_name_gives_same_handle_across_passes() {
        let mut decl = GraphDecl::default();
        let mut created = None;
        decl.declare_pass("a", |registry| {
            created =
                Some(registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT)));
        });
        let mut referred = None;
        decl.declare_pass("b", |registry| referred = Some(registry.image("color")));
        assert_eq!(created, referred);
        assert_eq!(decl.resource_count(), 1);
    }

    #[test]
    fn history_is_a_separate_resource_linked_to_its_base() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("hiz", |registry| {
            registry.history_image("depth_prepass");
        });
        assert_eq!(decl.resource_count(), 2);
        assert_eq!(decl.resources[0].origin, Origin::History { of: 1 });
        assert_eq!(decl.resource_name(0), "depth_prepass (previous frame)");
    }

    #[test]
    fn two_accesses_to_one_resource_are_flagged() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("twice", |registry| {
            let buffer = registry.create_buffer("data", BufferDesc { size: 16 });
            registry.read_storage_buffer(buffer, ShaderStage::Compute);
            registry.write_storage_buffer(buffer, ShaderStage::Compute);
        });
        assert!(decl.passes[0].invalid.is_some());
    }

    #[test]
    fn a_write_through_a_read_method_and_the_reverse_are_flagged() {
        let mut decl = GraphDecl::default();
        decl.declare_pass("sneaky write", |registry| {
            let buffer = registry.create_buffer("data", BufferDesc { size: 16 });
            registry.read_buffer(buffer, Access::TransferWrite);
        });
        decl.declare_pass("timid read", |registry| {
            let image = registry.image("color");
            registry.write_image(image, Access::Sampled(ShaderStage::Fragment));
        });
        decl.declare_pass("honest", |registry| {
            let buffer = registry.buffer("data");
            registry.read_buffer(buffer, Access::TransferRead);
            let image = registry.image("color");
            registry.write_image(image, Access::TransferWrite);
        });
        let reasons: Vec<_> = decl.passes.iter().map(|pass| pass.invalid.map(|(_, reason)| reason)).collect();
        assert!(
            reasons[0].is_some_and(|reason| reason.contains("write access declared through a read")),
            "{reasons:?}"
        );
        assert!(
            reasons[1].is_some_and(|reason| reason.contains("read access declared through a write")),
            "{reasons:?}"
        );
        assert_eq!(reasons[2], None, "matching kinds are fine");
        let error = crate::compile::compile(&decl, &|_, _| false).expect_err("a write through a read method");
        assert!(
            matches!(&error, crate::GraphError::InvalidAccess { pass, resource, .. }
                if pass == "sneaky write" && resource == "data"),
            "{error}"
        );
    }
}

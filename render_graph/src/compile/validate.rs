//! Checks of the declarations before anything is ordered: unique pass names, one creator per
//! resource (and not also imported), accesses that fit their resource, no read of a created
//! resource nobody writes, history of created resources only and read-only, and mip ranges
//! inside their images; and who may write what (`check_ownership`). Each error names the
//! pass and the resource.

use super::decl::{GraphDecl, Origin};
use super::desc::{AttachmentLoad, ImageDesc, ResourceKind};
use super::owner::Owner;
use crate::error::{GraphError, Result};

/// Checks every declared mip range against `mip_levels(resource)` (`None`: not known yet).
pub(crate) fn check_mip_ranges(decl: &GraphDecl, mip_levels: &dyn Fn(u32) -> Option<u32>) -> Result<()> {
    for pass in &decl.passes {
        for access in pass.accesses.iter().filter(|access| !access.mips.is_all()) {
            let Some(levels) = mip_levels(access.resource) else { continue };
            if !access.mips.fits(levels) {
                return Err(GraphError::MipRangeOutOfBounds {
                    pass: pass.name.clone(),
                    resource: decl.resource_name(access.resource).to_owned(),
                    base: access.mips.base,
                    count: access.mips.count,
                    mip_levels: levels,
                });
            }
        }
    }
    Ok(())
}

/// The mip count of a created image whose description fixes it (not a full chain).
fn declared_mip_levels(decl: &GraphDecl, resource: u32) -> Option<u32> {
    match decl.resources[resource as usize].origin {
        Origin::CreatedImage(desc) if desc.mip_levels != ImageDesc::FULL_MIP_CHAIN => Some(desc.mip_levels),
        Origin::History { of } => declared_mip_levels(decl, of),
        _ => None,
    }
}

/// Checks every declaration of `decl`; `is_imported(name, kind)` tells which names the graph
/// imports.
pub(super) fn validate(decl: &GraphDecl, is_imported: &dyn Fn(&str, ResourceKind) -> bool) -> Result<()> {
    for pass in &decl.passes {
        if let Some((resource, reason)) = pass.invalid {
            return Err(GraphError::InvalidAccess {
                pass: pass.name.clone(),
                resource: decl.resource_name(resource).to_owned(),
                reason,
            });
        }
    }
    for (index, pass) in decl.passes.iter().enumerate() {
        if decl.passes[..index].iter().any(|earlier| earlier.name == pass.name) {
            let sites = decl
                .passes
                .iter()
                .filter(|other| other.name == pass.name && !other.site.is_empty())
                .map(|other| other.site.clone())
                .collect();
            return Err(GraphError::DuplicatePass { name: pass.name.clone(), sites });
        }
    }
    for resource in &decl.resources {
        let imported = is_imported(&resource.name, resource.kind);
        if resource.creations > 1 || (resource.creations == 1 && imported) {
            return Err(GraphError::DuplicateResource {
                resource: resource.name.clone(),
                passes: resource.creators.iter().map(|&pass| decl.passes[pass].name.clone()).collect(),
                imported,
            });
        }
        if resource.origin == Origin::Referenced && !imported && resource.required {
            return Err(GraphError::MissingResource {
                pass: decl.passes[resource.first_user].name.clone(),
                resource: resource.name.clone(),
                nearest: None,
            });
        }
        if let Origin::History { of } = resource.origin {
            let base = &decl.resources[of as usize];
            if base.creations == 0 {
                return Err(GraphError::InvalidAccess {
                    pass: decl.passes[resource.first_user].name.clone(),
                    resource: base.name.clone(),
                    reason: "last frame's version is kept only for resources the graph creates",
                });
            }
        }
    }
    let written: Vec<bool> = {
        let mut written = vec![false; decl.resources.len()];
        for pass in &decl.passes {
            for access in pass.accesses.iter().filter(|access| access.access.is_write()) {
                written[access.resource as usize] = true;
            }
        }
        written
    };
    for pass in &decl.passes {
        for access in &pass.accesses {
            let resource = &decl.resources[access.resource as usize];
            let source = match resource.origin {
                Origin::History { of } => of,
                _ => access.resource,
            };
            let source_resource = &decl.resources[source as usize];
            let created = source_resource.creations == 1;
            let reads = access.access.is_read() && !access.access.is_write();
            let is_history = matches!(resource.origin, Origin::History { .. });
            if (reads || is_history) && created && !written[source as usize] {
                return Err(GraphError::ReadWithoutWriter {
                    pass: pass.name.clone(),
                    resource: source_resource.name.clone(),
                });
            }
            if is_history && access.access.is_write() {
                return Err(GraphError::InvalidAccess {
                    pass: pass.name.clone(),
                    resource: resource.name.clone(),
                    reason: "last frame's version is read-only",
                });
            }
        }
    }
    check_mip_ranges(decl, &|resource| declared_mip_levels(decl, resource))
}

/// Checks every user pass's writes against the owners of what it writes: `import_owner`
/// gives an imported name's owner, `shared` whether the engine opened a resource to every
/// pass. A write of an engine resource the pass did not claim is
/// [`GraphError::EngineResourceWrite`]; a clear of a shared engine image (what earlier passes
/// drew) is [`GraphError::InvalidAccess`].
pub(crate) fn check_ownership(
    decl: &GraphDecl,
    import_owner: &dyn Fn(&str) -> Option<Owner>,
    shared: &dyn Fn(&str) -> bool,
) -> Result<()> {
    for pass in decl.passes.iter().filter(|pass| pass.owner == Owner::User) {
        for access in pass.accesses.iter().filter(|access| access.access.is_write()) {
            let resource = &decl.resources[access.resource as usize];
            if matches!(resource.origin, Origin::History { .. }) {
                continue;
            }
            let owner = match resource.creators.first() {
                Some(&creator) => Some(decl.passes[creator].owner),
                None => import_owner(&resource.name),
            };
            if owner != Some(Owner::Engine) {
                continue;
            }
            if shared(&resource.name) {
                if matches!(access.load, Some(AttachmentLoad::ClearColor(_) | AttachmentLoad::ClearDepth(_))) {
                    return Err(GraphError::InvalidAccess {
                        pass: pass.name.clone(),
                        resource: resource.name.clone(),
                        reason: "the pass clears the engine's image, erasing what the engine drew; load it \
                                 (AttachmentLoad::Load), or DontCare when the pass covers every texel",
                    });
                }
                continue;
            }
            if pass.claims.contains(&access.resource) {
                continue;
            }
            let engine_writer = resource.creators.first().copied().or_else(|| {
                decl.passes.iter().position(|other| {
                    other.owner == Owner::Engine
                        && other
                            .accesses
                            .iter()
                            .any(|other| other.resource == access.resource && other.access.is_write())
                })
            });
            return Err(GraphError::EngineResourceWrite {
                pass: pass.name.clone(),
                resource: resource.name.clone(),
                engine_pass: engine_writer.map(|writer| decl.passes[writer].name.clone()),
            });
        }
    }
    Ok(())
}

/// The claims of user passes on engine resources, as `(pass, site, resource)`: what the
/// graph logs once per claim when it compiles.
pub(crate) fn engine_write_claims(decl: &GraphDecl) -> impl Iterator<Item = (&str, &str, &str)> {
    decl.passes.iter().filter(|pass| pass.owner == Owner::User).flat_map(move |pass| {
        pass.claims.iter().map(move |&resource| (pass.name.as_str(), pass.site.as_str(), decl.resource_name(resource)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::ShaderStage;
    use crate::compile::decl::PassMeta;
    use crate::compile::{BufferDesc, ImageDesc, ImageSize};
    use ash::vk;

    fn user() -> PassMeta {
        PassMeta { owner: Owner::User, point: None, site: String::from("game.rs:7") }
    }

    fn engine_frame() -> GraphDecl {
        let mut decl = GraphDecl::default();
        decl.declare_pass("cull", |registry| {
            let bits = registry.create_buffer("bits", BufferDesc { size: 8 });
            registry.write_storage_buffer(bits, ShaderStage::Compute);
            let color = registry.create_image("color", ImageDesc::new(vk::Format::R8G8B8A8_UNORM, ImageSize::OUTPUT));
            registry.write_storage_image(color, ShaderStage::Compute);
        });
        decl
    }

    #[test]
    fn a_user_write_of_an_engine_resource_names_both_passes_unless_claimed() {
        let mut decl = engine_frame();
        decl.declare_pass_of("liar", user(), |registry| {
            let bits = registry.buffer("bits");
            registry.read_write_storage_buffer(bits, ShaderStage::Compute);
        });
        let error = check_ownership(&decl, &|_| None, &|_| false).expect_err("an unasked write");
        assert!(
            matches!(&error, GraphError::EngineResourceWrite { pass, resource, engine_pass: Some(engine) }
                if pass == "liar" && resource == "bits" && engine == "cull"),
            "{error}"
        );
        let mut decl = engine_frame();
        decl.declare_pass_of("animate", user(), |registry| {
            let bits = registry.buffer("bits");
            registry.claim_engine_write(bits);
            registry.read_write_storage_buffer(bits, ShaderStage::Compute);
        });
        check_ownership(&decl, &|_| None, &|_| false).expect("a claimed write");
        let claims: Vec<_> = engine_write_claims(&decl).collect();
        assert_eq!(claims, [("animate", "game.rs:7", "bits")]);
    }

    #[test]
    fn a_shared_image_may_be_rewritten_but_not_cleared_and_imports_follow_their_owner() {
        let mut decl = engine_frame();
        decl.declare_pass_of("fog", user(), |registry| {
            let color = registry.image("color");
            registry.read_write_storage_image(color, ShaderStage::Compute);
            let scratch = registry.buffer("user scratch");
            registry.write_storage_buffer(scratch, ShaderStage::Compute);
        });
        let import_owner = |name: &str| (name == "user scratch").then_some(Owner::User);
        check_ownership(&decl, &import_owner, &|name| name == "color").expect("post-processes rewrite colour");
        decl.declare_pass_of("wipe", user(), |registry| {
            let color = registry.image("color");
            registry.color_attachment(color, AttachmentLoad::ClearColor([0.0; 4]));
        });
        let error = check_ownership(&decl, &import_owner, &|name| name == "color").expect_err("a clear");
        assert!(matches!(&error, GraphError::InvalidAccess { pass, .. } if pass == "wipe"), "{error}");
    }
}

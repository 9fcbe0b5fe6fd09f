//! Checks of the declarations before anything is ordered: unique pass names, one creator per
//! resource (and not also imported), accesses that fit their resource, no read of a created
//! resource nobody writes, history of created resources only and read-only, and mip ranges
//! inside their images. Each error names the pass and the resource.

use super::desc::{ImageDesc, ResourceKind};
use super::registry::{GraphDecl, Origin};
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
            return Err(GraphError::DuplicatePass(pass.name.clone()));
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
        if resource.origin == Origin::Referenced && !imported {
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

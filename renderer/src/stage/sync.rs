//! What the Render stage writes into the GPU scene each frame: the slots the Visibility stage
//! changed ([`Visibility::changes`]), and the colours the change log says were written. The
//! cost follows the changes: a frame where nothing moved touches no slot.
//!
//! Each drawable slot becomes an [`ObjectTransform`] (its world matrix) and an
//! [`ObjectRecord`]: the mesh its level of detail chose (`MeshHandle(n)` draws mesh `n` of the
//! library), the local box the stage culled it with (so the GPU's world box is the stage's, bit
//! for bit), its material handle and the entity's [`BaseColor`] (white without one). An
//! undrawable or freed slot, and every slot past [`Visibility::len`], holds the empty record.
//!
//! A skinned object (its drawn mesh has influences and its entity an [`animation::Skin`]
//! holding a palette slice) carries the slice in its record (`skin_first`, `skin_count`), and
//! its LOD chain as any object does (the GPU may draw any level with the slice); the
//! local box is then the posed box the Visibility stage culled it with
//! ([`ecs::SkinnedPose`]), so the record changes, and uploads, on the frames its rig moved.
//! The slots of entities whose `Skin` was written (a slice given or moved) are written
//! again. A skinned mesh on an entity without a rig is drawn rigid, in its bind pose, with
//! one warning.
//!
//! An object whose mesh was added while frames run and is not on the GPU yet draws the
//! stand-in [`GpuScene::drawn_mesh`] names (a coarser level, or a box of the mesh's bounds),
//! culled with its own box. In a frame where a level of such a mesh arrives, or the mesh is
//! replaced or removed, the slots written for that mesh ([`FamilySlots`], kept as records
//! are written) are written again, and no others. An object whose material was removed draws
//! with the default material (its colour alone); every slot is written again in a frame after
//! a material was removed or replaced ([`GpuScene::materials_changed`]).
//!
//! The scene grows to hold every slot ([`GpuScene::reserve`]). When it cannot (device memory
//! exhausted), the frame draws the slots that fit, the error is reported once, and the
//! growth is tried again only when more slots are wanted than the failed try asked for.

use std::any::TypeId;

use super::family_slots::FamilySlots;
use crate::scene::{mesh_is_skinned, GpuScene, ObjectRecord, ObjectTransform, SceneGrowthError, MAX_GPU_LOD_LEVELS};
use animation::Skin;
use ecs::{BaseColor, Lod, LodErrors, MeshHandle};
use runtime::changes::{ChangeCursor, ChangedSince, Changes};
use runtime::hecs::{Entity, World};

use culling::Visibility;

/// The Render stage's view of which entity owns each slot of the GPU scene, and where it
/// stands in the change log of colours.
#[derive(Default)]
pub(crate) struct SceneSync {
    /// The entity each slot's record was built for ([`Entity::DANGLING`]: none).
    owners: Vec<Entity>,
    /// The slots written for each mesh added while frames run.
    families: FamilySlots,
    cursor: ChangeCursor,
    colors: ChangedSince,
    /// Where the sync stands in the change log of [`Skin`]s, and what it found there.
    skin_cursor: ChangeCursor,
    skins: ChangedSince,
    /// Whether the unrigged skinned mesh warning was logged (it is logged once).
    warned_unrigged: bool,
    /// Whether the missing-mesh warning was logged (it is logged once).
    warned_missing_mesh: bool,
    /// The scene holds fewer slots than the Visibility stage has (a growth failed): the
    /// changes of the slots past it are not written, so every slot is written once it holds
    /// them all.
    short: bool,
    /// The capacity the last failed growth asked for: not asked for again until more slots
    /// are wanted.
    failed_growth: Option<u32>,
}

/// What one frame's sync did.
#[derive(Debug, Default)]
pub(crate) struct SyncReport {
    /// Slots the Visibility stage changed that were written.
    pub slots: u32,
    /// Drawable objects naming a mesh the library does not hold: left empty (not drawn).
    pub missing_meshes: u32,
    /// The scene could not grow to hold every slot: the frame draws those that fit.
    pub growth_error: Option<SceneGrowthError>,
}

impl SceneSync {
    /// Brings `scene` to `visibility`'s columns: the object count, then every changed slot
    /// and every slot of a mesh family whose drawn level changed
    /// ([`GpuScene::changed_families`]: the objects drawing a stand-in for a level that
    /// arrived draw it now), or every slot after a material was removed or replaced, then the
    /// colours written since the last frame.
    pub(crate) fn apply(
        &mut self,
        world: &World,
        changes: &Changes,
        visibility: &Visibility,
        lod_errors: Option<&LodErrors>,
        scene: &mut GpuScene,
    ) -> render_graph::Result<SyncReport> {
        runtime::profile_zone!("render scene sync");
        let mut report = SyncReport::default();
        let wanted = u32::try_from(visibility.len()).unwrap_or(u32::MAX);
        if wanted > scene.capacity() && self.failed_growth.is_none_or(|failed| wanted > failed) {
            let before = scene.capacity();
            match scene.reserve(wanted) {
                Ok(_) => log::info!("the GPU scene grew from {before} to {} object slots", scene.capacity()),
                Err(error) => {
                    self.failed_growth = Some(error.wanted);
                    report.growth_error = Some(error);
                }
            }
        }
        let len = wanted.min(scene.capacity()) as usize;
        scene.set_object_count(len as u32)?;
        self.owners.resize(len, Entity::DANGLING);
        self.families.truncate(len as u32);
        let resync = (self.short && len == visibility.len()) || scene.materials_changed();
        self.short = len < visibility.len();
        let lod_errors = lod_errors.filter(|errors| !errors.is_empty());
        if resync || !scene.changed_families().is_empty() {
            // The levels' ranges or materials as drawn changed: so did the chains' entries.
            scene.refresh_lod_chains();
        }
        let mut write = |sync: &mut SceneSync, scene: &mut GpuScene, slot: usize| {
            report.slots += 1;
            if !sync.write_slot(world, visibility, lod_errors, scene, slot) {
                report.missing_meshes += 1;
            }
        };
        if resync {
            (0..len).for_each(|slot| write(self, scene, slot));
        } else {
            if scene.has_skinned_meshes() {
                self.rewrite_skins(world, changes, visibility, scene, len, &mut write);
            }
            visibility
                .changes()
                .slots()
                .map(|slot| slot as usize)
                .take_while(|&slot| slot < len)
                .for_each(|slot| write(self, scene, slot));
            for index in 0..scene.changed_families().len() {
                let family = scene.changed_families()[index];
                let mut next = self.families.first_of(family);
                while let Some(slot) = next {
                    // Taken first: writing the slot may list it elsewhere.
                    next = self.families.next_of(slot);
                    if slot as usize >= len {
                        continue;
                    }
                    write(self, scene, slot as usize);
                    // A slot that drew nothing kept no colour: it takes its entity's again.
                    refresh_color(world, visibility, scene, slot as usize);
                }
            }
        }
        changes.collect(&mut self.cursor, &[TypeId::of::<BaseColor>()], &mut self.colors);
        if self.colors.everything || resync {
            for slot in 0..len {
                refresh_color(world, visibility, scene, slot);
            }
        } else {
            for &position in &self.colors.archetypes {
                let Some(archetype) = world.archetypes().nth(position as usize) else { continue };
                if !archetype.has::<BaseColor>() {
                    continue;
                }
                for &id in archetype.ids() {
                    // SAFETY: an archetype's ids name live entities, and the world is borrowed
                    // shared, so none can be despawned meanwhile.
                    let entity = unsafe { world.find_entity_from_id(id) };
                    if let Some(slot) = visibility.slot_of(entity) {
                        refresh_color(world, visibility, scene, slot as usize);
                    }
                }
            }
            for index in 0..self.colors.entities.len() {
                let entity = self.colors.entities[index];
                if let Some(slot) = visibility.slot_of(entity) {
                    refresh_color(world, visibility, scene, slot as usize);
                }
            }
        }
        if report.missing_meshes > 0 && !self.warned_missing_mesh {
            self.warned_missing_mesh = true;
            log::warn!(
                "{} drawable object(s) name a mesh the GPU scene's library does not hold; they are not drawn \
                 (a `MeshHandle(n)` draws mesh n of the library given to install_render)",
                report.missing_meshes
            );
        }
        Ok(report)
    }

    /// Writes slot `slot` from the columns; false when its mesh is not in the library (the slot
    /// is left empty).
    fn write_slot(
        &mut self,
        world: &World,
        visibility: &Visibility,
        lod_errors: Option<&LodErrors>,
        scene: &mut GpuScene,
        slot: usize,
    ) -> bool {
        let objects = visibility.objects();
        let (draw, entity) = (objects.draws[slot], objects.entities[slot]);
        let index = slot as u32;
        self.families.set(index, scene.family_key(draw.mesh.0));
        if draw.mesh == MeshHandle::NONE {
            self.owners[slot] = Entity::DANGLING;
            // In range: the count was set to the slot count above.
            scene.set_parts(index, ObjectTransform::IDENTITY, ObjectRecord::EMPTY).expect("slot below the count");
            return true;
        }
        let color = if self.owners[slot] == entity {
            scene.records()[slot].color
        } else {
            self.owners[slot] = entity;
            color_of(world, entity)
        };
        let local = objects.local_bounds(slot);
        // A mesh added while frames run draws a stand-in until it is on the GPU; the box is
        // the object's own either way. An unknown mesh is left to `record_for`'s error.
        let mesh = match scene.drawn_mesh(draw.mesh.0) {
            Some(mesh) => mesh,
            None if scene.meshes().range(draw.mesh.0).is_some() => {
                // Removed by the game, or not one byte of it arrived yet (earlier meshes took
                // the budget): nothing to draw this frame.
                if scene.is_removed(draw.mesh.0) {
                    scene.warn_removed_once(draw.mesh.0);
                }
                scene.set_parts(index, ObjectTransform::IDENTITY, ObjectRecord::EMPTY).expect("slot below the count");
                return true;
            }
            None => draw.mesh.0,
        };
        // A removed material draws the default one (`record_for`), said once.
        if scene.is_material_removed(draw.material.0) {
            scene.warn_removed_material_once(draw.material.0);
        }
        let record = scene.record_for(mesh, local.min.to_array(), local.max.to_array(), color, draw.material.0);
        let Ok(mut record) = record else {
            scene.set_parts(index, ObjectTransform::IDENTITY, ObjectRecord::EMPTY).expect("slot below the count");
            return false;
        };
        if scene.has_skinned_meshes() && mesh_is_skinned(scene.meshes(), mesh) {
            self.set_skin(world, entity, &mut record);
        }
        if lod_errors.is_some() || scene.draws_gpu_list() {
            // A skinned record keeps its slice at every level: each level's vertices read
            // their own influences (a chain whose levels as drawn mix skinned and rigid is
            // held at the record's level by its entries, `lod_table.rs`).
            record.reserved = lod_chain_columns(world, entity, lod_errors, draw.material.0, scene).unwrap_or([0; 2]);
        }
        if !objects.is_finite(slot) {
            // The stage keeps an object it cannot bound; a non-finite box makes every GPU
            // test keep it too.
            record.local_half = [f32::NAN; 3];
        }
        let transform = ObjectTransform::from_cols(&objects.models[slot].to_cols_array_2d());
        scene.set_parts(index, transform, record).expect("slot below the count");
        true
    }
}

impl SceneSync {
    /// Writes again the slots of the entities whose [`Skin`] was written since the last frame
    /// (a palette slice given or moved), below `len`.
    fn rewrite_skins(
        &mut self,
        world: &World,
        changes: &Changes,
        visibility: &Visibility,
        scene: &mut GpuScene,
        len: usize,
        write: &mut impl FnMut(&mut SceneSync, &mut GpuScene, usize),
    ) {
        let mut skins = std::mem::take(&mut self.skins);
        changes.collect(&mut self.skin_cursor, &[TypeId::of::<Skin>()], &mut skins);
        let mut rewrite = |sync: &mut SceneSync, entity: Entity| {
            if let Some(slot) = visibility.slot_of(entity).map(|slot| slot as usize).filter(|&slot| slot < len) {
                write(sync, scene, slot);
            }
        };
        if skins.everything {
            (0..len).for_each(|slot| write(self, scene, slot));
        } else {
            for &position in &skins.archetypes {
                let Some(archetype) = world.archetypes().nth(position as usize) else { continue };
                for &id in archetype.ids() {
                    // SAFETY: an archetype's ids name live entities, and the world is borrowed
                    // shared, so none can be despawned meanwhile.
                    let entity = unsafe { world.find_entity_from_id(id) };
                    rewrite(self, entity);
                }
            }
            for &entity in &skins.entities {
                rewrite(self, entity);
            }
        }
        self.skins = skins;
    }

    /// Puts `entity`'s palette slice in `record` (drawing a skinned mesh); without a rig the
    /// mesh is drawn rigid, in its bind pose, said once.
    fn set_skin(&mut self, world: &World, entity: Entity, record: &mut ObjectRecord) {
        let slice = world.get::<&Skin>(entity).ok().map(|skin| (skin.skin_first(), skin.skin_count()));
        match slice {
            Some((first, count)) if count > 0 => {
                record.skin_first = first;
                record.skin_count = count;
            }
            _ => {
                if !std::mem::replace(&mut self.warned_unrigged, true) {
                    log::warn!(
                        "an entity draws a skinned mesh without a rig (no animation::Skin, or one the animation \
                         system has not posed): it is drawn in its bind pose"
                    );
                }
            }
        }
    }
}

/// The record columns of `entity`'s LOD chain when the GPU may choose its levels, at most
/// [`MAX_GPU_LOD_LEVELS`] levels drawn with `material`: a chain of the error rule (every level
/// has an error in `errors`, as the Visibility stage picks it), else, when the GPU culls, one
/// of the distance rule (the other window views' levels; the main view draws its record's).
fn lod_chain_columns(
    world: &World,
    entity: Entity,
    errors: Option<&LodErrors>,
    material: u32,
    scene: &mut GpuScene,
) -> Option<[u32; 2]> {
    let lod = world.get::<&Lod>(entity).ok()?;
    let levels = lod.levels.len();
    if levels > MAX_GPU_LOD_LEVELS as usize {
        scene.refuse_lod_chain();
        return None;
    }
    let mut meshes = [0u32; MAX_GPU_LOD_LEVELS as usize];
    let mut values = [0f32; MAX_GPU_LOD_LEVELS as usize];
    for (index, level) in lod.levels.iter().enumerate() {
        meshes[index] = level.mesh.0;
    }
    match errors.filter(|errors| errors.covers(&lod)) {
        Some(errors) => {
            for (value, level) in values.iter_mut().zip(lod.levels.iter()) {
                *value = errors.get(level.mesh)?;
            }
            scene.lod_chain_columns(&meshes[..levels], &values[..levels], material)
        }
        None if scene.draws_gpu_list() => {
            for (value, level) in values.iter_mut().zip(lod.levels.iter()) {
                *value = level.max_distance;
            }
            scene.lod_distance_chain_columns(&meshes[..levels], &values[..levels], lod.bias, material)
        }
        None => None,
    }
}

/// Writes slot `slot`'s colour again from its entity's [`BaseColor`] (a drawn slot only).
fn refresh_color(world: &World, visibility: &Visibility, scene: &mut GpuScene, slot: usize) {
    if slot >= scene.object_count() as usize || scene.records()[slot].is_empty() {
        return;
    }
    let entity = visibility.objects().entities[slot];
    let record = ObjectRecord { color: color_of(world, entity), ..scene.records()[slot] };
    scene.set_parts(slot as u32, scene.transforms()[slot], record).expect("slot below the count");
}

/// The packed colour of `entity`: its [`BaseColor`], white without one.
fn color_of(world: &World, entity: Entity) -> u32 {
    world.get::<&BaseColor>(entity).map_or(BaseColor::WHITE, |color| *color).packed()
}

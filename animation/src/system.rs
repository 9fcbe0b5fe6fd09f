//! The animation system: advances every player, poses every rig in parallel over the animated
//! archetypes, writes the skinning palette and each rig's posed box ([`SkinnedPose`]).
//!
//! It runs in [`Stage::Input`](runtime::Stage::Input): the pose is in the rig's own space, so
//! it needs no world matrix, and the Transform stage (world matrices) and the Visibility stage
//! (which moves the posed box to world space) come after it, so the frame culls the pose it
//! draws. A game system that sets players should be added before it
//! (`before(ANIMATION_SYSTEM)`) to take effect the same frame.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ecs::{Aabb, SkinnedPose};
use hecs::Entity;
use runtime::jobs::parallel_for_chunks;
use runtime::{Columns, ResMut, System};

use crate::palette::PaletteCells;
use crate::posing::{keep_or_bind, GroupKey};
use crate::wide::{pose_wide, LaneWidth, WideRig, WideScratch, MAX_LANES};
use crate::{pose_rig, AnimationPlayer, PoseOutcome, PoseScratch, PoseWhenSeen, Skin, SkinPalette, SkinnedMesh};

/// The animation system's name, for `before`/`after` constraints.
pub const ANIMATION_SYSTEM: &str = "animation::animate";

/// Rigs per job: a rig of 40 joints takes a few microseconds.
const GRAIN: usize = 64;

/// The low bits of a grouped rig's sort entry hold its row in the chunk, the high ones the
/// place of its group key (`ChunkRigs::pose`).
const ROW_BITS: u32 = 16;
/// The row bits of a sort entry.
const ROW_MASK: u32 = (1 << ROW_BITS) - 1;

/// What the last run of the animation system did (a resource it writes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnimationReport {
    /// Rigs posed.
    pub rigs: usize,
    /// Rigs marked [`PoseWhenSeen`] left in the pose they hold because they were out of view.
    pub held_rigs: usize,
    /// Joints posed (palette entries written).
    pub joints: usize,
    /// Rigs put in their bind pose for a non-finite joint transform.
    pub non_finite_rigs: usize,
    /// Players whose clip (or crossfade clip) was made for another skeleton, left out.
    pub refused_clips: usize,
    /// Entities with a [`SkinnedMesh`] but no [`Skin`], left in their bind pose.
    pub unrigged_meshes: usize,
    /// Palette slices allocated this run.
    pub allocated: usize,
}

/// The columns the system reads and writes: every archetype with a [`SkinnedMesh`].
type AnimationAccess = (
    &'static SkinnedMesh,
    Option<&'static mut Skin>,
    Option<&'static mut AnimationPlayer>,
    Option<&'static mut SkinnedPose>,
);

/// Warnings given once each, and lists reused from frame to frame.
#[derive(Default)]
struct SystemState {
    warned_non_finite: bool,
    warned_refused: bool,
    warned_unrigged: bool,
    /// Entities given a slice this run (their `Skin` changed).
    allocated: Vec<Entity>,
    /// Per archetype (by position), whether every rig owned its slice at the start of the run.
    all_own: Vec<bool>,
    /// Boxes of rigs in archetypes without a `SkinnedPose`, inserted by command.
    boxes: Vec<SkinnedPose>,
}

thread_local! {
    /// Each job thread's scratch for posing rigs (grows once, then allocates nothing).
    static SCRATCH: RefCell<PoseScratch> = RefCell::new(PoseScratch::default());
}

/// The animation system for [`Stage::Input`](runtime::Stage::Input) (see the module docs).
/// Reads [`SkinnedMesh`]; writes [`Skin`] (its palette slice), [`AnimationPlayer`] (its
/// times), [`SkinnedPose`] (inserted by command where missing: commands apply at the end of
/// the Input stage, before the Visibility stage reads the pose) and the resources [`SkinPalette`] and [`AnimationReport`]
/// ([`install`](crate::install) inserts them).
///
/// Cost is proportional to the rigs: each frame it checks every rig's slice, advances every
/// player and poses every rig (but those marked [`PoseWhenSeen`] that were out of view), and
/// allocates nothing once every rig has its slice and every thread its scratch.
pub fn animation_system() -> System {
    type Params = (Columns<'static, AnimationAccess>, ResMut<'static, SkinPalette>, ResMut<'static, AnimationReport>);
    let mut state = SystemState::default();
    System::with_params::<Params>(ANIMATION_SYSTEM, move |ctx, (world, mut palette, mut report)| {
        runtime::profile_zone!("animate rigs");
        let delta = ctx.time.delta_seconds;
        *report = AnimationReport::default();
        // The full search for gone rigs looks every rig's entity up; when as many rigs own
        // their slice as the palette holds slices, none is gone (see `owning_rigs`).
        if owning_rigs(&world, &palette, &mut state.all_own) != palette.rig_count() {
            release_gone_rigs(&world, &mut palette);
        }
        let mut joints = 0;
        for (position, archetype) in world.archetypes().enumerate() {
            if archetype.is_empty() || !archetype.has::<SkinnedMesh>() {
                continue;
            }
            if !archetype.has::<Skin>() {
                report.unrigged_meshes += archetype.len() as usize;
                continue;
            }
            let mut archetype_joints = 0;
            // SAFETY: the ids are read from an archetype of this view, so they are live.
            let entity_of = |row: usize| unsafe { world.find_entity_from_id(archetype.ids()[row]) };
            {
                let mut skins = archetype.column_mut::<Skin>().expect("the archetype has Skin (checked above)");
                state.allocated.clear();
                // Where every rig owns its slice (`owning_rigs` found so), no entity is looked up.
                let all_own = state.all_own.get(position).copied().unwrap_or(false);
                for (row, skin) in skins.iter_mut().enumerate() {
                    if !all_own {
                        let entity = entity_of(row);
                        if !skin.owns_slice(entity, &palette) {
                            skin.set_slice(palette.allocate(entity, skin.skeleton.joint_count() as u32));
                            state.allocated.push(entity);
                        }
                    }
                    archetype_joints += skin.skin_count() as usize;
                }
                if !state.allocated.is_empty() {
                    report.allocated += state.allocated.len();
                    world.record_entity_writes::<Skin>(&state.allocated);
                }
            }
            let skins = archetype.column::<Skin>().expect("the archetype has Skin (checked above)");
            let mut players = archetype.column_mut::<AnimationPlayer>();
            if players.is_some() {
                world.record_archetype_write::<AnimationPlayer>(position);
            }
            let refused = AtomicUsize::new(0);
            if holds_its_pose(&archetype) && state.allocated.is_empty() {
                // Out of view: the players advance, the rigs keep their pose.
                for (player, skin) in players.iter_mut().flat_map(|players| players.iter_mut()).zip(skins.iter()) {
                    player.advance(delta);
                    refused.fetch_add(wrong_clips(player, skin), Ordering::Relaxed);
                }
                report.held_rigs += archetype.len() as usize;
            } else {
                joints += archetype_joints;
                let meshes = archetype.column::<SkinnedMesh>().expect("the archetype has SkinnedMesh (checked above)");
                let rigs = Rigs {
                    meshes: &meshes,
                    skins: &skins,
                    players: players.as_deref_mut().map(RowCells::new),
                    cells: palette.cells(),
                    delta,
                };
                let tally = Tally { non_finite: AtomicUsize::new(0), refused: &refused };
                match archetype.column_mut::<SkinnedPose>() {
                    Some(mut poses) => {
                        rigs.pose_all(&mut poses, &tally);
                        world.record_archetype_write::<SkinnedPose>(position);
                    }
                    None => {
                        state.boxes.resize(
                            archetype.len() as usize,
                            SkinnedPose::from_skin_box(Aabb::new(glam::Vec3::ZERO, glam::Vec3::ZERO)),
                        );
                        rigs.pose_all(&mut state.boxes, &tally);
                        for (row, pose) in state.boxes.iter().enumerate() {
                            ctx.commands.insert_one(entity_of(row), *pose);
                        }
                    }
                }
                report.rigs += archetype.len() as usize;
                report.non_finite_rigs += tally.non_finite.load(Ordering::Relaxed);
            }
            let refused = refused.into_inner();
            report.refused_clips += refused;
            if refused > 0 && !std::mem::replace(&mut state.warned_refused, true) {
                warn_refused(players.iter().flat_map(|players| players.iter()).zip(skins.iter()));
            }
        }
        report.joints = joints;
        palette.set_written(joints);
        warn_once(&mut state.warned_non_finite, report.non_finite_rigs, || {
            format!("{} rigs had a non-finite joint transform and were put in their bind pose", report.non_finite_rigs)
        });
        warn_once(&mut state.warned_unrigged, report.unrigged_meshes, || {
            format!(
                "{} entities have a SkinnedMesh but no Skin (no skeleton): drawn and culled in their bind pose",
                report.unrigged_meshes
            )
        });
    })
}

/// The columns of one archetype's rigs, and the palette they write.
struct Rigs<'a> {
    meshes: &'a [SkinnedMesh],
    skins: &'a [Skin],
    /// The players, lent to the jobs: each advances the players of its own rows.
    players: Option<RowCells<AnimationPlayer>>,
    cells: PaletteCells,
    /// Seconds the players advance.
    delta: f32,
}

/// What the jobs count: rigs put in their bind pose, and clips refused.
struct Tally<'a> {
    non_finite: AtomicUsize,
    refused: &'a AtomicUsize,
}

/// One job's rows of [`Rigs`] (a chunk of the archetype), indexed from 0.
struct ChunkRigs<'a> {
    meshes: &'a [SkinnedMesh],
    skins: &'a [Skin],
    players: Option<&'a [AnimationPlayer]>,
    cells: PaletteCells,
}

impl Rigs<'_> {
    /// Advances every player and poses every rig into `poses` (one per row), in parallel:
    /// each job advances its rows' players, then poses its rows while the players are in
    /// cache, so the frame has no serial pass over the players. In each job, rigs of one
    /// skeleton playing one packed clip without a crossfade pose four or eight at a time (the
    /// widest the CPU runs) ([`pose_wide`]); the others one by one ([`pose_rig`]). Which rigs
    /// share a group does not change a rig's result (the lanes never mix), so the palette is
    /// the same on any number of threads.
    fn pose_all(&self, poses: &mut [SkinnedPose], tally: &Tally<'_>) {
        parallel_for_chunks(poses, GRAIN, |first, chunk| {
            let rows = first..first + chunk.len();
            // SAFETY: the chunks of one `parallel_for_chunks` are disjoint, so each job
            // borrows its own rows' players, and nothing else reaches the players meanwhile.
            let mut players = self.players.map(|players| unsafe { players.rows_mut(rows.clone()) });
            if let Some(players) = players.as_deref_mut() {
                let mut refused = 0;
                for (player, skin) in players.iter_mut().zip(&self.skins[rows.clone()]) {
                    player.advance(self.delta);
                    refused += wrong_clips(player, skin);
                }
                if refused > 0 {
                    tally.refused.fetch_add(refused, Ordering::Relaxed);
                }
            }
            let rigs = ChunkRigs {
                meshes: &self.meshes[rows.clone()],
                skins: &self.skins[rows],
                players: players.map(|players| &*players),
                cells: self.cells,
            };
            let bad = SCRATCH.with(|scratch| rigs.pose(chunk, &mut scratch.borrow_mut()));
            if bad > 0 {
                tally.non_finite.fetch_add(bad, Ordering::Relaxed);
            }
        });
    }
}

impl ChunkRigs<'_> {
    /// Poses the chunk's rigs into `poses`; returns how many fell back to their bind pose.
    /// Rigs of one group key pose together in row order: a chunk meets few keys (a clip, a
    /// skeleton and a mesh each), so each row's key is found in a short list of the keys met
    /// and the rows sort as plain integers (the key's place, then the row).
    fn pose(&self, poses: &mut [SkinnedPose], scratch: &mut PoseScratch) -> usize {
        assert!(poses.len() <= ROW_MASK as usize + 1, "a chunk's rows fit the sort's row bits");
        let (mut grouped, mut keys) = (std::mem::take(&mut scratch.grouped), std::mem::take(&mut scratch.group_keys));
        grouped.clear();
        keys.clear();
        let mut bad = 0;
        for (row, pose) in poses.iter_mut().enumerate() {
            match self.group_key(row) {
                Some(key) => {
                    let place = keys.iter().position(|&met| met == key).unwrap_or_else(|| {
                        keys.push(key);
                        keys.len() - 1
                    });
                    grouped.push(((place as u32) << ROW_BITS) | row as u32);
                }
                None => bad += self.pose_one(row, pose, scratch),
            }
        }
        grouped.sort_unstable();
        let width = LaneWidth::detect();
        for run in grouped.chunk_by(|one, other| one >> ROW_BITS == other >> ROW_BITS) {
            for group in run.chunks(width.lanes()) {
                bad += self.pose_group(width, group, poses, &mut scratch.wide);
            }
        }
        (scratch.grouped, scratch.group_keys) = (grouped, keys);
        bad
    }

    /// The group a rig poses in: its clip, skeleton and joint boxes, when it plays a packed
    /// clip that fits without a crossfade.
    fn group_key(&self, row: usize) -> Option<GroupKey> {
        let player = &self.players?[row];
        let skeleton = &self.skins[row].skeleton;
        let groups = player.crossfade.is_none() && player.clip.fits(skeleton) && player.clip.packed().is_some();
        let boxes = Arc::as_ptr(&self.meshes[row].joint_boxes) as usize;
        groups.then_some((Arc::as_ptr(&player.clip) as usize, Arc::as_ptr(skeleton) as usize, boxes))
    }

    /// Poses row `row` alone; returns 1 when it fell back to its bind pose.
    fn pose_one(&self, row: usize, pose: &mut SkinnedPose, scratch: &mut PoseScratch) -> usize {
        let skin = &self.skins[row];
        // SAFETY: each rig's slice was allocated to it alone (`SkinPalette::allocate`; the
        // palette's record of it checked by `owns_slice` this frame, or made this frame), and
        // this job alone poses this row.
        let palette = unsafe { self.cells.slice_mut(skin.skin_first(), skin.skin_count()) };
        let player = self.players.map(|players| &players[row]);
        let (bounds, outcome) = pose_rig(&skin.skeleton, &self.meshes[row].joint_boxes, player, palette, scratch);
        *pose = SkinnedPose::from_skin_box(bounds);
        usize::from(outcome == PoseOutcome::NonFinite)
    }

    /// Poses the rows of `group` (one to eight of one key) together into `poses`; returns how
    /// many fell back to their bind pose.
    fn pose_group(
        &self,
        width: LaneWidth,
        group: &[u32],
        poses: &mut [SkinnedPose],
        scratch: &mut WideScratch,
    ) -> usize {
        let players = self.players.expect("grouped rigs play");
        let row_of = |entry: u32| (entry & ROW_MASK) as usize;
        let lead = row_of(group[0]);
        let (skeleton, clip) = (&self.skins[lead].skeleton, &players[lead].clip);
        let mut rigs: [Option<WideRig<'_>>; MAX_LANES] = std::array::from_fn(|lane| {
            let row = row_of(*group.get(lane)?);
            let skin = &self.skins[row];
            // SAFETY: as in `pose_one`; the rows of a group differ, so their slices do.
            let palette = unsafe { self.cells.slice_mut(skin.skin_first(), skin.skin_count()) };
            Some(WideRig { time: players[row].time, palette })
        });
        let boxes = &self.meshes[lead].joint_boxes;
        let posed = pose_wide(width, skeleton, clip, boxes, &mut rigs, scratch);
        let mut bad = 0;
        for ((rig, &entry), bounds) in rigs.iter_mut().zip(group).zip(posed) {
            let row = row_of(entry);
            let palette = &mut rig.as_mut().expect("a lane per row of the group").palette;
            let (bounds, outcome) = keep_or_bind(boxes, palette, bounds);
            poses[row] = SkinnedPose::from_skin_box(bounds);
            bad += usize::from(outcome == PoseOutcome::NonFinite);
        }
        bad
    }
}

/// A column lent to the animation jobs, each borrowing the rows of its own chunk.
struct RowCells<T> {
    start: *mut T,
    len: usize,
}

impl<T> Clone for RowCells<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RowCells<T> {}

// SAFETY: the rows are only reached through `rows_mut`, whose callers borrow disjoint rows
// (each job its own chunk's), so sharing the cells between jobs shares no row.
unsafe impl<T: Send> Send for RowCells<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for RowCells<T> {}

impl<T> RowCells<T> {
    /// The rows of `column`, lent until the cells are dropped (the caller keeps `column`
    /// borrowed, untouched, meanwhile).
    fn new(column: &mut [T]) -> RowCells<T> {
        RowCells { start: column.as_mut_ptr(), len: column.len() }
    }

    /// The rows `rows`.
    ///
    /// # Safety
    /// No other live reference may overlap them, and the column must outlive the borrow.
    unsafe fn rows_mut<'a>(&self, rows: std::ops::Range<usize>) -> &'a mut [T] {
        assert!(rows.start <= rows.end && rows.end <= self.len, "rows inside the column");
        // SAFETY: in bounds (checked above); exclusive and alive by the caller's duty.
        unsafe { std::slice::from_raw_parts_mut(self.start.add(rows.start), rows.len()) }
    }
}

/// Whether the archetype's rigs keep last frame's pose: marked [`PoseWhenSeen`], out of the
/// main view last frame, and already posed once (they have a [`SkinnedPose`]). The tags are
/// archetype columns, so the whole archetype is held or posed together.
fn holds_its_pose(archetype: &runtime::ArchetypeColumns<'_>) -> bool {
    archetype.has::<PoseWhenSeen>()
        && archetype.has::<SkinnedPose>()
        && (archetype.has::<ecs::Culled>() || archetype.has::<ecs::Occluded>())
}

/// Frees the slices no `Skin` owns: their entity or `Skin` went away, or its `Skin` was
/// replaced by one naming another slice. A record is kept exactly when its entity's `Skin`
/// names it, which for a held record is that `Skin` owning it (`Skin::owns_slice`).
fn release_gone_rigs(world: &Columns<'_, AnimationAccess>, palette: &mut SkinPalette) {
    palette.release_where(|place, rig| {
        world.entity(rig.entity).ok().and_then(|entity| entity.get::<Skin>()).is_some_and(|skin| skin.names(place, rig))
    });
}

/// The player's clips made for another skeleton (the posing leaves them out): 0 to 2.
fn wrong_clips(player: &AnimationPlayer, skin: &Skin) -> usize {
    let clips = std::iter::once(&player.clip).chain(player.crossfade.as_ref().map(|fade| &fade.clip));
    clips.filter(|clip| !clip.fits(&skin.skeleton)).count()
}

/// Warns by name of the first clip among `rigs` made for another skeleton.
fn warn_refused<'a>(rigs: impl Iterator<Item = (&'a AnimationPlayer, &'a Skin)>) {
    for (player, skin) in rigs {
        let clips = std::iter::once(&player.clip).chain(player.crossfade.as_ref().map(|fade| &fade.clip));
        if let Some(error) = clips.filter_map(|clip| clip.check_skeleton(&skin.skeleton).err()).next() {
            log::warn!("animation refused: {error}; the rig keeps its rest pose for it");
            return;
        }
    }
}

/// Rigs whose `Skin` owns its palette slice, over the archetypes the system poses. Owning
/// means the palette records the named slice as the entity's (`Skin::owns_slice`), and an
/// entity has one `Skin`, so the owning `Skin`s and the records they match pair one to one:
/// when the count equals the palette's slices every record has its owner and the search for
/// gone rigs would free nothing. A copied `Skin` naming a freed or another entity's slice
/// does not count, so it cannot stand in for a gone rig; a `Skin` outside those archetypes
/// makes the count fall short, and the search runs. `all_own[position]` says whether every
/// rig of the archetype at `position` owns its slice.
fn owning_rigs(world: &Columns<'_, AnimationAccess>, palette: &SkinPalette, all_own: &mut Vec<bool>) -> usize {
    let mut owning = 0;
    all_own.clear();
    for archetype in world.archetypes() {
        let mut archetype_owning = 0;
        // The system's access covers the archetypes with a `SkinnedMesh` only.
        let skins = if archetype.has::<SkinnedMesh>() { archetype.column::<Skin>() } else { None };
        for (skin, &id) in skins.iter().flat_map(|skins| skins.iter()).zip(archetype.ids()) {
            // SAFETY: the id is read from an archetype of this view, so it is live.
            archetype_owning += usize::from(skin.owns_slice(unsafe { world.find_entity_from_id(id) }, palette));
        }
        all_own.push(archetype_owning == archetype.len() as usize);
        owning += archetype_owning;
    }
    owning
}

/// Logs `message` the first time `count` is not 0.
fn warn_once(warned: &mut bool, count: usize, message: impl FnOnce() -> String) {
    if count > 0 && !std::mem::replace(warned, true) {
        log::warn!("{}", message());
    }
}

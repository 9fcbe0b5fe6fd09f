//! The cluster tables of a scene culled meshlet by meshlet: the scene keeps them
//! ([`GpuScene::track_clusters`]) like its other buffers, so meshes added while frames run
//! are culled meshlet by meshlet like the installed ones.
//!
//! **When they change.** An object whose record names another mesh or material, a chain's
//! level drawing another mesh (streamed in), or a change of the object count, marks the tables
//! stale; [`GpuScene::refresh_clusters`], called between
//! frames once the frame's records are set (by [`GpuScene::follow_growth`], so by the Render
//! stage and by any host that follows the scene's growth), reads the meshlets of meshes added
//! since (each mesh's meshlets are read once) and pairs the objects again. Only when the
//! tables differ are they uploaded to new buffers, and the generation moves: the graph
//! follows ([`GpuScene::follow_growth`]) and compiles again, its cluster passes reading the
//! new counts and sizing their buffers from them. A stale table still draws every pixel (an
//! object whose mesh changed is drawn whole), so a host may refresh less often than its
//! objects change level.
//!
//! **Throttle.** Each refresh that changes the tables recompiles the graph, so a scene whose
//! objects change mesh frame after frame (meshes arriving from a loader over consecutive
//! frames, objects changing level) would recompile on every frame. Following the growth
//! refreshes stale tables at most once per [`GpuScene::set_cluster_refresh_frames`] frames
//! (default [`CLUSTER_REFRESH_FRAMES`]): the first change after a quiet spell is refreshed at
//! once, the changes of the next frames wait and are refreshed together; meanwhile their
//! objects are drawn whole by their first pair or by the object pass, every pixel drawn.
//! [`GpuScene::refresh_clusters`], called by the host, is not throttled.
//!
//! **Frames in flight.** The outgrown buffers are kept until the frames that may read them
//! have finished (the rule of `growth.rs`).

use render_graph::Result;

use super::growth::Retired;
use super::GpuScene;
use crate::scene::{ClusterBuffers, ClusterTable};

/// The cluster tables of a scene, on the host and on the GPU.
pub(super) struct SceneClusters {
    table: ClusterTable,
    buffers: ClusterBuffers,
    /// Whether an object's mesh or material or the object count changed since the tables
    /// were paired.
    stale: bool,
    /// Whether the last refresh could not upload (warned once until one succeeds).
    failed: bool,
    /// Frames followed since the tables last changed (saturating).
    since_change: u32,
    /// Least frames between two changes of the tables when following the growth.
    refresh_frames: u32,
}

/// Default least number of frames between two refreshes of the cluster tables (and so graph
/// recompiles) when following the scene's growth: a loader's meshes arriving over a second
/// recompile some eight times, not sixty.
pub const CLUSTER_REFRESH_FRAMES: u32 = 8;

/// What the cluster passes read of the scene's tables each frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClusterLayout {
    /// Pairs of the table (threads of the cluster passes).
    pub(crate) pairs: u32,
    /// Pairs that are meshlets.
    pub(crate) meshlet_pairs: u32,
    /// Objects the table covers (the object pass draws the ones past them).
    pub(crate) objects: u32,
    /// Commands each draw list has room for: a meshlet or an object drawn whole per pair,
    /// and every slot past the covered objects.
    pub(crate) list_room: u32,
}

impl GpuScene {
    /// Builds the cluster tables of the scene now and keeps them from now on (see the
    /// module docs); nothing when they are kept already. The graph gets them with the
    /// scene's other buffers ([`GpuScene::import_into`]). Returns an error when the upload
    /// fails.
    pub fn track_clusters(&mut self) -> Result<()> {
        if self.clusters.is_some() {
            return Ok(());
        }
        let table = ClusterTable::build(self);
        let buffers = ClusterBuffers::upload(&self.device, &table)?;
        self.clusters = Some(SceneClusters {
            table,
            buffers,
            stale: false,
            failed: false,
            since_change: u32::MAX,
            refresh_frames: CLUSTER_REFRESH_FRAMES,
        });
        Ok(())
    }

    /// The cluster tables the scene keeps (`None` until [`GpuScene::track_clusters`]).
    pub fn cluster_table(&self) -> Option<&ClusterTable> {
        self.clusters.as_ref().map(|clusters| &clusters.table)
    }

    /// Builds the cluster tables again when an object's mesh or material or the object
    /// count changed since they were built (meshes added while frames run included), and
    /// uploads them when they differ; then the generation moves and the graph must follow
    /// ([`GpuScene::follow_growth`]). Call it between frames, after the frame's records are
    /// set ([`GpuScene::follow_growth`] does). Returns whether the tables changed; an error
    /// when the upload fails (the old tables stay, drawing the changed objects whole, and
    /// stay stale: the next call tries again).
    pub fn refresh_clusters(&mut self) -> Result<bool> {
        let Some(clusters) = &mut self.clusters else { return Ok(false) };
        if !clusters.stale {
            return Ok(false);
        }
        let mut table = clusters.table.clone();
        let read = table.read_meshes(&self.meshes);
        let paired = table.pair_objects(&self.meshes, &self.records[..self.count as usize], self.lod.entries());
        if !read && !paired {
            clusters.stale = false;
            return Ok(false);
        }
        let buffers = ClusterBuffers::upload(&self.device, &table)?;
        let last_reader = self.last_reader();
        let Some(clusters) = &mut self.clusters else { return Ok(false) };
        clusters.stale = false;
        clusters.since_change = 0;
        let outgrown = std::mem::replace(&mut clusters.buffers, buffers);
        clusters.table = table;
        for buffer in outgrown.into_buffers() {
            self.retired.push(Retired::new(last_reader, buffer));
        }
        self.generation += 1;
        Ok(true)
    }

    /// Sets the least number of frames between two refreshes of the kept cluster tables when
    /// following the scene's growth (see the module docs; 0 counts as 1: every frame whose
    /// objects changed mesh refreshes). Kept while the tables are; before
    /// [`GpuScene::track_clusters`] nothing is kept and nothing is set.
    pub fn set_cluster_refresh_frames(&mut self, frames: u32) {
        if let Some(clusters) = &mut self.clusters {
            clusters.refresh_frames = frames.max(1);
        }
    }

    /// [`GpuScene::refresh_clusters`] once per frame when following the growth, throttled to
    /// one change of the tables per `refresh_frames` frames (see the module docs); its error
    /// a warning logged once until a refresh succeeds (the old tables draw the changed
    /// objects whole meanwhile, and the next frame tries again).
    pub(super) fn refresh_clusters_or_warn(&mut self) {
        let Some(clusters) = &mut self.clusters else { return };
        clusters.since_change = clusters.since_change.saturating_add(1);
        if !clusters.stale || clusters.since_change < clusters.refresh_frames {
            return;
        }
        let outcome = self.refresh_clusters();
        let Some(clusters) = &mut self.clusters else { return };
        match outcome {
            Ok(_) => clusters.failed = false,
            Err(error) => {
                if !clusters.failed {
                    log::warn!("the cluster tables could not be uploaded ({error}): changed objects are drawn whole");
                }
                clusters.failed = true;
            }
        }
    }

    /// The counts of the kept cluster tables (zero without them) and the room of the draw
    /// lists for the scene's capacity.
    pub(crate) fn cluster_layout(&self) -> ClusterLayout {
        let Some(clusters) = &self.clusters else { return ClusterLayout::default() };
        let table = &clusters.table;
        let objects = table.object_count();
        ClusterLayout {
            pairs: table.pair_count(),
            meshlet_pairs: table.meshlet_pair_count(),
            objects,
            list_room: table.pair_count() + self.capacity.saturating_sub(objects),
        }
    }

    /// Marks the kept cluster tables stale (an object's mesh or material or the count
    /// changed).
    pub(super) fn note_cluster_change(&mut self) {
        if let Some(clusters) = &mut self.clusters {
            clusters.stale = true;
        }
    }

    /// Imports the kept cluster tables into `graph`.
    pub(super) fn import_clusters(&self, graph: &mut render_graph::RenderGraph) {
        if let Some(clusters) = &self.clusters {
            clusters.buffers.import_into(graph);
        }
    }
}

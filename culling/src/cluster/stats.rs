//! What cluster culling counted in one frame.

/// Counters of one frame of cluster culling, as the GPU writes them (`cluster_stats`,
/// `CSTAT_*` in `cluster_cull.h`, in field order, except word 1, which holds the meshlets of
/// kept objects: `object_culled` is `meshlets` less that) or as the CPU reference counts
/// them.
///
/// The meshlet counters come from the late phase, which tests every meshlet of every object;
/// the funnel is `meshlets` → [`after_objects`](Self::after_objects) →
/// [`after_frustum`](Self::after_frustum) → [`after_cone`](Self::after_cone) →
/// [`after_occlusion`](Self::after_occlusion). Commands and triangles count both phases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterStats {
    /// Meshlets of all objects (objects drawn whole are not counted).
    pub meshlets: u32,
    /// Meshlets of objects the object pass rejected (frustum or occlusion of the object box).
    pub object_culled: u32,
    /// Meshlets whose sphere is outside the frustum.
    pub frustum_rejected: u32,
    /// Meshlets the normal cone proves back-facing.
    pub cone_rejected: u32,
    /// Meshlets whose box the Hi-Z pyramid hides.
    pub occlusion_rejected: u32,
    /// Meshlets kept because the occlusion test could not judge them (drawn, amber).
    pub conservative: u32,
    /// Commands the early phase wrote (meshlets visible last frame and objects drawn whole).
    pub early_drawn: u32,
    /// Commands the late phase wrote (newly visible).
    pub late_drawn: u32,
    /// Triangles of every command (both phases): what cluster culling submits.
    pub triangles: u32,
    /// Triangles of the objects the object pass kept: what object culling alone submits.
    pub object_triangles: u32,
    /// Objects drawn whole: their mesh has no meshlets, or changed since the cluster table was
    /// built (counted once per phase that drew them).
    pub whole_objects: u32,
}

/// u32 counters in `cluster_stats` (`CSTAT_COUNT` in `cluster_cull.h`).
pub const CLUSTER_STAT_WORDS: usize = 16;

impl ClusterStats {
    /// Decodes the counters read back from `cluster_stats` (little-endian u32s; missing
    /// words read 0).
    pub fn from_counters(bytes: &[u8]) -> ClusterStats {
        let word = |index: usize| {
            bytes.get(index * 4..index * 4 + 4).map_or(0, |word| u32::from_le_bytes(word.try_into().expect("4 bytes")))
        };
        ClusterStats {
            meshlets: word(0),
            // The GPU counts the meshlets of kept objects (word 1).
            object_culled: word(0).saturating_sub(word(1)),
            frustum_rejected: word(2),
            cone_rejected: word(3),
            occlusion_rejected: word(4),
            conservative: word(5),
            early_drawn: word(6),
            late_drawn: word(7),
            triangles: word(8),
            object_triangles: word(9),
            whole_objects: word(10),
        }
    }

    /// Meshlets of objects the object pass kept.
    pub fn after_objects(&self) -> u32 {
        self.meshlets.saturating_sub(self.object_culled)
    }

    /// Meshlets left after the meshlet frustum test.
    pub fn after_frustum(&self) -> u32 {
        self.after_objects().saturating_sub(self.frustum_rejected)
    }

    /// Meshlets left after the cone test.
    pub fn after_cone(&self) -> u32 {
        self.after_frustum().saturating_sub(self.cone_rejected)
    }

    /// Meshlets left after the occlusion test (conservative ones included).
    pub fn after_occlusion(&self) -> u32 {
        self.after_cone().saturating_sub(self.occlusion_rejected)
    }

    /// Commands drawn in both phases.
    pub fn drawn(&self) -> u32 {
        self.early_drawn + self.late_drawn
    }

    /// Share of the object pass's triangles that cluster culling did not submit (0 to 1; 0
    /// when the object pass kept nothing).
    pub fn triangle_saving(&self) -> f64 {
        if self.object_triangles == 0 {
            return 0.0;
        }
        1.0 - f64::from(self.triangles) / f64::from(self.object_triangles)
    }
}

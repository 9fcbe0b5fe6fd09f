//! Jobs in the capture: each job runs inside a zone named after its label ([`job_label`]) or
//! the call that spawned it, and the jobs one thread took from another's queue are counted
//! for the frame's `jobs stolen` plot.

/// Jobs taken from another thread's deque (or the injector by a thread that did not push
/// them) since the last frame mark.
#[cfg(feature = "profile")]
static STOLEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Jobs stolen over the process's life (what [`STOLEN`] counts, never reset).
#[cfg(feature = "profile")]
static STOLEN_TOTAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a job one thread took from another's queue (plotted per frame as `jobs stolen`).
#[inline]
pub(crate) fn job_stolen() {
    #[cfg(feature = "profile")]
    {
        STOLEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        STOLEN_TOTAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Jobs stolen since the last [`frame_mark`](super::frame_mark) (always 0 without the `profile` feature).
pub fn jobs_stolen_this_frame() -> u64 {
    #[cfg(feature = "profile")]
    {
        STOLEN.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "profile"))]
    {
        0
    }
}

/// Jobs stolen since the last frame mark, counting again from zero (the frame mark's plot).
#[cfg(feature = "profile")]
pub(super) fn take_stolen_this_frame() -> u64 {
    STOLEN.swap(0, std::sync::atomic::Ordering::Relaxed)
}

/// What a job's zone is named after and where its "go to source" leads: the label set by
/// [`job_label`] at the label's call, else the call that spawned the job.
#[cfg(feature = "profile")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobSite {
    label: Option<&'static str>,
    location: &'static std::panic::Location<'static>,
}

#[cfg(feature = "profile")]
thread_local! {
    /// The site given to jobs spawned from this thread (see [`job_label`]).
    static JOB_SITE: std::cell::Cell<Option<JobSite>> = const { std::cell::Cell::new(None) };
}

/// Restores the previous job label when dropped (see [`job_label`]).
#[must_use = "the label holds only while the guard lives"]
pub struct JobLabelGuard {
    #[cfg(feature = "profile")]
    previous: Option<JobSite>,
}

/// Names the jobs this thread spawns (through `parallel_for`, `join` or a scope) until the
/// guard drops: in a Tracy capture each such job is a zone of this name on the thread that
/// runs it (`worker-N` or a waiting thread), whose source is this call, so the capture shows
/// how the work spread over the cores. A job's own spawns inherit its name. Without a label,
/// a job is named after the call that spawned it (`job at file:line`). Give each label at
/// one place, and not the name of a zone: one name is then one source location. Without the
/// `profile` feature it does nothing.
///
/// ```
/// let _label = runtime::profiling::job_label("visibility cull job");
/// runtime::jobs::parallel_for(0..1000, 64, |_| {});
/// ```
#[track_caller]
pub fn job_label(name: &'static str) -> JobLabelGuard {
    #[cfg(feature = "profile")]
    {
        let site = JobSite { label: Some(name), location: std::panic::Location::caller() };
        JobLabelGuard { previous: JOB_SITE.with(|current| current.replace(Some(site))) }
    }
    #[cfg(not(feature = "profile"))]
    {
        let _ = name;
        JobLabelGuard {}
    }
}

/// Names the jobs this thread spawns `name`, with `location` as their source (a system's
/// definition), until the guard drops (see [`job_label`]).
#[cfg(feature = "profile")]
pub(crate) fn job_label_at(name: &'static str, location: &'static std::panic::Location<'static>) -> JobLabelGuard {
    let site = JobSite { label: Some(name), location };
    JobLabelGuard { previous: JOB_SITE.with(|current| current.replace(Some(site))) }
}

/// At a call that spawns jobs: without a label on this thread, names the jobs after the call
/// (the caller of the `#[track_caller]` entry point) until the guard drops.
#[cfg(feature = "profile")]
#[track_caller]
pub(crate) fn spawn_site() -> Option<JobLabelGuard> {
    // Read here: inside the closures below the caller would be the closure's line.
    let location = std::panic::Location::caller();
    JOB_SITE.with(|current| {
        current.get().is_none().then(|| {
            let site = JobSite { label: None, location };
            JobLabelGuard { previous: current.replace(Some(site)) }
        })
    })
}

impl Drop for JobLabelGuard {
    fn drop(&mut self) {
        #[cfg(feature = "profile")]
        JOB_SITE.with(|current| current.set(self.previous));
    }
}

/// The site jobs spawned from this thread get now.
#[cfg(feature = "profile")]
pub(crate) fn current_job_site() -> Option<JobSite> {
    JOB_SITE.with(std::cell::Cell::get)
}

/// The label jobs spawned from this thread get now (`None` without one).
#[cfg(all(test, feature = "profile"))]
pub(crate) fn current_job_label() -> Option<&'static str> {
    current_job_site().and_then(|site| site.label)
}

/// What runs while a job runs on this thread: a zone named after the job's site, and the
/// site itself, so the jobs it spawns carry it too.
#[cfg(feature = "profile")]
pub(crate) struct JobZone {
    _zone: Option<tracy_client::Span>,
    _label: JobLabelGuard,
}

/// Opens the zone of a job made at `site` on the thread that runs it.
#[cfg(feature = "profile")]
pub(crate) fn job_zone(site: Option<JobSite>) -> JobZone {
    let zone = tracy_client::Client::running().map(|client| match site {
        Some(JobSite { label: Some(label), location }) => {
            client.span_alloc(Some(label), label, location.file(), location.line(), 0)
        }
        Some(JobSite { label: None, location }) => {
            let name = format!("job at {}:{}", location.file(), location.line());
            client.span_alloc(Some(&name), "", location.file(), location.line(), 0)
        }
        None => client.span_alloc(Some("job outside any spawning call"), "", file!(), line!(), 0),
    });
    let previous = JOB_SITE.with(|current| current.replace(site));
    JobZone { _zone: zone, _label: JobLabelGuard { previous } }
}

#[cfg(all(test, feature = "profile", not(loom)))]
mod tests {
    use super::*;

    /// A job carries the label of the thread that spawned it and runs under it wherever it
    /// runs, so its zone (and the jobs it spawns) get that name.
    #[test]
    fn jobs_run_under_the_label_they_were_spawned_with() {
        let pool = crate::jobs::JobSystem::new(3);
        let seen = std::sync::Mutex::new(Vec::new());
        {
            let _label = job_label("visibility cull job");
            pool.parallel_for(0..64, 1, |_| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                seen.lock()
                    .expect("not poisoned")
                    .push((current_job_label(), std::thread::current().name().map(String::from)));
            });
        }
        assert_eq!(current_job_label(), None, "the guard restored the default");
        let seen = seen.into_inner().expect("not poisoned");
        let on_workers: Vec<_> = seen
            .iter()
            .filter(|(_, thread)| thread.as_deref().is_some_and(|name| name.starts_with("worker-")))
            .collect();
        assert!(!on_workers.is_empty(), "some chunks ran on workers: {seen:?}");
        assert!(seen.iter().all(|(label, _)| *label == Some("visibility cull job")), "{seen:?}");
    }

    /// A job without a label is named after the call that spawned it; a label's source is
    /// the call that set it.
    #[test]
    fn jobs_carry_the_site_of_their_label_or_of_their_spawning_call() {
        let pool = crate::jobs::JobSystem::new(2);
        let sites = std::sync::Mutex::new(Vec::new());
        let record = || sites.lock().expect("not poisoned").push(current_job_site().expect("a job has a site"));
        pool.parallel_for(0..4, 1, |_| record());
        let spawn_line = line!() - 1;
        let label = job_label("labelled test job");
        let label_line = line!() - 1;
        pool.parallel_for(0..4, 1, |_| record());
        drop(label);
        let sites = sites.into_inner().expect("not poisoned");
        let (unlabelled, labelled) = sites.split_at(4);
        for site in unlabelled {
            assert_eq!((site.label, site.location.line()), (None, spawn_line), "{site:?}");
            assert!(site.location.file().ends_with("profiling/jobs.rs"), "{site:?}");
        }
        for site in labelled {
            assert_eq!((site.label, site.location.line()), (Some("labelled test job"), label_line), "{site:?}");
        }
    }

    /// Chunks that ran on workers were taken from the caller's deque (or the injector): the
    /// `jobs stolen` plot counts them.
    #[test]
    fn stolen_jobs_are_counted_for_the_frame_plot() {
        let pool = crate::jobs::JobSystem::new(3);
        // The total, not this frame's count: other tests end frames meanwhile.
        let total = || STOLEN_TOTAL.load(std::sync::atomic::Ordering::Relaxed);
        let before = total();
        let on_workers = std::sync::atomic::AtomicUsize::new(0);
        pool.parallel_for(0..64, 1, |_| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            if std::thread::current().name().is_some_and(|name| name.starts_with("worker-")) {
                on_workers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(on_workers.into_inner() > 0, "some chunks ran on workers");
        assert!(total() > before, "the workers' chunks were counted as stolen");
    }
}

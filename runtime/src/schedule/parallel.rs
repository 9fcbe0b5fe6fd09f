//! A parallel query loop for systems, on the job system.

use hecs::{Query, QueryBorrow};

use super::query::QueryAccess;
use super::system::SystemContext;
use crate::jobs;

impl SystemContext<'_> {
    /// Calls `body` on every item of query `Q`, in parallel batches of at most `grain` entities
    /// on the current job system. The query is checked like [`SystemContext::query`].
    ///
    /// Batches are cut by archetype and `grain` alone, never by the thread count, and each
    /// item is visited exactly once; as long as `body` writes only through its own item (and
    /// reads what no one writes meanwhile) the world after the loop is the same on any number
    /// of threads. A call allocates one small list of batch handles (entities / `grain`).
    ///
    /// ```
    /// use runtime::{App, Stage, System};
    /// struct Position(f32);
    /// struct Velocity(f32);
    /// let mut app = App::with_threads(2);
    /// app.world_mut().spawn_batch((0..10_000).map(|index| (Position(0.0), Velocity(index as f32))));
    /// app.add_system(
    ///     Stage::Transform,
    ///     System::new("integrate", |ctx| {
    ///         let dt = ctx.time.delta_seconds;
    ///         ctx.par_for_each::<(&mut Position, &Velocity)>(1024, |(position, velocity)| position.0 += velocity.0 * dt);
    ///     })
    ///     .query::<(&mut Position, &Velocity)>(),
    /// );
    /// app.set_fixed_delta(Some(0.5));
    /// app.run_frame();
    /// let sum: f32 = app.world().query::<&Position>().iter().map(|position| position.0).sum();
    /// assert_eq!(sum, (0..10_000).map(|index| index as f32 * 0.5).sum::<f32>());
    /// ```
    #[cfg_attr(feature = "profile", track_caller)]
    pub fn par_for_each<Q>(&self, grain: usize, body: impl for<'q> Fn(Q::Item<'q>) + Sync + Send)
    where
        Q: Query + QueryAccess,
        for<'q> Q::Item<'q>: Send,
    {
        #[cfg(feature = "profile")]
        let _site = crate::profiling::spawn_site();
        for_each_batched(self.query::<Q>(), grain, body);
    }
}

/// Calls `body` on every item of `query`, in parallel batches of at most `grain` entities
/// (see [`SystemContext::par_for_each`]).
pub(crate) fn for_each_batched<Q>(
    mut query: QueryBorrow<'_, Q>,
    grain: usize,
    body: impl for<'q> Fn(Q::Item<'q>) + Sync + Send,
) where
    Q: Query,
    for<'q> Q::Item<'q>: Send,
{
    crate::profile_zone!("par_for_each");
    let grain = u32::try_from(grain.max(1)).unwrap_or(u32::MAX);
    let mut batches: Vec<hecs::Batch<'_, Q>> = query.iter_batched(grain).collect();
    jobs::parallel_for_chunks(&mut batches, 1, |_, chunk| {
        for batch in chunk {
            batch.by_ref().for_each(&body);
        }
    });
}

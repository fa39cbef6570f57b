//! One limit on records in work for the whole task. `CONSUMER_CONCURRENCY`
//! means for a worker what it means for one function instance, records
//! processed at once, however many received batches are in work; the rest wait
//! their turn, received and leased (the heartbeat keeps them), holding no
//! connection to the downstream. Memory then grows with `WORKER_MAX_IN_FLIGHT`
//! by a record each, not by a connection each.

use backpressure_batch::{Message, Processor, Verdict};
use tokio::sync::Semaphore;

/// A processor whose calls share one task-wide limit.
#[derive(Debug)]
pub struct TaskWide<P> {
    inner: P,
    permits: Semaphore,
}

impl<P> TaskWide<P> {
    /// `inner`, called for at most `limit` records at once.
    pub fn new(inner: P, limit: usize) -> Self {
        Self { inner, permits: Semaphore::new(limit.max(1)) }
    }
}

impl<B: Sync, P: Processor<B>> Processor<B> for TaskWide<P> {
    async fn process(&self, message: &Message<'_, B>) -> Verdict {
        // The semaphore is never closed, so a permit always comes.
        let _permit = self.permits.acquire().await.ok();
        self.inner.process(message).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use backpressure_batch::SqsRecord;
    use tokio::time::Instant;

    use super::*;

    /// Counts the calls in progress and remembers the most at once.
    #[derive(Default)]
    struct Gauge {
        now: AtomicUsize,
        most: AtomicUsize,
    }

    impl Processor<()> for &Gauge {
        async fn process(&self, _: &Message<'_, ()>) -> Verdict {
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(5)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Verdict::Done
        }
    }

    #[tokio::test]
    async fn calls_from_every_batch_share_one_limit() {
        let gauge = Gauge::default();
        let limited = TaskWide::new(&gauge, 3);
        let record = SqsRecord::default();
        let deadline = Instant::now() + Duration::from_secs(60);
        let calls = (0..20).map(|_| {
            let message =
                Message { message_id: "m", body: "{}", request: &(), record: &record, deadline };
            let limited = &limited;
            async move { limited.process(&message).await }
        });
        let verdicts = futures::future::join_all(calls).await;
        assert!(verdicts.iter().all(|v| matches!(v, Verdict::Done)));
        assert_eq!(gauge.most.load(Ordering::SeqCst), 3);
    }
}

//! `concurrency` is the engine's, not a batch's: batches run at once (a
//! worker's polls, a Managed Instances function's invocations) share it.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// Counts the calls in progress and remembers the most at once.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
    calls: AtomicUsize,
}

impl Processor<TestRequest> for Gauge {
    async fn process(&self, _: &Message<'_, TestRequest>) -> Verdict {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(5)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        self.calls.fetch_add(1, Ordering::SeqCst);
        Verdict::Done
    }
}

#[tokio::test(start_paused = true)]
async fn batches_in_work_together_share_one_concurrency_limit() {
    let settings = EngineSettings {
        concurrency: 3,
        deadline_margin: Duration::from_secs(2),
        handler_version: "test".into(),
        envelope: None,
        #[cfg(feature = "offloaded-payloads")]
        offloaded: None,
    };
    let engine = Engine::new(Gauge::default(), MemoryQuarantine::default(), settings);
    let batches: Vec<SqsEvent> = (0..4).map(|_| standard_batch(&[Behaviour::Ok; 5])).collect();
    let runs = batches.iter().map(|batch| engine.run(&batch.records, far_deadline(), &|_| {}));
    let reports = futures::future::join_all(runs).await;

    for report in reports {
        let report = report.unwrap();
        assert!(report.outcomes.iter().all(|o| o.outcome == Outcome::Done), "{report:?}");
    }
    assert_eq!(engine.processor().calls.load(Ordering::SeqCst), 20);
    assert_eq!(engine.processor().most.load(Ordering::SeqCst), 3);
}

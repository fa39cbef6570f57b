//! Idempotency through the batch processor, on the in-memory store: what a
//! team embedding the library sees for each state of a key.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use crate::idempotency::{
    ClaimLease, ClaimOutcome, ClaimRequest, CompleteRequest, Idempotency, IdempotencyStore,
    LookupRequest, MemoryStore, MissingKey, ReleaseRequest, RenewRequest, StoreError, body_hash,
};
use crate::quarantine::{QuarantineError, QuarantineRecord, QuarantineStore};
use crate::{
    BatchProcessor, ErrorCode, JsonBody, Message, Verdict, record::SqsRecord, report::Outcome,
};
use backpressure_core::error::ApiError;
use tokio::time::Instant;

#[derive(serde::Deserialize)]
struct Payment {
    key: Option<String>,
    cents: i64,
}

impl JsonBody for Payment {
    fn idempotency_key(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.key.as_deref().map(Into::into)
    }
}

fn record(id: &str, body: &str) -> SqsRecord {
    SqsRecord::new(id)
        .with_body(body)
        .with_receipt_handle(format!("rh-{id}"))
        .with_source_arn("arn:aws:sqs:us-east-1:123456789012:payments")
}

#[derive(Default, Clone)]
struct Kept(Arc<std::sync::Mutex<Vec<String>>>);

impl QuarantineStore for Kept {
    async fn store(&self, records: &[QuarantineRecord]) -> Vec<Result<(), QuarantineError>> {
        let mut kept = self.0.lock().unwrap();
        records
            .iter()
            .map(|r| {
                kept.push(serde_json::to_string(r).unwrap());
                Ok(())
            })
            .collect()
    }
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

/// A processor that counts its runs and answers by the amount.
fn payments(
    runs: &Arc<AtomicUsize>,
) -> impl Fn(&Message<'_, Payment>) -> std::future::Ready<Verdict> + Send + Sync + use<> {
    let runs = runs.clone();
    move |message: &Message<'_, Payment>| {
        runs.fetch_add(1, Ordering::SeqCst);
        std::future::ready(match message.decoded.cents {
            0 => Verdict::retry("the bank is busy"),
            c if c < 0 => panic!("negative amount"),
            c => Verdict::done_with(format!("receipt-{c}")),
        })
    }
}

#[tokio::test]
async fn a_redelivered_key_is_acknowledged_as_a_duplicate_with_its_stored_result() {
    let (runs, store) = (Arc::new(AtomicUsize::new(0)), MemoryStore::new());
    let batch = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(store.clone()))
        .build()
        .unwrap();
    let body = r#"{"key":"p-1","cents":5}"#;
    let first = [record("a", body)];
    assert_eq!(batch.process(&first, soon()).await.unwrap().outcomes[0].outcome, Outcome::Done);
    let again = [record("b", body), record("c", body)];
    let report = batch.process(&again, soon()).await.unwrap();
    let duplicate = Outcome::Duplicate { result: Some("receipt-5".into()) };
    assert_eq!(report.outcomes[0].outcome, duplicate);
    assert_eq!(report.outcomes[1].outcome, duplicate);
    assert!(report.batch_item_failures.is_empty());
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the processor ran once for the key");
    assert_eq!(store.get("0:8:payments#p-1").unwrap().validation, body_hash(body));
}

#[tokio::test]
async fn the_same_key_with_another_body_is_quarantined_with_both_hashes_and_not_processed() {
    let (runs, quarantine) = (Arc::new(AtomicUsize::new(0)), Kept::default());
    let batch = BatchProcessor::builder(payments(&runs))
        .quarantine(quarantine.clone())
        .idempotency(Idempotency::new(MemoryStore::new()))
        .build()
        .unwrap();
    let (first, second) = (r#"{"key":"p-1","cents":5}"#, r#"{"key":"p-1","cents":7}"#);
    batch.process(&[record("a", first)], soon()).await.unwrap();
    let records = [record("b", second)];
    let report = batch.process(&records, soon()).await.unwrap();
    assert_eq!(
        report.outcomes[0].outcome,
        Outcome::Quarantined { code: ErrorCode::IdempotencyKeyReused }
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let kept = quarantine.0.lock().unwrap();
    assert_eq!(kept.len(), 1);
    assert!(
        kept[0].contains(&body_hash(first)) && kept[0].contains(&body_hash(second)),
        "{}",
        kept[0]
    );
}

#[tokio::test]
async fn a_key_in_progress_elsewhere_is_retried_after_that_lease_without_processing() {
    let (runs, store) = (Arc::new(AtomicUsize::new(0)), MemoryStore::new());
    let body = r#"{"key":"p-1","cents":5}"#;
    let now = SystemTime::now();
    let hash = body_hash(body);
    let other = ClaimRequest {
        id: "0:8:payments#p-1",
        holder: "another-worker",
        validation: &hash,
        lease_until: now + Duration::from_secs(40),
        expiration: now + Duration::from_secs(3600),
        now,
    };
    assert_eq!(store.claim(&other).await.unwrap(), ClaimOutcome::Claimed);
    let batch = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(store))
        .build()
        .unwrap();
    let records = [record("a", body)];
    let report = batch.process(&records, soon()).await.unwrap();
    let Outcome::Retry { retry_after: Some(after), .. } = &report.outcomes[0].outcome else {
        panic!("{:?}", report.outcomes[0]);
    };
    assert!(*after >= Duration::from_secs(39), "not back before the other lease ends: {after:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_retry_a_permanent_failure_and_a_panic_release_their_claims() {
    let (runs, store) = (Arc::new(AtomicUsize::new(0)), MemoryStore::new());
    let batch = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(store.clone()))
        .build()
        .unwrap();
    let records = [
        record("busy", r#"{"key":"p-0","cents":0}"#),
        record("bad", r#"{"key":"p-9","cents":-1}"#),
    ];
    let report = batch.process(&records, soon()).await.unwrap();
    assert_eq!(report.batch_item_failures, ["busy", "bad"]);
    assert!(store.is_empty(), "both claims released, so a retry claims again");
    batch.process(&records, soon()).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 4, "each retry ran again");
}

#[tokio::test]
async fn a_missing_key_is_processed_or_quarantined_as_configured() {
    let runs = Arc::new(AtomicUsize::new(0));
    let body = r#"{"cents":5}"#;
    let lenient = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(MemoryStore::new()))
        .build()
        .unwrap();
    assert_eq!(
        lenient.process(&[record("a", body)], soon()).await.unwrap().outcomes[0].outcome,
        Outcome::Done
    );
    let strict = BatchProcessor::builder(payments(&runs))
        .quarantine(Kept::default())
        .idempotency(Idempotency::new(MemoryStore::new()).missing_key(MissingKey::Quarantine))
        .build()
        .unwrap();
    let records = [record("b", body)];
    let report = strict.process(&records, soon()).await.unwrap();
    assert_eq!(
        report.outcomes[0].outcome,
        Outcome::Quarantined { code: ErrorCode::MissingIdempotencyKey }
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// A store whose every call fails, or only its completions.
struct Failing {
    inner: MemoryStore,
    claims_fail: bool,
}

fn failed() -> StoreError {
    StoreError::Call(ApiError::new("PutItem", std::io::Error::other("ThrottlingException")))
}

impl IdempotencyStore for Failing {
    async fn completed(
        &self,
        request: &LookupRequest<'_>,
    ) -> Result<std::collections::HashMap<String, ClaimOutcome>, StoreError> {
        if self.claims_fail { Err(failed()) } else { self.inner.completed(request).await }
    }
    async fn claim(&self, request: &ClaimRequest<'_>) -> Result<ClaimOutcome, StoreError> {
        if self.claims_fail { Err(failed()) } else { self.inner.claim(request).await }
    }
    async fn complete(&self, _: &CompleteRequest<'_>) -> Result<(), StoreError> {
        Err(failed())
    }
    async fn renew(&self, request: &RenewRequest<'_>) -> Result<(), StoreError> {
        self.inner.renew(request).await
    }
    async fn release(&self, request: &ReleaseRequest<'_>) -> Result<(), StoreError> {
        self.inner.release(request).await
    }
}

#[tokio::test]
async fn a_claim_that_fails_never_runs_the_processor_and_a_lost_completion_is_counted() {
    let runs = Arc::new(AtomicUsize::new(0));
    let body = r#"{"key":"p-1","cents":5}"#;
    let down = Failing { inner: MemoryStore::new(), claims_fail: true };
    let batch = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(down))
        .build()
        .unwrap();
    let records = [record("a", body)];
    let report = batch.process(&records, soon()).await.unwrap();
    assert_eq!(report.batch_item_failures, ["a"]);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no side effect without a confirmed claim");
    assert_eq!(report.idempotency_store_errors, 2, "the pre-check and the claim");

    let half = Failing { inner: MemoryStore::new(), claims_fail: false };
    let batch = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(half))
        .build()
        .unwrap();
    let records = [record("a", body)];
    let report = batch.process(&records, soon()).await.unwrap();
    assert_eq!(report.outcomes[0].outcome, Outcome::Done, "the side effect happened: acknowledged");
    assert_eq!(report.idempotency_store_errors, 1, "and the lost completion counted");
}

#[tokio::test]
async fn work_stops_when_its_claim_lapses_unrenewed_and_runs_on_while_renewed() {
    let store = MemoryStore::new();
    let slow = |_: &Message<'_, Payment>| async {
        tokio::time::sleep(Duration::from_millis(900)).await;
        Verdict::Done
    };
    let lease = ClaimLease::Renewed(Duration::from_millis(300));
    let batch = BatchProcessor::builder(slow)
        .idempotency(Idempotency::new(store.clone()).lease(lease))
        .build()
        .unwrap();
    let records = [record("a", r#"{"key":"p-1","cents":5}"#)];
    let report = batch.process(&records, soon()).await.unwrap();
    assert_eq!(report.batch_item_failures, ["a"], "cut at the lapse: {:?}", report.outcomes[0]);
    assert!(store.is_empty(), "and released");

    let renewing = async {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(batch.renew_claims().await, 0);
        }
    };
    let report = tokio::select! {
        report = batch.process(&records, soon()) => report.unwrap(),
        () = renewing => unreachable!(),
    };
    assert_eq!(report.outcomes[0].outcome, Outcome::Done);
    assert_eq!(
        store.get("0:8:payments#p-1").unwrap().status,
        crate::idempotency::claim::Status::Completed
    );
}

/// A side effect of 900 ms, declared as taking at most a second.
struct SlowSideEffect;

impl crate::Processor<Payment> for SlowSideEffect {
    async fn process(&self, message: &Message<'_, Payment>) -> Verdict {
        let lapse = message.claim_lapse.unwrap();
        assert!(lapse >= Instant::now() + Duration::from_secs(1), "the whole side effect fits");
        tokio::time::sleep(Duration::from_millis(900)).await;
        Verdict::Done
    }

    fn side_effect_timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
}

/// Renewal starved (nothing renews): a lease shorter than the processor's
/// longest side effect is lengthened to cover it, so the side effect is never
/// cut, nor its key free for another consumer, while it may still be under way.
#[tokio::test]
async fn a_claim_lasts_out_the_processors_longest_side_effect_without_renewal() {
    let store = MemoryStore::new();
    let lease = ClaimLease::Renewed(Duration::from_millis(300));
    let batch = BatchProcessor::builder(SlowSideEffect)
        .idempotency(Idempotency::new(store.clone()).lease(lease))
        .build()
        .unwrap();
    let records = [record("a", r#"{"key":"p-1","cents":5}"#)];
    let report = batch.process(&records, soon()).await.unwrap();
    assert_eq!(report.outcomes[0].outcome, Outcome::Done, "{:?}", report.outcomes[0]);
    let stored = store.get("0:8:payments#p-1").unwrap();
    assert_eq!(stored.status, crate::idempotency::claim::Status::Completed);
}

#[tokio::test]
async fn a_key_too_long_for_dynamodb_is_stored_by_its_hash_and_still_deduplicates() {
    let (runs, store) = (Arc::new(AtomicUsize::new(0)), MemoryStore::new());
    let batch = BatchProcessor::builder(payments(&runs))
        .idempotency(Idempotency::new(store.clone()))
        .build()
        .unwrap();
    let key = "k".repeat(5_000);
    let body = format!(r#"{{"key":"{key}","cents":5}}"#);
    let records = [record("a", &body)];
    batch.process(&records, soon()).await.unwrap();
    let again = batch.process(&records, soon()).await.unwrap();
    assert!(matches!(again.outcomes[0].outcome, Outcome::Duplicate { .. }));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let id = format!("0:8:payments@sha256:{}", body_hash(&key));
    assert!(store.get(&id).is_some(), "stored under {id}");
}

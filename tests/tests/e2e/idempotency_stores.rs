//! The idempotency stores' contract, the same for each: DynamoDB (moto) and
//! Redis (Debian's redis-server), called through `IdempotencyStore` as the
//! engine calls them. Claims, duplicates, contention, lapsed leases, renewals,
//! releases, retried calls whose first answer was lost, and expiry by the
//! caller's clock; then the claim state machine's property, that no two
//! consumers ever work under one key at once, against each real store.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use backpressure_batch::idempotency::{
    CLOCK_SKEW_MARGIN, ClaimOutcome, ClaimRequest, CompleteRequest, Idempotency, IdempotencyStore,
    LookupRequest, ReleaseRequest, RenewRequest, StoreError,
};
use e2e_tests::fixtures::unique;
use e2e_tests::idempotency_table::Table;

pub(crate) fn redis_url() -> String {
    std::env::var("E2E_REDIS_URL")
        .unwrap_or_else(|_| panic!("E2E_REDIS_URL is not set: run the tests with `make test`"))
}

/// The library's Redis store, under a namespace of its own.
pub(crate) fn redis_store() -> Idempotency {
    Idempotency::redis(&redis_url(), &unique("test:"), Duration::from_secs(2)).unwrap()
}

/// The library's DynamoDB store, on a new table.
async fn dynamodb_store() -> Idempotency {
    let table = Table::create().await.unwrap();
    Idempotency::dynamodb(table.client.clone(), &table.name)
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// A claim by `holder` at `now_ms`, leased for `lease_ms`, kept an hour.
fn request<'a>(id: &'a str, holder: &'a str, now_ms: u64, lease_ms: u64) -> ClaimRequest<'a> {
    ClaimRequest {
        id,
        holder,
        validation: "sha-of-the-body",
        lease_until: at(now_ms + lease_ms),
        expiration: at(now_ms + 3_600_000),
        now: at(now_ms),
    }
}

/// Now, by the tests' clock: the stores' own expiry (Redis deletes at
/// `expiration`) must not take a record before the caller's clock does.
fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

async fn contract(store: &impl IdempotencyStore, name: &str) {
    let now = now_ms();
    let id = format!("orders#{}", unique("k"));

    // A first claim; a second holder finds it in progress until its lease.
    assert_eq!(store.claim(&request(&id, "a", now, 30_000)).await.unwrap(), ClaimOutcome::Claimed);
    match store.claim(&request(&id, "b", now + 10, 30_000)).await.unwrap() {
        ClaimOutcome::InProgress { validation, until } => {
            assert_eq!(
                (validation.as_str(), until),
                ("sha-of-the-body", at(now + 30_000)),
                "{name}"
            );
        }
        other => panic!("{name}: {other:?}"),
    }
    // Not the holder: no completion, renewal or release.
    let later = at(now + 3_600_000);
    assert!(matches!(
        store
            .complete(&CompleteRequest { id: &id, holder: "b", expiration: later, data: None })
            .await,
        Err(StoreError::NotHeld)
    ));
    assert!(matches!(
        store.renew(&RenewRequest { id: &id, holder: "b", lease_until: at(now + 60_000) }).await,
        Err(StoreError::NotHeld)
    ));
    assert!(matches!(
        store.release(&ReleaseRequest { id: &id, holder: "b" }).await,
        Err(StoreError::NotHeld)
    ));

    // Renewed, the lease runs on past its first end.
    store
        .renew(&RenewRequest { id: &id, holder: "a", lease_until: at(now + 90_000) })
        .await
        .unwrap();
    assert!(matches!(
        store.claim(&request(&id, "b", now + 60_000, 30_000)).await.unwrap(),
        ClaimOutcome::InProgress { .. }
    ));
    // Completed with the processor's result; a retried completion whose answer was lost is done too.
    let completion =
        CompleteRequest { id: &id, holder: "a", expiration: later, data: Some("receipt-7") };
    store.complete(&completion).await.unwrap();
    store.complete(&completion).await.unwrap();
    let duplicate = ClaimOutcome::Completed {
        validation: "sha-of-the-body".to_owned(),
        data: Some("receipt-7".to_owned()),
    };
    assert_eq!(
        store.claim(&request(&id, "c", now + 100, 30_000)).await.unwrap(),
        duplicate,
        "{name}"
    );
    let found = store
        .completed(&LookupRequest { ids: &[id.clone(), format!("{id}-never")], now: at(now + 100) })
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "{name}: {found:?}");
    assert_eq!(found[&id], duplicate);
    // Expired by the caller's clock though still stored: claimable again.
    let after = now + 3_600_000 + 1_000;
    assert_eq!(
        store.claim(&request(&id, "d", after, 30_000)).await.unwrap(),
        ClaimOutcome::Claimed,
        "{name}"
    );
    assert!(
        store
            .completed(&LookupRequest { ids: std::slice::from_ref(&id), now: at(after) })
            .await
            .unwrap()
            .is_empty()
    );

    // A lapsed lease is taken over; the first holder then holds nothing.
    let lapsing = format!("orders#{}", unique("k"));
    assert_eq!(
        store.claim(&request(&lapsing, "a", now, 1_000)).await.unwrap(),
        ClaimOutcome::Claimed
    );
    assert_eq!(
        store.claim(&request(&lapsing, "b", now + 1_000, 30_000)).await.unwrap(),
        ClaimOutcome::Claimed,
        "{name}: the lease ends at its instant"
    );
    assert!(matches!(
        store
            .complete(&CompleteRequest { id: &lapsing, holder: "a", expiration: later, data: None })
            .await,
        Err(StoreError::NotHeld)
    ));

    // Released, the key is free; a retried release whose answer was lost is released too.
    store.release(&ReleaseRequest { id: &lapsing, holder: "b" }).await.unwrap();
    store.release(&ReleaseRequest { id: &lapsing, holder: "b" }).await.unwrap();
    assert_eq!(
        store.claim(&request(&lapsing, "c", now + 2_000, 30_000)).await.unwrap(),
        ClaimOutcome::Claimed,
        "{name}"
    );
}

#[tokio::test]
async fn the_dynamodb_store_keeps_the_claim_contract() {
    contract(dynamodb_store().await.store(), "DynamoDB").await;
}

#[tokio::test]
async fn the_redis_store_keeps_the_claim_contract() {
    contract(redis_store().store(), "Redis").await;
}

#[tokio::test]
async fn redis_stores_with_other_prefixes_never_see_each_others_keys() {
    let now = now_ms();
    let (first, second) = (redis_store(), redis_store());
    let (first, second) = (first.store(), second.store());
    assert_eq!(
        first.claim(&request("orders#k", "a", now, 30_000)).await.unwrap(),
        ClaimOutcome::Claimed
    );
    assert_eq!(
        second.claim(&request("orders#k", "b", now, 30_000)).await.unwrap(),
        ClaimOutcome::Claimed
    );
}

/// One step of the property test, for real stores.
#[derive(Debug, Clone, Copy)]
enum Step {
    Claim { actor: usize, works_ms: u64 },
    Renew { actor: usize, works_ms: u64 },
    Complete { actor: usize },
    Release { actor: usize },
    Advance { ms: u64 },
}

/// Steps from a seed: the store's answers are checked, not the generator's.
fn steps(seed: u64) -> Vec<Step> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..rng.usize(1..40))
        .map(|_| match rng.u8(0..5) {
            0 => Step::Claim { actor: rng.usize(0..3), works_ms: rng.u64(1..5_000) },
            1 => Step::Renew { actor: rng.usize(0..3), works_ms: rng.u64(1..5_000) },
            2 => Step::Complete { actor: rng.usize(0..3) },
            3 => Step::Release { actor: rng.usize(0..3) },
            _ => Step::Advance { ms: rng.u64(0..6_000) },
        })
        .collect()
}

/// `crates/batch`'s `no_two_consumers_ever_hold_one_key_at_once`, against a
/// real store: three consumers with clocks up to half the skew margin apart
/// claim, renew, complete and release one key while time moves; at no step
/// do two of them work under it.
async fn no_two_consumers_ever_hold_one_key_at_once(store: &impl IdempotencyStore, name: &str) {
    let skew = CLOCK_SKEW_MARGIN.as_millis() as i64;
    for seed in 0..48u64 {
        let offsets = [-(skew / 2), 0, skew / 2];
        let id = format!("orders#{}", unique("p"));
        let mut holding: [Option<(String, u64)>; 3] = Default::default();
        // Far enough ahead that no store's own expiry acts during the run.
        let mut now = now_ms() + 1_000_000;
        let local = |now: u64, actor: usize| (now as i64 + offsets[actor]) as u64;
        for (n, step) in steps(seed).into_iter().enumerate() {
            match step {
                Step::Advance { ms } => now += ms,
                Step::Claim { actor, works_ms } if holding[actor].is_none() => {
                    let holder = format!("s{seed}-{n}");
                    let mine = ClaimRequest {
                        lease_until: at(local(now, actor) + works_ms + skew as u64),
                        ..request(&id, &holder, local(now, actor), 0)
                    };
                    if store.claim(&mine).await.unwrap() == ClaimOutcome::Claimed {
                        holding[actor] = Some((holder, now + works_ms));
                    }
                }
                Step::Claim { .. } => {}
                Step::Renew { actor, works_ms } => {
                    if let Some((holder, ends)) = holding[actor].as_mut()
                        && *ends > now
                    {
                        let until = at(local(now, actor) + works_ms + skew as u64);
                        if store
                            .renew(&RenewRequest { id: &id, holder, lease_until: until })
                            .await
                            .is_ok()
                        {
                            *ends = now + works_ms;
                        }
                    }
                }
                Step::Complete { actor } => {
                    if let Some((holder, ends)) = holding[actor].take()
                        && ends > now
                    {
                        let _ = store
                            .complete(&CompleteRequest {
                                id: &id,
                                holder: &holder,
                                expiration: at(local(now, actor) + 3_600_000),
                                data: None,
                            })
                            .await;
                    }
                }
                Step::Release { actor } => {
                    if let Some((holder, _)) = holding[actor].take() {
                        let _ = store.release(&ReleaseRequest { id: &id, holder: &holder }).await;
                    }
                }
            }
            let working = holding.iter().flatten().filter(|(_, ends)| *ends > now).count();
            assert!(
                working <= 1,
                "{name}, seed {seed}: {working} consumers under one key: {holding:?}"
            );
        }
    }
}

#[tokio::test]
async fn no_two_consumers_ever_hold_one_key_at_once_in_dynamodb() {
    no_two_consumers_ever_hold_one_key_at_once(dynamodb_store().await.store(), "DynamoDB").await;
}

#[tokio::test]
async fn no_two_consumers_ever_hold_one_key_at_once_in_redis() {
    no_two_consumers_ever_hold_one_key_at_once(redis_store().store(), "Redis").await;
}

//! The claim state machine under any order of claims, completions,
//! renewals, releases and clocks: never two holders of one key at once.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;

use super::*;
use crate::idempotency::CLOCK_SKEW_MARGIN;

#[derive(Debug, Clone)]
enum Step {
    Claim { actor: usize, works_ms: u64 },
    Renew { actor: usize, works_ms: u64 },
    Complete { actor: usize },
    Release { actor: usize },
    Advance { ms: u64 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..3usize, 1..5_000u64).prop_map(|(actor, works_ms)| Step::Claim { actor, works_ms }),
        (0..3usize, 1..5_000u64).prop_map(|(actor, works_ms)| Step::Renew { actor, works_ms }),
        (0..3usize).prop_map(|actor| Step::Complete { actor }),
        (0..3usize).prop_map(|actor| Step::Release { actor }),
        (0..6_000u64).prop_map(|ms| Step::Advance { ms }),
    ]
}

/// One consumer: its clock's offset from true time, and the claim it works under.
#[derive(Debug, Default, Clone)]
struct Actor {
    offset_ms: i64,
    /// (holder token, true time its work under the claim ends).
    holding: Option<(String, u64)>,
}

fn at(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn no_two_consumers_ever_hold_one_key_at_once(
        offsets in proptest::collection::vec(-500i64..=500, 3),
        steps in proptest::collection::vec(step(), 1..60),
    ) {
        let skew = CLOCK_SKEW_MARGIN.as_millis() as i64;
        prop_assert!(offsets.iter().all(|o| o.abs() * 2 <= skew), "offsets within the margin");
        let mut actors: Vec<Actor> =
            offsets.iter().map(|&offset_ms| Actor { offset_ms, holding: None }).collect();
        let mut slot: Option<StoredRecord> = None;
        let mut now: u64 = 1_000_000;
        let mut tokens = 0;
        for step in steps {
            match step {
                Step::Advance { ms } => now += ms,
                Step::Claim { actor, works_ms } => {
                    if actors[actor].holding.is_some() {
                        continue;
                    }
                    let local = now as i64 + actors[actor].offset_ms;
                    tokens += 1;
                    let holder = format!("t{tokens}");
                    let request = ClaimRequest {
                        id: "k",
                        holder: &holder,
                        validation: "h",
                        lease_until: at(local + works_ms as i64 + skew),
                        expiration: at(local + 3_600_000),
                        now: at(local),
                    };
                    if claim(&mut slot, &request) == ClaimOutcome::Claimed {
                        actors[actor].holding = Some((holder, now + works_ms));
                    }
                }
                Step::Renew { actor, works_ms } => {
                    let local = now as i64 + actors[actor].offset_ms;
                    if let Some((holder, ends)) = actors[actor].holding.as_mut()
                        && *ends > now
                        && renew(&mut slot, holder, at(local + works_ms as i64 + skew))
                    {
                        *ends = now + works_ms;
                    }
                }
                Step::Complete { actor } => {
                    if let Some((holder, ends)) = actors[actor].holding.take() {
                        let local = now as i64 + actors[actor].offset_ms;
                        // Work cut at its lease never completes.
                        if ends > now {
                            complete(&mut slot, &holder, at(local + 3_600_000), None);
                        }
                    }
                }
                Step::Release { actor } => {
                    if let Some((holder, _)) = actors[actor].holding.take() {
                        release(&mut slot, &holder);
                    }
                }
            }
            let working = actors
                .iter()
                .filter(|a| a.holding.as_ref().is_some_and(|(_, ends)| *ends > now))
                .count();
            prop_assert!(working <= 1, "{working} consumers work under one key at {now}: {actors:?} {slot:?}");
        }
    }
}

#[test]
fn a_record_stops_counting_at_its_expiry_whatever_the_store_keeps() {
    let request = ClaimRequest {
        id: "k",
        holder: "a",
        validation: "h",
        lease_until: at(10_000),
        expiration: at(20_000),
        now: at(0),
    };
    let mut slot = None;
    assert_eq!(claim(&mut slot, &request), ClaimOutcome::Claimed);
    let retry = ClaimRequest { holder: "b", now: at(9_999), ..request.clone() };
    assert!(matches!(claim(&mut slot, &retry), ClaimOutcome::InProgress { .. }));
    let later = ClaimRequest { holder: "b", now: at(10_000), ..request.clone() };
    assert_eq!(claim(&mut slot, &later), ClaimOutcome::Claimed, "a lapsed lease is taken over");
    assert!(!complete(&mut slot, "a", at(50_000), None), "the first holder no longer holds it");
    assert!(complete(&mut slot, "b", at(50_000), Some("receipt")));
    let duplicate = ClaimRequest { holder: "c", now: at(49_999), ..request.clone() };
    assert_eq!(
        claim(&mut slot, &duplicate),
        ClaimOutcome::Completed { validation: "h".into(), data: Some("receipt".into()) }
    );
    let expired = ClaimRequest { holder: "c", now: at(50_000), ..request };
    assert_eq!(claim(&mut slot, &expired), ClaimOutcome::Claimed, "expired, though still stored");
}

//! Any batch of any behaviours, standard or FIFO: every record ends with one
//! outcome, and the response lists exactly the retried ones.

use super::*;

fn behaviour() -> impl Strategy<Value = Behaviour> {
    prop_oneof![
        6 => Just(Behaviour::Ok),
        2 => Just(Behaviour::Retry),
        2 => Just(Behaviour::Reject),
        1 => Just(Behaviour::Panic),
        2 => Just(Behaviour::Garbage),
        1 => Just(Behaviour::Hang),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    messages: Vec<(Behaviour, u8, bool)>,
    fifo: bool,
    concurrency: usize,
    deadline_secs: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((behaviour(), 0_u8..4, prop::bool::weighted(0.15)), 0..40),
        any::<bool>(),
        1_usize..8,
        prop_oneof![Just(1_u64), Just(3), Just(600)],
    )
        .prop_map(|(messages, fifo, concurrency, deadline_secs)| Case {
            messages,
            fifo,
            concurrency,
            deadline_secs,
        })
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build()?;
    runtime.block_on(async {
        let refuse: Vec<String> = case
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.2)
            .map(|(i, _)| format!("m{i}"))
            .collect();
        let refuse: Vec<&str> = refuse.iter().map(String::as_str).collect();
        let engine = engine(&refuse, case.concurrency);
        let arn = if case.fifo { FIFO } else { STANDARD };
        let groups = ["g0", "g1", "g2", "g3"];
        let event = SqsEvent {
            records: case
                .messages
                .iter()
                .enumerate()
                .map(|(i, (b, g, _))| record(i, *b, Some(groups[*g as usize]), arn))
                .collect(),
        };
        let report = engine
            .run(&event.records, Instant::now() + Duration::from_secs(case.deadline_secs), &|_| {})
            .await?;
        let ids: Vec<String> = (0..case.messages.len()).map(|i| format!("m{i}")).collect();

        // Every record has exactly one outcome, and the response lists exactly the retried ones, once.
        prop_assert_eq!(report.outcomes.len(), ids.len());
        let expected: Vec<String> = ids
            .iter()
            .zip(&report.outcomes)
            .filter(|(_, o)| o.outcome.is_retry())
            .map(|(id, _)| id.clone())
            .collect();
        prop_assert_eq!(&report.batch_item_failures, &expected);

        let stored: HashSet<String> =
            lock(&engine.quarantine.stored).iter().map(|r| r.message_id.clone()).collect();
        let started = lock(&engine.processor.started).clone();
        for (i, (outcome, (behaviour, _, refused))) in
            report.outcomes.iter().zip(&case.messages).enumerate()
        {
            let id = &ids[i];
            match &outcome.outcome {
                Outcome::Done => prop_assert_eq!(*behaviour, Behaviour::Ok),
                Outcome::Quarantined { .. } => {
                    prop_assert!(matches!(behaviour, Behaviour::Reject | Behaviour::Garbage));
                    prop_assert!(!refused, "quarantined although the store refused it");
                    prop_assert!(stored.contains(id), "quarantined without a stored record");
                }
                Outcome::Retry { .. } | Outcome::QuarantineFailed { .. } => {
                    prop_assert!(!stored.contains(id) || case.deadline_secs < 600)
                }
                Outcome::Duplicate { .. } => prop_assert!(false, "a duplicate without a store"),
                Outcome::Skipped => prop_assert!(false, "skipped without an envelope"),
            }
            let nothing_hangs = case.messages.iter().all(|m| m.0 != Behaviour::Hang);
            if case.deadline_secs == 600 && nothing_hangs {
                let expected_retry = match behaviour {
                    Behaviour::Retry | Behaviour::Panic | Behaviour::Hang => true,
                    Behaviour::Reject | Behaviour::Garbage => *refused,
                    Behaviour::Ok => false,
                };
                if !case.fifo {
                    prop_assert_eq!(
                        outcome.outcome.is_retry(),
                        expected_retry,
                        "{} {:?}",
                        id,
                        behaviour
                    );
                }
            }
        }

        if case.fifo {
            for group in 0..4_u8 {
                let members: Vec<usize> = case
                    .messages
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| m.1 == group)
                    .map(|(i, _)| i)
                    .collect();
                // Within a group, processing started in batch order.
                let order: Vec<usize> = started
                    .iter()
                    .filter_map(|id| id[1..].parse::<usize>().ok())
                    .filter(|i| members.contains(i))
                    .collect();
                prop_assert!(
                    order.windows(2).all(|w| w[0] < w[1]),
                    "group {} out of order: {:?}",
                    group,
                    order
                );
                // After a failure in the group, nothing later in it was processed, and all of it is retried.
                if let Some(first_failure) =
                    members.iter().position(|&i| report.outcomes[i].outcome.is_retry())
                {
                    for &later in &members[first_failure + 1..] {
                        prop_assert!(
                            !started.contains(&ids[later]),
                            "{} processed after a failure in its group",
                            ids[later]
                        );
                        prop_assert!(report.outcomes[later].outcome.is_retry());
                    }
                }
            }
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_batch_invariant_holds_for_any_batch(case in case()) {
        check(&case)?;
    }
}

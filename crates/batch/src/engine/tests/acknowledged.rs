//! `Engine::run`: each acknowledged record is reported as it settles, not
//! when its batch is over.

use super::*;

/// Runs `event` and returns, per record index, when it was reported acknowledged.
async fn acknowledged_at(
    engine: &Engine<ScriptedProcessor, MemoryQuarantine, TestRequest>,
    event: &SqsEvent,
    deadline: Instant,
) -> Vec<(usize, Instant)> {
    let seen = Mutex::new(Vec::new());
    let report = engine
        .run(&event.records, deadline, &|index| lock(&seen).push((index, Instant::now())))
        .await
        .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort_by_key(|(index, _)| *index);
    let acknowledged: Vec<usize> = report
        .outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.outcome, Outcome::Done | Outcome::Quarantined { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(seen.iter().map(|(i, _)| *i).collect::<Vec<_>>(), acknowledged);
    seen
}

#[tokio::test(start_paused = true)]
async fn a_done_message_is_reported_while_a_slow_sibling_still_runs() {
    use Behaviour::*;
    let engine = engine(&["m3"], 4);
    let event = standard_batch(&[Ok, Hang, Reject, Reject, Retry]);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);
    let seen = acknowledged_at(&engine, &event, deadline).await;
    let indexes: Vec<usize> = seen.iter().map(|(i, _)| *i).collect();
    assert_eq!(
        indexes,
        [0, 2],
        "done and confirmed quarantine; not the refused write, not a retry"
    );
    assert_eq!(seen[0].1, started, "before the hanging sibling was cut at the deadline guard");
}

#[tokio::test(start_paused = true)]
async fn fifo_reports_a_group_up_to_its_first_failure() {
    use Behaviour::*;
    let engine = engine(&[], 4);
    let behaviours = [Ok, Ok, Retry, Ok];
    let records =
        behaviours.iter().enumerate().map(|(i, b)| record(i, *b, Some("g"), FIFO)).collect();
    let event = SqsEvent { records };
    let seen = acknowledged_at(&engine, &event, far_deadline()).await;
    assert_eq!(seen.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 1]);
}

//! backlog-publisher's `ScalingLoad` end to end: the binary under a Lambda
//! Runtime API host reads moto's or LocalStack's SQS and moto's ECS, and the
//! load is read back from LocalStack's CloudWatch. Read failures under every
//! fault are in `fault_matrix.rs`, which runs with the load on.

use std::time::Duration;

use e2e_tests::fixtures::{Aws, PublisherTarget, Sqs, binary, unique};
use e2e_tests::runtime_host::{LambdaHost, Outcome};
use serde_json::Value;

const NAMESPACE: &str = "SqsBackpressureE2ELoad";

/// 10 slots a task, 1 s a message, the visible backlog drained in 100 s, target 80 %.
const LOAD: [(&str, &str); 4] = [
    ("TARGET_LOAD_PERCENT", "80"),
    ("CONSUMER_CONCURRENCY", "10"),
    ("AVG_PROCESSING_SECONDS", "1"),
    ("LOAD_DRAIN_SECONDS", "100"),
];

/// One task held while idle: `HOLD_FRACTION` × the target.
const HELD_ONE_TASK: f64 = 0.75 * 80.0;

fn schedule_event() -> Value {
    serde_json::from_str(include_str!("../../../events/schedule.json")).unwrap()
}

/// A publisher for `target` with the load on, reading SQS on `sqs`.
async fn host(target: &PublisherTarget, sqs: Sqs) -> LambdaHost {
    let endpoint = sqs.endpoint().unwrap();
    let mut env = target.env();
    env.extend(LOAD);
    env.push(("METRIC_NAMESPACE", NAMESPACE));
    env.push(("AWS_ENDPOINT_URL_SQS", &endpoint));
    LambdaHost::start(&binary("backlog-publisher").unwrap(), &env).await.unwrap()
}

/// One scheduled invocation; the load the function says it published.
async fn invoke(host: &LambdaHost) -> f64 {
    match host.invoke(&schedule_event(), Duration::from_secs(30)).await {
        Outcome::Response(body) => body["targets"][0]["scalingLoad"]
            .as_f64()
            .unwrap_or_else(|| panic!("no scalingLoad in {body}")),
        other => panic!("expected a response, got {other:?}"),
    }
}

async fn read_back(aws: &Aws, target: &PublisherTarget) -> Vec<f64> {
    target.metric(aws, NAMESPACE, "ScalingLoad").await.unwrap()
}

async fn on(sqs: Sqs) -> Aws {
    Aws::from_env().await.unwrap().with_sqs(sqs).await.unwrap()
}

/// 150 messages, 30 received (in flight), 2 tasks of 10 slots: the 20 worked on, plus the
/// 130 waiting (10 held beyond the slots) ÷ 100 s, over 20 slots.
async fn in_flight_and_waiting_make_the_load(sqs: Sqs) {
    let aws = on(sqs).await;
    let target = PublisherTarget::create(&aws, &unique("load"), 150, 2).await.unwrap();
    let in_flight = aws.receive_all(&target.queue_url, 30).await.unwrap().len() as f64;
    // 20 slots run; what is in flight beyond them waits with the visible messages.
    let working = in_flight.min(20.0);
    let waiting = 150.0 - working;
    let published = invoke(&host(&target, sqs).await).await;
    let expected = 100.0 * (working + waiting / 100.0) / 20.0;
    assert!(
        (published - expected).abs() < 1e-9,
        "{sqs:?}: published {published}, expected {expected}"
    );
    assert_eq!(read_back(&aws, &target).await, [published], "{sqs:?}");
}

#[tokio::test]
async fn in_flight_and_waiting_make_the_load_on_moto() {
    in_flight_and_waiting_make_the_load(Sqs::Moto).await;
}

#[tokio::test]
async fn in_flight_and_waiting_make_the_load_on_localstack() {
    in_flight_and_waiting_make_the_load(Sqs::LocalStack).await;
}

#[tokio::test]
async fn in_flight_and_waiting_make_the_load_on_fauxqs() {
    in_flight_and_waiting_make_the_load(Sqs::Fauxqs).await;
}

/// The zero cases: work and no task is above the target; nothing and no
/// task, or tasks that never saw work, is 0.
async fn zero_cases(sqs: Sqs) {
    let aws = on(sqs).await;
    let waiting = PublisherTarget::create(&aws, &unique("load"), 5, 0).await.unwrap();
    let published = invoke(&host(&waiting, sqs).await).await;
    assert_eq!(published, 2.0 * 80.0, "{sqs:?}: 5 waiting and no task scale out from zero");
    assert_eq!(read_back(&aws, &waiting).await, [160.0]);
    for tasks in [0, 3] {
        let empty = PublisherTarget::create(&aws, &unique("load"), 0, tasks).await.unwrap();
        assert_eq!(invoke(&host(&empty, sqs).await).await, 0.0, "{sqs:?}: {tasks} tasks");
        assert_eq!(read_back(&aws, &empty).await, [0.0], "{sqs:?}: {tasks} tasks");
    }
}

#[tokio::test]
async fn zero_cases_on_moto() {
    zero_cases(Sqs::Moto).await;
}

#[tokio::test]
async fn zero_cases_on_localstack() {
    zero_cases(Sqs::LocalStack).await;
}

#[tokio::test]
async fn zero_cases_on_fauxqs() {
    zero_cases(Sqs::Fauxqs).await;
}

/// One execution environment remembers the previous sample: a backlog that
/// grew since then adds the slots its growth needs, and once the queue is
/// empty the last task is held rather than let go.
#[tokio::test]
async fn the_environment_remembers_growth_and_holds_the_last_task() {
    let sqs = Sqs::Moto;
    let aws = on(sqs).await;
    let target = PublisherTarget::create(&aws, &unique("load"), 40, 2).await.unwrap();
    let host = host(&target, sqs).await;
    // 40 waiting need 0.4 slots: one held task's worth over 2 tasks.
    assert_eq!(invoke(&host).await, HELD_ONE_TASK / 2.0);
    aws.send_messages(&target.queue_url, 200).await.unwrap();
    // Without growth 240 waiting would still be 30; 200 more within seconds is far more.
    let grown = invoke(&host).await;
    assert!(grown > 100.0, "growth of 200 messages in seconds published only {grown}");
    aws.sqs.purge_queue().queue_url(&target.queue_url).send().await.unwrap();
    assert_eq!(invoke(&host).await, HELD_ONE_TASK / 2.0, "work was seen within LOAD_HOLD_SECONDS");
    let values = read_back(&aws, &target).await;
    assert!(!values.is_empty() && values.iter().all(|v| *v >= HELD_ONE_TASK / 2.0), "{values:?}");
}

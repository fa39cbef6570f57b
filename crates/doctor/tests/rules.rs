//! Each rule on a deployment built to break it, and a deployment that breaks none.

use backpressure_doctor::{
    Alarm, Deployment, EXIT_BROKEN, EXIT_CLEAN, EXIT_INCOMPLETE, EXIT_WARNINGS, Follows, Function,
    Mapping, Policy, PolicyMetric, Pollers, PublisherTarget, Queue, Redrive, RedriveAllow, Scaling,
    Service, Unreadable, check,
};

const ACCOUNT: &str = "arn:aws:sqs:us-east-1:123456789012";

fn queue(name: &str) -> Queue {
    Queue::new(
        &format!("{ACCOUNT}:{name}"),
        &format!("https://sqs.us-east-1.amazonaws.com/123456789012/{name}"),
        name,
    )
}

fn function_arn(name: &str) -> String {
    format!("arn:aws:lambda:us-east-1:123456789012:function:{name}")
}

/// orders → orders-dlq (14 days, alarmed), read by orders-fn (30 s, ours) with every setting
/// AWS advises.
fn healthy() -> Deployment {
    let mut orders = queue("orders");
    orders.visibility_timeout_s = 185;
    orders.redrive =
        Some(Redrive { dead_letter_arn: format!("{ACCOUNT}:orders-dlq"), max_receive_count: 5 });
    let mut dead_letter = queue("orders-dlq");
    dead_letter.retention_s = 1_209_600;
    dead_letter.asked = false;
    let mut mapping = Mapping::new("m-1", &orders.arn, &function_arn("orders-fn"));
    mapping.window_s = 5;
    mapping.reports_item_failures = true;
    mapping.maximum_concurrency = Some(20);
    let mut function = Function::new(&function_arn("orders-fn"), "orders-fn", 30);
    function.reports_item_failures = true;
    let mut deployment = Deployment::default();
    deployment.queues = vec![orders, dead_letter];
    deployment.mappings = vec![mapping];
    deployment.functions = vec![function];
    deployment.alarms = vec![
        Alarm::new("dlq-depth", "ApproximateNumberOfMessagesVisible", "orders-dlq"),
        Alarm::new("orders-age", "ApproximateAgeOfOldestMessage", "orders"),
    ];
    deployment
}

fn rules(deployment: &Deployment) -> Vec<&'static str> {
    check(deployment).findings.iter().map(|finding| finding.rule).collect()
}

#[test]
fn a_deployment_as_aws_advises_gives_no_finding() {
    let report = check(&healthy());
    assert_eq!(report.findings, vec![], "{}", report.render());
    assert_eq!(report.exit, EXIT_CLEAN);
    assert!(report.render().ends_with("every rule holds\n"), "{}", report.render());
}

#[test]
fn visibility_is_held_to_six_function_timeouts_plus_the_batching_window() {
    let mut deployment = healthy();
    deployment.queues[0].visibility_timeout_s = 184;
    assert_eq!(rules(&deployment), ["visibility-below-six-timeouts"]);
    let finding = &check(&deployment).findings[0];
    assert!(finding.measured.contains("6 × 30 + 5 = 185 s"), "{}", finding.measured);
    assert!(finding.fix.ends_with("--attributes VisibilityTimeout=185"), "{}", finding.fix);
    deployment.queues[0].visibility_timeout_s = 34;
    assert_eq!(rules(&deployment), ["visibility-below-timeout"]);
    assert_eq!(check(&deployment).exit, EXIT_BROKEN);
}

#[test]
fn a_max_receive_count_below_five_is_a_warning_and_says_why_on_fifo() {
    let mut deployment = healthy();
    if let Some(redrive) = deployment.queues[0].redrive.as_mut() {
        redrive.max_receive_count = 2;
    }
    assert_eq!(rules(&deployment), ["max-receive-count-low"]);
    assert_eq!(check(&deployment).exit, EXIT_WARNINGS);
    deployment.queues[0].fifo = true;
    let finding = &check(&deployment).findings[0];
    assert!(finding.measured.contains("FIFO"), "{}", finding.measured);
}

#[test]
fn a_read_queue_without_a_dead_letter_queue_is_found() {
    let mut deployment = healthy();
    deployment.queues[0].redrive = None;
    deployment.queues.truncate(1);
    deployment.alarms.truncate(0);
    assert_eq!(rules(&deployment), ["no-dead-letter-queue"]);
}

#[test]
fn a_dead_letter_queue_that_is_gone_or_refuses_the_source_is_broken() {
    let mut deployment = healthy();
    deployment.queues[1].missing = true;
    // With no dead-letter queue to catch it, the age alarm alone hides a poison message too.
    assert_eq!(rules(&deployment), ["dead-letter-queue-missing", "age-only-alarm"]);
    let mut deployment = healthy();
    deployment.queues[1].redrive_allow = RedriveAllow::ByQueue(vec![format!("{ACCOUNT}:other")]);
    assert_eq!(rules(&deployment), ["dead-letter-not-allowed"]);
    deployment.queues[1].redrive_allow = RedriveAllow::DenyAll;
    assert_eq!(rules(&deployment), ["dead-letter-not-allowed"]);
}

#[test]
fn a_dead_letter_queue_keeping_messages_no_longer_than_its_source_is_found_on_standard_queues() {
    let mut deployment = healthy();
    deployment.queues[1].retention_s = 345_600;
    assert_eq!(rules(&deployment), ["dead-letter-retention-short"]);
    let finding = &check(&deployment).findings[0];
    assert!(finding.fix.contains("orders-dlq --attributes MessageRetentionPeriod=1209600"));
    // A FIFO dead-letter queue restarts a message's clock.
    deployment.queues[0].fifo = true;
    assert_eq!(rules(&deployment), Vec::<&str>::new());
}

#[test]
fn a_dead_letter_queue_with_no_depth_alarm_is_found_and_a_sent_alarm_does_not_count() {
    let mut deployment = healthy();
    deployment.alarms[0] = Alarm::new("dlq-sent", "NumberOfMessagesSent", "orders-dlq");
    let found = check(&deployment);
    let got: Vec<&str> = found.findings.iter().map(|f| f.rule).collect();
    // Without an alarmed dead-letter queue, the age alarm alone hides a poison message.
    assert_eq!(got, ["age-only-alarm", "dead-letter-unalarmed"]);
    assert!(found.findings[1].measured.contains("NumberOfMessagesSent"));
}

#[test]
fn mapping_concurrency_is_capped_and_within_the_functions_reserved_concurrency() {
    let mut deployment = healthy();
    deployment.mappings[0].maximum_concurrency = None;
    assert_eq!(rules(&deployment), ["no-maximum-concurrency"]);
    let mut deployment = healthy();
    deployment.functions[0].reserved_concurrency = Some(10);
    assert_eq!(rules(&deployment), ["maximum-concurrency-above-reserved"]);
    deployment.functions[0].reserved_concurrency = Some(20);
    assert_eq!(rules(&deployment), Vec::<&str>::new());
    deployment.functions[0].reserved_concurrency = Some(0);
    assert_eq!(rules(&deployment), ["maximum-concurrency-above-reserved"]);
}

#[test]
fn a_mapping_that_ignores_the_item_failures_our_function_returns_is_broken() {
    let mut deployment = healthy();
    deployment.mappings[0].reports_item_failures = false;
    assert_eq!(rules(&deployment), ["item-failures-ignored"]);
    assert!(
        check(&deployment).findings[0]
            .fix
            .contains("--function-response-types ReportBatchItemFailures")
    );
    // A function not built on the engine may throw instead: nothing to say.
    deployment.functions[0].reports_item_failures = false;
    assert_eq!(rules(&deployment), Vec::<&str>::new());
}

#[test]
fn provisioned_pollers_are_held_to_their_limits() {
    let mut deployment = healthy();
    deployment.mappings[0].maximum_concurrency = None;
    deployment.mappings[0].pollers = Some(Pollers { minimum: 2, maximum: 200 });
    assert_eq!(rules(&deployment), Vec::<&str>::new());
    deployment.mappings[0].pollers = Some(Pollers { minimum: 1, maximum: 20_000 });
    assert_eq!(rules(&deployment), ["pollers-out-of-range"]);
    deployment.mappings[0].pollers = Some(Pollers { minimum: 2, maximum: 200 });
    deployment.mappings[0].maximum_concurrency = Some(5);
    assert_eq!(rules(&deployment), ["pollers-out-of-range"]);
}

#[test]
fn a_batch_that_cannot_fit_one_invocation_is_a_warning() {
    let mut deployment = healthy();
    deployment.mappings[0].batch_size = 100;
    assert_eq!(rules(&deployment), ["batch-above-payload"]);
    deployment.queues[0].max_message_bytes = 32_768;
    assert_eq!(rules(&deployment), Vec::<&str>::new());
}

#[test]
fn a_queue_nobody_reads_is_found_only_when_the_mappings_were_read() {
    let mut deployment = healthy();
    deployment.mappings.clear();
    deployment.functions.clear();
    assert_eq!(rules(&deployment), ["queue-nobody-reads"]);
    deployment.unreadable.push(Unreadable::new(
        "lambda:ListEventSourceMappings",
        "*",
        "AccessDeniedException: not authorized".into(),
    ));
    let report = check(&deployment);
    assert_eq!(report.findings, vec![]);
    assert_eq!(report.exit, EXIT_INCOMPLETE);
    assert!(report.render().contains("lambda:ListEventSourceMappings on *: AccessDeniedException"));
}

/// The healthy deployment with a worker service on orders as advised: scaled on the backlog,
/// stopTimeout above its drain.
fn with_service() -> Deployment {
    let mut deployment = healthy();
    let mut service = Service::new("workers", "orders-worker");
    service.described = true;
    service.queue_arns = vec![format!("{ACCOUNT}:orders")];
    service.stop_timeout_s = 120;
    service.drain_s = Some(100);
    service.reader_health_checked = Some(true);
    service.scaling = Some(Scaling::new(1, 10, vec![backlog_policy()]));
    deployment.services = vec![service];
    deployment
}

/// A policy on a metric some other publisher puts: CloudWatch holds recent datapoints of it.
fn backlog_policy() -> Policy {
    let mut metric =
        PolicyMetric::new("Ours", "BacklogPerTask", &[("QueueName", "orders")], "Average");
    metric.recent_datapoints = Some(true);
    Policy::new("backlog", Follows::Custom(vec![metric]))
}

fn cpu_policy() -> Policy {
    Policy::new("cpu", Follows::Predefined("ECSServiceAverageCPUUtilization".into()))
}

#[test]
fn a_worker_service_is_scaled_on_its_backlog_and_stops_after_its_drain() {
    assert_eq!(rules(&with_service()), Vec::<&str>::new());
    let mut unscaled = with_service();
    unscaled.services[0].scaling = None;
    assert_eq!(rules(&unscaled), ["service-unscaled"]);
    let mut cpu = with_service();
    cpu.services[0].scaling = Some(Scaling::new(1, 10, vec![cpu_policy()]));
    assert_eq!(rules(&cpu), ["service-scaled-on-cpu-only"]);
    let mut both = with_service();
    both.services[0].scaling = Some(Scaling::new(1, 10, vec![cpu_policy(), backlog_policy()]));
    assert_eq!(rules(&both), Vec::<&str>::new(), "CPU beside the backlog is fine");
    let mut killed = with_service();
    killed.services[0].stop_timeout_s = 30;
    assert_eq!(rules(&killed), ["stop-timeout-below-drain"]);
    let mut not_ours = killed.clone();
    not_ours.services[0].drain_s = None;
    assert_eq!(rules(&not_ours), Vec::<&str>::new(), "no drain known, nothing to compare");
    let mut unchecked = with_service();
    unchecked.services[0].reader_health_checked = Some(false);
    assert_eq!(rules(&unchecked), ["reader-without-health-check"]);
    let finding = &check(&unchecked).findings[0];
    assert!(finding.fix.contains("sqs-worker"), "{}", finding.fix);
    let mut no_reader = with_service();
    no_reader.services[0].reader_health_checked = None;
    assert_eq!(rules(&no_reader), Vec::<&str>::new(), "no reading container known");
}

#[test]
fn a_publisher_target_whose_service_or_queue_is_gone_is_broken() {
    let mut deployment = with_service();
    deployment.services[0].missing = true;
    deployment.publisher_targets = vec![PublisherTarget::new(
        "orders-publisher",
        "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
        "workers",
        "orders-worker",
    )];
    assert_eq!(rules(&deployment), ["publisher-target-gone"]);
    let finding = &check(&deployment).findings[0];
    assert_eq!(finding.resource.as_deref(), Some("function orders-publisher"));
    assert!(finding.measured.starts_with("the service workers/orders-worker does not exist"));
}

#[test]
fn a_queue_a_service_reads_is_read() {
    let mut deployment = with_service();
    deployment.mappings.clear();
    deployment.functions.clear();
    assert_eq!(rules(&deployment), Vec::<&str>::new());
}

#[test]
fn the_worst_finding_decides_the_exit_code_and_comes_first() {
    let mut deployment = healthy();
    deployment.queues[0].visibility_timeout_s = 60;
    deployment.mappings[0].reports_item_failures = false;
    deployment.unreadable.push(Unreadable::new("cloudwatch:DescribeAlarms", "*", "denied".into()));
    let report = check(&deployment);
    assert_eq!(report.exit, EXIT_BROKEN);
    assert_eq!(report.findings[0].rule, "item-failures-ignored");
    assert_eq!(report.findings.last().map(|f| f.rule), Some("visibility-below-six-timeouts"));
}

#[test]
fn what_a_person_reads() {
    let mut deployment = healthy();
    deployment.queues[0].visibility_timeout_s = 60;
    deployment.mappings[0].reports_item_failures = false;
    deployment.queues[1].retention_s = 345_600;
    insta::assert_snapshot!(check(&deployment).render());
    insta::assert_snapshot!("json", serde_json_text(&deployment));
}

/// The report as `--json` prints it, in the struct's field order: straight from the struct, as
/// a `serde_json::Value` orders its keys by whether another package turned on `preserve_order`.
fn serde_json_text(deployment: &Deployment) -> String {
    serde_json::to_string_pretty(&check(deployment)).unwrap_or_default()
}

#[test]
fn the_retention_fix_clears_the_finding_in_one_paste() {
    let mut deployment = healthy();
    deployment.queues[1].retention_s = 345_600;
    let fix = |deployment: &Deployment| check(deployment).findings[0].fix.clone();
    assert_eq!(
        fix(&deployment),
        "aws sqs set-queue-attributes --queue-url \
         https://sqs.us-east-1.amazonaws.com/123456789012/orders-dlq --attributes \
         MessageRetentionPeriod=1209600"
    );
    // A source at SQS's longest: the dead-letter queue raised and the source a day shorter.
    deployment.queues[0].retention_s = 1_209_600;
    let both = fix(&deployment);
    assert!(both.contains("orders-dlq --attributes MessageRetentionPeriod=1209600 && "), "{both}");
    assert!(both.contains("/orders --attributes MessageRetentionPeriod=1123200  # "), "{both}");
    assert!(both.ends_with("14 days is the most SQS keeps, so the dead-letter queue cannot keep messages longer than it"), "{both}");
}

#[test]
fn a_service_given_that_does_not_exist_is_broken_unless_a_publisher_names_it() {
    let mut deployment = with_service();
    deployment.services[0].missing = true;
    assert_eq!(rules(&deployment), ["service-missing"]);
    deployment.publisher_targets = vec![PublisherTarget::new(
        "orders-publisher",
        "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
        "workers",
        "orders-worker",
    )];
    assert_eq!(rules(&deployment), ["publisher-target-gone"]);
    let mut undescribed = with_service();
    undescribed.services[0].described = false;
    undescribed.services[0].scaling = None;
    assert_eq!(rules(&undescribed), Vec::<&str>::new(), "a service not described is not judged");
}

#[test]
fn a_batch_above_ten_needs_a_window_and_a_standard_queue() {
    let mut small = healthy();
    small.mappings[0].batch_size = 20;
    small.queues[0].max_message_bytes = 1024;
    assert_eq!(rules(&small), Vec::<&str>::new(), "20 with a 5 s window is taken");
    let mut no_window = small.clone();
    no_window.mappings[0].window_s = 0;
    assert_eq!(rules(&no_window), ["batch-without-window"]);
    let finding = &check(&no_window).findings[0];
    assert!(finding.fix.ends_with("--maximum-batching-window-in-seconds 1"), "{}", finding.fix);
    let mut fifo = small.clone();
    fifo.queues[0].fifo = true;
    assert_eq!(rules(&fifo), ["batch-without-window"]);
    assert!(check(&fifo).findings[0].fix.ends_with("--batch-size 10"));
}

//! The rules: each with its threshold, the AWS page it comes from, which peer
//! checks it today, and the check itself (pure: a [`Deployment`] in, findings out).

mod alarms;
mod mapping;
mod policy_metric;
mod queue;
mod scaling_command;
mod service;

use crate::deployment::Deployment;
pub use crate::finding::Rule;
use crate::finding::{Finding, Severity};

const LAMBDA_SQS: &str = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html";
const LAMBDA_SCALING: &str =
    "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html";
const LAMBDA_PARTIAL: &str =
    "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html";
const LAMBDA_QUOTAS: &str =
    "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html";
const SQS_DLQ: &str = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html";
const SQS_DLQ_RETENTION: &str = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html";
const SQS_DLQ_ALARM: &str = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/dead-letter-queues-alarms-cloudwatch.html";
const SQS_METRICS: &str = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html";

pub const VISIBILITY_BELOW_TIMEOUT: Rule = Rule {
    id: "visibility-below-timeout",
    severity: Severity::Broken,
    threshold: "visibility timeout ≥ function timeout + batching window",
    source: LAMBDA_SQS,
    peers: "none (Lambda refuses it when the mapping is made, not when the queue changes after)",
};
pub const VISIBILITY_BELOW_SIX_TIMEOUTS: Rule = Rule {
    id: "visibility-below-six-timeouts",
    severity: Severity::Warning,
    threshold: "visibility timeout ≥ 6 × function timeout + batching window",
    source: LAMBDA_SQS,
    peers: "cdk-nag LambdaEventSourceSQSVisibilityTimeout (6 × timeout, no window; in no pack)",
};
pub const MAX_RECEIVE_COUNT_LOW: Rule = Rule {
    id: "max-receive-count-low",
    severity: Severity::Warning,
    threshold: "maxReceiveCount ≥ 5 on a queue a function reads",
    source: LAMBDA_SQS,
    peers: "none",
};
pub const NO_DEAD_LETTER_QUEUE: Rule = Rule {
    id: "no-dead-letter-queue",
    severity: Severity::Warning,
    threshold: "a queue something reads has a redrive policy",
    source: SQS_DLQ,
    peers: "cdk-nag AwsSolutions-SQS3, AWS Config sqs-queue-dlq-check",
};
pub const DEAD_LETTER_QUEUE_MISSING: Rule = Rule {
    id: "dead-letter-queue-missing",
    severity: Severity::Broken,
    threshold: "the redrive policy's dead-letter queue exists",
    source: SQS_DLQ,
    peers: "none",
};
pub const DEAD_LETTER_NOT_ALLOWED: Rule = Rule {
    id: "dead-letter-not-allowed",
    severity: Severity::Broken,
    threshold: "the dead-letter queue's redrive allow policy admits the source",
    source: SQS_DLQ,
    peers: "none",
};
pub const DEAD_LETTER_RETENTION_SHORT: Rule = Rule {
    id: "dead-letter-retention-short",
    severity: Severity::Warning,
    threshold: "dead-letter retention > the source's (standard queues)",
    source: SQS_DLQ_RETENTION,
    peers: "none",
};
pub const DEAD_LETTER_UNALARMED: Rule = Rule {
    id: "dead-letter-unalarmed",
    severity: Severity::Warning,
    threshold: "an alarm on the dead-letter queue's ApproximateNumberOfMessagesVisible",
    source: SQS_DLQ_ALARM,
    peers: "none",
};
pub const AGE_ONLY_ALARM: Rule = Rule {
    id: "age-only-alarm",
    severity: Severity::Warning,
    threshold: "not only ApproximateAgeOfOldestMessage, unless an alarmed dead-letter queue \
                catches what that metric leaves out",
    source: SQS_METRICS,
    peers: "none",
};
pub const NO_MAXIMUM_CONCURRENCY: Rule = Rule {
    id: "no-maximum-concurrency",
    severity: Severity::Warning,
    threshold: "a mapping caps its concurrency (ScalingConfig.MaximumConcurrency, 2–1,000) or \
                runs in provisioned mode",
    source: LAMBDA_SCALING,
    peers: "none (cdk-nag LambdaConcurrency asks for reserved concurrency instead, which \
            throttles an SQS mapping)",
};
pub const MAXIMUM_CONCURRENCY_ABOVE_RESERVED: Rule = Rule {
    id: "maximum-concurrency-above-reserved",
    severity: Severity::Broken,
    threshold: "the function's reserved concurrency ≥ the sum of its SQS mappings' \
                MaximumConcurrency",
    source: LAMBDA_SCALING,
    peers: "none",
};
pub const ITEM_FAILURES_IGNORED: Rule = Rule {
    id: "item-failures-ignored",
    severity: Severity::Broken,
    threshold: "FunctionResponseTypes has ReportBatchItemFailures when the function returns \
                batchItemFailures",
    source: LAMBDA_PARTIAL,
    peers: "none",
};
pub const POLLERS_OUT_OF_RANGE: Rule = Rule {
    id: "pollers-out-of-range",
    severity: Severity::Broken,
    threshold: "provisioned mode: 2 ≤ MinimumPollers ≤ 200, MinimumPollers ≤ MaximumPollers ≤ \
                10,000, no MaximumConcurrency beside it",
    source: LAMBDA_SCALING,
    peers: "none",
};
pub const BATCH_ABOVE_PAYLOAD: Rule = Rule {
    id: "batch-above-payload",
    severity: Severity::Warning,
    threshold: "BatchSize × the queue's MaximumMessageSize ≤ 6 MB, an invocation's payload",
    source: LAMBDA_QUOTAS,
    peers: "none",
};
pub const BATCH_WITHOUT_WINDOW: Rule = Rule {
    id: "batch-without-window",
    severity: Severity::Broken,
    threshold: "BatchSize above 10 only with MaximumBatchingWindowInSeconds ≥ 1, and on a standard \
                queue (a FIFO queue's mapping takes at most 10)",
    source: LAMBDA_SQS,
    peers: "none before the deploy (Lambda refuses CreateEventSourceMapping)",
};
pub const QUEUE_NOBODY_READS: Rule = Rule {
    id: "queue-nobody-reads",
    severity: Severity::Warning,
    threshold: "a queue that is nobody's dead-letter queue has a reader: a mapping, or an ECS \
                service (given with --service, or a backlog-publisher's target)",
    source: SQS_DLQ,
    peers: "none",
};

const ECS_AUTOSCALING: &str = "https://docs.aws.amazon.com/AmazonECS/latest/developerguide/target-tracking-create-policy.html";
const ECS_QUEUE_SCALING: &str =
    "https://docs.aws.amazon.com/autoscaling/ec2/userguide/as-using-sqs-queue.html";
const ECS_CUSTOM_METRIC: &str = "https://docs.aws.amazon.com/autoscaling/application/APIReference/API_CustomizedMetricSpecification.html";
const ECS_TASK_ROLE: &str =
    "https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html";
const ECS_HEALTH_CHECK: &str =
    "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_HealthCheck.html";
const ECS_STOP_TIMEOUT: &str =
    "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html";

pub const SERVICE_UNSCALED: Rule = Rule {
    id: "service-unscaled",
    severity: Severity::Warning,
    threshold: "a service that reads a queue has a scalable target (ecs:service:DesiredCount)",
    source: ECS_AUTOSCALING,
    peers: "none",
};
pub const SERVICE_SCALED_ON_CPU_ONLY: Rule = Rule {
    id: "service-scaled-on-cpu-only",
    severity: Severity::Warning,
    threshold: "a queue-fed service has a policy on the backlog, not only CPU or memory",
    source: ECS_QUEUE_SCALING,
    peers: "none",
};
pub const POLICY_METRIC_UNPUBLISHED: Rule = Rule {
    id: "policy-metric-unpublished",
    severity: Severity::Broken,
    threshold: "each target tracking policy's customized metric (namespace, name, every \
                dimension) is one a backlog-publisher puts, read as Average, Minimum or \
                Maximum, or one CloudWatch holds datapoints of in the last 3 hours",
    source: ECS_CUSTOM_METRIC,
    peers: "none",
};
pub const STOP_TIMEOUT_BELOW_DRAIN: Rule = Rule {
    id: "stop-timeout-below-drain",
    severity: Severity::Warning,
    threshold: "the worker container's stopTimeout (default 30 s, Fargate at most 120 s) > its \
                DRAIN_SECONDS",
    source: ECS_STOP_TIMEOUT,
    peers: "none",
};
pub const READER_WITHOUT_HEALTH_CHECK: Rule = Rule {
    id: "reader-without-health-check",
    severity: Severity::Warning,
    threshold: "the container that reads the queue (its QUEUE_URL or DRAIN_SECONDS) has a \
                healthCheck, so ECS replaces a task whose polling stopped",
    source: ECS_HEALTH_CHECK,
    peers: "none",
};
pub const WORKER_UNWIRED: Rule = Rule {
    id: "worker-unwired",
    severity: Severity::Broken,
    threshold: "a container on backpressure-app that reads the queue has QUARANTINE_QUEUE_URL, \
                naming a queue that exists, and its task a task role",
    source: ECS_TASK_ROLE,
    peers: "none",
};
pub const SERVICE_MISSING: Rule = Rule {
    id: "service-missing",
    severity: Severity::Broken,
    threshold: "a service given with --service exists and is active",
    source: ECS_AUTOSCALING,
    peers: "none",
};
pub const PUBLISHER_TARGET_GONE: Rule = Rule {
    id: "publisher-target-gone",
    severity: Severity::Broken,
    threshold: "each backlog-publisher target's service and queue exist",
    source: ECS_QUEUE_SCALING,
    peers: "none",
};

const CFN_PARAMETERS: &str = "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/parameters-section-structure.html";
const CFN_RULES: &str =
    "https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/rules-section-structure.html";

pub const PARAMETER_INVALID: Rule = Rule {
    id: "parameter-invalid",
    severity: Severity::Broken,
    threshold: "offline: each value meets its parameter's Type, AllowedValues, AllowedPattern, \
                MinValue/MaxValue and MinLength/MaxLength; every parameter has a value",
    source: CFN_PARAMETERS,
    peers: "none before the deploy (cfn-lint checks the template, not a set's values)",
};
pub const PARAMETER_UNUSED: Rule = Rule {
    id: "parameter-unused",
    severity: Severity::Warning,
    threshold: "offline: every parameter the set gives is read by a resource or output the set \
                creates, or by a condition deciding which",
    source: CFN_PARAMETERS,
    peers: "none (cfn-lint finds a parameter no resource names, not one a set's conditions leave \
            unread)",
};
pub const TEMPLATE_RULE_REFUSES: Rule = Rule {
    id: "template-rule-refuses",
    severity: Severity::Broken,
    threshold: "offline: every assertion of the template's Rules holds for the set",
    source: CFN_RULES,
    peers: "none before the deploy (sam validate and cfn-lint do not evaluate Rules on values)",
};

/// Every rule, in the order docs/doctor.md lists them.
pub const RULES: &[Rule] = &[
    VISIBILITY_BELOW_TIMEOUT,
    VISIBILITY_BELOW_SIX_TIMEOUTS,
    MAX_RECEIVE_COUNT_LOW,
    NO_DEAD_LETTER_QUEUE,
    DEAD_LETTER_QUEUE_MISSING,
    DEAD_LETTER_NOT_ALLOWED,
    DEAD_LETTER_RETENTION_SHORT,
    DEAD_LETTER_UNALARMED,
    AGE_ONLY_ALARM,
    NO_MAXIMUM_CONCURRENCY,
    MAXIMUM_CONCURRENCY_ABOVE_RESERVED,
    ITEM_FAILURES_IGNORED,
    POLLERS_OUT_OF_RANGE,
    BATCH_ABOVE_PAYLOAD,
    BATCH_WITHOUT_WINDOW,
    QUEUE_NOBODY_READS,
    SERVICE_UNSCALED,
    SERVICE_SCALED_ON_CPU_ONLY,
    POLICY_METRIC_UNPUBLISHED,
    STOP_TIMEOUT_BELOW_DRAIN,
    READER_WITHOUT_HEALTH_CHECK,
    WORKER_UNWIRED,
    SERVICE_MISSING,
    PUBLISHER_TARGET_GONE,
    PARAMETER_INVALID,
    TEMPLATE_RULE_REFUSES,
    PARAMETER_UNUSED,
];

/// The peers' rules doctor does not take, and why: each misfires on an SQS-fed system.
pub const REFUSED: &[(&str, &str)] = &[
    (
        "cdk-nag LambdaEventSourceMappingDestination (Serverless pack)",
        "asks every event source mapping for an on-failure destination; an SQS mapping cannot \
         have one (the queue's redrive policy is the place)",
    ),
    (
        "cdk-nag LambdaDLQ, AWS Config lambda-dlq-check",
        "a function's dead-letter queue serves asynchronous invocations only; an SQS mapping \
         invokes synchronously, so the queue's own dead-letter queue is what catches failures",
    ),
    (
        "cdk-nag LambdaConcurrency (reserved concurrency on every function)",
        "reserved concurrency below what the mapping scales to throttles batches back to the \
         queue, each throttle a receive towards maxReceiveCount; MaximumConcurrency caps an SQS \
         mapping without that",
    ),
    (
        "cdk-nag SQSRedrivePolicy, AwsSolutions-SQS3 on a dead-letter queue",
        "a dead-letter queue with a redrive policy of its own moves poison messages a second \
         time; doctor asks a redrive policy only of queues something reads",
    ),
];

/// Every finding, worst first, then by queue.
pub fn check(deployment: &Deployment) -> Vec<Finding> {
    let mut findings = Vec::new();
    queue::check(deployment, &mut findings);
    mapping::check(deployment, &mut findings);
    alarms::check(deployment, &mut findings);
    service::check(deployment, &mut findings);
    policy_metric::check(deployment, &mut findings);
    findings.sort_by(|a, b| {
        b.severity.cmp(&a.severity).then_with(|| a.queue.cmp(&b.queue)).then(a.rule.cmp(b.rule))
    });
    findings
}

/// `aws sqs set-queue-attributes` for one attribute, to paste.
fn set_attribute(url: &str, name: &str, value: &str) -> String {
    format!("aws sqs set-queue-attributes --queue-url {url} --attributes {name}={value}")
}

//! The wiring of a deployed stack, read back through each resource's own API
//! (deploy_stack.py's describe), against the parameter values and the names
//! the code reads. Each check that held is kept as a line, for the report.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use backpressure_core::config::variables::Reader;
use serde_json::Value;

use super::driver::Emulator;
use crate::template;
use crate::template_topology::Deployment;

/// What was read back and held, and what the emulator could not show.
#[derive(Default)]
pub(crate) struct Checks {
    pub(crate) held: Vec<String>,
    pub(crate) unreadable: Vec<String>,
}

impl Checks {
    pub(crate) fn eq<T: PartialEq + Debug>(&mut self, what: &str, read: T, expected: T) {
        assert_eq!(read, expected, "{what}: read back {read:?}, expected {expected:?}");
        self.held.push(format!("{what}: {read:?}"));
    }

    pub(crate) fn unreadable(&mut self, what: &str, why: &str) {
        self.unreadable.push(format!("{what}: {why}"));
    }
}

/// A deployed stack's read-back, beside the values it was deployed with.
pub(crate) struct Deployed<'d> {
    pub(crate) read: Value,
    pub(crate) plan: &'d Deployment,
    pub(crate) emulator: Emulator,
}

impl Deployed<'_> {
    pub(crate) fn physical(&self, logical: &str) -> String {
        let id = &self.read["resources"][logical]["physical"];
        id.as_str().unwrap_or_else(|| panic!("{logical} was not deployed")).to_owned()
    }

    pub(crate) fn of(&self, logical: &str) -> &Value {
        &self.read["resources"][logical]["read"]
    }

    pub(crate) fn queue_attribute(&self, logical: &str, name: &str) -> String {
        let value = &self.of(logical)["Attributes"][name];
        value.as_str().unwrap_or_else(|| panic!("{logical} has no {name}: {value}")).to_owned()
    }

    pub(crate) fn function_environment(&self, logical: &str) -> BTreeMap<String, String> {
        let variables =
            self.of(logical)["configuration"]["Environment"]["Variables"].as_object().unwrap();
        // moto's CloudFormation stores a Number parameter's Ref as a JSON number where Lambda keeps
        // every value a string; the text is the same.
        variables
            .iter()
            .map(|(name, value)| {
                (name.clone(), value.as_str().map_or_else(|| value.to_string(), str::to_owned))
            })
            .collect()
    }

    pub(crate) fn container_environment(&self) -> BTreeMap<String, String> {
        let definition = &self.of("WorkerTaskDefinition")["taskDefinition"];
        let entries = definition["containerDefinitions"][0]["environment"].as_array().unwrap();
        entries
            .iter()
            .map(|e| (e["name"].as_str().unwrap().into(), e["value"].as_str().unwrap().into()))
            .collect()
    }

    fn int(&self, parameter: &str) -> i64 {
        self.plan.value(parameter).parse().unwrap()
    }

    /// The queues, the DLQ's redrive, the quarantine queue, the bucket and the table.
    pub(crate) fn storage(&self, checks: &mut Checks) {
        if self.plan.condition("CreateWorkQueue") {
            self.work_queues(checks);
        }
        checks.eq(
            "quarantine queue maximum message size",
            self.queue_attribute("QuarantineQueue", "MaximumMessageSize"),
            "1048576".to_owned(),
        );
        self.buckets_and_tables(checks);
    }

    fn work_queues(&self, checks: &mut Checks) {
        let dlq_arn = self.queue_attribute("DeadLetterQueue", "QueueArn");
        let redrive: Value =
            serde_json::from_str(&self.queue_attribute("WorkQueue", "RedrivePolicy")).unwrap();
        checks.eq(
            "work queue redrive target",
            redrive["deadLetterTargetArn"].as_str(),
            Some(&*dlq_arn),
        );
        let receives = redrive["maxReceiveCount"].to_string().trim_matches('"').parse::<i64>().ok();
        checks.eq("work queue maxReceiveCount", receives, Some(self.int("MaxReceiveCount")));
        let window = if self.int("MaximumBatchingWindowInSeconds") > 0 { 300 } else { 0 };
        checks.eq(
            "work queue visibility timeout (6 x ConsumerTimeout, + 300 s with a window)",
            self.queue_attribute("WorkQueue", "VisibilityTimeout").parse::<i64>().ok(),
            Some(6 * self.int("ConsumerTimeout") + window),
        );
    }

    fn buckets_and_tables(&self, checks: &mut Checks) {
        if self.plan.condition("HasQuarantineOverflow") {
            let rules = &self.of("QuarantineOverflowBucket")["encryption"]["ServerSideEncryptionConfiguration"];
            let algorithm =
                &rules["Rules"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"];
            checks.eq("overflow bucket encryption", algorithm.as_str(), Some("AES256"));
            let read = &self.of("QuarantineOverflowBucket")["public_access"];
            let what = "overflow bucket public access blocked";
            match read["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"].as_bool() {
                None if read["error"].is_string() => checks.unreadable(
                    what,
                    &format!("GetPublicAccessBlock answers {}: PublicAccessBlockConfiguration not applied", read["error"]),
                ),
                restricted => checks.eq(what, restricted, Some(true)),
            }
        }
        if self.plan.condition("HasIdempotency") {
            let table = &self.of("IdempotencyTable")["table"]["Table"];
            let key = &table["KeySchema"][0];
            checks.eq(
                "idempotency table key",
                (key["AttributeName"].as_str(), key["KeyType"].as_str()),
                (Some("id"), Some("HASH")),
            );
            let ttl = &self.of("IdempotencyTable")["ttl"]["TimeToLiveDescription"];
            match ttl["AttributeName"].as_str() {
                Some(attribute) => checks.eq("idempotency table TTL attribute", attribute, "expiration"),
                None => checks.unreadable(
                    "idempotency table TTL attribute",
                    "the emulator's CloudFormation drops TimeToLiveSpecification (template.rs checks it)",
                ),
            }
        }
    }

    /// A consumer's environment: every name the code reads and the template
    /// sets is there, and each resource variable names the deployed resource.
    pub(crate) fn consumer_environment(
        &self,
        what: &str,
        env: &BTreeMap<String, String>,
        read: &BTreeSet<String>,
        checks: &mut Checks,
    ) {
        let unread: Vec<&String> = env.keys().filter(|n| !read.contains(*n)).collect();
        checks.eq(
            &format!("{what}: variables the code does not read"),
            unread,
            Vec::<&String>::new(),
        );
        let expected = [
            ("QUARANTINE_QUEUE_URL", self.physical("QuarantineQueue")),
            ("DOWNSTREAM_URL", self.plan.value("DownstreamUrl")),
            ("METRIC_NAMESPACE", self.plan.value("MetricNamespace")),
            ("CONSUMER_CONCURRENCY", self.plan.value("ConsumerConcurrency")),
            ("IDEMPOTENCY_TTL_SECONDS", self.plan.value("IdempotencyTtlSeconds")),
            ("API_CALL_TIMEOUT_MS", self.plan.value("ApiCallTimeoutMs")),
            ("IDEMPOTENCY_TABLE", self.if_deployed("HasIdempotency", "IdempotencyTable")),
            (
                "QUARANTINE_OVERFLOW_BUCKET",
                self.if_deployed("HasQuarantineOverflow", "QuarantineOverflowBucket"),
            ),
        ];
        for (name, value) in expected {
            checks.eq(
                &format!("{what}: {name}"),
                env.get(name).map(String::as_str),
                Some(value.as_str()),
            );
        }
    }

    fn if_deployed(&self, condition: &str, logical: &str) -> String {
        if self.plan.condition(condition) { self.physical(logical) } else { String::new() }
    }

    /// The Lambda consumer: its mapping, its function, and the alarms on the mapping.
    pub(crate) fn lambda_consumer(&self, checks: &mut Checks) {
        let mapping = self.of("ConsumerFunctionWorkQueue");
        checks.eq(
            "mapping FunctionResponseTypes",
            mapping["FunctionResponseTypes"].clone(),
            serde_json::json!(["ReportBatchItemFailures"]),
        );
        checks.eq(
            "mapping source",
            mapping["EventSourceArn"].as_str(),
            Some(&*self.queue_attribute("WorkQueue", "QueueArn")),
        );
        let function = self.of("ConsumerFunction")["configuration"].clone();
        checks.eq(
            "mapping function",
            mapping["FunctionArn"].as_str(),
            function["FunctionArn"].as_str(),
        );
        checks.eq("mapping BatchSize", mapping["BatchSize"].as_i64(), Some(self.int("BatchSize")));
        checks.eq(
            "mapping MaximumBatchingWindowInSeconds",
            mapping["MaximumBatchingWindowInSeconds"].as_i64(),
            Some(self.int("MaximumBatchingWindowInSeconds")),
        );
        let maximum =
            self.plan.condition("HasMaximumConcurrency").then(|| self.int("MaximumConcurrency"));
        checks.eq(
            "mapping ScalingConfig.MaximumConcurrency",
            mapping["ScalingConfig"]["MaximumConcurrency"].as_i64(),
            maximum,
        );
        let pollers = self.plan.condition("HasProvisionedPollers").then(|| {
            (self.int("ProvisionedMinimumPollers"), self.int("ProvisionedMaximumPollers"))
        });
        let config = &mapping["ProvisionedPollerConfig"];
        let read = config["MinimumPollers"].as_i64().zip(config["MaximumPollers"].as_i64());
        checks.eq("mapping ProvisionedPollerConfig (min, max)", read, pollers);
        checks.eq(
            "mapping MetricsConfig",
            mapping["MetricsConfig"]["Metrics"].clone(),
            serde_json::json!(["EventCount"]),
        );
        checks.eq(
            "consumer Timeout",
            function["Timeout"].as_i64(),
            Some(self.int("ConsumerTimeout")),
        );
        checks.eq(
            "consumer MemorySize",
            function["MemorySize"].as_i64(),
            Some(self.int("ConsumerMemorySize")),
        );
        checks.eq(
            "consumer runtime and handler",
            (function["Runtime"].as_str(), function["Handler"].as_str()),
            (Some("provided.al2023"), Some("bootstrap")),
        );
        checks.eq(
            "consumer log group",
            function["LoggingConfig"]["LogGroup"].as_str(),
            Some(&*self.physical("ConsumerLogGroup")),
        );
        match self.of("ConsumerFunction")["concurrency"]["ReservedConcurrentExecutions"].as_i64() {
            Some(reserved) => checks.eq("consumer reserved concurrency", Some(reserved), maximum),
            None if maximum.is_some() => checks.unreadable(
                "consumer reserved concurrency",
                "LocalStack does not apply ReservedConcurrentExecutions (template.rs checks it)",
            ),
            None => checks.eq("consumer reserved concurrency", None, maximum),
        }
        let env = self.function_environment("ConsumerFunction");
        self.consumer_environment("consumer", &env, &template::read(Reader::Consumer), checks);
        let uuid = self.physical("ConsumerFunctionWorkQueue");
        for alarm in ["EventSourceMappingDroppedAlarm", "EventSourceMappingFailedInvokesAlarm"] {
            let dimensions = &self.of(alarm)["MetricAlarms"][0]["Dimensions"];
            let value = dimensions
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["Name"] == "EventSourceMappingUUID");
            checks.eq(
                &format!("{alarm} EventSourceMappingUUID"),
                value.and_then(|d| d["Value"].as_str()),
                Some(&*uuid),
            );
        }
    }

    /// The ECS consumer: the worker's task definition and service, the
    /// publisher and its schedule, and what the emulator cannot create.
    pub(crate) fn ecs_consumer(&self, checks: &mut Checks) {
        let work_url = self.work_queue_url();
        if self.plan.condition("CreatesWorkerService") {
            let env = self.container_environment();
            let read = template::read(Reader::Worker);
            self.consumer_environment("worker", &env, &read, checks);
            checks.eq("worker QUEUE_URL", env.get("QUEUE_URL"), Some(&work_url));
            let definition = &self.of("WorkerTaskDefinition")["taskDefinition"];
            let container = &definition["containerDefinitions"][0];
            checks.eq(
                "worker image",
                container["image"].as_str(),
                Some(&*self.plan.value("WorkerImage")),
            );
            checks.eq("worker stop timeout", container["stopTimeout"].as_i64(), Some(120));
            match definition["taskRoleArn"].as_str().and_then(|arn| arn.rsplit('/').next()) {
                None if self.emulator == Emulator::Moto => checks.unreadable(
                    "worker task role",
                    "moto's CloudFormation registers a task definition with its family, containers \
                     and memory only (no roles, CPU or network mode)",
                ),
                role => {
                    checks.eq("worker task role", role, Some(&*self.physical("WorkerTaskRole")))
                }
            }
            let service = &self.of("WorkerService")["services"][0];
            checks.eq(
                "worker service task definition",
                service["taskDefinition"].as_str(),
                definition["taskDefinitionArn"].as_str(),
            );
            let subnets = &service["networkConfiguration"]["awsvpcConfiguration"]["subnets"];
            let subnets: Vec<&str> = subnets
                .as_array()
                .map(|s| s.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match subnets.join(",") {
                none if none.is_empty() && self.emulator == Emulator::Moto => checks.unreadable(
                    "worker service subnets",
                    "moto's CloudFormation creates a service without its NetworkConfiguration",
                ),
                subnets => {
                    checks.eq("worker service subnets", subnets, self.plan.value("WorkerSubnetIds"))
                }
            }
        }
        if !self.plan.condition("HasPublisher") {
            // ScalingSignal=metric-math: `resources` found the stack without them.
            let absent = ["PublisherFunction", "PublisherRole", "PublisherLogGroup"]
                .into_iter()
                .filter(|logical| self.read["resources"].get(*logical).is_none())
                .count();
            checks.eq("metric-math: no publisher function, role or log group", absent, 3);
            return;
        }
        let env = self.function_environment("PublisherFunction");
        let publisher = template::read(Reader::Publisher);
        let unread: Vec<&String> = env.keys().filter(|n| !publisher.contains(*n)).collect();
        checks.eq("publisher: variables the code does not read", unread, Vec::<&String>::new());
        checks.eq("publisher QUEUE_URL", env.get("QUEUE_URL"), Some(&work_url));
        for (name, parameter) in [
            ("ECS_CLUSTER_NAME", "EcsClusterName"),
            ("ECS_SERVICE_NAME", "EcsServiceName"),
            ("METRIC_NAMESPACE", "MetricNamespace"),
        ] {
            let expected = self.plan.value(parameter);
            checks.eq(&format!("publisher {name}"), env.get(name), Some(&expected));
        }
        let rule = self.of("PublisherFunctionSchedule");
        checks.eq(
            "schedule expression",
            rule["rule"]["ScheduleExpression"].as_str(),
            Some(&*self.plan.value("ScheduleRate")),
        );
        let function_arn = self.of("PublisherFunction")["configuration"]["FunctionArn"]
            .as_str()
            .map(str::to_owned);
        checks.eq(
            "schedule target",
            rule["targets"]["Targets"][0]["Arn"].as_str().map(str::to_owned),
            function_arn,
        );
        let invoke = &self.of("PublisherFunction")["invoke_config"];
        match invoke["MaximumRetryAttempts"].as_i64() {
            Some(retries) => checks.eq("publisher asynchronous retries", retries, 0),
            None => checks.unreadable(
                "publisher asynchronous retries",
                "moto's CloudFormation creates no EventInvokeConfig (template.rs checks it)",
            ),
        }
        let dimensions =
            self.read["outputs"]["BacklogPerTaskDimensions"].as_str().map(str::to_owned);
        let queue_name = work_url.rsplit('/').next().unwrap_or_default();
        let expected = format!(
            "ClusterName={},ServiceName={},QueueName={queue_name}",
            self.plan.value("EcsClusterName"),
            self.plan.value("EcsServiceName")
        );
        checks.eq("output BacklogPerTaskDimensions", dimensions, Some(expected));
    }

    pub(crate) fn work_queue_url(&self) -> String {
        if self.plan.condition("CreateWorkQueue") {
            self.physical("WorkQueue")
        } else {
            let arn = self.plan.value("ExistingWorkQueueArn");
            let parts: Vec<&str> = arn.split(':').collect();
            format!("https://sqs.{}.amazonaws.com/{}/{}", parts[3], parts[4], parts[5])
        }
    }
}

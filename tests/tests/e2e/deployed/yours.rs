//! Your code deployed by the template (docs/your-code.md), one path each:
//! the library's example function as your own Lambda consumer
//! (`ConsumerFunctionArn`) on LocalStack; the example worker as the task
//! definition of your own image runs it (`WorkerImage`, `WorkerBinary`) on
//! moto; and the publisher alone beside a service's own scalable target
//! (`ScalingTarget=existing`) on moto. What already exists is made first, the
//! way its owner makes it (`scripts/yours.py`), not by the stack.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e_tests::downstream::Downstream;
use e2e_tests::fixtures::{Aws, binary, unique};
use e2e_tests::process::Process;
use e2e_tests::runtime_host::LambdaHost;
use serde_json::{Value, json};
use tokio::process::Command;

use super::driver::{Emulator, Stack};
use super::run::{clients, endpoint_variable, pairs, received};
use super::wiring::{Checks, Deployed};
use crate::template_topology::{Deployment, parameter_set, template};

const SETTLED: Duration = Duration::from_secs(60);

/// `scripts/yours.py`'s answer, as JSON.
async fn yours(endpoint: &str, args: &[&str]) -> Value {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let output = Command::new(format!("{root}/.venv-sam/bin/python"))
        .arg(format!("{root}/scripts/yours.py"))
        .args(args)
        .args(["--endpoint", endpoint])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "yours.py {args:?}: {stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The set deployed with `overrides`, read back, its resources checked.
pub(super) async fn deploy(set: &str, overrides: &[(&str, String)]) -> (Stack, Deployment, Value) {
    let stack = Stack::create(unique("stack"), set, overrides).await.unwrap();
    let mut values: BTreeMap<String, String> = parameter_set(set);
    values.extend(overrides.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    let plan = Deployment::new(template(), &values);
    assert_eq!(plan.refused_by(), Vec::<String>::new(), "{set}: the rules take it");
    let read = stack.describe().await.unwrap();
    (stack, plan, read)
}

fn report(set: &str, emulator: Emulator, checks: &Checks) {
    println!(
        "{set} on {}:\n  held:\n    {}\n  not readable here:\n    {}",
        emulator.name(),
        checks.held.join("\n    "),
        checks.unreadable.join("\n    ")
    );
}

fn entry(account: &str, cents: i64) -> String {
    json!({"account": account, "cents": cents}).to_string()
}

#[tokio::test]
async fn your_own_function_is_wired_as_ours_and_runs_with_the_stacks_variables() {
    let set = "lambda-own-function";
    let emulator = Emulator::LocalStack;
    let endpoint = emulator.endpoint();
    let name = unique("ledger");
    let ledger = binary("examples/ledger").unwrap();
    let ledger_path = ledger.to_str().unwrap();
    let made = yours(&endpoint, &["function", "--name", &name, "--artefact", ledger_path]).await;
    let arn = made["functionArn"].as_str().unwrap().to_owned();
    let role = made["roleName"].as_str().unwrap().to_owned();
    let overrides = [("ConsumerFunctionArn", arn.clone()), ("ConsumerFunctionRoleName", role)];
    let (stack, plan, read) = deploy(set, &overrides).await;
    let deployed = Deployed { read, plan: &plan, emulator };
    let mut checks = Checks::default();
    checks.eq("stack", deployed.read["status"].as_str(), Some("CREATE_COMPLETE"));
    super::resources(&deployed, &mut checks);
    let created = ["ConsumerFunction", "ConsumerRole", "ConsumerLogGroup"]
        .iter()
        .filter(|logical| deployed.read["resources"].get(**logical).is_some())
        .count();
    checks.eq("batch-consumer, its role and its log group not created", created, 0);
    let mapping = deployed.of("ConsumerFunctionWorkQueue");
    checks.eq("mapping function", mapping["FunctionArn"].as_str(), Some(arn.as_str()));
    checks.eq(
        "mapping FunctionResponseTypes",
        mapping["FunctionResponseTypes"].clone(),
        json!(["ReportBatchItemFailures"]),
    );
    let work_arn = deployed.queue_attribute("WorkQueue", "QueueArn");
    checks.eq("mapping source", mapping["EventSourceArn"].as_str(), Some(work_arn.as_str()));
    // ConsumerMappingEnabled=false: nothing reaches the function before its variables are set.
    checks.eq("mapping State", mapping["State"].as_str(), Some("Disabled"));

    // As docs/your-code.md does it: the stack's variables set beside the function's own.
    let variables = deployed.read["outputs"]["ConsumerEnvironment"].as_str().unwrap().to_owned();
    let function =
        yours(&endpoint, &["set-environment", "--name", &name, "--environment", &variables]).await;
    let policy = deployed.read["outputs"]["ConsumerAccessPolicyArn"].as_str().unwrap();
    let attached: Vec<&str> = function["attached"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["PolicyArn"].as_str())
        .collect();
    checks.eq("ConsumerAccessPolicy attached to your role", attached, vec![policy]);
    let env: BTreeMap<String, String> = serde_json::from_value(function["environment"].clone())
        .unwrap_or_else(|e| panic!("{e}: {function}"));
    checks.eq("your own variable kept", env.get("FROZEN_ACCOUNT").cloned(), Some("frozen".into()));
    let quarantine = deployed.physical("QuarantineQueue");
    checks.eq("QUARANTINE_QUEUE_URL set", env.get("QUARANTINE_QUEUE_URL"), Some(&quarantine));
    let table = deployed.physical("IdempotencyTable");
    checks.eq("IDEMPOTENCY_TABLE set", env.get("IDEMPOTENCY_TABLE"), Some(&table));

    // Run: the function's code with the function's environment, on what the mapping would hand it.
    let (aws, _) = clients(&endpoint).await;
    let work = deployed.physical("WorkQueue");
    let bodies =
        [entry("a", 5), entry("a", -2), entry("frozen", 1), entry("b", 0), "<html>502".into()];
    aws.send_batch(&work, &bodies).await.unwrap();
    let (messages, records) = received(&aws, &work, &work_arn, bodies.len()).await;
    let mut env = pairs(&env);
    for service in ["SQS", "S3", "DYNAMODB", "CLOUDWATCH"] {
        env.push((endpoint_variable(service), endpoint.as_str()));
    }
    let host = LambdaHost::start(&ledger, &env).await.unwrap();
    let outcome = host.invoke(&json!({ "Records": records }), SETTLED).await;
    let failed = outcome.batch_item_failures().unwrap_or_else(|| panic!("{outcome:?}"));
    let frozen: Vec<String> = messages
        .iter()
        .filter(|m| m.body() == Some(bodies[2].as_str()))
        .filter_map(|m| m.message_id().map(str::to_owned))
        .collect();
    checks.eq("run: batchItemFailures (the frozen account's entry)", failed, frozen);
    let quarantined = aws.quarantined(&quarantine, 2).await.unwrap();
    let mut codes: Vec<(String, String)> = quarantined
        .iter()
        .map(|q| {
            let field = |name: &str| q.record[name].as_str().unwrap_or_default().to_owned();
            (field("errorCode"), field("tenantId"))
        })
        .collect();
    codes.sort();
    let expected = [("invalid_json", ""), ("zero_amount", "b")];
    checks.eq(
        "run: quarantined in the stack's queue (code, tenant)",
        codes,
        expected.iter().map(|(c, t)| ((*c).to_owned(), (*t).to_owned())).collect(),
    );
    // The docs' last step, once the variables are set: the mapping enabled by an update.
    match stack.update("ConsumerMappingEnabled", "true").await {
        Err(error) if error.to_string().contains("not yet been emulated") => checks.unreadable(
            "update: mapping enabled",
            "LocalStack answers this stack's UpdateStack with InternalFailure \"not yet emulated\" \
             (template_yours.rs checks that Enabled follows ConsumerMappingEnabled)",
        ),
        result => {
            result.unwrap();
            let updated = stack.describe().await.unwrap();
            let state = &updated["resources"]["ConsumerFunctionWorkQueue"]["read"]["State"];
            let enabled = state.as_str().is_some_and(|s| s.starts_with("Enabl"));
            checks.eq("update: mapping enabled", enabled, true);
        }
    }
    delete(&stack, &mut checks).await;
    report(set, emulator, &checks);
}

async fn delete(stack: &Stack, checks: &mut Checks) {
    match stack.delete().await {
        Ok(()) => checks.eq("delete: stack", "DELETE_COMPLETE", "DELETE_COMPLETE"),
        Err(error) if error.to_string().contains("Unresolved resource dependencies") => checks
            .unreadable(
                "delete",
                "LocalStack refuses DeleteStack on a template with resources under a false Condition \
                 (tests/emulator-defects/delete-with-transform.yaml)",
            ),
        Err(error) => panic!("delete: {error}"),
    }
}

fn thumbnail(image: &str, width: u32) -> String {
    json!({"image": image, "width": width}).to_string()
}

#[tokio::test]
async fn your_own_worker_image_runs_as_the_task_definition_says() {
    let set = "ecs-own-worker";
    let emulator = Emulator::Moto;
    let aws = Aws::from_env().await.unwrap();
    let downstream = Downstream::start().await.unwrap();
    let overrides = super::prerequisites(set, &aws, &downstream).await;
    let (stack, plan, read) = deploy(set, &overrides).await;
    let deployed = Deployed { read, plan: &plan, emulator };
    let mut checks = Checks::default();
    super::resources(&deployed, &mut checks);
    let container =
        &deployed.of("WorkerTaskDefinition")["taskDefinition"]["containerDefinitions"][0];
    checks.eq("your image", container["image"].as_str(), Some(&*plan.value("WorkerImage")));
    match container["healthCheck"]["command"].as_array() {
        Some(command) => checks.eq(
            "health check: your binary's healthcheck",
            command.iter().filter_map(Value::as_str).collect::<Vec<_>>(),
            vec!["CMD", "/usr/local/bin/thumbnails", "healthcheck"],
        ),
        None => checks.unreadable(
            "health check",
            "moto's CloudFormation registers a task definition with its family, containers and \
             memory only (template.rs checks the command)",
        ),
    }

    let (mut worker, health) = example_worker(&deployed.container_environment());
    let example = binary("examples/worker").unwrap();
    let work = deployed.work_queue_url();
    let bodies = [thumbnail("a.png", 200), thumbnail("b.png", 300), thumbnail("wide.png", 9_000)];
    aws.send_batch(&work, &bodies).await.unwrap();
    aws.send_batch(&work, &["not json".to_owned()]).await.unwrap();
    // The worker quarantines before it deletes, so an empty work queue means
    // the records are there; reading them sooner races the worker's start.
    aws.wait_for_counts(&work, (0, 0), SETTLED, Duration::from_millis(250)).await.unwrap();
    let quarantine = deployed.physical("QuarantineQueue");
    let quarantined = aws.quarantined(&quarantine, 2).await.unwrap();
    let mut codes: Vec<&str> =
        quarantined.iter().map(|q| q.record["errorCode"].as_str().unwrap_or("?")).collect();
    codes.sort_unstable();
    checks.eq("run: quarantined in the stack's queue", codes, vec!["invalid_json", "too_wide"]);
    let made = worker.lines().iter().filter(|l| l.contains("thumbnail made")).count();
    checks.eq("run: thumbnails made", made, 2);
    let env = deployed.container_environment();
    let mut env = pairs(&env);
    env.extend([("RECEIVE_WAIT_SECONDS", "1"), ("HEALTH_FILE", health.as_str())]);
    let probe = Process::spawn(&example, &["healthcheck"], &env).unwrap().exit(SETTLED).await;
    checks.eq("run: `thumbnails healthcheck` while it polls", probe.unwrap().code(), Some(0));
    worker.signal("TERM").await.unwrap();
    checks.eq("run: exit after SIGTERM", worker.exit(SETTLED).await.unwrap().code(), Some(0));
    let _ = std::fs::remove_file(&health);
    report(set, emulator, &checks);
    stack.delete().await.unwrap();
}

/// The library's example worker, started with `env` and nothing else of ours but a short
/// receive wait and a health file of its own (whose path it also returns).
pub(super) fn example_worker(env: &BTreeMap<String, String>) -> (Process, String) {
    let health = std::env::temp_dir().join(unique("worker-health"));
    let health = health.to_str().unwrap().to_owned();
    let mut env = pairs(env);
    env.extend([("RECEIVE_WAIT_SECONDS", "1"), ("HEALTH_FILE", health.as_str())]);
    let worker = Process::start(&binary("examples/worker").unwrap(), &env).unwrap();
    (worker, health)
}

/// The prerequisites of `set` on moto, and the service's own scalable target
/// and policy registered as its owner would (`yours.py scaling`).
struct OwnScaling {
    aws: Aws,
    endpoint: String,
    overrides: Vec<(&'static str, String)>,
    cluster: String,
    service: String,
    /// The target and policies as registered, before any stack.
    before: Value,
}

impl OwnScaling {
    async fn made(set: &str) -> Self {
        let endpoint = Emulator::Moto.endpoint();
        let aws = Aws::from_env().await.unwrap();
        let downstream = Downstream::start().await.unwrap();
        let overrides = super::prerequisites(set, &aws, &downstream).await;
        let cluster = overrides.iter().find(|(k, _)| *k == "EcsClusterName").unwrap().1.clone();
        let service = parameter_set(set)["EcsServiceName"].clone();
        let mut own = Self { aws, endpoint, overrides, cluster, service, before: Value::Null };
        own.before = own.call("scaling").await;
        own
    }

    /// The service's scalable targets and policies as they are now.
    async fn read(&self) -> Value {
        self.call("read-scaling").await
    }

    async fn call(&self, command: &str) -> Value {
        let args = [command, "--cluster", &self.cluster, "--service", &self.service];
        yours(&self.endpoint, &args).await
    }
}

/// A service with its own scalable target (1-7 tasks) and CPU policy, and a
/// stack for it from `set`: the stack declares no scaling of its own, and the
/// service's target, bounds and policy are as they were after the stack's
/// create, its update and its delete. (moto's CloudFormation skips scaling
/// resources, so the plan's check is what would see the stack declare one.)
async fn scaling_left_alone(set: &str) {
    let own = OwnScaling::made(set).await;
    let before = own.before.clone();
    assert_eq!(before["targets"], json!([[1, 7]]));
    assert_eq!(before["policies"][0]["name"], "own-cpu");
    let (stack, plan, _) = deploy(set, &own.overrides).await;
    assert!(!plan.condition("ScalesHere"), "{set}: the stack declares no scaling of its own");
    let publisher_alone = ["PublisherFunction", "BacklogPerTaskMissingAlarm"];
    let declared: Vec<&str> = crate::template_topology::SCALING
        .iter()
        .copied()
        .filter(|r| !publisher_alone.contains(r) && plan.resources().contains(*r))
        .collect();
    assert_eq!(declared, Vec::<&str>::new(), "{set}: no scalable target, policy or their alarms");
    assert_eq!(own.read().await, before, "{set}: after create");
    stack.update("PublisherMemorySize", "256").await.unwrap();
    assert_eq!(own.read().await, before, "{set}: after update");
    stack.delete().await.unwrap();
    assert_eq!(own.read().await, before, "{set}: after delete");
}

#[tokio::test]
async fn a_stack_for_a_service_you_run_leaves_its_scaling_as_it_was() {
    // deploy/samconfig-ecs-existing.toml's parameters: ScalingTarget not given.
    scaling_left_alone("ecs-existing-service").await;
}

#[tokio::test]
async fn scaling_target_existing_leaves_the_services_scaling_as_it_was() {
    scaling_left_alone("ecs-existing-scaling-target").await;
}

#[tokio::test]
async fn the_publisher_alone_serves_a_service_that_scales_itself() {
    let set = "ecs-existing-scaling-target";
    let emulator = Emulator::Moto;
    let own = OwnScaling::made(set).await;
    let (aws, before) = (&own.aws, &own.before);
    let (stack, plan, read) = deploy(set, &own.overrides).await;
    let deployed = Deployed { read, plan: &plan, emulator };
    let mut checks = Checks::default();
    super::resources(&deployed, &mut checks);
    let scaling_resources: Vec<&String> = deployed.read["resources"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, r)| r["type"].as_str().is_some_and(|t| t.contains("ApplicationAutoScaling")))
        .map(|(logical, _)| logical)
        .collect();
    checks.eq("no scalable target or policy in the stack", scaling_resources, vec![]);
    let after = own.read().await;
    checks.eq("the service's own target and policy, as they were", &after, before);
    checks.eq("its target", after["targets"].clone(), json!([[1, 7]]));
    deployed.ecs_consumer(&mut checks);
    super::run::publisher(&deployed, 10, &mut checks).await;

    // Your policy's metric, as the ScalingMetric output names it, has the publisher's point.
    let metric: Value =
        serde_json::from_str(deployed.read["outputs"]["ScalingMetric"].as_str().unwrap()).unwrap();
    let dimensions: Vec<(&str, &str)> = metric["Dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["Name"].as_str().unwrap(), d["Value"].as_str().unwrap()))
        .collect();
    let namespace = metric["Namespace"].as_str().unwrap();
    let name = metric["MetricName"].as_str().unwrap();
    let window = Duration::from_secs(600);
    let points = aws.metric_averages(namespace, name, &dimensions, window).await.unwrap();
    checks.eq(&format!("ScalingMetric {name}: published"), points.is_empty(), false);
    stack.delete().await.unwrap();
    let left = own.read().await;
    checks.eq("after the stack's delete, the service's own target stays", &left, before);
    report(set, emulator, &checks);
}

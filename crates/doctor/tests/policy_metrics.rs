//! `policy-metric-unpublished`: each target tracking policy's customized metric against what
//! the deployed backlog-publishers put and what CloudWatch holds.

use backpressure_doctor::{
    Deployment, Finding, Follows, Policy, PolicyMetric, PublisherTarget, Scaling, Service, check,
};

const QUEUE_URL: &str = "https://sqs.us-east-1.amazonaws.com/123456789012/orders";
const QUEUE_ARN: &str = "arn:aws:sqs:us-east-1:123456789012:orders";

/// What the publisher below puts, as the docs advise a policy to follow it.
fn advised() -> PolicyMetric {
    let dimensions =
        [("ClusterName", "shop"), ("ServiceName", "orders-worker"), ("QueueName", "orders")];
    PolicyMetric::new("SqsBackpressure", "ScalingLoad", &dimensions, "Average")
}

/// The shop's orders-worker, scaled by one policy on `metric`, and the publisher that names it
/// with ScalingLoad on.
fn deployment(metric: PolicyMetric) -> Deployment {
    let mut service = Service::new("shop", "orders-worker");
    service.described = true;
    service.queue_arns = vec![QUEUE_ARN.to_owned()];
    service.stop_timeout_s = 120;
    let policy = Policy::new("orders-load", Follows::Custom(vec![metric]));
    service.scaling = Some(Scaling::new(2, 20, vec![policy]));
    let mut target = PublisherTarget::new("orders-publisher", QUEUE_URL, "shop", "orders-worker");
    target.scaling_load = true;
    let mut deployment = Deployment::default();
    deployment.services = vec![service];
    deployment.publisher_targets = vec![target];
    deployment
}

fn findings(deployment: &Deployment) -> Vec<Finding> {
    check(deployment).findings
}

fn ids(deployment: &Deployment) -> Vec<&'static str> {
    findings(deployment).iter().map(|f| f.rule).collect()
}

#[test]
fn a_policy_on_what_the_publisher_puts_passes_in_any_dimension_order() {
    assert_eq!(ids(&deployment(advised())), Vec::<&str>::new());
    let mut reordered = advised();
    reordered.dimensions.reverse();
    assert_eq!(ids(&deployment(reordered)), Vec::<&str>::new());
    let mut highest = advised();
    highest.statistic = "Maximum".into();
    assert_eq!(ids(&deployment(highest)), Vec::<&str>::new());
}

#[test]
fn a_misspelt_namespace_and_dimension_with_no_datapoints_is_broken_and_names_both() {
    let mut misspelt = advised();
    misspelt.namespace = "SqsBackpresure".into();
    misspelt.dimensions[2].1 = "order".into();
    misspelt.recent_datapoints = Some(false);
    let deployment = deployment(misspelt);
    assert_eq!(ids(&deployment), ["policy-metric-unpublished"]);
    assert_eq!(check(&deployment).exit, backpressure_doctor::EXIT_BROKEN);
    let finding = &findings(&deployment)[0];
    insta::assert_snapshot!("misspelt", format!("{}\nfix: {}", finding.measured, finding.fix));
}

#[test]
fn a_policy_nobody_publishes_is_judged_only_once_cloudwatch_has_answered() {
    let mut unread = advised();
    unread.namespace = "Elsewhere".into();
    assert_eq!(
        ids(&deployment(unread.clone())),
        Vec::<&str>::new(),
        "GetMetricData not answered: the read's failure says so, not this rule"
    );
    unread.recent_datapoints = Some(true);
    assert_eq!(ids(&deployment(unread)), Vec::<&str>::new(), "something else puts it");
}

#[test]
fn scaling_load_without_the_publishers_load_settings_says_which_variables_to_set() {
    let mut metric = advised();
    metric.recent_datapoints = Some(false);
    let mut deployment = deployment(metric);
    deployment.publisher_targets[0].scaling_load = false;
    assert_eq!(ids(&deployment), ["policy-metric-unpublished"]);
    let finding = &findings(&deployment)[0];
    assert!(
        finding.measured.contains("orders-publisher has no TARGET_LOAD_PERCENT"),
        "{}",
        finding.measured
    );
    assert!(
        finding.fix.starts_with("set TARGET_LOAD_PERCENT, CONSUMER_CONCURRENCY"),
        "{}",
        finding.fix
    );
}

#[test]
fn a_sum_of_a_level_is_broken_even_on_the_published_metric() {
    let mut summed = advised();
    summed.statistic = "Sum".into();
    let deployment = deployment(summed);
    assert_eq!(ids(&deployment), ["policy-metric-unpublished"]);
    let finding = &findings(&deployment)[0];
    assert!(finding.fix.starts_with("set the policy's Statistic to Average"), "{}", finding.fix);
}

#[test]
fn a_service_no_publisher_names_is_told_to_deploy_one() {
    let mut metric = advised();
    metric.recent_datapoints = Some(false);
    let mut deployment = deployment(metric);
    deployment.publisher_targets.clear();
    let finding = &findings(&deployment)[0];
    assert_eq!(finding.rule, "policy-metric-unpublished");
    assert!(
        finding.fix.starts_with("deploy backlog-publisher with a target for shop/orders-worker")
    );
}

#[test]
fn every_metric_of_a_metric_math_policy_is_checked() {
    let mut missing = advised();
    missing.name = "QueueBacklg".into();
    missing.recent_datapoints = Some(false);
    let mut deployment = deployment(advised());
    let scaling = deployment.services[0].scaling.as_mut().unwrap();
    scaling.policies[0].follows = Follows::Custom(vec![advised(), missing]);
    assert_eq!(ids(&deployment), ["policy-metric-unpublished"]);
    let measured = &findings(&deployment)[0].measured;
    assert!(measured.contains("metric QueueBacklg, which it does not put"), "{measured}");
}

#[test]
fn with_the_functions_unread_no_policy_is_called_unpublished() {
    let mut metric = advised();
    metric.namespace = "Elsewhere".into();
    metric.recent_datapoints = Some(false);
    let mut deployment = deployment(metric);
    deployment.publisher_targets.clear();
    assert_eq!(ids(&deployment), ["policy-metric-unpublished"]);
    let failed = "failed to parse JSON".to_owned();
    deployment.unreadable =
        vec![backpressure_doctor::Unreadable::new("lambda:ListFunctions", "*", failed)];
    assert_eq!(ids(&deployment), Vec::<&str>::new(), "a publisher may be among the unread");
    let report = check(&deployment);
    assert_eq!(report.exit, backpressure_doctor::EXIT_INCOMPLETE);
    let text = report.render();
    assert!(text.contains("not checked, a read failed:\n"), "{text}");
}

#[test]
fn a_cpu_only_service_is_given_a_whole_command_to_paste() {
    let mut deployment = deployment(advised());
    let cpu = Policy::new("cpu", Follows::Predefined("ECSServiceAverageCPUUtilization".into()));
    deployment.services[0].scaling = Some(Scaling::new(2, 20, vec![cpu]));
    deployment.publisher_targets[0].target_load_percent = Some(90.0);
    let finding = &findings(&deployment)[0];
    assert_eq!(finding.rule, "service-scaled-on-cpu-only");
    assert!(!finding.fix.contains("..."), "{}", finding.fix);
    let configuration = finding.fix.rsplit_once(" '").unwrap().1.trim_end_matches('\'');
    let configuration: serde_json::Value = serde_json::from_str(configuration).unwrap();
    assert_eq!(configuration["TargetValue"], 90.0, "the publisher's TARGET_LOAD_PERCENT");
    let metric = &configuration["CustomizedMetricSpecification"];
    assert_eq!(metric["MetricName"], "ScalingLoad");
    assert_eq!(
        metric["Dimensions"][2],
        serde_json::json!({"Name": "QueueName", "Value": "orders"})
    );
}

#[test]
fn with_no_publisher_for_the_service_the_fix_deploys_one_first() {
    let mut deployment = deployment(advised());
    let cpu = Policy::new("cpu", Follows::Predefined("ECSServiceAverageCPUUtilization".into()));
    deployment.services[0].scaling = Some(Scaling::new(2, 20, vec![cpu]));
    deployment.publisher_targets.clear();
    let finding = &findings(&deployment)[0];
    assert!(
        finding.fix.contains(
            "first deploy backlog-publisher for it (the template with \
                                 ConsumerType=ecs EcsClusterName=shop EcsServiceName=orders-worker"
        ),
        "{}",
        finding.fix
    );
    assert!(finding.fix.contains("then: aws application-autoscaling put-scaling-policy"));
}

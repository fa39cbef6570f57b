"""A deployment around one queue, made on the emulators for doctor's end-to-end tests: a work
queue, its dead-letter queue, a function reading it through an event source mapping, and alarms,
set as AWS advises, then changed to break one rule; for the service rules, an ECS worker service
on the same queue and a backlog-publisher naming it. SQS, IAM and Lambda on moto (--endpoint),
CloudWatch on LocalStack (--cloudwatch). moto keeps no RedriveAllowPolicy, so that rule's queues
are LocalStack's (--sqs), with no function reading them. Run with the emulators' interpreter
(.venv/bin/python); prints the queue's name and ARN as JSON.

  doctor_fixture.py --endpoint URL [--sqs URL] --cloudwatch URL --name NAME --breaks RULE
"""

import argparse
import io
import json
import zipfile

import boto3
from botocore.config import Config

TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}
DEPTH = "ApproximateNumberOfMessagesVisible"


REGION = "us-east-1"


def client(endpoint, service):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        config=Config(retries={"total_max_attempts": 5, "mode": "standard"}),
    )


def zipped():
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("bootstrap", "#!/bin/sh\n")
    return archive.getvalue()


def alarm(cloudwatch, name, metric, queue):
    cloudwatch.put_metric_alarm(
        AlarmName=name, Namespace="AWS/SQS", MetricName=metric,
        Dimensions=[{"Name": "QueueName", "Value": queue}], Statistic="Maximum", Period=60,
        EvaluationPeriods=1, Threshold=0, ComparisonOperator="GreaterThanThreshold",
    )


def make(args):
    sqs, lam = client(args.sqs or args.endpoint, "sqs"), client(args.endpoint, "lambda")
    cloudwatch = client(args.cloudwatch, "cloudwatch")
    breaks, name = args.breaks, args.name
    dlq_name = f"{name}-dlq"
    dlq_url = sqs.create_queue(QueueName=dlq_name, Attributes={"MessageRetentionPeriod": "1209600"})["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    attributes = {"VisibilityTimeout": "185", "MessageRetentionPeriod": "345600"}
    if breaks != "no-dead-letter-queue":
        count = "2" if breaks == "max-receive-count-low" else "5"
        attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": count})
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    if breaks == "dead-letter-queue-missing":
        sqs.delete_queue(QueueUrl=dlq_url)
    if breaks == "dead-letter-not-allowed":
        sqs.set_queue_attributes(QueueUrl=dlq_url, Attributes={"RedriveAllowPolicy": json.dumps({"redrivePermission": "denyAll"})})
    if breaks == "dead-letter-retention-short":
        sqs.set_queue_attributes(QueueUrl=dlq_url, Attributes={"MessageRetentionPeriod": "345600"})
    if breaks == "visibility-below-six-timeouts":
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "120"})
    if breaks == "visibility-below-timeout":
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "20"})

    if breaks == "age-only-alarm":
        alarm(cloudwatch, f"{name}-age", "ApproximateAgeOfOldestMessage", name)
    elif breaks == "dead-letter-unalarmed":
        alarm(cloudwatch, f"{dlq_name}-sent", "NumberOfMessagesSent", dlq_name)
    else:
        alarm(cloudwatch, f"{dlq_name}-depth", DEPTH, dlq_name)
        alarm(cloudwatch, f"{name}-age", "ApproximateAgeOfOldestMessage", name)

    if breaks in ("queue-nobody-reads", "dead-letter-not-allowed"):
        return {"queue": name, "arn": arn}
    role = client(args.endpoint, "iam").create_role(RoleName=f"{name}-role", AssumeRolePolicyDocument=json.dumps(TRUST))
    function = lam.create_function(
        FunctionName=f"{name}-fn", Runtime="provided.al2023", Role=role["Role"]["Arn"], Handler="bootstrap",
        Code={"ZipFile": zipped()}, Timeout=30,
        Environment={"Variables": {"QUARANTINE_QUEUE_URL": url}},
    )
    if breaks == "maximum-concurrency-above-reserved":
        lam.put_function_concurrency(FunctionName=f"{name}-fn", ReservedConcurrentExecutions=10)
    mapping = {
        "EventSourceArn": arn, "FunctionName": function["FunctionArn"], "BatchSize": 10,
        "MaximumBatchingWindowInSeconds": 5, "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "ScalingConfig": {"MaximumConcurrency": 20},
    }
    if breaks == "item-failures-ignored":
        del mapping["FunctionResponseTypes"]
    if breaks == "no-maximum-concurrency":
        del mapping["ScalingConfig"]
    if breaks == "pollers-out-of-range":
        del mapping["ScalingConfig"]
        mapping["ProvisionedPollerConfig"] = {"MinimumPollers": 1, "MaximumPollers": 200}
    if breaks == "batch-above-payload":
        mapping["BatchSize"] = 100
    lam.create_event_source_mapping(**mapping)
    if breaks in SERVICE_RULES:
        service(args, name, url, role["Role"]["Arn"])
    return {"queue": name, "arn": arn}


# The deployment above, with an ECS worker service on the same queue, found through a
# backlog-publisher's TARGETS (or given with --service for service-unscaled); as advised, each
# breaks one rule of its own.
SERVICE_RULES = ("service-none", "service-unscaled", "service-scaled-on-cpu-only",
                 "stop-timeout-below-drain", "reader-without-health-check", "publisher-target-gone",
                 "policy-metric-unpublished", "service-metric-elsewhere", "worker-unwired")


def service(args, name, url, role_arn):
    ecs, scaling = client(args.endpoint, "ecs"), client(args.endpoint, "application-autoscaling")
    breaks, cluster, service_name = args.breaks, f"{name}-cluster", f"{name}-worker"
    ecs.create_cluster(clusterName=cluster)
    if breaks != "service-unscaled":
        targets = [{"queueUrl": url, "cluster": cluster, "service": service_name}]
        # ScalingLoad on, as docs/publisher.md advises.
        variables = {"TARGETS": json.dumps(targets), "TARGET_LOAD_PERCENT": "70",
                     "CONSUMER_CONCURRENCY": "10", "AVG_PROCESSING_SECONDS": "0.5"}
        client(args.endpoint, "lambda").create_function(
            FunctionName=f"{name}-publisher", Runtime="provided.al2023", Role=role_arn, Handler="bootstrap",
            Code={"ZipFile": zipped()}, Environment={"Variables": variables},
        )
    if breaks == "publisher-target-gone":
        return
    environment = [{"name": "QUEUE_URL", "value": url}, {"name": "DRAIN_SECONDS", "value": "100"}]
    if breaks != "worker-unwired":
        # The stack's quarantine queue, as its WorkerEnvironment output gives it.
        quarantine = client(args.sqs or args.endpoint, "sqs").create_queue(QueueName=f"{name}-quarantine")
        environment.append({"name": "QUARANTINE_QUEUE_URL", "value": quarantine["QueueUrl"]})
    container = {
        "name": "worker", "image": "worker:1", "memory": 512, "essential": True,
        "stopTimeout": 30 if breaks == "stop-timeout-below-drain" else 120,
        "environment": environment,
    }
    if breaks != "reader-without-health-check":
        container["healthCheck"] = {"command": ["CMD", "sqs-worker", "healthcheck"]}
    task = ecs.register_task_definition(family=f"{name}-worker", containerDefinitions=[container],
                                        taskRoleArn=role_arn)
    ecs.create_service(cluster=cluster, serviceName=service_name, desiredCount=1,
                       taskDefinition=task["taskDefinition"]["taskDefinitionArn"])
    if breaks == "service-unscaled":
        return
    resource = f"service/{cluster}/{service_name}"
    scaling.register_scalable_target(ServiceNamespace="ecs", ResourceId=resource,
                                     ScalableDimension="ecs:service:DesiredCount", MinCapacity=1, MaxCapacity=10)
    if breaks == "service-scaled-on-cpu-only":
        tracking = {"TargetValue": 70.0,
                    "PredefinedMetricSpecification": {"PredefinedMetricType": "ECSServiceAverageCPUUtilization"}}
    else:
        # What the publisher puts; policy-metric-unpublished misspells the namespace and the queue,
        # service-metric-elsewhere follows a metric only something else puts, put here.
        namespace, queue_name = "SqsBackpressure", name
        if breaks == "policy-metric-unpublished":
            namespace, queue_name = "SqsBackpresure", name[:-1]
        if breaks == "service-metric-elsewhere":
            namespace = "TheirOwn"
        dimensions = [{"Name": "ClusterName", "Value": cluster}, {"Name": "ServiceName", "Value": service_name},
                      {"Name": "QueueName", "Value": queue_name}]
        tracking = {"TargetValue": 70.0, "CustomizedMetricSpecification": {
            "MetricName": "ScalingLoad", "Namespace": namespace, "Statistic": "Average", "Dimensions": dimensions}}
        if breaks == "service-metric-elsewhere":
            client(args.cloudwatch, "cloudwatch").put_metric_data(Namespace=namespace, MetricData=[
                {"MetricName": "ScalingLoad", "Dimensions": dimensions, "Value": 42.0, "Unit": "Percent"}])
    scaling.put_scaling_policy(PolicyName=f"{name}-scaling", ServiceNamespace="ecs", ResourceId=resource,
                               ScalableDimension="ecs:service:DesiredCount", PolicyType="TargetTrackingScaling",
                               TargetTrackingScalingPolicyConfiguration=tracking)


def main():
    global REGION
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--sqs")
    parser.add_argument("--cloudwatch", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--breaks", required=True)
    parser.add_argument("--region", default=REGION)
    args = parser.parse_args()
    REGION = args.region
    print(json.dumps(make(args)))


if __name__ == "__main__":
    main()

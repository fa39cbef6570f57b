"""The backlog publisher as the common samples write it, as the benchmark's anchor.

For each target in turn: GetQueueAttributes, DescribeServices, then PutMetricData with
BacklogPerTask (zero-guarded like ours, so both do the same arithmetic). Clients are
made once, outside the timed part, as a warm Lambda would have them.

usage: TARGETS='[{"queueUrl", "cluster", "service"}, ...]' boto3_publisher.py RUNS
Prints one JSON object: wall time of each run in ms and the API calls of one run.
"""

import json
import os
import sys
import time

import boto3

NAMESPACE = os.environ.get("METRIC_NAMESPACE", "SqsBackpressure/Bench")
TARGET = float(os.environ.get("TARGET_BACKLOG_PER_TASK", "100"))


def publish(sqs, ecs, cloudwatch, targets, calls):
    for target in targets:
        attributes = sqs.get_queue_attributes(
            QueueUrl=target["queueUrl"],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        calls["sqs"] += 1
        service = ecs.describe_services(cluster=target["cluster"], services=[target["service"]])["services"][0]
        calls["ecs"] += 1
        backlog = int(attributes["ApproximateNumberOfMessages"])
        running = service["runningCount"]
        value = backlog / running if running else (max(backlog, 2 * TARGET) if backlog else 0.0)
        cloudwatch.put_metric_data(
            Namespace=NAMESPACE,
            MetricData=[{
                "MetricName": "BacklogPerTask",
                "Dimensions": [
                    {"Name": "ClusterName", "Value": target["cluster"]},
                    {"Name": "ServiceName", "Value": target["service"]},
                    {"Name": "QueueName", "Value": target["queueUrl"].rsplit("/", 1)[-1]},
                ],
                "Value": value,
                "Unit": "Count",
            }],
        )
        calls["cloudwatch"] += 1


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    targets = json.loads(os.environ["TARGETS"])
    sqs, ecs, cloudwatch = (boto3.client(name) for name in ("sqs", "ecs", "cloudwatch"))
    times = []
    calls = {}
    for _ in range(runs):
        calls = {"sqs": 0, "ecs": 0, "cloudwatch": 0}
        started = time.perf_counter()
        publish(sqs, ecs, cloudwatch, targets, calls)
        times.append((time.perf_counter() - started) * 1e3)
    print(json.dumps({"times_ms": times, "calls": calls}))


if __name__ == "__main__":
    main()

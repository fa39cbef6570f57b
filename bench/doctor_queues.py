"""doctor's --all benchmark: COUNT queues on fauxqs, every other one with a redrive policy to a
dead-letter queue of its own (so doctor follows one in two), made with boto3 ten at a time.
Run with the emulators' interpreter (.venv/bin/python).

  doctor_queues.py --endpoint URL --count N --prefix P
"""

import argparse
import json
from concurrent.futures import ThreadPoolExecutor

import boto3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--prefix", required=True)
    args = parser.parse_args()
    sqs = boto3.client("sqs", endpoint_url=args.endpoint, region_name="us-east-1")

    def make(i):
        name = f"{args.prefix}-{i:05d}"
        if i % 2:
            url = sqs.create_queue(QueueName=name)["QueueUrl"]
            return url
        dlq = sqs.create_queue(QueueName=f"{name}-dlq", Attributes={"MessageRetentionPeriod": "1209600"})["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": "5"})
        return sqs.create_queue(QueueName=name, Attributes={"RedrivePolicy": policy})["QueueUrl"]

    # Every other queue brings its dead-letter queue: COUNT queues in all.
    with ThreadPoolExecutor(10) as pool:
        made = list(pool.map(make, range(args.count * 2 // 3)))
    print(json.dumps({"queues": len(made)}))


if __name__ == "__main__":
    main()

"""How an SQS emulator's call cost grows with the queue's length: 300 SendMessageBatch calls of
10 quarantine-sized records (time per 50), then 20 ReceiveMessage calls with 3,000 queued.
Why bench/run.sh replay runs on LocalStack's SQS rather than moto's. Run inside
scripts/emulators.sh run (moto), or with AWS_ENDPOINT_URL pointing at LocalStack."""

import json
import time

import boto3

sqs = boto3.client("sqs")
queue = sqs.create_queue(QueueName=f"scaling-{int(time.time())}")["QueueUrl"]
body = json.dumps({"messageId": "m", "errorCode": "x", "remediationStatus": "new", "body": "{}" * 20})
started = time.time()
for batch in range(300):
    sqs.send_message_batch(QueueUrl=queue, Entries=[{"Id": str(i), "MessageBody": body} for i in range(10)])
    if batch % 50 == 49:
        print(f"SendMessageBatch {batch - 48}-{batch + 1}: {time.time() - started:.2f} s")
        started = time.time()
started = time.time()
for _ in range(20):
    sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=60)
print(f"20 ReceiveMessage with 3,000 queued: {time.time() - started:.2f} s")

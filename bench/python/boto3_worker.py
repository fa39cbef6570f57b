"""The plain Python worker sqs-worker is measured against: one boto3 long-poll
loop that POSTs each message to the downstream with requests and deletes what
succeeded in one DeleteMessageBatch. No quarantine, heartbeat or drain: the
least a Python worker does for the same work.

Environment: QUEUE_URL, DOWNSTREAM_URL (and the AWS_* variables boto3 reads).
"""

import json
import os
import signal

import boto3
import requests

QUEUE_URL = os.environ["QUEUE_URL"]
DOWNSTREAM_URL = os.environ["DOWNSTREAM_URL"]
running = True


def stop(_signum, _frame):
    global running
    running = False


def main():
    sqs = boto3.client("sqs")
    http = requests.Session()
    signal.signal(signal.SIGTERM, stop)
    while running:
        received = sqs.receive_message(
            QueueUrl=QUEUE_URL,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=int(os.environ.get("RECEIVE_WAIT_SECONDS", "20")),
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        done = []
        for message in received.get("Messages", []):
            request = json.loads(message["Body"])
            answer = http.post(
                DOWNSTREAM_URL,
                data=message["Body"],
                headers={
                    "Content-Type": "application/json",
                    "Idempotency-Key": request["idempotencyKey"],
                },
                timeout=5,
            )
            if answer.status_code < 300:
                done.append({"Id": str(len(done)), "ReceiptHandle": message["ReceiptHandle"]})
        if done:
            sqs.delete_message_batch(QueueUrl=QUEUE_URL, Entries=done)


if __name__ == "__main__":
    main()

"""Sends one message through AWS's SQS Extended Client for Python, its payload offloaded to S3.

Usage: extended_client_send.py QUEUE_URL BUCKET FILE — the message body is FILE's text. The SDK's
endpoints come from the environment (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3).
"""

import sys

import boto3
import sqs_extended_client  # noqa: F401 (it extends boto3's SQS client on import)

queue_url, bucket, path = sys.argv[1:4]
sqs = boto3.client("sqs")
sqs.large_payload_support = bucket
sqs.always_through_s3 = True
with open(path, encoding="utf-8") as body:
    sqs.send_message(QueueUrl=queue_url, MessageBody=body.read())

"""The batch-consumer's job written the usual Python way, as the benchmark's anchor.

Powertools for AWS Lambda's batch utility with partial batch responses; each record's body
is checked against the same queue contract as ours (schemaVersion, operation, tenantId,
idempotencyKey) and POSTed to DOWNSTREAM_URL with the same headers. A 2xx is success;
anything else raises, so Powertools reports the record as a batch item failure.

Two handlers, as users write them:
- ``sync_handler``: ``BatchProcessor`` and one ``requests.Session`` (records one by one).
- ``async_handler``: ``AsyncBatchProcessor`` and one ``aiohttp.ClientSession`` (all records
  of the batch concurrently, aiohttp's default 100 connections).
"""

import json
import os

import aiohttp
import requests
from aws_lambda_powertools.utilities.batch import (
    AsyncBatchProcessor,
    BatchProcessor,
    EventType,
    async_process_partial_response,
    process_partial_response,
)

DOWNSTREAM_URL = os.environ["DOWNSTREAM_URL"]
REQUIRED = ("schemaVersion", "operation", "tenantId", "idempotencyKey")


class ContractViolation(Exception):
    pass


def work_request(body):
    request = json.loads(body)
    if not isinstance(request, dict):
        raise ContractViolation("the body is JSON but not an object")
    missing = [name for name in REQUIRED if not isinstance(request.get(name), str) or not request[name].strip()]
    if missing:
        raise ContractViolation(f"missing or empty: {', '.join(missing)}")
    if request["schemaVersion"].split(".")[0] != "1":
        raise ContractViolation("unsupported schemaVersion")
    return request


def headers(request, message_id):
    return {
        "Content-Type": "application/json",
        "Idempotency-Key": request["idempotencyKey"],
        "X-Tenant-Id": request["tenantId"],
        "X-Correlation-Id": request.get("correlationId") or message_id,
    }


sync_processor = BatchProcessor(event_type=EventType.SQS)
session = requests.Session()


def sync_record_handler(record):
    request = work_request(record.body)
    response = session.post(DOWNSTREAM_URL, data=record.body.encode(), headers=headers(request, record.message_id))
    if not 200 <= response.status_code < 300:
        raise RuntimeError(f"downstream answered {response.status_code}")


def sync_handler(event, context):
    return process_partial_response(
        event=event, record_handler=sync_record_handler, processor=sync_processor, context=context
    )


async_processor = AsyncBatchProcessor(event_type=EventType.SQS)
_client = None


def client():
    # aiohttp binds a session to the running event loop; Powertools keeps one loop per
    # process when LAMBDA_TASK_ROOT is set, so the session is made once, on first use.
    global _client
    if _client is None:
        _client = aiohttp.ClientSession()
    return _client


async def async_record_handler(record):
    request = work_request(record.body)
    async with client().post(
        DOWNSTREAM_URL, data=record.body.encode(), headers=headers(request, record.message_id)
    ) as response:
        await response.read()
        if not 200 <= response.status < 300:
            raise RuntimeError(f"downstream answered {response.status}")


def async_handler(event, context):
    return async_process_partial_response(
        event=event, record_handler=async_record_handler, processor=async_processor, context=context
    )

"""Start LocalStack in host mode, with three fixes backported and two stand-ins.

localstack-core 4.12.0 is the newest release that runs on Python 3.11 (4.14 has the
first fix below but its CloudWatch store needs Python 3.12).

1. Its rpc-v2-cbor request parser reads a CBOR timestamp (tag 1) with int(), so the
   float epoch seconds that the Smithy RPC v2 spec prescribes, and that
   aws-sdk-cloudwatch sends for MetricDatum.Timestamp and GetMetricStatistics'
   StartTime/EndTime, fail with "An unknown error occurred when trying to parse the
   request". LocalStack 4.14 parses them as seconds with millisecond precision; this
   does the same.
2. `localstack.packages.api` annotates a parameter `Lock | None`, which Python 3.11
   evaluates at definition and refuses (threading.Lock is a function before 3.13), so
   the Lambda and DynamoDB providers cannot be imported. That one module is compiled
   with postponed annotations (PEP 563), which leaves its behaviour as it is.
3. Its KMS names key material with uuid.uuid5(namespace, bytes), which Python 3.12 takes
   and 3.11 refuses ("encoding without a string argument"), so CreateKey fails, and with
   it a DynamoDB table's encryption. uuid5 is given 3.12's definition, which hashes a
   str exactly as 3.11 does.
4. Its Lambda prepares a Docker image for a function when the function is created (the
   runtime's image pulled, an init binary downloaded from GitHub), and fails the create
   without a Docker engine. Where LOCALSTACK_LAMBDA_PREPARE=code the preparation is the
   code's alone (the artefact fetched and unpacked): functions are created and read
   back, and cannot be invoked on LocalStack. tests/tests/e2e/deployed/ runs a
   deployed function's code and environment through its own Lambda Runtime API host.
5. Where DYNAMODB_LOCAL_PORT is set, LocalStack's DynamoDB forwards to the server
   already listening there instead of starting DynamoDB Local, a Java download this
   machine's registries do not carry: scripts/emulators.sh puts a moto_server there,
   for the stacks LocalStack's CloudFormation deploys (their idempotency table).
"""

import __future__
import datetime
import hashlib
import importlib.abc
import importlib.machinery
import os
import sys
import uuid

from localstack.aws.protocol import parser


def _parse_type_datetime(self, value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.datetime.fromtimestamp(int(value * 1000) / 1000, tz=datetime.timezone.utc)
    raise parser.ProtocolParserError(f"Unable to parse datetime value: {value}")


parser.BaseCBORRequestParser._parse_type_datetime = _parse_type_datetime


class _PostponedAnnotationsLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        # From source every time: a cached .pyc was compiled without the flag.
        path = self.get_filename(fullname)
        flags = __future__.annotations.compiler_flag
        return compile(self.get_data(path), path, "exec", flags=flags, dont_inherit=True)


class _PostponedAnnotationsFinder(importlib.abc.MetaPathFinder):
    modules = {"localstack.packages.api"}

    def find_spec(self, name, path, target=None):
        if name not in self.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None:
            spec.loader = _PostponedAnnotationsLoader(name, spec.origin)
        return spec


sys.meta_path.insert(0, _PostponedAnnotationsFinder())


def _uuid5(namespace, name):
    if isinstance(name, str):
        name = bytes(name, "utf-8")
    return uuid.UUID(bytes=hashlib.sha1(namespace.bytes + name).digest()[:16], version=5)


uuid.uuid5 = _uuid5

if os.environ.get("LOCALSTACK_LAMBDA_PREPARE") == "code":
    from localstack.services.lambda_.invocation.docker_runtime_executor import DockerRuntimeExecutor

    def _prepare_code_only(cls, function_version):
        if function_version.config.code:
            function_version.config.code.prepare_for_execution()

    DockerRuntimeExecutor.prepare_version = classmethod(_prepare_code_only)

if os.environ.get("DYNAMODB_LOCAL_PORT"):
    from localstack.services.dynamodb.server import DynamodbServer

    DynamodbServer.start_dynamodb = lambda self: True

if __name__ == "__main__":
    from localstack.runtime.main import main

    main()
